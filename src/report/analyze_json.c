/*
 * report/analyze_json.c - the JSON rendering of 'memprof analyze' (layout
 * in memprof-analyze(1), versioned by MP_ANALYZE_JSON_VERSION), built with
 * cJSON from plain results; the lists that grow with the trace (OOMs, the
 * plan's steps) made item by item as they are written (report/json_lazy).
 */
#include "report/analyze_out.h"
#include "report/json_lazy.h"
#include "report/json_util.h"
#include "util/error.h"
#include "util/stack_text.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static void add_ratio(cJSON *o, const char *key, int64_t part, int64_t whole)
{
	cJSON_AddNumberToObject(o, key, whole > 0 ? (double)part / (double)whole : 0.0);
}

cJSON *mp_analyze_peak_json(const struct mp_mem_peak *p)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_int(o, "bytes", p->bytes);
	mp_json_add_int(o, "ts_ns", p->ts_ns);
	mp_json_add_int(o, "seq", p->seq);
	return o;
}

static cJSON *point_json(const struct mp_frag_point *p)
{
	cJSON *o;

	if (p->seq == 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	mp_json_add_int(o, "ts_ns", p->ts_ns);
	mp_json_add_int(o, "seq", p->seq);
	mp_json_add_int(o, "live_bytes", p->live_bytes);
	mp_json_add_int(o, "requested_bytes", p->requested_bytes);
	mp_json_add_known(o, "reserved_bytes", p->reserved_bytes);
	mp_json_add_int(o, "internal_fragmentation_bytes", p->live_bytes - p->requested_bytes);
	add_ratio(o, "internal_fragmentation_share", p->live_bytes - p->requested_bytes,
	          p->live_bytes);
	mp_json_add_known(o, "free_in_reserved_bytes", p->free_in_reserved_bytes);
	mp_json_add_known(o, "largest_hole_bytes", p->largest_free_bytes);
	if (p->free_in_reserved_bytes < 0 || p->largest_free_bytes < 0)
		cJSON_AddNullToObject(o, "external_fragmentation");
	else if (p->free_in_reserved_bytes == 0 ||
	         p->largest_free_bytes > p->free_in_reserved_bytes)
		cJSON_AddNumberToObject(o, "external_fragmentation", 0.0);
	else
		cJSON_AddNumberToObject(o, "external_fragmentation",
		                        1.0 - (double)p->largest_free_bytes /
		                                        (double)p->free_in_reserved_bytes);
	return o;
}

static cJSON *time_weighted_json(const struct mp_frag_device *fd)
{
	const struct mp_frag_integrals *tw = &fd->tw;
	cJSON *o;

	if (tw->span_ns <= 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	mp_json_add_int(o, "span_ns", tw->span_ns);
	mp_json_add_int(o, "since_seq", fd->model_since_seq);
	cJSON_AddNumberToObject(o, "internal_fragmentation_bytes",
	                        tw->internal / (double)tw->span_ns);
	cJSON_AddNumberToObject(o, "internal_fragmentation_share",
	                        tw->live > 0 ? tw->internal / tw->live : 0.0);
	if (fd->model == MP_FRAG_NONE || tw->n_unknown > 0) {
		cJSON_AddNullToObject(o, "free_in_reserved_bytes");
		cJSON_AddNullToObject(o, "external_fragmentation");
	} else {
		cJSON_AddNumberToObject(o, "free_in_reserved_bytes",
		                        tw->free / (double)tw->span_ns);
		cJSON_AddNumberToObject(o, "external_fragmentation",
		                        tw->ext_ratio / (double)tw->span_ns);
	}
	return o;
}

static cJSON *frag_json(const struct mp_frag_device *fd, uint64_t granularity)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "model", mp_frag_model_name(fd->model));
	if (fd->model == MP_FRAG_ADDRESS_SPACE)
		mp_json_add_int(o, "granularity_bytes", (int64_t)granularity);
	else
		cJSON_AddNullToObject(o, "granularity_bytes");
	cJSON_AddItemToObject(o, "at_peak", point_json(&fd->at_live_peak));
	cJSON_AddItemToObject(o, "at_reserved_peak", point_json(&fd->at_reserved_peak));
	cJSON_AddItemToObject(o, "at_end", point_json(&fd->at_end));
	cJSON_AddItemToObject(o, "time_weighted", time_weighted_json(fd));
	return o;
}

