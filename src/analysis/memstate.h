/*
 * analysis/memstate.h - the memory state of a trace as its events stream
 * past: the live blocks with what allocated them, and per device the live,
 * requested, active and reserved bytes with their peaks (DESIGN.md
 * section 3).  One reader consumer that the analyses listen to, so a block
 * is looked up once per event however many analyses run.  Memory grows with
 * the live set only.  Not thread-safe.
 *
 * Live bytes: granted sizes of blocks from alloc (or preexisting) to the
 * program's free (free_requested when the trace has it, else free).  Active
 * bytes: live plus blocks the program freed that the allocator cannot reuse
 * yet.  Reserved bytes: segment level, reserve/release and map/unmap.  A
 * preexisting block followed at once by free_requested of itself (freed by
 * the program before recording began) is never live: listeners never see it.
 */
#ifndef MP_ANALYSIS_MEMSTATE_H
#define MP_ANALYSIS_MEMSTATE_H

#include <stdint.h>

#include "memprof/trace.h"
#include "store/reader.h"
#include "util/live_set.h"
#include "util/slot_pool.h"
#include "util/strmap.h"

#define MP_MEM_MAX_DEVICES     64
#define MP_MEM_MAX_LISTENERS   8
#define MP_MEM_STREAMS_SCANNED 16 /* up to this many streams are found without hashing */

/* One live (or pending) block, as its allocation described it. */
struct mp_mem_block {
	int64_t alloc_id, process_id;
	uint64_t key;            /* unique among the live and pending blocks of the run */
	int64_t size_bytes;      /* granted */
	int64_t requested_bytes; /* what the program asked for, never more than granted */
	uint64_t address;
	int64_t alloc_ts_ns, alloc_seq;
	uint64_t stream;
	int32_t device;
	int dev_slot; /* index into mp_memstate.devices; -1 past MP_MEM_MAX_DEVICES */
	int preexisting;
	int pending; /* freed by the program, not yet by the allocator */
	int64_t stack_id, phase_id, api_id;
	const struct memprof_stack *stack; /* reader-owned; NULL when none or not read */
	const char *phase, *api;           /* reader-owned; NULL when none */
	/* this allocation's number among those on its (process, device,
	 * stream), from 1: compare with mp_memstate_stream_allocs */
	int64_t stream_ordinal;
	/* a word a listener keeps with the block (analysis/lifetime: 1 + its
	 * group), 0 when the block appears; the listener writes it through a
	 * cast and checks it before trusting it */
	uint64_t tag;
};

struct mp_mem_peak {
	int64_t bytes, ts_ns, seq; /* seq 0: never above zero */
};

/* Figures of one device, as of the last event seen. */
struct mp_mem_device {
	int32_t device;
	int64_t n_events;
	int64_t n_live; /* live blocks */
	int64_t live_bytes, requested_bytes, active_bytes, reserved_bytes;
	int has_segments; /* any segment-level event: reserved bytes are known */
	struct mp_mem_peak live_peak, requested_peak, reserved_peak;
	int64_t n_ooms;
};

/* What the current event did to its device (on_event's changes). */
enum {
	MP_MEM_NEW_LIVE_PEAK = 1 << 0,
	MP_MEM_NEW_REQUESTED_PEAK = 1 << 1,
	MP_MEM_NEW_RESERVED_PEAK = 1 << 2,
};

/*
 * An analysis fed by the memory state.  For one event the order is:
 * on_alloc or on_free (when it made or ended a live block), then on_event.
 * A negative return stops the run and is returned by mp_reader_run.  Any
 * callback may be NULL.
 */
struct mp_mem_listener {
	void *ctx;
	/* a block became live; the device figures already count it */
	int (*on_alloc)(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec);
	/* the program freed a live block (its first free_requested, or free);
	 * b still holds the allocation's data; the figures no longer count it */
	int (*on_free)(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec);
	/* after every event: d is the event's device (NULL past
	 * MP_MEM_MAX_DEVICES), changes a mask of MP_MEM_NEW_* */
	int (*on_event)(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
	                unsigned changes);
	/* after the last event; the memory state is final */
	int (*on_end)(void *ctx);
	/* the allocator took a block back (its free), live or pending until then: its
	 * address range is free again; b still holds the allocation's data.  NULL: not told */
	int (*on_release)(void *ctx, const struct mp_mem_block *b,
	                  const struct memprof_record *rec);
	/* a block the program freed before recording began appeared (a preexisting
	 * pending block): it holds memory until its release but is not live */
	int (*on_held)(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec);
	/* before an alloc or preexisting record is processed (b NULL), and before
	 * on_free of the block b: a hint to start loading what on_alloc or
	 * on_free will read (it overlaps the cache misses with the work before).
	 * Changes nothing.  NULL: none */
	void (*prefetch)(void *ctx, const struct memprof_record *rec, const struct mp_mem_block *b);
};

