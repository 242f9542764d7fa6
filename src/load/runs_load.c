/*
 * load/runs_load.c - a trace's stored replay runs (store/results) as
 * report/'s view of them: each run with its metrics.
 */
#include "load/runs_load.h"

#include <stdlib.h>
#include <string.h>

int mp_load_runs(const char *path, struct mp_load_runs *out, struct mp_error *err)
{
	size_t i, j, n_metrics = 0;
	struct mp_report_metric *m;

	memset(out, 0, sizeof(*out));
	if (mp_results_load(path, &out->set, err) < 0)
		return err->code;
	for (i = 0; i < out->set.n_runs; i++)
		n_metrics += out->set.runs[i].n_metrics;
	out->runs = calloc(out->set.n_runs + 1, sizeof(*out->runs));
	out->metrics = m = calloc(n_metrics + 1, sizeof(*out->metrics));
	if (!out->runs || !out->metrics)
		return mp_err(err, MP_ENOMEM, "out of memory");
	for (i = 0; i < out->set.n_runs; i++) {
		const struct mp_result_run *r = &out->set.runs[i];

		out->runs[i] = (struct mp_report_run){
		        .id = r->id,
		        .pool = r->pool,
		        .backend = r->backend,
		        .baseline = r->baseline,
		        .options = r->options,
		        .device = r->device,
		        .metrics = m,
		        .n_metrics = r->n_metrics,
		};
		for (j = 0; j < r->n_metrics; j++)
			*m++ = (struct mp_report_metric){r->metrics[j].name, r->metrics[j].value,
			                                 r->metrics[j].unit,
			                                 r->metrics[j].measured};
	}
	out->view.runs = out->runs;
	out->view.n = out->set.n_runs;
	return 0;
}

void mp_load_runs_free(struct mp_load_runs *r)
{
	mp_results_free(&r->set);
	free(r->runs);
	free(r->metrics);
	memset(r, 0, sizeof(*r));
}
