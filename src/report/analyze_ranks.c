/*
 * report/analyze_ranks.c - the "ranks" section of 'memprof analyze', as
 * text and as the JSON "ranks" object (memprof-analyze(1), RANKS): a row
 * per rank (or per process without a rank), the spread of the peaks, and
 * the call sites whose bytes at each rank's own peak differ.  Shown when
 * the trace has two or more units.
 */
#include "report/analyze_out.h"
#include "report/gate.h"
#include "report/json_util.h"
#include "util/format.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define LIST_SHOWN 3 /* pids and devices shown in a table cell */

int mp_analyze_shows_ranks(const struct mp_analysis *a)
{
	return a->ranks && a->ranks->n_units >= 2;
}

const char *mp_rank_label(char *buf, size_t n, const struct mp_rank *u)
{
	if (u->rank >= 0)
		snprintf(buf, n, "rank %lld", (long long)u->rank);
	else
		snprintf(buf, n, "pid %lld", (long long)(u->n_pids ? u->pids[0] : 0));
	return buf;
}

/* "1000,1001,+2" or "0,1": at most LIST_SHOWN items, then how many more. */
static const char *list_text(char *buf, size_t n, const int64_t *v64, const int32_t *v32,
                             size_t count)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < count && i < LIST_SHOWN && len < n; i++) {
		int64_t v = v64 ? v64[i] : v32[i];

		if (v64 && v == 0) /* a pid the trace does not know */
			len += (size_t)snprintf(buf + len, n - len, "%s?", i ? "," : "");
		else
			len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "",
			                        (long long)v);
	}
	if (count > LIST_SHOWN && len < n)
		snprintf(buf + len, n - len, ",+%zu", count - LIST_SHOWN);
	return count ? buf : "-";
}

static void headline(FILE *out, const struct mp_ranks *r)
{
	size_t unranked = r->n_units - r->n_ranked;

	fprintf(out, "\nranks");
	if (r->device >= 0)
		fprintf(out, " (device %d only)", (int)r->device);
	if (r->n_ranked == 0)
		fprintf(out, ": unknown; %zu processes without a rank, each its own unit",
		        unranked);
	else
		fprintf(out, ": %zu ranks", r->n_ranked);
	if (r->n_ranked && unranked)
		fprintf(out, " and %zu process%s without a rank", unranked,
		        unranked > 1 ? "es" : "");
	if (r->n_hosts)
		fprintf(out, " on %zu host%s", r->n_hosts, r->n_hosts > 1 ? "s" : "");
	fprintf(out, "\n  each rank's own blocks and segments, over its devices\n");
}

static void table(FILE *out, const struct mp_ranks *r)
{
	char pids[64], devs[64], b1[32], b2[32], b3[32], b4[32], rank[24];
	size_t i;

	fprintf(out, "  %-6s %-10s %-16s %-8s %10s %10s %10s %5s %10s\n", "rank", "host", "pid",
	        "devices", "peak live", "requested", "reserved", "OOMs", "at end");
	for (i = 0; i < r->n_units; i++) {
		const struct mp_rank *u = &r->units[i];

		if (u->rank >= 0)
			snprintf(rank, sizeof(rank), "%lld", (long long)u->rank);
		else
			snprintf(rank, sizeof(rank), "-");
		fprintf(out, "  %-6s %-10s %-16s %-8s %10s %10s %10s %5lld %10s\n", rank,
		        u->host ? u->host : "-",
		        list_text(pids, sizeof(pids), u->pids, NULL, u->n_pids),
		        list_text(devs, sizeof(devs), NULL, u->devices, u->n_devices),
		        mp_format_bytes(b1, sizeof(b1), u->live_peak.bytes),
		        mp_format_bytes(b2, sizeof(b2), u->requested_peak.bytes),
		        u->has_segments ? mp_format_bytes(b3, sizeof(b3), u->reserved_peak.bytes)
		                        : "unknown",
		        (long long)u->n_ooms, mp_format_bytes(b4, sizeof(b4), u->live_bytes));
	}
}