static void add_fits(cJSON *o, const char *key, int64_t request, int64_t room)
{
	if (room < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddBoolToObject(o, key, request <= room);
}

/* Lazy: OOM i of device fd (a). */
static int oom_json(const void *a, const void *b, size_t i, cJSON **item)
{
	const struct mp_frag_device *fd = a;
	const struct mp_frag_oom *oom;
	cJSON *o;

	(void)b;
	if (i >= fd->n_ooms)
		return 0;
	oom = &fd->ooms[i];
	if (!(*item = o = cJSON_CreateObject()))
		return MP_ENOMEM;
	mp_json_add_int(o, "seq", oom->at.seq);
	mp_json_add_int(o, "ts_ns", oom->at.ts_ns);
	mp_json_add_int(o, "requested_bytes", oom->requested_bytes);
	mp_json_add_known(o, "device_free_bytes", oom->device_free_bytes);
	mp_json_add_int(o, "live_bytes", oom->at.live_bytes);
	mp_json_add_known(o, "reserved_bytes", oom->at.reserved_bytes);
	mp_json_add_known(o, "free_in_reserved_bytes", oom->at.free_in_reserved_bytes);
	mp_json_add_known(o, "largest_hole_bytes", oom->at.largest_free_bytes);
	add_fits(o, "fits_in_free_reserved", oom->requested_bytes, oom->at.free_in_reserved_bytes);
	add_fits(o, "fits_in_largest_free", oom->requested_bytes, oom->at.largest_free_bytes);
	return 1;
}

static void add_stack(cJSON *o, const struct memprof_stack *s)
{
	char *text = mp_stack_text_format(s, NULL);

	cJSON_AddStringToObject(o, "key", text ? text : "");
	free(text);
	cJSON_AddItemToObject(o, "frames", mp_json_frames(s));
}

static void add_group_key(cJSON *o, int kind, const struct mp_attr_group *g)
{
	char text[64];

	switch (kind) {
	case MP_ATTR_STACK:
		add_stack(o, g->stack);
		return;
	case MP_ATTR_PHASE:
	case MP_ATTR_API:
		cJSON_AddStringToObject(o, "key", g->name ? g->name : "");
		return;
	case MP_ATTR_STREAM:
		snprintf(text, sizeof(text), "%llu", (unsigned long long)g->key);
		cJSON_AddStringToObject(o, "key", text);
		return;
	default:
		mp_size_class_text(text, sizeof(text), (int)g->key);
		cJSON_AddStringToObject(o, "key", text);
		mp_json_add_int(o, "min_bytes", mp_size_class_min(g->key));
		mp_json_add_int(o, "max_bytes", mp_size_class_max(g->key));
		return;
	}
}

static cJSON *groups_json(const struct mp_attr_device *ad, int kind, int top, int64_t live)
{
	cJSON *a = cJSON_CreateArray();
	ptrdiff_t n, i;
	struct mp_attr_group *g = mp_attribution_groups(ad, kind, &n);

	for (i = 0; i < n && i < top; i++) {
		cJSON *o = cJSON_CreateObject();

		add_group_key(o, kind, &g[i]);
		mp_json_add_int(o, "count", g[i].count);
		mp_json_add_int(o, "bytes", g[i].bytes);
		mp_json_add_int(o, "requested_bytes", g[i].requested_bytes);
		add_ratio(o, "share", g[i].bytes, live);
		cJSON_AddItemToArray(a, o);
	}
	free(g);
	return a;
}

static const char *at_name(int at)
{
	return at == MP_ATTR_AT_PEAK ? "peak" : at == MP_ATTR_AT_OOM ? "oom" : "time";
}

static cJSON *attribution_json(const struct mp_analysis *a, int32_t device)
{
	const struct mp_attr_device *ad = mp_attribution_device(a->attr, device);
	cJSON *o, *groups;
	int k;

	if (!ad || !ad->taken)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "at", at_name(a->opts.at));
	mp_json_add_int(o, "seq", ad->seq);
	mp_json_add_int(o, "ts_ns", ad->ts_ns);
	mp_json_add_int(o, "live_bytes", ad->live_bytes);
	mp_json_add_int(o, "live_blocks", ad->live_blocks);
	groups = cJSON_AddObjectToObject(o, "groups");
	for (k = 0; k < MP_ATTR_KINDS; k++)
		if (a->opts.kinds & (1u << k))
			cJSON_AddItemToObject(groups, mp_attr_kind_names[k],
			                      groups_json(ad, k, a->top, ad->live_bytes));
	return o;
}

