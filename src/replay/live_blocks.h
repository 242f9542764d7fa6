/*
 * replay/live_blocks.h - the engine's table of the blocks live in one
 * replay, found by allocation index: a dense array of records whose slots
 * are recycled on free (it grows with the live set), and a 4-byte slot
 * number per allocation of the device (no hashing on the replay's path;
 * the kernel gives the zeroed array's pages as they are first touched).
 * A record is zeroed when added and stays at its address until the next
 * add.  Not thread-safe.
 */
#ifndef MP_REPLAY_LIVE_BLOCKS_H
#define MP_REPLAY_LIVE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"
#include "util/slot_pool.h"

/* The engine's copy of a block the pool handed out. */
struct block {
	struct memprof_pool_block pb;
	uint32_t index;       /* the allocation's index in the device's allocs */
	uint32_t shares_with; /* 1 + the live block it lies inside (block_shares), or 0 */
	uint32_t n_sharers;   /* live blocks that lie inside this one */
	uint8_t in_use;       /* the slot holds a block (set by the table) */
	uint8_t held;         /* the pool holds it (alloc succeeded, not yet freed) */
	uint8_t clobbered;    /* a sharer reused its bytes: its pattern is not checked */
	uint8_t direct;       /* below --pool-threshold: a backend reservation of its own */
};

struct mp_live_blocks {
	uint32_t *slot_of; /* by allocation index: 1 + its record's slot, 0: none */
	size_t n_indexes;
	struct mp_slot_pool slots;
	size_t n_live;
};

/* A table for allocation indexes [0, n_indexes): 0 or MP_ENOMEM. */
int mp_live_blocks_init(struct mp_live_blocks *t, size_t n_indexes);
void mp_live_blocks_free(struct mp_live_blocks *t);
/* A zeroed record for index (below n_indexes, not in the table), or NULL when out of memory. */
struct block *mp_live_blocks_add(struct mp_live_blocks *t, uint32_t index);
/* The record of index (any value), or NULL when it is not in the table. */
struct block *mp_live_blocks_get(const struct mp_live_blocks *t, uint64_t index);
/* Drop index's record (nothing when it is not in the table). */
void mp_live_blocks_del(struct mp_live_blocks *t, uint32_t index);
/* For a walk over every record: slots [0, mp_live_blocks_n_slots), NULL for an empty one. */
size_t mp_live_blocks_n_slots(const struct mp_live_blocks *t);
struct block *mp_live_blocks_at(const struct mp_live_blocks *t, size_t slot);
/* Records in the table. */
size_t mp_live_blocks_count(const struct mp_live_blocks *t);

#endif
