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

#define MP_SUMMARY_MAX_DEVICES 64

struct mp_device_peak {
	int32_t device;
	int64_t live_bytes; /* at the end of the trace */
	int64_t peak_bytes;
	int64_t peak_ts_ns;
	int64_t peak_seq;
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
	int devices_truncated;    /* more devices than MP_SUMMARY_MAX_DEVICES */
	int64_t oversized_seq;    /* the event that stopped the run with MP_EFORMAT: an
	                             allocation of 2^56 bytes or more */
	struct mp_live_sets live; /* private: alloc id -> size, per process */
};

void mp_summary_init(struct mp_summary *s);
void mp_summary_free(struct mp_summary *s);
/* A consumer that fills s; register it on a reader. */
struct mp_consumer mp_summary_consumer(struct mp_summary *s);

#endif
