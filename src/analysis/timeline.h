/*
 * analysis/timeline.h - live, requested and reserved bytes of each device
 * over the trace, kept as at most max_points exact states per device
 * without losing the peaks.  A memory-state listener (on_event only):
 * memory O(max_points) per device whatever the trace length, O(1)
 * amortized work per event.  Not thread-safe.
 *
 * The states of a device's events 1..N are folded into consecutive buckets
 * of W events (W a power of two; the last bucket may hold fewer).  W starts
 * at 1 and doubles, merging neighbouring buckets, whenever the rows would
 * exceed max_points.  A bucket keeps six states: its first and last event,
 * the events of its lowest and highest live bytes, of its highest requested
 * bytes and of its highest reserved bytes, each the earliest event reaching
 * that value.  Rows are those states, once each, in event order.  So a
 * device with N <= max_points keeps every event; otherwise every bucket's
 * extremes survive, and the maximum of each column over the whole device
 * appears with the first event reaching it.
 */
#ifndef MP_ANALYSIS_TIMELINE_H
#define MP_ANALYSIS_TIMELINE_H

#include <stdint.h>

#include "analysis/memstate.h"

#define MP_TIMELINE_MAX_DEVICES    64
#define MP_TIMELINE_DEFAULT_POINTS 2000
#define MP_TIMELINE_MIN_POINTS     16
#define MP_TIMELINE_MAX_POINTS     1000000 /* about 300 bytes per point per device */
#define MP_TIMELINE_ROLES          6
#define MP_TIMELINE_ALL_DEVICES    (-1)

/* A device's state right after one of its events. */
struct mp_timeline_point {
	int64_t n; /* the event's number among this device's events, from 1 */
	int64_t seq, ts_ns;
	int64_t live_bytes, requested_bytes;
	int64_t reserved_bytes; /* -1: no segment-level event on the device yet */
};

/* Consecutive events of one device, by the states that must survive:
 * first, last, lowest live, highest live, highest requested, highest
 * reserved (several roles may name one event). */
struct mp_timeline_bucket {
	struct mp_timeline_point role[MP_TIMELINE_ROLES];
	int64_t n_events;
};

struct mp_timeline_series {
	int32_t device;
	int64_t n_events;      /* events seen on this device */
	int64_t bucket_events; /* W: events per bucket, a power of two, from 1 */
	/* private */
	struct mp_timeline_bucket *buckets;
	int64_t n_buckets, cap_buckets;
	int64_t closed_rows; /* distinct rows of every bucket but the last */
};

struct mp_timeline {
	int64_t max_points;
	struct mp_timeline_series series[MP_TIMELINE_MAX_DEVICES]; /* in order of appearance */
	int n_series;
	int devices_truncated; /* events of more than MP_TIMELINE_MAX_DEVICES devices */
	int last;              /* private: the series of the previous event */
};

/* Returns 0, or MP_EINVAL when max_points is outside
 * [MP_TIMELINE_MIN_POINTS, MP_TIMELINE_MAX_POINTS] (t is then empty). */
int mp_timeline_init(struct mp_timeline *t, int64_t max_points);
void mp_timeline_free(struct mp_timeline *t);
/* The listener to register on a memory state; on_event returns 0, or
 * MP_ENOMEM when a bucket array cannot grow.  Events with no device
 * figures (NULL) are ignored. */
struct mp_mem_listener mp_timeline_listener(struct mp_timeline *t);

/* The device ordinals seen, ascending, into out (room for
 * MP_TIMELINE_MAX_DEVICES); returns their number. */
int mp_timeline_devices(const struct mp_timeline *t, int32_t *out);
/* A device's series, or NULL when it had no event. */
const struct mp_timeline_series *mp_timeline_series(const struct mp_timeline *t, int32_t device);
/* The number of rows the series keeps (at most max_points). */
int64_t mp_timeline_n_rows(const struct mp_timeline_series *s);
/* Call fn for every kept row in event order (strictly increasing n and, as
 * the reader delivers them, seq); stops at and returns fn's first negative
 * return, else 0. */
int mp_timeline_foreach(const struct mp_timeline_series *s,
                        int (*fn)(void *ctx, const struct mp_timeline_point *p), void *ctx);
/* Copy up to cap rows into out; returns the number of rows kept. */
int64_t mp_timeline_points(const struct mp_timeline_series *s, struct mp_timeline_point *out,
                           int64_t cap);

#endif
