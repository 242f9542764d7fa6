/*
 * replay/input.h - a trace turned into what the engine replays: per device,
 * every allocation's lifetime and the ordered alloc/free operations.
 *
 * Read once from the reader, held in memory in compact arrays (48 bytes
 * per allocation, 4 per operation and 4 for its event number, each array
 * cut to its length once read) so that replay runs at memory
 * speed, pools that plan offline see the whole trace, and several pools
 * replay the same input.  Block-level events are used (alloc, preexisting,
 * free; free_requested ends a block's live time for the lower bound, the
 * pool gets the free at the free); a device without block events but with
 * segments is replayed at the segment level (reserve/release, map/unmap),
 * and the input says so.  Not thread-safe; read-only once loaded.
 */
#ifndef MP_REPLAY_INPUT_H
#define MP_REPLAY_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"
#include "store/reader.h"
#include "store/store.h"
#include "util/error.h"
#include "util/intmap.h"

enum mp_replay_level { MP_LEVEL_BLOCK = 0, MP_LEVEL_SEGMENT = 1 };

/*
 * One allocation of the input (48 bytes).  Where its alloc and free lie in
 * ops[] and the event numbers are in the ops; the streams are interned.
 */
struct mp_replay_alloc {
	uint64_t size_bytes;
	uint64_t requested_bytes;
	int64_t ts_ns;
	int64_t free_ts_ns;   /* the time of its free; INT64_MAX when never freed */
	uint32_t stream;      /* index into the input's streams[] */
	uint32_t free_stream; /* the same, of its free */
	uint32_t site;        /* index into sites[], 0: none */
	uint32_t phase;       /* index into phases[], 0: none */
};

/*
 * ops[i] is (alloc index << 2) | MP_OP_*: a free ends the allocation's live
 * time (the lower bound's) too unless a free_requested did (MP_OP_LIVE_END)
 * before it, which makes it MP_OP_FREE_ENDED.  A device holds at most
 * MP_REPLAY_MAX_ALLOCS allocations.
 */
enum { MP_OP_ALLOC = 0, MP_OP_FREE = 1, MP_OP_LIVE_END = 2, MP_OP_FREE_ENDED = 3 };
#define MP_REPLAY_OP(index, kind) ((uint32_t)(((uint32_t)(index) << 2) | (uint32_t)(kind)))
#define MP_REPLAY_OP_INDEX(op)    ((uint32_t)(op) >> 2)
#define MP_REPLAY_OP_KIND(op)     ((int)((op)&3))
#define MP_REPLAY_MAX_ALLOCS      ((size_t)1 << 30)
/* op_dseq[k] at this value: the step is in the device's far_dseq (rare). */
#define MP_REPLAY_DSEQ_FAR UINT32_MAX

struct mp_replay_device {
	int32_t ordinal;
	int level; /* enum mp_replay_level */
	struct mp_replay_alloc *allocs;
	size_t n_allocs;
	uint32_t *ops;
	size_t n_ops;
	int64_t n_unmatched_frees; /* frees of allocations never seen: skipped */
	/*
	 * The trace event of each op, for messages: op k's is op k - 1's (0
	 * before op 0) plus op_dseq[k], or plus far_dseq's value for k when
	 * op_dseq[k] is MP_REPLAY_DSEQ_FAR (mp_replay_op_seq_step).
	 */
	uint32_t *op_dseq;
	struct mp_intmap *far_dseq; /* NULL when no step is that far */
	/* What the trace itself recorded, for comparison (0 when absent). */
	uint64_t trace_peak_reserved_bytes;
	uint64_t trace_segments;         /* reserve and map events */
	uint64_t trace_segments_at_peak; /* held when reserved bytes first peaked */
	int has_segments;
	uint64_t trace_ooms; /* OOM events the trace recorded */
	/*
	 * The allocator state the trace window opened with, for a pool's seed
	 * (pool ABI 1.3): the segments reserved before the device's first
	 * alloc, each tiled by the preexisting blocks inside it and free blocks
	 * between (input_seed.h).  None when the trace starts from nothing.
	 */
	struct memprof_pool_seed_segment *seed_segments;
	size_t n_seed_segments;
	struct memprof_pool_seed_block *seed_blocks; /* every segment's, in order */
	size_t n_seed_skipped; /* prelude segments left out: their blocks overlap */
	size_t n_preexisting;  /* blocks live before the device's first alloc */
	size_t n_prelude_ops;  /* ops before it: the preexisting blocks' allocs, free_requested */
};

struct mp_replay_input {
	struct mp_replay_device *devices; /* in ordinal order */
	size_t n_devices;
	const char **sites; /* sites[0] = NULL; strings owned by the input */
	size_t n_sites;
	const char **phases;
	size_t n_phases;
	uint64_t *streams; /* the allocations' streams by index */
	size_t n_streams;
	int64_t n_events; /* trace events read */
	int has_stacks;
	/* With a rank (load_rank): processes of the trace with no rank, left out. */
	size_t n_unranked_processes;
	void *owned; /* the interned strings */
};

/*
 * Read every event of r (opened with MP_READ_STACKS when sites are wanted)
 * into a new input.  device < 0 keeps all devices.  Returns 0 or MP_E* with
 * err set (the event's seq named in format errors).
 */
int mp_replay_input_load(struct mp_reader *r, int device, struct mp_replay_input **out,
                         struct mp_error *err);

/*
 * The same, keeping only the processes of trace rank `rank` (processes.rank),
 * for 'memprof replay --mpi' where MPI rank i replays trace rank i.  The
 * trace s (path names it in messages) must have exactly n_ranks ranks,
 * numbered 0..n_ranks-1: otherwise MP_EINVAL, the message naming the ranks
 * the trace has.  Processes with no rank are left out and counted.
 */
int mp_replay_input_load_rank(struct mp_store *s, const char *path, struct mp_reader *r, int device,
                              int rank, int n_ranks, struct mp_replay_input **out,
                              struct mp_error *err);
void mp_replay_input_free(struct mp_replay_input *in);

/* The event number of op k of d less that of op k - 1 (of op 0: itself). */
static inline int64_t mp_replay_op_seq_step(const struct mp_replay_device *d, size_t k)
{
	uint64_t far = 0;

	if (d->op_dseq[k] != MP_REPLAY_DSEQ_FAR)
		return d->op_dseq[k];
	mp_intmap_get(d->far_dseq, k, &far);
	return (int64_t)far;
}

/*
 * The lifetimes of a device's allocations, for a pool's plan callback
 * (malloc'd): in replay steps, and in the trace's own time (alloc_ts,
 * free_ts) when its timestamps never go back in the order of the ops and
 * are not all equal; MEMPROF_POOL_NO_TIME in every item otherwise.
 */
struct memprof_pool_lifetime *mp_replay_input_lifetimes(const struct mp_replay_input *in,
                                                        const struct mp_replay_device *d);

#endif