/* "rank 5 (host b, device 5)" */
static const char *where(char *buf, size_t n, const struct mp_rank *u)
{
	char label[32], devs[64];

	mp_rank_label(label, sizeof(label), u);
	list_text(devs, sizeof(devs), NULL, u->devices, u->n_devices);
	snprintf(buf, n, "%s (%s%s%sdevice%s %s)", label, u->host ? "host " : "",
	         u->host ? u->host : "", u->host ? ", " : "", u->n_devices > 1 ? "s" : "", devs);
	return buf;
}

static void spread_lines(FILE *out, const struct mp_analysis *a, const struct mp_ranks *r)
{
	const struct mp_ranks_spread *s = &r->spread;
	char b1[32], b2[32], w[160], label[32], t[32];
	size_t i;

	fprintf(out, "\n  job peak %s on %s at %s; spread %s",
	        mp_format_bytes(b1, sizeof(b1), s->max_bytes),
	        where(w, sizeof(w), &r->units[s->worst]),
	        mp_analyze_at_time(t, sizeof(t), a, r->units[s->worst].live_peak.ts_ns),
	        mp_format_bytes(b2, sizeof(b2), s->spread_bytes));
	if (s->min_bytes > 0)
		fprintf(out, " (%.2fx max/min, %.2fx max/mean)\n", s->max_over_min,
		        s->max_over_mean);
	else
		fprintf(out, " (max/min undefined: a peak of 0 B)\n");
	fprintf(out, "  lowest peak %s on %s; median %s\n",
	        mp_format_bytes(b1, sizeof(b1), s->min_bytes),
	        mp_rank_label(label, sizeof(label), &r->units[s->best]),
	        mp_format_bytes(b2, sizeof(b2), (int64_t)s->median_bytes));
	fprintf(out, "  more than %d%% above the median:", MP_RANKS_ABOVE_MEDIAN_PCT);
	for (i = 0; i < s->n_above && i < (size_t)a->top; i++) {
		const struct mp_rank *u = &r->units[s->above[i]];

		fprintf(out, "%s %s (+%.1f%%)", i ? "," : "",
		        mp_rank_label(label, sizeof(label), u),
		        100.0 * ((double)u->live_peak.bytes - s->median_bytes) / s->median_bytes);
	}
	if (s->n_above > (size_t)a->top)
		fprintf(out, ", %zu more", s->n_above - (size_t)a->top);
	fprintf(out, "%s\n", s->n_above ? "" : " none");
}

/* "step (cs336_basics/optimizers.py:82)": the gate's site text, with a C++
 * name's argument list left out. */
static char *site_text(char *buf, size_t n, const struct mp_rank_site *s)
{
	char name[96], key[160];
	struct mp_gate_site g = {.key = s->key,
	                         .name = s->name,
	                         .file = s->file,
	                         .line = s->line,
	                         .lines = s->lines,
	                         .n_lines = s->n_lines};

	if (s->name[0] && mp_frame_name_len(s->name) < strlen(s->name)) {
		mp_frame_short_name(name, sizeof(name), s->name);
		/* the key is NAME@TAIL (analysis/call_site.h): keep the tail */
		snprintf(key, sizeof(key), "%s%s", name, s->key + strlen(s->name));
		g.name = name;
		g.key = key;
	}
	return mp_gate_site_text(buf, n, &g, 48);
}

