/*
 * report/replay.h - prints replay results (text for people, JSON for
 * tools).  Receives results, never handles.  Each result is compared with
 * the baseline pool's result for the same device when one is present:
 * saved_bytes = baseline peak reserved - peak reserved, time_saved_ns =
 * baseline backend_ns - backend_ns (negative when worse: the backend's time
 * only, modelled or measured, never mixed with the pool's CPU time measured
 * on this host, which is shown apart with its spread), unless either run
 * failed (had OOMs): a failed run saves nothing, it is "failed: N OOMs,
 * first at event E".  Times are labelled
 * "measured" (cuda backend) or "modelled" everywhere they appear.
 * Under 'replay --mpi' every result also names its rank, and the job's
 * figures per pool come after the ranks' (mp_replay_job_rows).
 */
#ifndef MP_REPORT_REPLAY_H
#define MP_REPORT_REPLAY_H

#include <stdio.h>

#include "replay/engine.h"

#define MP_REPLAY_JSON_VERSION 3 /* 2: time_saved_ns is backend time; job backend_ns; 3: the fragmentation figures renamed */

struct mp_replay_report {
	const char *trace_path;
	const char *backend;  /* the backend used, as named to the user */
	const char *baseline; /* pool name of the baseline ("caching" by default) */
	const struct mp_replay_result *results; /* in run order: device, then pool */
	size_t n_results;
	uint64_t capacity_bytes;  /* 0: none */
	const char *const *notes; /* warnings to show (segment-level replay, ...) */
	size_t n_notes;
	/* replay --mpi: ranks[i] is the rank results[i] ran on, of n_ranks; NULL otherwise. */
	const int *ranks;
	int n_ranks;
};

struct mp_replay_metric;

/*
 * One pool's figures for the whole job (replay --mpi), over every rank's
 * devices: the worst device's peak reserved (which must fit on each GPU),
 * bytes saved summed, and the slowest rank's allocator time (a rank's time
 * is the sum over its devices): the job waits for it.
 */
struct mp_replay_job_row {
	const char *pool;
	int n_ranks;                  /* ranks with a result for this pool */
	uint64_t peak_reserved_bytes; /* the largest over the ranks' devices ... */
	int peak_rank;                /* ... on this rank */
	int32_t peak_device;          /* ... and device */
	uint64_t lower_bound_bytes;   /* the largest over the ranks' devices */
	int has_saved;                /* every device had a baseline result */
	int64_t saved_bytes;          /* summed over the ranks' devices */
	uint64_t backend_ns;          /* the slowest rank's backend time ... */
	int slowest_rank;             /* ... this one */
	int has_time_saved;
	int64_t time_saved_ns; /* the baseline's slowest rank time minus backend_ns */
	int time_measured;     /* every result's times were measured */
	uint64_t n_ooms;       /* summed */
};

/* The job's rows, one per pool in first-run order, at most max; how many (0 without ranks). */
size_t mp_replay_job_rows(const struct mp_replay_report *rep, struct mp_replay_job_row *out,
                          size_t max);

/*
 * A job row's figures as named metrics (stored as the device -1 run of its
 * pool): peak_reserved_bytes, peak_rank, peak_device, lower_bound_bytes,
 * saved_bytes, backend_ns, slowest_rank, time_saved_ns, ooms, ranks.
 */
size_t mp_replay_job_metrics(const struct mp_replay_job_row *j, struct mp_replay_metric *out,
                             size_t max);

/* One figure of a result, as stored (replay_metrics) and as a JSON key. */
struct mp_replay_metric {
	char name[64]; /* "pool." + a stat name (at most 47 bytes) fits */
	double value;
	const char *unit; /* "bytes", "count", "ns", "ratio", "state" */
	int measured;     /* 1: measured (cuda times, pool CPU time); 0: modelled or counted */
};

/* Enough room for every metric of one result. */
#define MP_REPLAY_MAX_METRICS (32 + MP_REPLAY_MAX_STATS)

/*
 * The figures of r as named metrics (the JSON keys of memprof-replay(1) with
 * numeric values but device, "verify" as a state 0 off, 1 passed, 2 failed,
 * then "pool.<name>" for the pool's own stats), at most max.
 * Figures that do not exist for r (saved_bytes without a baseline) are left
 * out.  Returns how many were written.  unit points at static text or into r.
 */
size_t mp_replay_metrics(const struct mp_replay_report *rep, const struct mp_replay_result *r,
                         struct mp_replay_metric *out, size_t max);

/* The baseline's result for r's device (and rank), or NULL. */
const struct mp_replay_result *mp_replay_baseline_of(const struct mp_replay_report *rep,
                                                     const struct mp_replay_result *r);
/* r failed: it had OOMs, requests it could not serve, so its figures are
 * not a result.  A failed run has no saved bytes, no time saved and no
 * ratio to the lower bound, and sorts after every run that did not fail. */
int mp_replay_failed(const struct mp_replay_result *r);
/* The baseline's result r is compared with (saved bytes, time saved): the
 * baseline of r, or NULL when there is none or when r or it failed. */
const struct mp_replay_result *mp_replay_compared_to(const struct mp_replay_report *rep,
                                                     const struct mp_replay_result *r);

/*
 * Why r did nothing on this trace, into buf (returned), or NULL when it
 * did something: the pool's own figures say every request went to its
 * caching fallback (stat fallback_requests equal to the allocs; mxfp8 with
 * pairs_found 0, sharded with iterations 0), or a pool with a fallback
 * has the caching result's figures exactly (peak and end reserved, every
 * backend call).  A failed run is never "did nothing".
 */
const char *mp_replay_no_effect(const struct mp_replay_report *rep,
                                const struct mp_replay_result *r, char *buf, size_t n);
/*
 * The order in which the results [first, end) of one device (and rank)
 * are shown: their indexes into rep->results, written to idx (end - first
 * of them).  The pools that did something, least peak reserved first, then
 * least backend time, then run order; then the pools that did nothing;
 * then the runs that failed.  Returns how many did something: idx[0] is
 * the best when it is not 0.
 */
size_t mp_replay_order(const struct mp_replay_report *rep, size_t first, size_t end, size_t *idx);
/* r's place in that order, 1 for the best, among the pools of its device
 * (and rank) that did something; 0 when it failed or did nothing. */
size_t mp_replay_place(const struct mp_replay_report *rep, const struct mp_replay_result *r);

int mp_replay_print_text(FILE *out, const struct mp_replay_report *rep);
/* JSON object {"version":1, "trace", "backend", "baseline", "capacity_bytes", "notes":[...],
 * "results":[...]}; each result has at least the keys memprof-replay(1) lists. */
int mp_replay_print_json(FILE *out, const struct mp_replay_report *rep);

#endif
