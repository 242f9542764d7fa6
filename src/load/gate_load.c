/*
 * load/gate_load.c - a trace's gate figures: the analyses' pass turned into
 * analysis/gate's figures with the trace's meta, and the stored replay runs
 * as the gate's pools.
 */
#include "load/gate_load.h"
#include "analysis/pass.h"
#include "load/runs_load.h"
#include "load/trace_meta.h"
#include "store/reader.h"
#include "util/trace_window.h"

#include <stdlib.h>
#include <string.h>

int mp_load_gate_pass(struct mp_store *s, uint64_t granularity, int32_t device,
                      struct mp_gate_trace *t, struct mp_error *err)
{
	struct mp_pass_opts po;
	struct mp_reader *r;
	struct mp_pass *p;
	char *source = NULL, *window = NULL;
	int rc;

	mp_pass_opts_default(&po);
	po.granularity = granularity;
	po.kinds = 1u << MP_ATTR_STACK;
	po.at = MP_ATTR_AT_PEAK;
	po.timeline_points = 0;
	po.life.keep = 1; /* the gate reads lifetime's totals only, never its findings */
	rc = mp_pass_run(s, &po, NULL, NULL, &p, &r, err);
	if (rc == 0) {
		source = mp_store_get_meta(s, "source");
		rc = mp_gate_trace_from_pass(t, p, mp_store_path(s), source, device);
		if (rc < 0)
			mp_err(err, rc, "out of memory");
		t->truncated = mp_load_meta_flag(s, "truncated");
		t->lossy = mp_load_meta_flag(s, "lossy");
		window = mp_store_get_meta(s, MP_WINDOW_META);
		if (rc == 0 &&
		    mp_gate_trace_set_window(t, mp_trace_window(source, window, t->truncated)) < 0)
			rc = mp_err(err, MP_ENOMEM, "out of memory");
		free(window);
	}
	free(source);
	mp_pass_close(p, r);
	return rc;
}

/* A stored run as the gate's pool. */
static struct mp_gate_pool pool_of(const struct mp_report_run *run)
{
	const struct mp_report_metric *peak = mp_report_run_metric(run, "peak_reserved_bytes");
	const struct mp_report_metric *time = mp_report_run_metric(run, "total_ns");
	const struct mp_report_metric *failed = mp_report_run_metric(run, "failed");
	const struct mp_report_metric *ooms = mp_report_run_metric(run, "ooms");

	return (struct mp_gate_pool){
	        .device = run->device,
	        .pool = (char *)run->pool,
	        .backend = (char *)run->backend,
	        .run_id = run->id,
	        .peak_reserved_bytes = peak ? (int64_t)peak->value : -1,
	        .total_ns = time ? (int64_t)time->value : -1,
	        .time_measured = time ? time->measured : 0,
	        /* runs stored before "failed" was: their OOMs say it */
	        .failed = failed ? failed->value != 0 : (ooms && ooms->value > 0),
	};
}

int mp_load_gate_pools(const char *path, int32_t device, struct mp_gate_trace *t,
                       struct mp_error *err)
{
	struct mp_load_runs runs;
	size_t *idx = NULL, i, n;
	int rc = mp_load_runs(path, &runs, err);

	if (rc == 0 && !(idx = calloc(runs.view.n + 1, sizeof(*idx))))
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	n = rc == 0 ? mp_report_runs_latest(&runs.view, idx) : 0;
	for (i = 0; i < n && rc == 0; i++) {
		const struct mp_report_run *run = &runs.view.runs[idx[i]];
		struct mp_gate_pool pool;

		if (device >= 0 && run->device != device)
			continue;
		pool = pool_of(run);
		if (mp_gate_trace_add_pool(t, &pool) < 0)
			rc = mp_err(err, MP_ENOMEM, "out of memory");
	}
	free(idx);
	mp_load_runs_free(&runs);
	return rc;
}