static void sites(FILE *out, const struct mp_analysis *a, const struct mp_ranks *r)
{
	char b1[32], b2[32], b3[32], l1[32], l2[32], cell1[64], cell2[64], text[256];
	size_t i;

	if (r->n_diffs == 0) {
		fprintf(out,
		        "\n  call sites: each holds the same bytes on every rank at its peak\n");
		return;
	}
	fprintf(out, "\n  call sites that differ between ranks (bytes at each rank's own peak)\n");
	fprintf(out, "    %10s  %-22s %-22s %-7s %s\n", "difference", "least", "most", "ranks",
	        "site");
	for (i = 0; i < r->n_diffs && i < (size_t)a->top; i++) {
		const struct mp_rank_site_diff *d = &r->diffs[i];

		snprintf(cell1, sizeof(cell1), "%s (%s)",
		         mp_format_bytes(b2, sizeof(b2), d->min_bytes),
		         mp_rank_label(l1, sizeof(l1), &r->units[d->min_unit]));
		snprintf(cell2, sizeof(cell2), "%s (%s)",
		         mp_format_bytes(b3, sizeof(b3), d->max_bytes),
		         mp_rank_label(l2, sizeof(l2), &r->units[d->max_unit]));
		snprintf(l1, sizeof(l1), "%zu/%zu", d->n_present, r->n_units);
		fprintf(out, "    %10s  %-22s %-22s %-7s %s\n",
		        mp_format_bytes(b1, sizeof(b1), d->max_bytes - d->min_bytes), cell1, cell2,
		        l1, site_text(text, sizeof(text), &r->sites[d->site]));
	}
	if (r->n_diffs > (size_t)a->top)
		fprintf(out, "    (%zu more; --top=N lists more)\n", r->n_diffs - (size_t)a->top);
}

void mp_analyze_print_ranks_text(FILE *out, const struct mp_analysis *a)
{
	const struct mp_ranks *r = a->ranks;

	if (!mp_analyze_shows_ranks(a))
		return;
	headline(out, r);
	table(out, r);
	spread_lines(out, a, r);
	sites(out, a, r);
}

/* --- JSON ------------------------------------------------------------------ */

static cJSON *unit_json(const struct mp_rank *u)
{
	cJSON *o = cJSON_CreateObject(), *pids, *devs, *peaks, *end;
	char label[32];
	size_t i;

	cJSON_AddStringToObject(o, "label", mp_rank_label(label, sizeof(label), u));
	mp_json_add_known(o, "rank", u->rank);
	mp_json_add_known(o, "local_rank", u->local_rank);
	if (u->host)
		cJSON_AddStringToObject(o, "host", u->host);
	else
		cJSON_AddNullToObject(o, "host");
	pids = cJSON_AddArrayToObject(o, "pids");
	for (i = 0; i < u->n_pids; i++)
		cJSON_AddItemToArray(pids, cJSON_CreateNumber((double)u->pids[i]));
	devs = cJSON_AddArrayToObject(o, "devices");
	for (i = 0; i < u->n_devices; i++)
		cJSON_AddItemToArray(devs, cJSON_CreateNumber(u->devices[i]));
	mp_json_add_int(o, "events", u->n_events);
	peaks = cJSON_AddObjectToObject(o, "peaks");
	cJSON_AddItemToObject(peaks, "live", mp_analyze_peak_json(&u->live_peak));
	cJSON_AddItemToObject(peaks, "requested", mp_analyze_peak_json(&u->requested_peak));
	cJSON_AddItemToObject(peaks, "reserved",
	                      u->has_segments ? mp_analyze_peak_json(&u->reserved_peak)
	                                      : cJSON_CreateNull());
	mp_json_add_int(o, "ooms", u->n_ooms);
	end = cJSON_AddObjectToObject(o, "end");
	mp_json_add_int(end, "live_bytes", u->live_bytes);
	mp_json_add_int(end, "live_blocks", u->live_blocks);
	mp_json_add_int(end, "requested_bytes", u->requested_bytes);
	mp_json_add_known(end, "reserved_bytes", u->has_segments ? u->reserved_bytes : -1);
	return o;
}

