/*
 * cmd/replay_save.c - 'memprof replay' stores its results in the trace:
 * each result's metric rows (report/replay_out, the figures the output
 * shows) become a stored run (store/results), with the job's rows under
 * --mpi.  Only the store call and its message; the figures are report/'s.
 */
#include "cmd/cmd.h"
#include "cmd/replay_save.h"
#include "store/results.h"

#include <stdlib.h>

/* Metric rows m as the store takes them, into rm. */
static void to_result_metrics(const struct mp_replay_metric *m, size_t n,
                              struct mp_result_metric *rm)
{
	for (size_t j = 0; j < n; j++)
		rm[j] = (struct mp_result_metric){m[j].name, m[j].value, m[j].unit, m[j].measured};
}

int mp_replay_save(const struct mp_replay_session *s, const struct mp_replay_report *rep,
                   const char *options)
{
	size_t n_job = rep->ranks ? s->n_pools : 0, n_runs = s->n_results + n_job, n = 0;
	struct mp_result_run *runs = calloc(n_runs + 1, sizeof *runs);
	struct mp_replay_metric(*m)[MP_REPLAY_MAX_METRICS] = calloc(n_runs + 1, sizeof *m);
	struct mp_result_metric(*rm)[MP_REPLAY_MAX_METRICS] = calloc(n_runs + 1, sizeof *rm);
	struct mp_replay_job_row *job = calloc(n_job + 1, sizeof *job);
	struct mp_error err = {0};
	int rc = 0;

	if (!runs || !m || !rm || !job)
		rc = mp_cmd_error(&mp_cmd_replay, "out of memory");
	for (size_t i = 0; rc == 0 && i < s->n_results; i++, n++) {
		size_t k = mp_replay_metrics(rep, &s->results[i], m[n], MP_REPLAY_MAX_METRICS);
		to_result_metrics(m[n], k, rm[n]);
		runs[n] = (struct mp_result_run){.pool = s->results[i].pool,
		                                 .backend = s->results[i].backend,
		                                 .baseline = s->set->baseline,
		                                 .options = options,
		                                 .device = s->results[i].device,
		                                 .metrics = rm[n],
		                                 .n_metrics = k};
	}
	n_job = rc == 0 ? mp_replay_job_rows(rep, job, n_job) : 0;
	for (size_t i = 0; i < n_job; i++, n++) {
		size_t k = mp_replay_job_metrics(&job[i], m[n], MP_REPLAY_MAX_METRICS);
		to_result_metrics(m[n], k, rm[n]);
		runs[n] = (struct mp_result_run){.pool = job[i].pool,
		                                 .backend = s->backend->name,
		                                 .baseline = s->set->baseline,
		                                 .options = options,
		                                 .device = -1,
		                                 .metrics = rm[n],
		                                 .n_metrics = k};
	}
	if (rc == 0 && mp_results_save(s->set->trace, runs, n, &err) < 0)
		rc = mp_cmd_fail(&mp_cmd_replay, &err);
	free(runs);
	free(m);
	free(rm);
	free(job);
	return rc;
}
