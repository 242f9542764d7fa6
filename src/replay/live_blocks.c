/*
 * replay/live_blocks.c - the engine's live-block table (live_blocks.h): a
 * slot pool of records and a slot number per allocation index.  Knows
 * nothing of pools or backends; never prints.
 */
#include <stdlib.h>

#include "replay/live_blocks.h"
#include "util/error.h"

int mp_live_blocks_init(struct mp_live_blocks *t, size_t n_indexes)
{
	t->n_indexes = n_indexes;
	t->n_live = 0;
	mp_slot_pool_init(&t->slots, sizeof(struct block));
	t->slot_of = calloc(n_indexes ? n_indexes : 1, sizeof *t->slot_of);
	return t->slot_of ? 0 : MP_ENOMEM;
}

void mp_live_blocks_free(struct mp_live_blocks *t)
{
	free(t->slot_of);
	t->slot_of = NULL;
	mp_slot_pool_free(&t->slots);
}

struct block *mp_live_blocks_add(struct mp_live_blocks *t, uint32_t index)
{
	size_t slot;
	struct block *b;

	if (index >= t->n_indexes || t->slot_of[index] ||
	    !(b = mp_slot_pool_take(&t->slots, &slot)))
		return NULL;
	if (slot >= UINT32_MAX) {
		mp_slot_pool_give(&t->slots, slot);
		return NULL;
	}
	t->slot_of[index] = (uint32_t)slot + 1;
	t->n_live++;
	b->index = index;
	b->in_use = 1;
	return b;
}

struct block *mp_live_blocks_get(const struct mp_live_blocks *t, uint64_t index)
{
	if (index >= t->n_indexes || !t->slot_of[index])
		return NULL;
	return mp_slot_pool_at(&t->slots, t->slot_of[index] - 1);
}

void mp_live_blocks_del(struct mp_live_blocks *t, uint32_t index)
{
	struct block *b = mp_live_blocks_get(t, index);

	if (!b)
		return;
	b->in_use = 0;
	mp_slot_pool_give(&t->slots, t->slot_of[index] - 1);
	t->slot_of[index] = 0;
	t->n_live--;
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
	return t->n_live;
}
