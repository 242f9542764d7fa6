/*
 * report/analyze_plan_json.c - the "plan" object of 'memprof analyze
 * --json' (layout in memprof-analyze(1), PLAN METRICS): steps and how they
 * were found, every step's fragmentation per device with the trend, the
 * allocation overhead and call times, the OOM verdicts.  Plain results in,
 * cJSON out; the lists that grow with the trace (the steps, the OOMs) as
 * lazy arrays (report/json_lazy), made item by item when written.
 */
#include "report/analyze_out.h"
#include "report/json_lazy.h"
#include "report/json_util.h"
#include "util/error.h"

#include <cjson/cJSON.h>

static void add_ratio(cJSON *o, const char *key, double v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

static void add_mark(cJSON *o, const char *prefix, const struct mp_step_mark *m)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_seq", prefix);
	mp_json_add_known(o, key, m->seq ? m->seq : -1);
	snprintf(key, sizeof(key), "%s_ts_ns", prefix);
	if (m->seq)
		mp_json_add_int(o, key, m->ts_ns);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *candidates_json(const struct mp_steps *s)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < s->n_cands; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", s->cands[i].first_name);
		mp_json_add_int(o, "begins", s->cands[i].n_begins);
		mp_json_add_int(o, "top_level_begins", s->cands[i].n_top_level);
		mp_json_add_int(o, "begins_in_other_processes", s->cands[i].n_other_processes);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *steps_json(const struct mp_plan *p)
{
	const struct mp_steps_result *r = &p->steps.result;
	const struct mp_steps_period *pe = &p->steps.period;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "method", mp_steps_method_name(r->method));
	cJSON_AddStringToObject(o, "why", r->why);
	mp_json_add_int(o, "count", (int64_t)p->n_steps);
	mp_json_add_int(o, "not_kept", r->n_dropped);
	if (r->name)
		cJSON_AddStringToObject(o, "name", r->name);
	else
		cJSON_AddNullToObject(o, "name");
	cJSON_AddItemToObject(o, "candidates", candidates_json(&p->steps));
	if (r->method == MP_STEPS_PERIOD) {
		mp_json_add_int(o, "period_allocs", pe->period);
		mp_json_add_int(o, "periodic_from_alloc", pe->start_index + 1);
		mp_json_add_int(o, "anchor_size_bytes", pe->anchor_size_bytes);
		mp_json_add_int(o, "anchor_stack_id", pe->anchor_stack_id);
		mp_json_add_int(o, "process_id", pe->process_id);
		mp_json_add_int(o, "device", pe->device);
	} else {
		cJSON_AddNullToObject(o, "period_allocs");
	}
	mp_json_add_int(o, "allocs_searched", pe->n_searched);
	cJSON_AddStringToObject(o, "last_step_ends",
	                        p->n_steps == 0   ? "none"
	                        : r->last_end.seq ? "phase-end"
	                                          : "trace-end");
	return o;
}

/* Lazy: step i of device pd (b) of plan p (a). */
static int step_json(const void *a, const void *b, size_t i, cJSON **item)
{
	const struct mp_plan *p = a;
	const struct mp_plan_device *pd = b;
	const struct mp_plan_point *pt;
	cJSON *o;

	if (i >= p->n_steps)
		return 0;
	pt = &pd->at_end[i];
	if (!(*item = o = cJSON_CreateObject()))
		return MP_ENOMEM;
	mp_json_add_int(o, "step", (int64_t)i + 1);
	add_mark(o, "start", &p->step_list[i].start);
	add_mark(o, "end", &p->step_list[i].end);
	mp_json_add_known(o, "live_bytes", pt->seen ? pt->live_bytes : -1);
	mp_json_add_known(o, "reserved_bytes", pt->seen ? pt->reserved_bytes : -1);
	mp_json_add_known(o, "free_in_reserved_bytes", pt->seen ? pt->free_in_reserved_bytes : -1);
	mp_json_add_known(o, "largest_hole_bytes", pt->seen ? pt->largest_free_bytes : -1);
	add_ratio(o, "free_share", mp_plan_frag_ratio(pt));
	add_ratio(o, "external_fragmentation", mp_plan_external_ratio(pt));
	return 1;
}

