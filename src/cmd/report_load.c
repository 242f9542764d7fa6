/*
 * cmd/report_load.c - what 'memprof report' draws from one trace: its
 * analyses (analysis/pass, plus fragmentation over time, phase spans and
 * every block's life), the gate's figures, its stored replay results and
 * its meta, gathered as the writers' input (report/report_doc.h) and kept
 * open until unloaded (names and stacks are the reader's).
 */
#include "cmd/report_load.h"
#include "load/analysis_load.h"
#include "load/trace_meta.h"
#include "store/reader.h"
#include "util/trace_window.h"

#include <stdlib.h>

enum {
	META_SOURCE,
	META_COMMAND,
	META_CREATED,
	META_VERSION,
	META_CLOCK,
	META_SETTINGS,
	META_POOLS,
	META_WINDOW,
	N_META
};

static void state_free(struct mp_report_trace *st)
{
	int i;

	mp_pass_close(st->pass, st->r);
	mp_frag_series_free(&st->series);
	mp_phase_spans_free(&st->phases);
	mp_block_spans_free(&st->spans);
	mp_gate_trace_free(&st->gate);
	mp_load_runs_free(&st->runs);
	if (st->devices)
		mp_store_free_devices(st->devices, st->n_devices);
	for (i = 0; i < N_META; i++)
		free(st->meta[i]);
}

/* Fragmentation over time, phase spans and (for HTML) block lives, listening
 * after the analyses. */
static int listen(void *ctx, struct mp_pass *pass)
{
	struct mp_report_trace *st = ctx;
	struct mp_mem_listener ls[3];
	int rc, i;

	if ((rc = mp_frag_series_init(&st->series, &pass->frag, st->o->points)) < 0)
		return rc;
	ls[0] = mp_frag_series_listener(&st->series);
	ls[1] = mp_phase_spans_listener(&st->phases);
	ls[2] = mp_block_spans_listener(&st->spans);
	for (i = 0; i < (st->o->md ? 2 : 3) && rc == 0; i++)
		rc = mp_memstate_listen(&pass->ms, &ls[i]);
	return rc;
}

/* The pass, with listen's listeners, run over the trace. */
static int analyze(struct mp_report_trace *st, struct mp_error *err)
{
	struct mp_pass_opts po;

	mp_phase_spans_init(&st->phases, 0);
	mp_block_spans_init(&st->spans);
	mp_block_spans_limit(&st->spans, (size_t)st->o->blocks);
	mp_pass_opts_default(&po);
	po.timeline_points = st->o->points;
	po.kinds |= 1u << MP_ATTR_API;
	po.life.no_timestamps = mp_load_no_timestamps(st->s);
	po.life.keep = st->o->top;
	return mp_pass_run(st->s, &po, listen, st, &st->pass, &st->r, err);
}

/* The writers' input from the results, the trace's meta and devices. */
static int fill(struct mp_report_trace *st, struct mp_error *err)
{
	static const char *const keys[N_META] = {
	        "source", "command_line",       "created",       "tool_version",
	        "clock",  "allocator_settings", "private_pools", MP_WINDOW_META};
	const struct mp_report_opts *o = st->o;
	struct mp_store *s = st->s;
	struct mp_analysis *a = &st->a;
	int i;

	for (i = 0; i < N_META; i++)
		st->meta[i] = mp_store_get_meta(s, keys[i]);
	if (mp_store_devices(s, &st->devices, &st->n_devices) < 0)
		return mp_err_copy(err, mp_store_error(s));
	mp_load_analysis(a, s, st->pass, st->meta[META_SOURCE], st->meta[META_WINDOW]);
	if (!o->md &&
	    (mp_gate_trace_from_pass(&st->gate, st->pass, a->path, a->source, o->device) < 0 ||
	     mp_gate_trace_set_window(&st->gate, a->window) < 0))
		return mp_err(err, MP_ENOMEM, "out of memory");
	st->gate.truncated = a->truncated;
	st->gate.lossy = a->lossy;
	a->device = o->device;
	a->top = o->top;
	a->stack_depth = 3;
	st->in = (struct mp_report_input){
	        .a = a,
	        .timeline = &st->pass->timeline,
	        .runs = &st->runs.view,
	        .command_line = st->meta[META_COMMAND],
	        .created = st->meta[META_CREATED],
	        .tool_version = st->meta[META_VERSION],
	        .frag_series = &st->series,
	        .phases = &st->phases,
	        .devices = st->devices,
	        .n_devices = st->n_devices,
	        .spans = o->md ? NULL : &st->spans,
	        .max_blocks = o->blocks,
	        .gate = o->md ? NULL : &st->gate,
	        .clock = st->meta[META_CLOCK],
	        .allocator_settings = st->meta[META_SETTINGS],
	        .private_pools = st->meta[META_POOLS],
	};
	return 0;
}

int mp_report_load(const char *path, const struct mp_report_opts *o, struct mp_report_trace **out,
                   struct mp_error *err)
{
	struct mp_report_trace *st = calloc(1, sizeof(*st));
	int rc;

	if (!(*out = st))
		return mp_err(err, MP_ENOMEM, "out of memory");
	st->o = o;
	if (mp_cmd_open_trace(&mp_cmd_report, &st->s, path, err) < 0 ||
	    mp_load_runs(path, &st->runs, err) < 0)
		return err->code;
	if ((rc = analyze(st, err)) == 0)
		rc = fill(st, err);
	return rc;
}

void mp_report_unload(struct mp_report_trace *st)
{
	if (!st)
		return;
	state_free(st);
	if (st->s)
		mp_store_close(st->s);
	free(st);
}
