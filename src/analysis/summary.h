/*
 * analysis/summary.h - the figures 'memprof info' shows: event counts by
 * operation, time span, and peak live bytes (DESIGN.md section 3) overall
 * and per device.  A reader consumer; memory grows with the live set.
 */
#ifndef MP_ANALYSIS_SUMMARY_H
#define MP_ANALYSIS_SUMMARY_H

#include <stdint.h>

#include "memprof/trace.h"
#include "store/reader.h"
#include "util/live_set.h"
#include "util/slot_pool.h"

#define MP_SUMMARY_MAX_DEVICES 64

/*
 * Figures of one device (DESIGN.md section 3).  Live bytes: granted sizes
 * of blocks from alloc (or preexisting) to the program's free (free, or
 * free_requested when the trace has it).  Active bytes: live plus blocks
 * freed by the program that the allocator cannot reuse yet.  Reserved
 * bytes: segment level, reserve/release and map/unmap.
 */
struct mp_device_peak {
	int32_t device;
	int64_t live_bytes; /* at the end of the trace (so are the next three) */
	int64_t requested_bytes;
	int64_t active_bytes;
	int64_t reserved_bytes;
	int has_segments;   /* any segment-level event: reserved bytes are known */
	int64_t peak_bytes; /* of live bytes */
	int64_t peak_ts_ns;
	int64_t peak_seq;
	int64_t peak_reserved_bytes;
	int64_t peak_reserved_ts_ns;
	int64_t peak_reserved_seq;
};

/* One live block: the private state behind the live sets. */
struct mp_summary_block {
	int64_t size, requested;
	int slot;    /* device slot, -1 for none */
	int pending; /* freed by the program (free_requested), still active */
};

struct mp_summary {
	int64_t n_events;
	int64_t n_by_op[MEMPROF_OP_MAX + 1];
	int64_t first_ts_ns, last_ts_ns;
	int64_t n_unmatched_frees; /* frees whose alloc was never seen */
	int64_t n_live_at_end;     /* allocations never freed */
	/* all devices together */
	int64_t live_bytes, peak_bytes, peak_ts_ns, peak_seq;
	struct mp_device_peak devices[MP_SUMMARY_MAX_DEVICES];
	int n_devices;
	int devices_truncated; /* more devices than MP_SUMMARY_MAX_DEVICES */
	int64_t oversized_seq; /* the event that stopped the run with MP_EFORMAT: a size
	                          of 2^56 bytes or more, or sums beyond 2^62 */
	/* private */
	struct mp_live_sets live;     /* alloc id -> block slot, per process */
	struct mp_live_sets segments; /* segment id -> size and device slot, per process */
	struct mp_slot_pool blocks;   /* of struct mp_summary_block */
	int64_t n_pending;            /* blocks freed by the program, not yet by the allocator */
	int64_t held_bytes;           /* live and pending blocks, all devices: bounds every sum */
	int64_t deferred_id;          /* a preexisting block whose peak check waits one event */
	int64_t deferred_process;
	const struct memprof_event *deferred_ev;
	struct memprof_event deferred_copy;
};

void mp_summary_init(struct mp_summary *s);
void mp_summary_free(struct mp_summary *s);
/* A consumer that fills s; register it on a reader. */
struct mp_consumer mp_summary_consumer(struct mp_summary *s);

#endif