static cJSON *finding_json(const struct mp_lifetime_finding *f, int no_timestamps)
{
	cJSON *o = cJSON_CreateObject();

	add_stack(o, f->stack);
	mp_json_add_int(o, "count", f->count);
	mp_json_add_int(o, "bytes", f->bytes);
	mp_json_add_int(o, "first_seq", f->first_seq);
	mp_json_add_int(o, "site_allocs", f->site_allocs);
	if ((f->kind == MP_LIFETIME_CHURN || f->kind == MP_LIFETIME_IDLE) && no_timestamps)
		cJSON_AddNullToObject(o, "mean_lifetime_ns");
	else if (f->kind == MP_LIFETIME_CHURN || f->kind == MP_LIFETIME_IDLE)
		mp_json_add_int(o, "mean_lifetime_ns", f->mean_lifetime_ns);
	if (f->kind == MP_LIFETIME_REUSE) {
		mp_json_add_int(o, "size_bytes", f->size_bytes);
		mp_json_add_int(o, "calls_saved", f->calls_saved);
	}
	return o;
}

static cJSON *total_json(const struct mp_lifetime_total *t)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_int(o, "count", t->count);
	mp_json_add_int(o, "bytes", t->bytes);
	return o;
}

static cJSON *lifetime_json(const struct mp_analysis *a, int32_t device)
{
	cJSON *o = cJSON_CreateObject(), *totals = cJSON_CreateObject();
	struct mp_lifetime_totals t;
	int k;

	for (k = 0; k < MP_LIFETIME_N_KINDS; k++) {
		cJSON *arr = cJSON_CreateArray();
		size_t n, i;
		const struct mp_lifetime_finding *f = mp_lifetime_findings(a->life, k, &n);
		int shown = 0;

		for (i = 0; i < n && shown < a->top; i++)
			if (f[i].device == device) {
				cJSON_AddItemToArray(arr, finding_json(&f[i], a->no_timestamps));
				shown++;
			}
		cJSON_AddItemToObject(o, mp_analyze_lifetime_key(a, k), arr);
	}
	mp_lifetime_device_totals(a->life, device, &t);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		cJSON_AddItemToObject(totals, mp_analyze_lifetime_key(a, k),
		                      total_json(&t.kind[k]));
	if (a->window) { /* a window claims no leaks (util/trace_window.h) */
		cJSON_AddNullToObject(o, "leaks");
		cJSON_AddNullToObject(totals, "leaks");
	}
	cJSON_AddItemToObject(totals, "preexisting_live_at_end",
	                      total_json(&t.preexisting_live_at_end));
	cJSON_AddItemToObject(o, "totals", totals);
	return o;
}

static cJSON *device_json(const struct mp_analysis *a, const struct mp_mem_device *d,
                          struct mp_json_lazy *lz)
{
	const struct mp_frag_device *fd = mp_frag_device(a->frag, d->device);
	cJSON *o = cJSON_CreateObject(), *peaks, *end;

