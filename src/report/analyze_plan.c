/*
 * report/analyze_plan.c - the plan metrics of 'memprof analyze' (section
 * PLAN METRICS of memprof-analyze(1)) as text and as the JSON key "plan":
 * how the steps were found, fragmentation at the end of each step and its
 * trend against the target, allocation overhead and call times, and the
 * verdict on each OOM.  Receives plain results from analysis/plan.
 */
#include "report/analyze.h"
#include "report/json_util.h"
#include "util/format.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_STEPS_SHOWN 5 /* first and last steps in the text table */

/* A free share or external fragmentation: a ratio from 0 to 1, as every
 * command prints it (memprof-analyze(1), "Fragmentation figures"). */
static const char *ratio_text(char *buf, size_t n, double ratio)
{
	if (ratio < 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%.4f", ratio);
	return buf;
}

static void print_steps_head(FILE *out, const struct mp_plan *p)
{
	const struct mp_steps_result *r = &p->steps.result;

	fprintf(out, "\nplan metrics\n  steps: ");
	if (r->method == MP_STEPS_NONE) {
		fprintf(out, "none (%s)\n", r->why);
		return;
	}
	fprintf(out, "%zu, method %s", p->n_steps, mp_steps_method_name(r->method));
	if (r->name)
		fprintf(out, ", phase '%s'", r->name);
	else if (r->method == MP_STEPS_PERIOD)
		fprintf(out, ", %lld allocations per step", (long long)p->steps.period.period);
	fprintf(out, "\n    %s\n", r->why);
	if (r->n_dropped)
		fprintf(out, "    %lld further steps not kept (more than %d)\n",
		        (long long)r->n_dropped, MP_STEPS_MAX);
}

static void step_row(FILE *out, const struct mp_analysis *a, const struct mp_plan *p,
                     const struct mp_plan_device *pd, size_t i)
{
	const struct mp_plan_point *pt = &pd->at_end[i];
	const struct mp_plan_step *st = &p->step_list[i];
	char t[32], b1[32], b2[32], b3[32], r1[16], r2[16];

	char ev[24] = "-";

	if (st->end.seq)
		snprintf(ev, sizeof(ev), "%lld", (long long)st->end.seq);
	fprintf(out, "    %7zu %10s %12s %10s %10s %16s %10s %s\n", i + 1, ev,
	        st->end.seq ? mp_analyze_at_time(t, sizeof(t), a, st->end.ts_ns) : "the end",
	        pt->seen ? mp_analyze_bytes(b1, sizeof(b1), pt->live_bytes) : "-",
	        pt->seen ? mp_analyze_bytes(b2, sizeof(b2), pt->reserved_bytes) : "-",
	        pt->seen ? mp_analyze_bytes(b3, sizeof(b3), pt->free_in_reserved_bytes) : "-",
	        ratio_text(r1, sizeof(r1), mp_plan_frag_ratio(pt)),
	        ratio_text(r2, sizeof(r2), mp_plan_external_ratio(pt)));
}

static void print_trend(FILE *out, const struct mp_plan_frag_trend *t)
{
	char r[16];

	if (t->n_known == 0) {
		fprintf(out,
		        "    free share unknown at every step end (no reserved memory known)\n");
		return;
	}
	fprintf(out, "    free share after step %lld: %s", (long long)t->last_step,
	        ratio_text(r, sizeof(r), t->last_ratio));
	if (t->fit.has_slope)
		fprintf(out, ", %s %.4g per step (least squares over %lld steps)",
		        t->fit.slope > 0   ? "rising"
		        : t->fit.slope < 0 ? "falling"
		                           : "flat",
		        t->fit.slope < 0 ? -t->fit.slope : t->fit.slope, (long long)t->n_known);
	fputc('\n', out);
	if (!t->has_target) {
		fprintf(out,
		        "    target (under %.2f after %d steps): unknown, too few steps for a "
		        "trend\n",
		        MP_PLAN_TARGET_FRAG, MP_PLAN_TARGET_STEP);
		return;
	}
	fprintf(out, "    after step %d: %s (%s): %s the target (under %.2f)\n",
	        MP_PLAN_TARGET_STEP, ratio_text(r, sizeof(r), t->target_ratio),
	        t->target_measured ? "measured" : "projected by the trend",
	        t->target_ratio < MP_PLAN_TARGET_FRAG ? "meets" : "misses", MP_PLAN_TARGET_FRAG);
}

static void print_frag_steps(FILE *out, const struct mp_analysis *a, const struct mp_plan *p)
{
	int k;
	size_t i;

	if (p->n_steps == 0)
		return;
	fprintf(out,
	        "\n  fragmentation figures at the end of each step (free share: free in reserved "
	        "/ reserved; external fragmentation: 1 - largest hole / free in reserved)\n");
	for (k = 0; k < p->n_devices; k++) {
		const struct mp_plan_device *pd = &p->devices[k];

		fprintf(out, "  device %d (%s model)\n", pd->device, mp_frag_model_name(pd->model));
		fprintf(out, "    %7s %10s %12s %10s %10s %16s %10s %s\n", "step", "end event",
		        "end time", "live", "reserved", "free in reserved", "free share",
		        "external fragmentation");
		for (i = 0; i < p->n_steps; i++) {
			if (i == TEXT_STEPS_SHOWN && p->n_steps > 2 * TEXT_STEPS_SHOWN) {
				fprintf(out, "    %7s (%zu steps)\n", "...",
				        p->n_steps - 2 * TEXT_STEPS_SHOWN);
				i = p->n_steps - TEXT_STEPS_SHOWN;
			}
			step_row(out, a, p, pd, i);
		}
		print_trend(out, &pd->trend);
	}
}

static const char *const kind_names[MP_CALL_KINDS] = {"alloc", "free"};

static void print_class_rows(FILE *out, const struct mp_plan *p, int kind)
{
	const struct mp_plan_overhead *o = &p->overhead;
	char label[48], d1[32], d2[32];
	int k;

	for (k = 0; k < MP_PLAN_SIZE_CLASSES; k++) {
		const struct mp_hist *h = &o->by_class[kind][k];

		if (h->n == 0)
			continue;
		mp_size_class_text(label, sizeof(label), k);
		fprintf(out, "    %-6s %-20s %9lld %10s %10s%s\n", kind_names[kind], label,
		        (long long)h->n,
		        mp_format_duration(d1, sizeof(d1), mp_hist_quantile(h, 0.5)),
		        mp_format_duration(d2, sizeof(d2), mp_hist_quantile(h, 0.99)),
		        kind == MP_CALL_ALLOC && mp_plan_class_common(p, k) ? "  common" : "");
	}
}

static void print_overhead(FILE *out, const struct mp_plan *p)
{
	const struct mp_plan_overhead *o = &p->overhead;
	int64_t span = mp_plan_span_ns(p);
	char d1[32], d2[32];
	int met;

	fprintf(out, "\n  allocation overhead\n");
	if (o->n_with_duration == 0) {
		fprintf(out,
		        "    unknown: none of the %lld allocation and free calls has a duration "
		        "(the trace's source did not record call times)\n",
		        (long long)o->n_calls);
		return;
	}
	fprintf(out, "    %s in calls over %s of wall time",
	        mp_format_duration(d1, sizeof(d1), o->time_ns),
	        mp_format_duration(d2, sizeof(d2), span));
	if (span > 0)
		fprintf(out,
		        ": %.3f%% (calls on concurrent threads add up): %s the target (under "
		        "%.0f%%)",
		        100.0 * (double)o->time_ns / (double)span,
		        (double)o->time_ns < MP_PLAN_TARGET_SHARE * (double)span ? "meets"
		                                                                 : "misses",
		        100.0 * MP_PLAN_TARGET_SHARE);
	fprintf(out, "\n    %lld calls, %lld with a duration, %lld without\n",
	        (long long)o->n_calls, (long long)o->n_with_duration,
	        (long long)(o->n_calls - o->n_with_duration));
	fprintf(out,
	        "    call time by size class (powers of two; percentiles within 1/128, exact "
	        "below %d ns)\n",
	        MP_HIST_EXACT_NS);
	fprintf(out, "    %-6s %-20s %9s %10s %10s\n", "call", "size", "calls", "p50", "p99");
	print_class_rows(out, p, MP_CALL_ALLOC);
	print_class_rows(out, p, MP_CALL_FREE);
	met = mp_plan_alloc_target_met(p);
	if (met >= 0)
		fprintf(out,
		        "    allocation p50 under %s in every common size class (%.0f%%+ of "
		        "allocations): %s\n",
		        mp_format_duration(d1, sizeof(d1), MP_PLAN_TARGET_ALLOC_NS),
		        100.0 * MP_PLAN_COMMON_SHARE, met ? "met" : "missed");
}

static void print_ooms(FILE *out, const struct mp_analysis *a, const struct mp_plan *p)
{
	int64_t total = 0;
	char b1[32], b2[32], b3[32], t[32];
	int order[MP_MEM_MAX_DEVICES], n = mp_analyze_device_order(a, order), v, k;
	size_t i;

	for (v = 0; v < MP_OOM_VERDICTS; v++)
		total += p->n_ooms[v];
	if (total == 0) {
		fprintf(out, "\n  OOMs: none\n");
		return;
	}
	fprintf(out,
	        "\n  OOMs: %lld (%lld fragmentation, %lld capacity, %lld fit a hole, %lld "
	        "unknown)\n",
	        (long long)total, (long long)p->n_ooms[MP_OOM_FRAGMENTATION],
	        (long long)p->n_ooms[MP_OOM_CAPACITY], (long long)p->n_ooms[MP_OOM_FITS_HOLE],
	        (long long)p->n_ooms[MP_OOM_UNKNOWN]);
	for (k = 0; k < n; k++) {
		const struct mp_frag_device *fd =
		        mp_frag_device(a->frag, a->ms->devices[order[k]].device);

		for (i = 0; fd && i < fd->n_ooms && i < (size_t)a->top; i++) {
			const struct mp_frag_oom *o = &fd->ooms[i];

			v = mp_plan_oom_verdict(o->requested_bytes, o->at.free_in_reserved_bytes,
			                        o->at.largest_free_bytes);
			fprintf(out,
			        "    device %d event %lld at %s: %s; request %s, free in reserved "
			        "%s, "
			        "largest hole %s\n",
			        fd->device, (long long)o->at.seq,
			        mp_analyze_at_time(t, sizeof(t), a, o->at.ts_ns),
			        v == MP_OOM_FRAGMENTATION
			                ? "fragmentation (it fit in the free bytes, "
			                  "not in one hole)"
			        : v == MP_OOM_CAPACITY ? "capacity, not fragmentation (more than "
			                                 "the free bytes)"
			        : v == MP_OOM_FITS_HOLE
			                ? "not fragmentation: the largest hole could "
			                  "hold it (the allocator's own rules: pools, "
			                  "streams, rounding)"
			                : "unknown (free in reserved unknown)",
			        mp_analyze_bytes(b1, sizeof(b1), o->requested_bytes),
			        mp_analyze_bytes(b2, sizeof(b2), o->at.free_in_reserved_bytes),
			        mp_analyze_bytes(b3, sizeof(b3), o->at.largest_free_bytes));
		}
	}
}

void mp_analyze_print_plan_text(FILE *out, const struct mp_analysis *a)
{
	const struct mp_plan *p = a->plan;

	if (!p)
		return;
	print_steps_head(out, p);
	print_frag_steps(out, a, p);
	print_overhead(out, p);
	print_ooms(out, a, p);
}
