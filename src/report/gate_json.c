/*
 * report/gate_json.c - 'memprof diff' and 'memprof check' as JSON for
 * programs: the traces, per device the figures (BASE, HEAD and their
 * change for diff), the call sites, the pools, every threshold result with
 * its sentence, and the notes.  Layout in memprof-diff(1), versioned by
 * MP_GATE_JSON_VERSION; sizes are exact integers, ratios exact to 10^-9.
 */
#include "report/gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_util.h"
#include "util/error.h"

/* A number in parts per 10^9 (a ratio, or a percent limit) as an exact
 * decimal; null when negative unless with_sign (a change). */
static void add_ratio(cJSON *o, const char *key, int64_t nano, int with_sign)
{
	int64_t a = nano < 0 ? -nano : nano;
	char t[48], *end;

	if (nano < 0 && !with_sign) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	snprintf(t, sizeof(t), "%s%lld.%09lld", nano < 0 ? "-" : "", (long long)(a / MP_GATE_NANO),
	         (long long)(a % MP_GATE_NANO));
	for (end = t + strlen(t) - 1; *end == '0'; end--)
		*end = '\0';
	if (*end == '.')
		*end = '\0';
	cJSON_AddRawToObject(o, key, t);
}

static void add_double(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void add_trace(cJSON *root, const char *key, const struct mp_gate_trace *t)
{
	cJSON *o = cJSON_AddObjectToObject(root, key);

	if (!o)
		return;
	cJSON_AddStringToObject(o, "path", t->path);
	if (t->source)
		cJSON_AddStringToObject(o, "source", t->source);
	else
		cJSON_AddNullToObject(o, "source");
	cJSON_AddBoolToObject(o, "truncated", t->truncated);
	cJSON_AddBoolToObject(o, "lossy", t->lossy);
	if (t->window)
		cJSON_AddStringToObject(o, "window", t->window);
	else
		cJSON_AddNullToObject(o, "window");
}

static cJSON *figures(const struct mp_gate_device *d)
{
	cJSON *o = cJSON_CreateObject(), *p;

	if (!o)
		return NULL;
	if ((p = cJSON_AddObjectToObject(o, "peak_live"))) {
		mp_json_add_int(p, "bytes", d->peak_live_bytes);
		mp_json_add_int(p, "ts_ns", d->peak_live_ts_ns);
		mp_json_add_int(p, "seq", d->peak_live_seq);
	}
	cJSON_AddStringToObject(o, "reserved_from", mp_gate_reserved_name(d->reserved));
	if ((p = cJSON_AddObjectToObject(o, "peak_reserved"))) {
		mp_json_add_known(p, "bytes", d->peak_reserved_bytes);
		mp_json_add_int(p, "ts_ns", d->peak_reserved_ts_ns);
		mp_json_add_int(p, "seq", d->peak_reserved_seq);
	}
	mp_json_add_known(o, "free_in_reserved_bytes", d->free_in_reserved_bytes);
	mp_json_add_known(o, "largest_hole_bytes", d->largest_free_bytes);
	add_ratio(o, "free_share", d->free_share_nano, 0);
	add_ratio(o, "external_fragmentation", d->external_nano, 0);
	if (d->window) { /* a window claims no leaks (util/trace_window.h) */
		cJSON_AddNullToObject(o, "leaked_bytes");
		cJSON_AddNullToObject(o, "leaked_blocks");
	} else {
		mp_json_add_int(o, "leaked_bytes", d->leaked_bytes);
		mp_json_add_int(o, "leaked_blocks", d->leaked_blocks);
	}
	mp_json_add_int(o, "live_at_end_bytes", d->leaked_bytes);
	mp_json_add_int(o, "live_at_end_blocks", d->leaked_blocks);
	mp_json_add_int(o, "ooms", d->n_ooms);
	return o;
}

static void add_percent(cJSON *o, const char *key, int64_t b, int64_t h)
{
	if (b < 0 || h < 0 || (b == 0 && h > 0))
		cJSON_AddNullToObject(o, key); /* unknown, or growth from 0 */
	else
		add_double(o, key, b == 0 ? 0.0 : 100.0 * (double)(h - b) / (double)b);
}

static cJSON *change(const struct mp_gate_device *b, const struct mp_gate_device *h)
{
	cJSON *o = cJSON_CreateObject();
	int reserved = b->peak_reserved_bytes >= 0 && h->peak_reserved_bytes >= 0 &&
	               b->reserved == h->reserved;

	if (!o)
		return NULL;
	mp_json_add_int(o, "peak_live_bytes", h->peak_live_bytes - b->peak_live_bytes);
	add_percent(o, "peak_live_percent", b->peak_live_bytes, h->peak_live_bytes);
	if (reserved) {
		mp_json_add_int(o, "peak_reserved_bytes",
		                h->peak_reserved_bytes - b->peak_reserved_bytes);
		add_percent(o, "peak_reserved_percent", b->peak_reserved_bytes,
		            h->peak_reserved_bytes);
	} else {
		cJSON_AddNullToObject(o, "peak_reserved_bytes");
		cJSON_AddNullToObject(o, "peak_reserved_percent");
	}
	if (reserved && b->free_share_nano >= 0 && h->free_share_nano >= 0)
		add_ratio(o, "free_share", h->free_share_nano - b->free_share_nano, 1);
	else
		cJSON_AddNullToObject(o, "free_share");
	if (b->window || h->window) {
		cJSON_AddNullToObject(o, "leaked_bytes");
		cJSON_AddNullToObject(o, "leaked_blocks");
	} else {
		mp_json_add_int(o, "leaked_bytes", h->leaked_bytes - b->leaked_bytes);
		mp_json_add_int(o, "leaked_blocks", h->leaked_blocks - b->leaked_blocks);
	}
	mp_json_add_int(o, "live_at_end_bytes", h->leaked_bytes - b->leaked_bytes);
	mp_json_add_int(o, "live_at_end_blocks", h->leaked_blocks - b->leaked_blocks);
	mp_json_add_int(o, "ooms", h->n_ooms - b->n_ooms);
	return o;
}

static cJSON *lines_array(const struct mp_gate_site *s)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; a && i < s->n_lines; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->lines[i]));
	return a;
}

