/*
 * load/analysis_load.c - report/'s struct mp_analysis from a trace's meta
 * and the pass run over it, and analyze's reading of a trace: the pass,
 * then the results, ranks, plan and NUMA placement (load/analysis_load.h).
 */
#include "load/analysis_load.h"
#include "load/trace_meta.h"
#include "util/trace_window.h"

#include <stdlib.h>
#include <string.h>

void mp_load_analysis(struct mp_analysis *a, struct mp_store *s, const struct mp_pass *p,
                      const char *source, const char *window)
{
	a->path = mp_store_path(s);
	a->source = source;
	a->truncated = mp_load_meta_flag(s, "truncated");
	a->lossy = mp_load_meta_flag(s, "lossy");
	a->window = mp_trace_window(source, window, a->truncated);
	a->modelled_granted_blocks = mp_load_meta_int(s, "modelled_granted_blocks");
	a->opts = p->opts;
	if (a->opts.at == MP_ATTR_AT_TIME)
		a->opts.at_ts_ns = mp_pass_at_ts_ns(p);
	a->no_timestamps = p->opts.life.no_timestamps;
	a->ms = &p->ms;
	a->frag = &p->frag;
	a->attr = &p->attr;
	a->life = &p->life;
}

int mp_analyze_load_pass(struct mp_store *s, const struct mp_analysis *a, int64_t timeline_points,
                         const char *step_name, struct mp_analyze_load *l, struct mp_error *err)
{
	struct mp_pass_opts po = a->opts;

	memset(l, 0, sizeof(*l));
	po.life.no_timestamps = mp_load_no_timestamps(s);
	po.life.keep = a->top;
	po.timeline_points = timeline_points;
	po.ranks = 1;
	po.ranks_device = a->device;
	po.plan = 1;
	po.step_name = step_name;
	po.plan_device = a->device;
	return mp_pass_run(s, &po, NULL, NULL, &l->pass, &l->r, err);
}

int mp_analyze_load_fill(struct mp_store *s, struct mp_analysis *a, struct mp_analyze_load *l,
                         struct mp_error *err)
{
	int rc = mp_numa_load(s, a->device, &l->numa, err);

	if (rc != 0)
		return rc;
	a->numa = &l->numa;
	l->source = mp_store_get_meta(s, "source");
	l->window = mp_store_get_meta(s, MP_WINDOW_META);
	mp_load_analysis(a, s, l->pass, l->source, l->window);
	a->ranks = &l->pass->ranks;
	a->plan = l->pass->opts.plan ? &l->pass->plan : NULL;
	return 0;
}

void mp_analyze_load_free(struct mp_analyze_load *l)
{
	free(l->source);
	free(l->window);
	mp_numa_free(&l->numa);
	mp_pass_close(l->pass, l->r);
}
