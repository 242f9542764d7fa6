/*
 * plugins/sharded/table.c - the shard table: every recurring key's slots
 * laid out back to back in one slab, each slot world_size shards of
 * ceil(size / world_size) rounded up to 256 B, each shard's offset computed
 * once; and per-key stacks of free slots, so serving is a pop and a push.
 */
#include <stdlib.h>

#include "sharded.h"

#define SH_MAX_TABLE_ENTRIES (1ull << 28) /* slots x ranks */
#define SH_MAX_SLAB_BYTES    (1ull << 62)

uint64_t sh_shard_bytes(uint64_t size_bytes, uint32_t world_size)
{
	uint64_t shard;

	if (size_bytes == 0 || size_bytes > SH_MAX_SLOT_BYTES || world_size == 0)
		return 0;
	shard = size_bytes / world_size + (size_bytes % world_size != 0);
	return (shard + SH_SHARD_ALIGN_BYTES - 1) / SH_SHARD_ALIGN_BYTES * SH_SHARD_ALIGN_BYTES;
}

/* Keys and their sizes; *n_slots the slots in all.  -1 when too large. */
static int size_keys(struct sh_table *t, const uint64_t *sizes, const uint32_t *n_slots,
                     size_t n_keys, uint64_t *total_slots)
{
	uint64_t at = 0, slots = 0;

	for (size_t k = 0; k < n_keys; k++) {
		struct sh_key *key = &t->keys[k];

		key->size_bytes = sizes[k];
		key->shard_bytes = sh_shard_bytes(sizes[k], t->world_size);
		key->slot_bytes = key->shard_bytes * t->world_size;
		key->first_slot = (uint32_t)slots;
		key->n_slots = key->n_free = n_slots[k];
		if (key->shard_bytes == 0 || n_slots[k] == 0 ||
		    key->slot_bytes > (SH_MAX_SLAB_BYTES - at) / n_slots[k])
			return -1;
		at += key->slot_bytes * n_slots[k];
		slots += n_slots[k];
		if (slots > UINT32_MAX || slots * t->world_size > SH_MAX_TABLE_ENTRIES)
			return -1;
	}
	t->slab_bytes = at;
	t->shard_bytes_per_rank = at / t->world_size;
	*total_slots = slots;
	return 0;
}

/* Each slot's offset, shard offsets and place on its key's free stack. */
static void lay_out(struct sh_table *t)
{
	uint64_t at = 0;

	for (size_t k = 0; k < t->n_keys; k++) {
		const struct sh_key *key = &t->keys[k];

		for (uint32_t j = 0; j < key->n_slots; j++) {
			size_t s = key->first_slot + j;

			t->slots[s] = (struct sh_slot){.offset_bytes = at, .key = (uint32_t)k};
			for (uint32_t r = 0; r < t->world_size; r++)
				t->shard_offsets[s * t->world_size + r] =
				        (uint64_t)r * key->shard_bytes;
			/* popped from the top: the key's first slot goes out first */
			t->free_stack[key->first_slot + j] = key->first_slot + key->n_slots - 1 - j;
			at += key->slot_bytes;
		}
	}
}

int sh_table_build(struct sh_table *t, uint32_t world_size, const uint64_t *sizes,
                   const uint32_t *n_slots, size_t n_keys)
{
	uint64_t total = 0;

	*t = (struct sh_table){.world_size = world_size, .n_keys = n_keys};
	if (n_keys == 0)
		return MEMPROF_POOL_OK;
	if (!(t->keys = calloc(n_keys, sizeof *t->keys)))
		return MEMPROF_POOL_ENOMEM;
	if (size_keys(t, sizes, n_slots, n_keys, &total) < 0) {
		sh_table_free(t);
		return MEMPROF_POOL_EINVAL;
	}
	t->n_slots = total;
	t->slots = calloc(total, sizeof *t->slots);
	t->shard_offsets = calloc(total * world_size, sizeof *t->shard_offsets);
	t->free_stack = calloc(total, sizeof *t->free_stack);
	if (!t->slots || !t->shard_offsets || !t->free_stack) {
		sh_table_free(t);
		return MEMPROF_POOL_ENOMEM;
	}
	lay_out(t);
	return MEMPROF_POOL_OK;
}

void sh_table_address(struct sh_table *t, uint64_t base)
{
	for (size_t s = 0; s < t->n_slots; s++)
		t->slots[s].addr = base + t->slots[s].offset_bytes;
}

int64_t sh_table_take(struct sh_table *t, uint32_t key)
{
	struct sh_key *k = &t->keys[key];
	uint32_t s;

	if (k->n_free == 0)
		return -1;
	s = t->free_stack[k->first_slot + --k->n_free];
	t->slots[s].live = 1;
	return s;
}

int sh_table_put(struct sh_table *t, uint64_t slot)
{
	struct sh_key *k;

	if (slot >= t->n_slots || !t->slots[slot].live)
		return -1;
	t->slots[slot].live = 0;
	k = &t->keys[t->slots[slot].key];
	t->free_stack[k->first_slot + k->n_free++] = (uint32_t)slot;
	return 0;
}

void sh_table_free(struct sh_table *t)
{
	free(t->keys);
	free(t->slots);
	free(t->shard_offsets);
	free(t->free_stack);
	*t = (struct sh_table){.world_size = t->world_size};
}