struct mp_memstate {
	int64_t n_events;
	int64_t n_by_op[MEMPROF_OP_MAX + 1];
	int64_t first_ts_ns, last_ts_ns; /* of the first and the last event */
	int64_t min_ts_ns, max_ts_ns;    /* the earliest and latest timestamps */
	int64_t n_unmatched_frees;       /* frees whose alloc was never seen */
	int64_t n_live_at_end;           /* allocations never freed by the program */
	int64_t n_out_of_order;          /* events whose timestamp is before the previous one */
	int64_t n_zero_size;             /* allocations of zero bytes */
	int64_t n_unmatched_releases;    /* releases whose reserve was never seen */
	/* all devices together */
	int64_t live_bytes;
	struct mp_mem_peak live_peak;
	struct mp_mem_device devices[MP_MEM_MAX_DEVICES];
	int n_devices;
	int devices_truncated; /* more devices than MP_MEM_MAX_DEVICES */
	int64_t oversized_seq; /* the event that stopped the run with MP_EFORMAT: a size
	                          of 2^56 bytes or more, or sums beyond 2^62 */
	/* private */
	struct mp_mem_listener listeners[MP_MEM_MAX_LISTENERS];
	int n_listeners;
	/* the listeners' callbacks that are set, per kind (enum notice in
	 * memstate.c, then on_event and prefetch), in registration order: the
	 * per-event dispatch tests no NULL */
	struct mp_mem_call {
		void *ctx;
		int (*block)(void *ctx, const struct mp_mem_block *b,
		             const struct memprof_record *rec);
		int (*event)(void *ctx, const struct memprof_record *rec,
		             const struct mp_mem_device *d, unsigned changes);
		void (*prefetch)(void *ctx, const struct memprof_record *rec,
		                 const struct mp_mem_block *b);
	} calls[6][MP_MEM_MAX_LISTENERS];
	int n_calls[6];
	struct mp_live_sets live;     /* alloc id -> block slot, per process */
	struct mp_live_sets segments; /* segment id -> size and device slot, per process */
	struct mp_slot_pool blocks;   /* of struct mp_mem_block */
	struct mp_strmap streams;     /* (process, device, stream) -> index in stream_counts */
	int64_t *stream_counts;       /* allocations so far, per stream */
	char (*stream_keys)[20];      /* the key of each, in the same order */
	int64_t n_streams;
	size_t cap_streams;
	int64_t last_stream; /* index of the last stream used, -1 for none */
	char last_stream_key[20];
	int64_t n_pending;
	int64_t held_bytes; /* live and pending blocks: bounds every sum */
	int held;           /* a preexisting record waits for the next (see above) */
	struct memprof_record held_rec;
};

void mp_memstate_init(struct mp_memstate *ms);
void mp_memstate_free(struct mp_memstate *ms);
/* Register a listener (copied); before the run.  Returns 0 or MP_EINVAL
 * past MP_MEM_MAX_LISTENERS. */
int mp_memstate_listen(struct mp_memstate *ms, const struct mp_mem_listener *l);
/* The consumer to register on a reader. */
struct mp_consumer mp_memstate_consumer(struct mp_memstate *ms);

/* The device's figures, or NULL when it has had no event. */
const struct mp_mem_device *mp_memstate_device(const struct mp_memstate *ms, int32_t device);
/* Allocations so far on (process, device, stream). */
int64_t mp_memstate_stream_allocs(const struct mp_memstate *ms, int64_t process_id, int32_t device,
                                  uint64_t stream);
/* Call fn for every live block (not pending), in no particular order; stops
 * at and returns fn's first negative return. */
int mp_memstate_foreach_live(const struct mp_memstate *ms,
                             int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx);
/* The same for every block that holds memory: live, and pending (freed by the program,
 * not yet by the allocator). */
int mp_memstate_foreach_held(const struct mp_memstate *ms,
                             int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx);

/* The time the events span: latest minus earliest timestamp (timestamps
 * that go back included), saturated at INT64_MAX; 0 without events. */
int64_t mp_memstate_span_ns(const struct mp_memstate *ms);

#endif
