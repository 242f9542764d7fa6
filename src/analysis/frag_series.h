/*
 * analysis/frag_series.h - the fragmentation of each device over the trace,
 * for a chart: after every event the share of reserved bytes that is free
 * (free-in-reserved / reserved) and the external ratio (1 - largest hole /
 * free-in-reserved), as analysis/frag defines them (DESIGN.md section 3),
 * kept as at most max_points states per device without losing maxima.
 *
 * A memory-state listener (on_event only) registered after analysis/frag's,
 * whose figures of the same event it reads (mp_frag_now).  Memory
 * O(max_points) per device whatever the trace length, O(1) amortized work
 * per event.  Not thread-safe.
 *
 * Downsampling, as analysis/timeline: a device's events 1..N are folded
 * into consecutive buckets of W events (W a power of two, from 1; the last
 * bucket may hold fewer), W doubling and neighbours merging whenever the
 * rows would pass max_points.  A bucket keeps four states: its first and
 * last event and the events of its highest free share and of its highest
 * external ratio, each the earliest reaching that value.  Rows are those
 * states, once each, in event order.  So a device of N <= max_points
 * events keeps every event, and each series' maximum over the device
 * survives with the first event reaching it.
 */
#ifndef MP_ANALYSIS_FRAG_SERIES_H
#define MP_ANALYSIS_FRAG_SERIES_H

#include <stdint.h>

#include "analysis/frag.h"
#include "analysis/memstate.h"

#define MP_FRAG_SERIES_ROLES      4
#define MP_FRAG_SERIES_MIN_POINTS 16
#define MP_FRAG_SERIES_MAX_POINTS 1000000

/* A device's fragmentation right after one of its events. */
struct mp_frag_series_point {
	int64_t n; /* the event's number among the device's events, from 1 */
	int64_t seq, ts_ns;
	int64_t reserved_bytes;     /* -1: unknown (no segments, no addresses yet) */
	int64_t free_bytes;         /* free in reserved; -1: unknown */
	int64_t largest_free_bytes; /* the largest hole; -1: unknown */
	double free_share;          /* free / reserved in [0, 1]; -1: unknown or nothing reserved */
	double ext_ratio;           /* 1 - largest / free in [0, 1], 0 when nothing is
	                               free; -1: unknown */
};

struct mp_frag_series_bucket {
	struct mp_frag_series_point role[MP_FRAG_SERIES_ROLES];
	int64_t n_events;
};

struct mp_frag_series_device {
	int32_t device;
	int64_t n_events;      /* events seen on the device */
	int64_t bucket_events; /* W */
	/* private */
	struct mp_frag_series_bucket *buckets;
	int64_t n_buckets, cap_buckets;
	int64_t closed_rows; /* distinct rows of every bucket but the last */
};

struct mp_frag_series {
	const struct mp_frag *frag;
	int64_t max_points;
	struct mp_frag_series_device devices[MP_MEM_MAX_DEVICES]; /* by memstate device slot */
	int n_devices;
};

/* frag: the analysis whose figures are read; max_points in
 * [MP_FRAG_SERIES_MIN_POINTS, MP_FRAG_SERIES_MAX_POINTS].  Returns 0 or
 * MP_EINVAL (s is then empty and safe to free). */
int mp_frag_series_init(struct mp_frag_series *s, const struct mp_frag *frag, int64_t max_points);
void mp_frag_series_free(struct mp_frag_series *s);
/* The listener; its on_event returns 0 or MP_ENOMEM. */
struct mp_mem_listener mp_frag_series_listener(struct mp_frag_series *s);

/* A device's series, or NULL when it had no event. */
const struct mp_frag_series_device *mp_frag_series_device(const struct mp_frag_series *s,
                                                          int32_t device);
/* The rows kept (at most max_points). */
int64_t mp_frag_series_n_rows(const struct mp_frag_series_device *d);
/* Call fn for every kept row in event order; stops at and returns fn's
 * first negative return, else 0. */
int mp_frag_series_foreach(const struct mp_frag_series_device *d,
                           int (*fn)(void *ctx, const struct mp_frag_series_point *p), void *ctx);

#endif
