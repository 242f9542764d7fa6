/*
 * report/replay.h - prints replay results (text for people, JSON for
 * tools).  Receives results, never handles.  Each result is compared with
 * the baseline pool's result for the same device when one is present:
 * saved_bytes = baseline peak reserved - peak reserved, time_saved_ns =
 * baseline total_ns - total_ns (negative when worse).  Times are labelled
 * "measured" (cuda backend) or "modelled" everywhere they appear.
 */
#ifndef MP_REPORT_REPLAY_H
#define MP_REPORT_REPLAY_H

#include <stdio.h>

#include "replay/engine.h"

#define MP_REPLAY_JSON_VERSION 1

struct mp_replay_report {
	const char *trace_path;
	const char *backend;   /* the backend used, as named to the user */
	const char *baseline;  /* pool name of the baseline ("caching" by default) */
	const struct mp_replay_result *results; /* in run order: device, then pool */
	size_t n_results;
	uint64_t capacity_bytes; /* 0: none */
	const char *const *notes; /* warnings to show (segment-level replay, ...) */
	size_t n_notes;
};

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

/* The baseline's result for r's device, or NULL. */
const struct mp_replay_result *mp_replay_baseline_of(const struct mp_replay_report *rep,
                                                     const struct mp_replay_result *r);

int mp_replay_print_text(FILE *out, const struct mp_replay_report *rep);
/* JSON object {"version":1, "trace", "backend", "baseline", "capacity_bytes", "notes":[...],
 * "results":[...]}; each result has at least the keys memprof-replay(1) lists. */
int mp_replay_print_json(FILE *out, const struct mp_replay_report *rep);

#endif