static cJSON *ref_json(const struct mp_ranks *r, size_t unit, int64_t bytes)
{
	cJSON *o = cJSON_CreateObject();
	char label[32];

	mp_json_add_int(o, "unit", (int64_t)unit);
	cJSON_AddStringToObject(o, "label", mp_rank_label(label, sizeof(label), &r->units[unit]));
	mp_json_add_int(o, "bytes", bytes);
	return o;
}

static void add_ratio_or_null(cJSON *o, const char *key, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *spread_json(const struct mp_ranks *r)
{
	const struct mp_ranks_spread *s = &r->spread;
	cJSON *o = cJSON_CreateObject(), *above;
	size_t i;

	cJSON_AddItemToObject(o, "worst", ref_json(r, s->worst, s->max_bytes));
	cJSON_AddItemToObject(o, "best", ref_json(r, s->best, s->min_bytes));
	mp_json_add_int(o, "spread_bytes", s->spread_bytes);
	add_ratio_or_null(o, "max_over_min", s->max_over_min);
	add_ratio_or_null(o, "max_over_mean", s->max_over_mean);
	cJSON_AddNumberToObject(o, "median_bytes", s->median_bytes);
	mp_json_add_int(o, "above_median_pct", MP_RANKS_ABOVE_MEDIAN_PCT);
	above = cJSON_AddArrayToObject(o, "above_median");
	for (i = 0; i < s->n_above; i++)
		cJSON_AddItemToArray(
		        above, ref_json(r, s->above[i], r->units[s->above[i]].live_peak.bytes));
	return o;
}

static cJSON *site_json(const struct mp_ranks *r, const struct mp_rank_site_diff *d)
{
	const struct mp_rank_site *s = &r->sites[d->site];
	cJSON *o = cJSON_CreateObject(), *by, *lines;
	size_t i;

	cJSON_AddStringToObject(o, "key", s->key);
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "file", s->file);
	mp_json_add_int(o, "line", s->line);
	lines = cJSON_AddArrayToObject(o, "lines");
	for (i = 0; lines && i < s->n_lines; i++)
		cJSON_AddItemToArray(lines, cJSON_CreateNumber((double)s->lines[i]));
	mp_json_add_int(o, "difference_bytes", d->max_bytes - d->min_bytes);
	cJSON_AddItemToObject(o, "min", ref_json(r, d->min_unit, d->min_bytes));
	cJSON_AddItemToObject(o, "max", ref_json(r, d->max_unit, d->max_bytes));
	mp_json_add_int(o, "present", (int64_t)d->n_present);
	by = cJSON_AddArrayToObject(o, "bytes");
	for (i = 0; i < r->n_units; i++)
		cJSON_AddItemToArray(
		        by, cJSON_CreateNumber((double)mp_rank_site_bytes(&r->units[i], d->site)));
	return o;
}

cJSON *mp_analyze_ranks_json(const struct mp_analysis *a)
{
	const struct mp_ranks *r = a->ranks;
	cJSON *o, *units, *sites_a;
	size_t i;

	if (!mp_analyze_shows_ranks(a))
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	mp_json_add_int(o, "ranked", (int64_t)r->n_ranked);
	mp_json_add_int(o, "unranked", (int64_t)(r->n_units - r->n_ranked));
	mp_json_add_int(o, "hosts", (int64_t)r->n_hosts);
	mp_json_add_known(o, "device", r->device);
	units = cJSON_AddArrayToObject(o, "units");
	for (i = 0; i < r->n_units; i++)
		cJSON_AddItemToArray(units, unit_json(&r->units[i]));
	cJSON_AddItemToObject(o, "spread", spread_json(r));
	mp_json_add_int(o, "differing_sites", (int64_t)r->n_diffs);
	sites_a = cJSON_AddArrayToObject(o, "call_sites");
	for (i = 0; i < r->n_diffs && i < (size_t)a->top; i++)
		cJSON_AddItemToArray(sites_a, site_json(r, &r->diffs[i]));
	return o;
}
