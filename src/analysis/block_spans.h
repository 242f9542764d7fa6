/*
 * analysis/block_spans.h - every block's life and every segment's life on
 * each device, for the report's band timeline and allocator-state views: a
 * block from its allocation to the program's free (live) and to the
 * allocator's free (held: live, then pending); a segment from reserve (or
 * map) to release (or unmap).  A memory-state listener.  With a limit
 * (mp_block_spans_limit) only the largest blocks are kept whole, ties to the
 * earlier; the live bytes of the others are merged into one series per
 * axis (analysis/span_merged.h), so memory is bounded by the limit plus the
 * live set, not by the length of the trace.  Not thread-safe.
 *
 * Times are kept twice, as timestamps and as event numbers (seq), so a
 * trace without timestamps can be drawn in event order.  A life still open
 * after the last event ends at MP_SPAN_OPEN.
 */
#ifndef MP_ANALYSIS_BLOCK_SPANS_H
#define MP_ANALYSIS_BLOCK_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/memstate.h"
#include "analysis/span_merged.h"
#include "util/intmap.h"

#define MP_SPAN_OPEN INT64_MAX

struct mp_block_span {
	int64_t alloc_ts_ns, free_ts_ns,
	        release_ts_ns; /* free: the program's; release: the allocator's */
	int64_t alloc_seq, free_seq, release_seq;
	int64_t size_bytes, requested_bytes;
	uint64_t address;
	const struct memprof_stack *stack; /* reader-owned; NULL when none */
	int64_t stack_id;
	int never_live; /* freed by the program before recording began */
	/* private */
	uint64_t key, ordinal; /* the memory state's key; the block's number on its device */
};

struct mp_segment_span {
	int64_t begin_ts_ns, end_ts_ns, begin_seq, end_seq;
	uint64_t address;
	int64_t size_bytes;
};

struct mp_block_spans_device {
	int32_t device;
	struct mp_block_span *blocks; /* kept whole; in order of allocation after the last event */
	size_t n_blocks, cap_blocks;
	size_t n_total;                          /* blocks seen: n_blocks plus those merged */
	struct mp_span_merged *by_time, *by_seq; /* the merged blocks' live bytes; NULL: none */
	struct mp_segment_span *segments;        /* in order of reserve */
	size_t n_segments, cap_segments;
	int64_t n_unmatched_ends;  /* releases or unmaps of segments never seen */
	int64_t preexisting_bytes; /* of blocks allocated before the first event */
	/* private */
	struct mp_intmap open_blocks, open_segments; /* key -> index */
	struct mp_intmap open_merged;                /* key -> bytes of a live merged block */
};

struct mp_block_spans {
	struct mp_block_spans_device devices[MP_MEM_MAX_DEVICES];
	int n_devices;
	int64_t first_ts_ns, first_seq, last_ts_ns, last_seq; /* of the events seen */
	int seen;                                             /* an event was seen */
	size_t max_blocks; /* kept whole per device; SIZE_MAX (the default): all */
};

void mp_block_spans_init(struct mp_block_spans *s);
void mp_block_spans_free(struct mp_block_spans *s);
/* Keep at most max_blocks blocks whole per device, merge the others; before the first event. */
void mp_block_spans_limit(struct mp_block_spans *s, size_t max_blocks);
/* The listener; callbacks return 0 or MP_ENOMEM. */
struct mp_mem_listener mp_block_spans_listener(struct mp_block_spans *s);
/* A device's spans, or NULL when it had no block nor segment. */
const struct mp_block_spans_device *mp_block_spans_device(const struct mp_block_spans *s,
                                                          int32_t device);

#endif