static cJSON *trend_json(const struct mp_plan_frag_trend *t)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_int(o, "steps_known", t->n_known);
	if (t->fit.has_slope) {
		cJSON_AddNumberToObject(o, "slope_per_step", t->fit.slope);
		cJSON_AddNumberToObject(o, "intercept", t->fit.intercept);
	} else {
		cJSON_AddNullToObject(o, "slope_per_step");
		cJSON_AddNullToObject(o, "intercept");
	}
	mp_json_add_known(o, "last_step", t->n_known ? t->last_step : -1);
	add_ratio(o, "last_free_share", t->n_known ? t->last_ratio : -1);
	mp_json_add_int(o, "target_step", MP_PLAN_TARGET_STEP);
	cJSON_AddNumberToObject(o, "target_free_share", MP_PLAN_TARGET_FRAG);
	add_ratio(o, "at_target_step", t->has_target ? t->target_ratio : -1);
	if (t->has_target) {
		cJSON_AddBoolToObject(o, "at_target_step_measured", t->target_measured);
		cJSON_AddBoolToObject(o, "meets_target", t->target_ratio < MP_PLAN_TARGET_FRAG);
	} else {
		cJSON_AddNullToObject(o, "at_target_step_measured");
		cJSON_AddNullToObject(o, "meets_target");
	}
	return o;
}

