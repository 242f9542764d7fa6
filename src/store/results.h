/*
 * store/results.h - replay results kept in the trace database (tables
 * replay_runs and replay_metrics, memprof-trace(5)), so later commands
 * (report, diff, check) compare runs without replaying again.
 *
 * A run is one pool on one device: its pool, backend, baseline, options
 * text and device in replay_runs, and every figure as a named metric with
 * its unit and whether it was measured (1) or modelled (0).  Saving opens
 * the trace read-write and writes all runs in one transaction: all or
 * nothing.  Not thread-safe.
 */
#ifndef MP_STORE_RESULTS_H
#define MP_STORE_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct mp_result_metric {
	const char *name; /* e.g. "peak_reserved_bytes" */
	double value;
	const char *unit; /* "bytes", "count", "ns", "ratio" */
	int measured;     /* 1 measured, 0 modelled or counted */
};

struct mp_result_run {
	const char *pool, *backend, *baseline; /* baseline may be NULL */
	const char *options;                   /* the command line options, text; may be NULL */
	int32_t device;
	const struct mp_result_metric *metrics;
	size_t n_metrics;
	int64_t id; /* set by load */
};

/* Append runs to the trace at path.  Returns 0 or MP_E* with err set; on error nothing is written. */
int mp_results_save(const char *path, const struct mp_result_run *runs, size_t n,
                    struct mp_error *err);

/*
 * Every run stored in the trace at path, oldest first, with their metrics.
 * The strings and arrays belong to the returned set; free with mp_results_free.
 */
struct mp_result_set {
	struct mp_result_run *runs;
	size_t n_runs;
	void *owned; /* internal */
};
int mp_results_load(const char *path, struct mp_result_set *out, struct mp_error *err);
void mp_results_free(struct mp_result_set *set);

#endif