static void site_fields(cJSON *o, const struct mp_gate_site *s)
{
	cJSON_AddStringToObject(o, "key", s->key);
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "file", s->file);
	mp_json_add_int(o, "line", s->line);
	cJSON_AddItemToObject(o, "lines", lines_array(s));
	mp_json_add_int(o, "stacks", s->n_stacks);
}

static cJSON *sites_check(const struct mp_gate_device *d, int top)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; a && i < d->n_sites && i < (size_t)top; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		site_fields(o, &d->sites[i]);
		mp_json_add_int(o, "bytes", d->sites[i].bytes);
		mp_json_add_int(o, "blocks", d->sites[i].blocks);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *sites_diff(const struct mp_gate_device_change *c, int top)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; a && i < c->n_sites && i < (size_t)top; i++) {
		const struct mp_gate_site_change *sc = &c->sites[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		site_fields(o, sc->head ? sc->head : sc->base);
		mp_json_add_known(o, "base_bytes", sc->base ? sc->base->bytes : -1);
		mp_json_add_known(o, "head_bytes", sc->head ? sc->head->bytes : -1);
		mp_json_add_int(o, "delta_bytes", sc->delta_bytes);
		mp_json_add_known(o, "base_blocks", sc->base ? sc->base->blocks : -1);
		mp_json_add_known(o, "head_blocks", sc->head ? sc->head->blocks : -1);
		cJSON_AddStringToObject(o, "status",
		                        !sc->base             ? "new"
		                        : !sc->head           ? "gone"
		                        : sc->delta_bytes > 0 ? "grew"
		                                              : "shrank");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static void add_devices(cJSON *root, const struct mp_gate_report *r)
{
	cJSON *a = cJSON_AddArrayToObject(root, "devices");
	size_t i, n = r->diff ? r->diff->n_devices : r->head->n_devices;

	for (i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		cJSON_AddItemToArray(a, o);
		if (!r->diff) {
			const struct mp_gate_device *d = &r->head->devices[i];

			mp_json_add_int(o, "device", d->device);
			cJSON_AddItemToObject(o, "figures", figures(d));
			mp_json_add_int(o, "n_sites", (int64_t)d->n_sites);
			cJSON_AddItemToObject(o, "sites", sites_check(d, r->top));
			continue;
		}
		{
			const struct mp_gate_device_change *c = &r->diff->devices[i];

			mp_json_add_int(o, "device", c->device);
			cJSON_AddBoolToObject(o, "in_base", c->base != NULL);
			cJSON_AddBoolToObject(o, "in_head", c->head != NULL);
			cJSON_AddItemToObject(o, "base",
			                      c->base ? figures(c->base) : cJSON_CreateNull());
			cJSON_AddItemToObject(o, "head",
			                      c->head ? figures(c->head) : cJSON_CreateNull());
			if (!c->base || !c->head) {
				cJSON_AddNullToObject(o, "change");
				continue;
			}
			cJSON_AddItemToObject(o, "change", change(c->base, c->head));
			mp_json_add_int(o, "n_sites", (int64_t)c->n_sites);
			cJSON_AddItemToObject(o, "sites", sites_diff(c, r->top));
		}
	}
}

static cJSON *pool_figures(const struct mp_gate_pool *p)
{
	cJSON *o;

	if (!p)
		return cJSON_CreateNull();
	if (!(o = cJSON_CreateObject()))
		return NULL;
	mp_json_add_int(o, "run", p->run_id);
	mp_json_add_known(o, "peak_reserved_bytes", p->peak_reserved_bytes);
	mp_json_add_known(o, "total_ns", p->total_ns);
	cJSON_AddStringToObject(o, "time", p->time_measured ? "measured" : "modelled");
	return o;
}

static cJSON *pool(const struct mp_gate_pool *b, const struct mp_gate_pool *h, int diff,
                   int times_comparable)
{
	const struct mp_gate_pool *p = b ? b : h;
	cJSON *o = cJSON_CreateObject(), *c;

	if (!o)
		return NULL;
	mp_json_add_int(o, "device", p->device);
	cJSON_AddStringToObject(o, "pool", p->pool);
	cJSON_AddStringToObject(o, "backend", p->backend);
	if (!diff) {
		cJSON_AddItemToObject(o, "figures", pool_figures(h));
		return o;
	}
	cJSON_AddItemToObject(o, "base", pool_figures(b));
	cJSON_AddItemToObject(o, "head", pool_figures(h));
	if (!b || !h || !(c = cJSON_AddObjectToObject(o, "change"))) {
		cJSON_AddNullToObject(o, "change");
		return o;
	}
	if (b->peak_reserved_bytes >= 0 && h->peak_reserved_bytes >= 0)
		mp_json_add_int(c, "peak_reserved_bytes",
		                h->peak_reserved_bytes - b->peak_reserved_bytes);
	else
		cJSON_AddNullToObject(c, "peak_reserved_bytes");
	add_percent(c, "peak_reserved_percent", b->peak_reserved_bytes, h->peak_reserved_bytes);
	cJSON_AddBoolToObject(c, "times_compared", times_comparable);
	if (times_comparable)
		mp_json_add_int(c, "total_ns", h->total_ns - b->total_ns);
	else
		cJSON_AddNullToObject(c, "total_ns");
	return o;
}

static void add_pools(cJSON *root, const struct mp_gate_report *r)
{
	cJSON *a = cJSON_AddArrayToObject(root, "pools");
	size_t i;

	if (!a)
		return;
	if (!r->diff) {
		for (i = 0; i < r->head->n_pools; i++)
			cJSON_AddItemToArray(a, pool(NULL, &r->head->pools[i], 0, 0));
		return;
	}
	for (i = 0; i < r->diff->n_pools; i++) {
		const struct mp_gate_pool_change *c = &r->diff->pools[i];

		cJSON_AddItemToArray(a, pool(c->base, c->head, 1, c->times_comparable));
	}
}

static const char *const unit_names[] = {"bytes", "percent", "ratio", "count"};
static const char *const outcome_names[] = {"pass", "exceeded", "not_checked"};

/* The figures of a result, in the limit's unit (ratios as decimals). */
static void result_figures(cJSON *o, const struct mp_gate_result *res, int diff)
{
	int ratio = res->limit->unit == MP_GATE_RATIO;

	if (res->outcome == MP_GATE_NOT_CHECKED) {
		cJSON_AddNullToObject(o, "base");
		cJSON_AddNullToObject(o, "head");
		cJSON_AddNullToObject(o, "figure");
		cJSON_AddNullToObject(o, "over");
		return;
	}
	if (!diff || res->limit->kind == MP_GATE_FREE_SHARE || res->base < 0)
		cJSON_AddNullToObject(o, "base");
	else if (ratio)
		add_ratio(o, "base", res->base, 0);
	else
		mp_json_add_int(o, "base", res->base);
	if (ratio)
		add_ratio(o, "head", res->head, 0);
	else
		mp_json_add_int(o, "head", res->head);
	add_double(o, "figure", res->figure);
	if (res->outcome == MP_GATE_EXCEEDED)
		add_double(o, "over", res->over);
	else
		cJSON_AddNullToObject(o, "over");
}

static void add_results(cJSON *root, const struct mp_gate_report *r)
{
	cJSON *a = cJSON_AddArrayToObject(root, "thresholds");
	char buf[600];
	size_t i;

	for (i = 0; a && i < r->n_results; i++) {
		const struct mp_gate_result *res = &r->results[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		cJSON_AddItemToArray(a, o);
		cJSON_AddStringToObject(o, "option",
		                        mp_gate_limit_text(buf, sizeof(buf), res->limit));
		cJSON_AddStringToObject(o, "name", mp_gate_kind_option(res->limit->kind));
		cJSON_AddStringToObject(o, "unit", unit_names[res->limit->unit]);
		if (res->limit->unit == MP_GATE_BYTES || res->limit->unit == MP_GATE_COUNT)
			mp_json_add_int(o, "limit", res->limit->value);
		else
			add_ratio(o, "limit", res->limit->value, 0); /* percent: the same decimal */
		mp_json_add_int(o, "device", res->device);
		if (res->head_pool) {
			cJSON_AddStringToObject(o, "pool", res->head_pool->pool);
			cJSON_AddStringToObject(o, "backend", res->head_pool->backend);
		}
		cJSON_AddStringToObject(o, "outcome", outcome_names[res->outcome]);
		cJSON_AddBoolToObject(o, "modelled", res->modelled);
		result_figures(o, res, r->diff != NULL);
		cJSON_AddStringToObject(o, "message", mp_gate_result_text(buf, sizeof(buf), res));
	}
}

static void add_note(void *ctx, const char *note)
{
	cJSON_AddItemToArray(ctx, cJSON_CreateString(note));
}

int mp_gate_write_json(FILE *out, const struct mp_gate_report *r)
{
	cJSON *root = cJSON_CreateObject(), *notes;
	size_t n_exceeded = mp_gate_n_exceeded(r);
	int failed = mp_gate_failed(r);
	int rc;

	if (!root)
		return MP_ENOMEM;
	mp_json_add_int(root, "memprof_gate_version", MP_GATE_JSON_VERSION);
	cJSON_AddStringToObject(root, "command", r->command);
	if (r->base)
		add_trace(root, "base", r->base);
	add_trace(root, r->base ? "head" : "trace", r->head);
	if (r->device >= 0)
		mp_json_add_int(root, "device", r->device);
	else
		cJSON_AddNullToObject(root, "device");
	mp_json_add_int(root, "granularity_bytes", (int64_t)r->head->granularity);
	add_devices(root, r);
	add_pools(root, r);
	add_results(root, r);
	mp_json_add_int(root, "exceeded", (int64_t)n_exceeded);
	mp_json_add_int(root, "passed", (int64_t)mp_gate_n_passed(r));
	mp_json_add_int(root, "not_checked", (int64_t)mp_gate_n_unchecked(r));
	cJSON_AddBoolToObject(root, "require_checked", r->require_checked);
	cJSON_AddStringToObject(root, "status", failed ? "fail" : "pass");
	if ((notes = cJSON_AddArrayToObject(root, "notes")))
		mp_gate_notes(r, add_note, notes);
	rc = mp_json_write(out, root);
	cJSON_Delete(root);
	return rc;
}