static cJSON *frag_json(const struct mp_plan *p, struct mp_json_lazy *lz)
{
	cJSON *a = cJSON_CreateArray();
	int k;

	for (k = 0; k < p->n_devices; k++) {
		const struct mp_plan_device *pd = &p->devices[k];
		cJSON *o = cJSON_CreateObject();

		mp_json_add_int(o, "device", pd->device);
		cJSON_AddStringToObject(o, "model", mp_frag_model_name(pd->model));
		mp_json_add_lazy_array(o, "steps", lz, step_json, p, pd);
		cJSON_AddItemToObject(o, "free_share_trend", trend_json(&pd->trend));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *hist_json(const struct mp_hist *h)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_int(o, "calls", h->n);
	mp_json_add_known(o, "p50_ns", mp_hist_quantile(h, 0.5));
	mp_json_add_known(o, "p99_ns", mp_hist_quantile(h, 0.99));
	mp_json_add_known(o, "min_ns", h->n ? h->min_ns : -1);
	mp_json_add_known(o, "max_ns", h->n ? h->max_ns : -1);
	return o;
}

static cJSON *classes_json(const struct mp_plan *p, int kind)
{
	cJSON *a = cJSON_CreateArray();
	char label[48];
	int k;

	for (k = 0; k < MP_PLAN_SIZE_CLASSES; k++) {
		const struct mp_hist *h = &p->overhead.by_class[kind][k];
		cJSON *o;

		if (h->n == 0)
			continue;
		o = hist_json(h);
		mp_json_add_int(o, "size_class", k);
		mp_json_add_int(o, "min_bytes", mp_size_class_min(k));
		mp_json_add_int(o, "max_bytes", mp_size_class_max(k));
		cJSON_AddStringToObject(o, "label", mp_size_class_text(label, sizeof(label), k));
		if (kind == MP_CALL_ALLOC)
			cJSON_AddBoolToObject(o, "common", mp_plan_class_common(p, k));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *overhead_json(const struct mp_plan *p)
{
	const struct mp_plan_overhead *ov = &p->overhead;
	int64_t span = mp_plan_span_ns(p);
	cJSON *o = cJSON_CreateObject(), *h;
	int known = ov->n_with_duration > 0, met = mp_plan_alloc_target_met(p);

	cJSON_AddBoolToObject(o, "durations", known);
	mp_json_add_int(o, "calls", ov->n_calls);
	mp_json_add_int(o, "alloc_calls", ov->n_by_kind[MP_CALL_ALLOC]);
	mp_json_add_int(o, "free_calls", ov->n_by_kind[MP_CALL_FREE]);
	mp_json_add_int(o, "calls_with_duration", ov->n_with_duration);
	mp_json_add_int(o, "calls_without_duration", ov->n_calls - ov->n_with_duration);
	mp_json_add_known(o, "time_in_calls_ns", known ? ov->time_ns : -1);
	mp_json_add_int(o, "wall_span_ns", span);
	add_ratio(o, "share", known && span > 0 ? (double)ov->time_ns / (double)span : -1);
	cJSON_AddNumberToObject(o, "target_share", MP_PLAN_TARGET_SHARE);
	if (known && span > 0)
		cJSON_AddBoolToObject(o, "meets_share_target",
		                      (double)ov->time_ns < MP_PLAN_TARGET_SHARE * (double)span);
	else
		cJSON_AddNullToObject(o, "meets_share_target");
	h = cJSON_AddObjectToObject(o, "histogram");
	cJSON_AddStringToObject(h, "size_classes", "powers of two");
	mp_json_add_int(h, "exact_below_ns", MP_HIST_EXACT_NS);
	cJSON_AddNumberToObject(h, "max_relative_error", 1.0 / (2 * MP_HIST_SUB));
	cJSON_AddItemToObject(o, "alloc", hist_json(&ov->all[MP_CALL_ALLOC]));
	cJSON_AddItemToObject(o, "free", hist_json(&ov->all[MP_CALL_FREE]));
	cJSON_AddItemToObject(o, "alloc_by_size", classes_json(p, MP_CALL_ALLOC));
	cJSON_AddItemToObject(o, "free_by_size", classes_json(p, MP_CALL_FREE));
	mp_json_add_int(o, "target_alloc_ns", MP_PLAN_TARGET_ALLOC_NS);
	cJSON_AddNumberToObject(o, "common_share", MP_PLAN_COMMON_SHARE);
	if (met < 0)
		cJSON_AddNullToObject(o, "meets_alloc_target");
	else
		cJSON_AddBoolToObject(o, "meets_alloc_target", met);
	return o;
}

/* Lazy: OOM i of the analysis (a), the devices in their order. */
static int oom_json(const void *a_, const void *b, size_t i, cJSON **item)
{
	const struct mp_analysis *a = a_;
	int order[MP_MEM_MAX_DEVICES], n = mp_analyze_device_order(a, order), k;
	const struct mp_frag_device *fd = NULL;
	const struct mp_frag_oom *oom;
	cJSON *e;

	(void)b;
	for (k = 0; k < n; k++) {
		fd = mp_frag_device(a->frag, a->ms->devices[order[k]].device);
		if (fd && i < fd->n_ooms)
			break;
		if (fd)
			i -= fd->n_ooms;
	}
	if (k == n)
		return 0;
	oom = &fd->ooms[i];
	if (!(*item = e = cJSON_CreateObject()))
		return MP_ENOMEM;
	mp_json_add_int(e, "device", fd->device);
	mp_json_add_int(e, "seq", oom->at.seq);
	mp_json_add_int(e, "ts_ns", oom->at.ts_ns);
	mp_json_add_int(e, "requested_bytes", oom->requested_bytes);
	mp_json_add_known(e, "free_in_reserved_bytes", oom->at.free_in_reserved_bytes);
	mp_json_add_known(e, "largest_hole_bytes", oom->at.largest_free_bytes);
	cJSON_AddStringToObject(e, "verdict",
	                        mp_plan_verdict_name(mp_plan_oom_verdict(
	                                oom->requested_bytes, oom->at.free_in_reserved_bytes,
	                                oom->at.largest_free_bytes)));
	return 1;
}

static cJSON *ooms_json(const struct mp_analysis *a, const struct mp_plan *p,
                        struct mp_json_lazy *lz)
{
	cJSON *o = cJSON_CreateObject(), *counts;
	int v;
	int64_t total = 0;

	counts = cJSON_AddObjectToObject(o, "verdicts");
	for (v = 0; v < MP_OOM_VERDICTS; v++) {
		mp_json_add_int(counts, mp_plan_verdict_name(v), p->n_ooms[v]);
		total += p->n_ooms[v];
	}
	mp_json_add_int(o, "count", total);
	mp_json_add_lazy_array(o, "list", lz, oom_json, a, NULL);
	return o;
}

cJSON *mp_analyze_plan_json(const struct mp_analysis *a, struct mp_json_lazy *lz)
{
	const struct mp_plan *p = a->plan;
	cJSON *o;

	if (!p)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "steps", steps_json(p));
	cJSON_AddItemToObject(o, "fragmentation", frag_json(p, lz));
	cJSON_AddItemToObject(o, "overhead", overhead_json(p));
	cJSON_AddItemToObject(o, "ooms", ooms_json(a, p, lz));
	return o;
}
