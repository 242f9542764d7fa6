/*
 * replay/input_seed.h - while an input loads (input.c), the allocator state
 * a device's trace window opened with: the segments reserved and the blocks
 * live before its first allocation, laid out as the seed callback of the
 * pool ABI (1.3) takes them.  Private to src/replay/input*.c.
 */
#ifndef MP_REPLAY_INPUT_SEED_H
#define MP_REPLAY_INPUT_SEED_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "replay/input.h"

struct mp_seed_item {
	uint64_t addr, size_bytes, stream;
	int64_t id; /* a segment's id, or a block's allocation index */
};

struct mp_seed_build {
	struct mp_seed_item *segs, *blocks;
	size_t n_segs, cap_segs, n_blocks, cap_blocks;
	int closed;         /* the device's first allocation was seen: the prelude is over */
	size_t prelude_ops; /* the device's ops before it */
};

/* One event of the device, before it is added: index is the allocation index it would get,
 * n_ops the device's ops so far.  0 or MP_ENOMEM. */
int mp_seed_note(struct mp_seed_build *b, const struct memprof_event *ev, int64_t index,
                 size_t n_ops);
/* Lay the prelude out into d (seed_segments, seed_blocks); frees b. 0 or MP_ENOMEM. */
int mp_seed_finish(struct mp_seed_build *b, struct mp_replay_device *d);
void mp_seed_free(struct mp_seed_build *b);

#endif
