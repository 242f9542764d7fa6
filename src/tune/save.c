/*
 * tune/save.c - a tune result kept in the trace: one run per setting (the
 * current one, then the best in order) in the replay tables of
 * memprof-trace(5), on the sim backend, as pools named "caching (tune:
 * current)", "caching (tune #1)", ... (never the plain "caching" of
 * 'memprof replay', whose result they must not replace), the current one
 * their baseline, the PYTORCH_CUDA_ALLOC_CONF line their options: 'memprof
 * report' draws them with the replayed pools.  All or nothing
 * (store/results).
 */
#include <stdio.h>
#include <stdlib.h>

#include "store/results.h"
#include "tune/tune.h"

#define N_METRICS 12

static size_t metrics(const struct mp_tune_result *r, const struct mp_tune_figures *x, int rank,
                      struct mp_result_metric *m)
{
	size_t n = 0;

#define PUT(name_, value_, unit_)                                                                  \
	m[n++] = (struct mp_result_metric){name_, (double)(value_), unit_, 0}
	PUT("tune_rank", rank, "count");
	PUT("peak_reserved_bytes", x->peak_reserved_bytes, "bytes");
	PUT("saved_bytes", (double)r->current.peak_reserved_bytes - (double)x->peak_reserved_bytes,
	    "bytes");
	PUT("frag_at_peak", x->frag_at_peak, "ratio");
	PUT("free_at_peak_bytes", x->free_at_peak_bytes, "bytes");
	PUT("cudamalloc_calls", x->n_malloc, "count");
	PUT("cumemmap_calls", x->n_map, "count");
	PUT("backend_ns", x->backend_ns, "ns");
	PUT("ooms", x->n_ooms, "count");
	if (r->fid.has_recorded) {
		PUT("recorded_peak_reserved_bytes", r->fid.recorded_peak_reserved_bytes, "bytes");
		PUT("fidelity_error", r->fid.error, "ratio");
	}
#undef PUT
	return n;
}

int mp_tune_save(const char *path, const struct mp_tune_result *r, struct mp_error *err)
{
	size_t n = r->n_ranked + 1;
	struct mp_result_run *runs = calloc(n, sizeof *runs);
	struct mp_result_metric(*m)[N_METRICS] = calloc(n, sizeof *m);
	char(*opts)[MP_TUNE_CONF_MAX + 48] = calloc(n, sizeof *opts);
	char(*names)[40] = calloc(n, sizeof *names);
	int rc;

	if (!runs || !m || !opts || !names) {
		free(runs);
		free(m);
		free(opts);
		free(names);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct mp_tune_figures *x = i ? &r->ranked[i - 1] : &r->current;
		snprintf(opts[i], sizeof opts[i], "memprof tune: PYTORCH_CUDA_ALLOC_CONF=%s",
		         x->conf);
		if (i)
			snprintf(names[i], sizeof names[i], "caching (tune #%zu)", i);
		else
			snprintf(names[i], sizeof names[i], "caching (tune: current)");
		runs[i] = (struct mp_result_run){.pool = names[i],
		                                 .backend = "sim",
		                                 .baseline = names[0],
		                                 .options = opts[i],
		                                 .device = r->device,
		                                 .metrics = m[i],
		                                 .n_metrics = metrics(r, x, (int)i, m[i])};
	}
	rc = mp_results_save(path, runs, n, err);
	free(runs);
	free(m);
	free(opts);
	free(names);
	return rc;
}
