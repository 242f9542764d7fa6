/*
 * replay/live_blocks.c - the engine's live-block table (live_blocks.h): a
 * slot pool of records and an intmap from allocation index to slot.  Knows
 * nothing of pools or backends; never prints.
 */
#include "replay/live_blocks.h"

void mp_live_blocks_init(struct mp_live_blocks *t)
{
	mp_intmap_init(&t->slot_of);
	mp_slot_pool_init(&t->slots, sizeof(struct block));
}

void mp_live_blocks_free(struct mp_live_blocks *t)
{
	mp_intmap_free(&t->slot_of);
	mp_slot_pool_free(&t->slots);
}

struct block *mp_live_blocks_add(struct mp_live_blocks *t, uint32_t index)
{
	size_t slot;
	struct block *b = mp_slot_pool_take(&t->slots, &slot);

	if (!b)
		return NULL;
	if (mp_intmap_put(&t->slot_of, index, slot) < 0) {
		mp_slot_pool_give(&t->slots, slot);
		return NULL;
	}
	b->index = index;
	b->in_use = 1;
	return b;
}

struct block *mp_live_blocks_get(const struct mp_live_blocks *t, uint64_t index)
{
	uint64_t slot;

	if (!mp_intmap_get(&t->slot_of, index, &slot))
		return NULL;
	return mp_slot_pool_at(&t->slots, (size_t)slot);
}

void mp_live_blocks_del(struct mp_live_blocks *t, uint32_t index)
{
	uint64_t slot;
	struct block *b;

	if (!mp_intmap_get(&t->slot_of, index, &slot))
		return;
	b = mp_slot_pool_at(&t->slots, (size_t)slot);
	b->in_use = 0;
	mp_intmap_del(&t->slot_of, index);
	mp_slot_pool_give(&t->slots, (size_t)slot);
}

size_t mp_live_blocks_n_slots(const struct mp_live_blocks *t)
{
	return t->slots.n;
}

struct block *mp_live_blocks_at(const struct mp_live_blocks *t, size_t slot)
{
	struct block *b = mp_slot_pool_at(&t->slots, slot);

	return b->in_use ? b : NULL;
}

size_t mp_live_blocks_count(const struct mp_live_blocks *t)
{
	return t->slot_of.n;
}
