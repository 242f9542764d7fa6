/*
 * analysis/plan.h - the memory plan's success metrics (memprof-analyze(1),
 * PLAN METRICS): per training step (analysis/steps) each device's
 * fragmentation at the end of the step and its trend over the run; the
 * share of wall time inside allocation and free calls, with call-time
 * percentiles per size class, from the events' durations; and for each OOM
 * whether fragmentation caused it.  A memory-state listener registered
 * after analysis/frag's, whose figures it reads.  Memory grows with the
 * number of steps and devices, not with the trace.  Not thread-safe.
 */
#ifndef MP_ANALYSIS_PLAN_H
#define MP_ANALYSIS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/frag.h"
#include "analysis/memstate.h"
#include "analysis/steps.h"

/* The plan's targets. */
#define MP_PLAN_TARGET_FRAG     0.10   /* fragmentation ratio ... */
#define MP_PLAN_TARGET_STEP     1000   /* ... after this many steps */
#define MP_PLAN_TARGET_SHARE    0.05   /* of wall time inside calls */
#define MP_PLAN_TARGET_ALLOC_NS 100000 /* p50 allocation time, common sizes */
#define MP_PLAN_COMMON_SHARE    0.05   /* a size class with this share of calls is common */
#define MP_PLAN_SIZE_CLASSES    64     /* analysis/attribution's power-of-two classes */

/*
 * A streaming histogram of call times: exact below MP_HIST_EXACT_NS, above
 * that MP_HIST_SUB buckets per power of two, so a percentile is within
 * 1/128 of the true one (the middle of a bucket 1/64 wide).  Counts are
 * allocated on the first value.
 */
#define MP_HIST_EXACT_NS 128
#define MP_HIST_SUB      64
#define MP_HIST_MAX_EXP  47 /* values of 2^48 ns or more share the last bucket */
#define MP_HIST_BUCKETS  (MP_HIST_EXACT_NS + (MP_HIST_MAX_EXP - 6) * MP_HIST_SUB)

struct mp_hist {
	int64_t n, min_ns, max_ns;
	int64_t *counts; /* MP_HIST_BUCKETS, NULL until the first value */
};

int mp_hist_add(struct mp_hist *h, int64_t v_ns); /* 0 or MP_ENOMEM; v < 0 counts 0 */
/* The p-quantile (0 < p <= 1) by nearest rank: the value at rank ceil(p n);
 * -1 when empty. */
int64_t mp_hist_quantile(const struct mp_hist *h, double p);
void mp_hist_free(struct mp_hist *h);

/* The least-squares line of y over x. */
struct mp_trend {
	int64_t n;
	double slope, intercept; /* valid when n >= 2 and the xs differ */
	int has_slope;
};
void mp_trend_fit(const double *x, const double *y, size_t n, struct mp_trend *t);

/* One device at the end of one step.  Bytes are -1 when unknown. */
struct mp_plan_point {
	int seen; /* the device had events before the step ended */
	int64_t live_bytes, reserved_bytes, free_in_reserved_bytes, largest_free_bytes;
};

/* The plan's fragmentation figure: free in reserved / reserved (0 when
 * nothing is reserved), and the external ratio 1 - largest hole / free.
 * Return -1 when unknown. */
double mp_plan_frag_ratio(const struct mp_plan_point *p);
double mp_plan_external_ratio(const struct mp_plan_point *p);

struct mp_plan_step {
	struct mp_step_mark start, end; /* end.seq 0: the trace's end */
};

struct mp_plan_frag_trend {
	struct mp_trend fit; /* of the ratio over the step number */
	int64_t n_known;     /* steps with a known ratio */
	int64_t last_step;   /* the last step with a known ratio; 0: none */
	double last_ratio;
	int has_target;      /* a figure for MP_PLAN_TARGET_STEP */
	int target_measured; /* the trace has that step; else projected by fit */
	double target_ratio; /* measured, or the fit clamped to [0, 1] */
};

struct mp_plan_device {
	int32_t device;
	int slot;                     /* memstate slot */
	int model;                    /* enum mp_frag_model at the end */
	struct mp_plan_point *at_end; /* per step */
	struct mp_plan_frag_trend trend;
};

enum mp_plan_verdict {
	MP_OOM_UNKNOWN,       /* free in reserved is unknown */
	MP_OOM_CAPACITY,      /* the request is more than the free bytes of reserved memory */
	MP_OOM_FRAGMENTATION, /* it fit in the free bytes, not in the largest hole */
	MP_OOM_FITS_HOLE,     /* the largest hole could hold it: the allocator's own rules */
	MP_OOM_VERDICTS
};
int mp_plan_oom_verdict(int64_t requested_bytes, int64_t free_in_reserved_bytes,
                        int64_t largest_free_bytes);
const char *mp_plan_verdict_name(int verdict);

enum { MP_CALL_ALLOC, MP_CALL_FREE, MP_CALL_KINDS };

struct mp_plan_overhead {
	int64_t n_calls, n_with_duration; /* allocation and free calls (events) */
	int64_t time_ns;                  /* in those calls, summed over threads */
	int64_t last_end_ns;              /* the latest ts_ns + duration_ns of a call */
	int64_t n_by_kind[MP_CALL_KINDS];
	struct mp_hist all[MP_CALL_KINDS];
	struct mp_hist by_class[MP_CALL_KINDS][MP_PLAN_SIZE_CLASSES];
};

struct mp_plan_snap; /* private */

struct mp_plan {
	int32_t device_filter; /* -1: every device */
	const struct mp_memstate *ms;
	const struct mp_frag *frag;
	struct mp_steps steps;
	struct mp_plan_step *step_list; /* after the run */
	size_t n_steps;
	struct mp_plan_device devices[MP_MEM_MAX_DEVICES]; /* after the run, ascending */
	int n_devices;
	struct mp_plan_overhead overhead;
	int64_t n_ooms[MP_OOM_VERDICTS]; /* every OOM, kept or not */
	/* private */
	struct mp_plan_point last[MP_MEM_MAX_DEVICES]; /* after the last event, per slot */
	int n_slots;
	struct mp_plan_snap *snaps;
	size_t n_snaps, cap_snaps, prune_at;
	struct mp_plan_point **spare; /* copies' arrays dropped, of spare_n points, for reuse */
	size_t n_spare, cap_spare;
	int spare_n;
};

/* step_name: --step, or NULL; device: -1 or the only device; prefix_allocs
 * 0 for MP_STEPS_PREFIX_ALLOCS. */
int mp_plan_init(struct mp_plan *p, const struct mp_memstate *ms, const struct mp_frag *frag,
                 const char *step_name, int32_t device, size_t prefix_allocs);
void mp_plan_free(struct mp_plan *p);
struct mp_mem_listener mp_plan_listener(struct mp_plan *p);
/* The wall span of the trace: from its first timestamp to its last, or to
 * the end of the last call when a call ends after that. */
int64_t mp_plan_span_ns(const struct mp_plan *p);
/* Whether a size class holds MP_PLAN_COMMON_SHARE of the allocation calls with a duration. */
int mp_plan_class_common(const struct mp_plan *p, int k);
/* Whether the p50 allocation time of every common size class is under
 * MP_PLAN_TARGET_ALLOC_NS: 1, 0, or -1 when no allocation has a duration. */
int mp_plan_alloc_target_met(const struct mp_plan *p);

#endif