	mp_json_add_int(o, "device", d->device);
	mp_json_add_int(o, "events", d->n_events);
	peaks = cJSON_AddObjectToObject(o, "peaks");
	cJSON_AddItemToObject(peaks, "live", mp_analyze_peak_json(&d->live_peak));
	cJSON_AddItemToObject(peaks, "requested", mp_analyze_peak_json(&d->requested_peak));
	cJSON_AddItemToObject(peaks, "reserved",
	                      d->has_segments ? mp_analyze_peak_json(&d->reserved_peak)
	                                      : cJSON_CreateNull());
	end = cJSON_AddObjectToObject(o, "end");
	mp_json_add_int(end, "live_bytes", d->live_bytes);
	mp_json_add_int(end, "requested_bytes", d->requested_bytes);
	mp_json_add_known(end, "reserved_bytes", d->has_segments ? d->reserved_bytes : -1);
	mp_json_add_int(end, "live_blocks", d->n_live);
	cJSON_AddItemToObject(o, "fragmentation",
	                      fd ? frag_json(fd, a->opts.granularity) : cJSON_CreateNull());
	if (fd)
		mp_json_add_lazy_array(o, "ooms", lz, oom_json, fd, NULL);
	else
		cJSON_AddItemToObject(o, "ooms", cJSON_CreateArray());
	cJSON_AddItemToObject(o, "attribution", attribution_json(a, d->device));
	cJSON_AddItemToObject(o, "lifetime", lifetime_json(a, d->device));
	return o;
}

static void add_note(void *ctx, const char *note)
{
	cJSON_AddItemToArray(ctx, cJSON_CreateString(note));
}

static cJSON *options_json(const struct mp_analysis *a)
{
	cJSON *o = cJSON_CreateObject(), *by = cJSON_CreateArray();
	char at[32];
	int k;

	mp_json_add_known(o, "device", a->device);
	mp_json_add_int(o, "top", a->top);
	for (k = 0; k < MP_ATTR_KINDS; k++)
		if (a->opts.kinds & (1u << k))
			cJSON_AddItemToArray(by, cJSON_CreateString(mp_attr_kind_names[k]));
	cJSON_AddItemToObject(o, "by", by);
	if (a->opts.at == MP_ATTR_AT_TIME) {
		snprintf(at, sizeof(at), "%lld", (long long)a->opts.at_ts_ns);
		cJSON_AddStringToObject(o, "at", at);
	} else {
		cJSON_AddStringToObject(o, "at", at_name(a->opts.at));
	}
	mp_json_add_int(o, "granularity_bytes", (int64_t)a->opts.granularity);
	mp_json_add_int(o, "churn_window_ns", a->opts.life.churn_window_ns);
	cJSON_AddNumberToObject(o, "idle_share", a->opts.life.idle_min_share);
	return o;
}

int mp_analyze_print_json(FILE *out, const struct mp_analysis *a)
{
	const struct mp_memstate *ms = a->ms;
	cJSON *root = cJSON_CreateObject(), *devs;
	struct mp_json_lazy lz;
	int order[MP_MEM_MAX_DEVICES], n, i;
	int rc;

	mp_json_lazy_init(&lz);
	mp_json_add_int(root, "memprof_analyze_version", MP_ANALYZE_JSON_VERSION);
	cJSON_AddStringToObject(root, "trace", a->path);
	if (a->source)
		cJSON_AddStringToObject(root, "source", a->source);
	else
		cJSON_AddNullToObject(root, "source");
	cJSON_AddBoolToObject(root, "truncated", a->truncated);
	cJSON_AddBoolToObject(root, "lossy", a->lossy);
	if (a->window)
		cJSON_AddStringToObject(root, "window", a->window);
	else
		cJSON_AddNullToObject(root, "window");
	cJSON_AddNumberToObject(root, "modelled_granted_blocks",
	                        (double)a->modelled_granted_blocks);
	cJSON_AddBoolToObject(root, "timestamps", !a->no_timestamps);
	cJSON_AddItemToObject(root, "options", options_json(a));
	mp_json_add_int(root, "events", ms->n_events);
	mp_json_add_int(root, "span_ns", mp_memstate_span_ns(ms));
	mp_analyze_notes(a, add_note, cJSON_AddArrayToObject(root, "notes"));
	devs = cJSON_AddArrayToObject(root, "devices");
	n = mp_analyze_device_order(a, order);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(devs, device_json(a, &ms->devices[order[i]], &lz));
	cJSON_AddItemToObject(root, "ranks", mp_analyze_ranks_json(a));
	cJSON_AddItemToObject(root, "plan", mp_analyze_plan_json(a, &lz));
	cJSON_AddItemToObject(root, "numa", mp_analyze_numa_json(a));
	rc = mp_json_lazy_write(out, root, &lz);
	cJSON_Delete(root);
	mp_json_lazy_free(&lz);
	return rc < 0 ? -1 : 0;
}
