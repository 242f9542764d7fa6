/*
 * report/runs.h - replay runs stored in a trace (memprof-trace(5),
 * replay_runs and replay_metrics), as the report writers receive them:
 * plain data that cmd/ copies out of the store (mp_cmd_load_runs), so no
 * writer holds a database handle.  The strings belong to whoever filled
 * the arrays.
 */
#ifndef MP_REPORT_RUNS_H
#define MP_REPORT_RUNS_H

#include <stddef.h>
#include <stdint.h>

struct mp_report_metric {
	const char *name; /* "peak_reserved_bytes", "lower_bound_bytes", "pool.<stat>", ... */
	double value;
	const char *unit; /* "bytes", "count", "ns", "ratio", "state" */
	int measured; /* 1 measured (cuda backend times, pool CPU time), 0 modelled or counted */
};

struct mp_report_run {
	int64_t id; /* replay_runs.id: larger is newer */
	const char *pool, *backend;
	const char *baseline; /* may be NULL */
	const char *options;  /* the replay command line, may be NULL */
	int32_t device;
	const struct mp_report_metric *metrics;
	size_t n_metrics;
};

struct mp_report_runs {
	const struct mp_report_run *runs; /* oldest first */
	size_t n;
};

/* The metric named name of r, or NULL. */
const struct mp_report_metric *mp_report_run_metric(const struct mp_report_run *r,
                                                    const char *name);

/*
 * The newest run of each (device, pool, backend), ordered by device, then
 * pool name, then backend: their indexes into runs->runs, written to idx
 * (room for runs->n).  Returns how many.  A pool replayed again replaces
 * its older result; results of other pools stay.
 */
size_t mp_report_runs_latest(const struct mp_report_runs *runs, size_t *idx);

/* The device a stored run was replayed on, as people read it: "device 3",
 * or "the job (all ranks)" for the job row 'memprof replay --mpi' stores as
 * device -1; capitalised for a heading.  Returns buf. */
#define MP_REPORT_JOB_DEVICE (-1)
const char *mp_report_run_where(char *buf, size_t n, int32_t device, int heading);

#endif
