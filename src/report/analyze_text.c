/*
 * report/analyze_text.c - the text rendering of 'memprof analyze' for
 * people: per device the peaks, a fragmentation table, OOMs in a sentence
 * each, the top groups live at the chosen moment, the lifetime findings,
 * then the notes.  Times are shown from the trace's first event.
 */
#include "report/analyze.h"
#include "util/format.h"
#include "util/stack_text.h"

#include <stdlib.h>
#include <string.h>

static void print_peaks(FILE *out, const struct mp_analysis *a, const struct mp_mem_device *d)
{
	char b[32], t[32];

	fprintf(out, "  peak live       %-10s at %s, event %lld%s\n",
	        mp_analyze_bytes(b, sizeof(b), d->live_peak.bytes),
	        mp_analyze_at_time(t, sizeof(t), a, d->live_peak.ts_ns),
	        (long long)d->live_peak.seq,
	        a->modelled_granted_blocks > 0 ? " (partly modelled: see notes)" : "");
	fprintf(out, "  peak requested  %-10s at %s, event %lld\n",
	        mp_analyze_bytes(b, sizeof(b), d->requested_peak.bytes),
	        mp_analyze_at_time(t, sizeof(t), a, d->requested_peak.ts_ns),
	        (long long)d->requested_peak.seq);
	if (d->has_segments)
		fprintf(out, "  peak reserved   %-10s at %s, event %lld\n",
		        mp_analyze_bytes(b, sizeof(b), d->reserved_peak.bytes),
		        mp_analyze_at_time(t, sizeof(t), a, d->reserved_peak.ts_ns),
		        (long long)d->reserved_peak.seq);
	else
		fprintf(out, "  peak reserved   unknown (no segment-level events)\n");
	fprintf(out, "  at the end      %s live in %lld blocks",
	        mp_analyze_bytes(b, sizeof(b), d->live_bytes), (long long)d->n_live);
	if (d->has_segments)
		fprintf(out, ", %s reserved", mp_analyze_bytes(t, sizeof(t), d->reserved_bytes));
	fputc('\n', out);
}

static void frag_row(FILE *out, const char *label, const struct mp_frag_point *p)
{
	char b1[32], b2[32], b3[32], ratio[16] = "-";
	int64_t internal = p->live_bytes - p->requested_bytes;

	if (p->seq == 0)
		return;
	if (p->free_in_reserved_bytes > 0 && p->largest_free_bytes >= 0 &&
	    p->largest_free_bytes <= p->free_in_reserved_bytes)
		snprintf(ratio, sizeof(ratio), "%.3f",
		         1.0 - (double)p->largest_free_bytes / (double)p->free_in_reserved_bytes);
	else if (p->free_in_reserved_bytes == 0)
		snprintf(ratio, sizeof(ratio), "0");
	fprintf(out, "    %-18s %15s %5.1f%%   %-17s %-13s %s\n", label,
	        mp_format_bytes(b1, sizeof(b1), internal),
	        p->live_bytes > 0 ? 100.0 * (double)internal / (double)p->live_bytes : 0.0,
	        mp_analyze_bytes(b2, sizeof(b2), p->free_in_reserved_bytes),
	        mp_analyze_bytes(b3, sizeof(b3), p->largest_free_bytes), ratio);
}

static void print_frag(FILE *out, const struct mp_analysis *a, const struct mp_frag_device *fd)
{
	const struct mp_frag_integrals *tw = &fd->tw;
	char g[32], b1[32], b2[32];

	fprintf(out, "\n  fragmentation figures (%s model", mp_frag_model_name(fd->model));
	if (fd->model == MP_FRAG_ADDRESS_SPACE)
		fprintf(out, ", %s granules",
		        mp_format_bytes(g, sizeof(g), (int64_t)a->granularity));
	if (a->modelled_granted_blocks > 0)
		fprintf(out, "; internal partly modelled: see notes");
	fprintf(out, ")\n    %-18s %22s   %-17s %-13s %s\n", "", "internal fragmentation",
	        "free in reserved", "largest hole", "external fragmentation");
	frag_row(out, "at the live peak", &fd->at_live_peak);
	frag_row(out, "at reserved peak", &fd->at_reserved_peak);
	frag_row(out, "at the end", &fd->at_end);
	if (tw->span_ns > 0) {
		int known = fd->model != MP_FRAG_NONE && tw->n_unknown == 0;

		fprintf(out, "    %-18s %15s %5.1f%%   %-17s %-13s ", "time-weighted",
		        mp_format_bytes(b1, sizeof(b1),
		                        (int64_t)(tw->internal / (double)tw->span_ns)),
		        tw->live > 0 ? 100.0 * tw->internal / tw->live : 0.0,
		        known ? mp_format_bytes(b2, sizeof(b2),
		                                (int64_t)(tw->free / (double)tw->span_ns))
		              : "unknown",
		        "-");
		if (known)
			fprintf(out, "%.3f\n", tw->ext_ratio / (double)tw->span_ns);
		else
			fprintf(out, "-\n");
	}
}

static void print_ooms(FILE *out, const struct mp_analysis *a, const struct mp_frag_device *fd)
{
	char b1[32], b2[32], b3[32], t[32];
	size_t i;

	if (fd->n_ooms_total == 0)
		return;
	fprintf(out, "\n  %lld OOM%s\n", (long long)fd->n_ooms_total,
	        fd->n_ooms_total > 1 ? "s" : "");
	for (i = 0; i < fd->n_ooms && i < (size_t)a->top; i++) {
		const struct mp_frag_oom *o = &fd->ooms[i];

		fprintf(out, "    event %lld at %s: the request was %s", (long long)o->at.seq,
		        mp_analyze_at_time(t, sizeof(t), a, o->at.ts_ns),
		        mp_analyze_bytes(b1, sizeof(b1), o->requested_bytes));
		if (o->at.free_in_reserved_bytes >= 0)
			fprintf(out, ", %s was free in reserved memory, the largest hole was %s",
			        mp_analyze_bytes(b2, sizeof(b2), o->at.free_in_reserved_bytes),
			        mp_analyze_bytes(b3, sizeof(b3), o->at.largest_free_bytes));
		if (o->at.free_in_reserved_bytes >= o->requested_bytes &&
		    o->at.largest_free_bytes < o->requested_bytes)
			fprintf(out, " (fragmentation: it fit in the free bytes, not in one hole)");
		fputc('\n', out);
	}
}

static void group_label(char *buf, size_t n, int kind, const struct mp_attr_group *g, int depth)
{
	switch (kind) {
	case MP_ATTR_STACK:
		mp_stack_summary(buf, n, g->stack, depth, " < ");
		if (!buf[0])
			snprintf(buf, n, "(no call stack)");
		return;
	case MP_ATTR_PHASE:
		snprintf(buf, n, "%s", g->name ? g->name : "(no phase)");
		return;
	case MP_ATTR_API:
		snprintf(buf, n, "%s", g->name ? g->name : "(no api)");
		return;
	case MP_ATTR_STREAM:
		snprintf(buf, n, "stream %llu", (unsigned long long)g->key);
		return;
	default:
		mp_size_class_text(buf, n, (int)g->key);
		return;
	}
}

static void print_groups(FILE *out, const struct mp_analysis *a, const struct mp_attr_device *ad,
                         int kind)
{
	char b[32], label[512];
	ptrdiff_t n, i;
	struct mp_attr_group *g = mp_attribution_groups(ad, kind, &n);

	fprintf(out, "    %10s %6s %7s  by %s\n", "bytes", "share", "blocks",
	        mp_attr_kind_names[kind]);
	for (i = 0; i < n && i < a->top; i++) {
		group_label(label, sizeof(label), kind, &g[i], a->stack_depth);
		fprintf(out, "    %10s %5.1f%% %7lld  %s\n",
		        mp_format_bytes(b, sizeof(b), g[i].bytes),
		        ad->live_bytes > 0 ? 100.0 * (double)g[i].bytes / (double)ad->live_bytes
		                           : 0.0,
		        (long long)g[i].count, label);
	}
	if (n > a->top)
		fprintf(out, "    %10s (%lld more)\n", "", (long long)(n - a->top));
	free(g);
}

static void print_attribution(FILE *out, const struct mp_analysis *a, int32_t device)
{
	const struct mp_attr_device *ad = mp_attribution_device(a->attr, device);
	char b[32], t[32];
	int k;

	if (!ad || !ad->taken)
		return;
	fprintf(out, "\n  live at %s (event %lld, %s): %s in %lld blocks\n",
	        a->at == MP_ATTR_AT_PEAK  ? "the live peak"
	        : a->at == MP_ATTR_AT_OOM ? "the first OOM"
	                                  : "the time asked",
	        (long long)ad->seq, mp_analyze_at_time(t, sizeof(t), a, ad->ts_ns),
	        mp_analyze_bytes(b, sizeof(b), ad->live_bytes), (long long)ad->live_blocks);
	for (k = 0; k < MP_ATTR_KINDS; k++)
		if (a->kinds & (1u << k))
			print_groups(out, a, ad, k);
}

static void print_findings(FILE *out, const struct mp_analysis *a, int32_t device, int kind,
                           const char *title, const struct mp_lifetime_total *t)
{
	size_t n, i;
	const struct mp_lifetime_finding *f = mp_lifetime_findings(a->life, kind, &n);
	char b[32], d[32], label[512];
	int shown = 0;

	if (t->count == 0)
		return;
	fprintf(out, "    %s: %lld %s%s, %s\n", title, (long long)t->count,
	        kind == MP_LIFETIME_REUSE ? "allocation" : "block", t->count == 1 ? "" : "s",
	        mp_analyze_bytes(b, sizeof(b), t->bytes));
	for (i = 0; i < n && shown < a->top; i++) {
		if (f[i].device != device)
			continue;
		mp_stack_summary(label, sizeof(label), f[i].stack, a->stack_depth, " < ");
		fprintf(out, "    %10s %7lld  %s", mp_format_bytes(b, sizeof(b), f[i].bytes),
		        (long long)f[i].count, label[0] ? label : "(no call stack)");
		if (kind == MP_LIFETIME_REUSE)
			fprintf(out, " [%s each]", mp_format_bytes(d, sizeof(d), f[i].size_bytes));
		else if ((kind == MP_LIFETIME_CHURN || kind == MP_LIFETIME_IDLE) &&
		         !a->no_timestamps)
			fprintf(out, " [mean life %s]",
			        mp_format_duration(d, sizeof(d), f[i].mean_lifetime_ns));
		fputc('\n', out);
		shown++;
	}
}

static void print_lifetime(FILE *out, const struct mp_analysis *a, int32_t device)
{
	struct mp_lifetime_totals t;
	char title[128], w[32], b[32];

	mp_lifetime_device_totals(a->life, device, &t);
	fprintf(out, "\n  lifetime patterns\n");
	print_findings(out, a, device, MP_LIFETIME_LEAK,
	               a->window
	                       ? "live at the end of the window (not leaks: the trace is a window, "
	                         "see notes)"
	                       : "leaks (never freed)",
	               &t.kind[MP_LIFETIME_LEAK]);
	if (a->no_timestamps)
		snprintf(title, sizeof(title),
		         "churn (freed before the next allocation on its stream; no timestamps)");
	else
		snprintf(title, sizeof(title),
		         "churn (freed within %s, or before the next allocation on its stream)",
		         mp_format_duration(w, sizeof(w), a->churn_window_ns));
	print_findings(out, a, device, MP_LIFETIME_CHURN, title, &t.kind[MP_LIFETIME_CHURN]);
	print_findings(out, a, device, MP_LIFETIME_REUSE,
	               "reuse candidates (same site and size, lifetimes disjoint; bytes of "
	               "allocation a reuse avoids)",
	               &t.kind[MP_LIFETIME_REUSE]);
	snprintf(title, sizeof(title),
	         "idle until the end (freed after the last allocation, live %.0f%%+ of the trace)",
	         100.0 * a->idle_min_share);
	print_findings(out, a, device, MP_LIFETIME_IDLE, title, &t.kind[MP_LIFETIME_IDLE]);
	if (t.preexisting_live_at_end.count)
		fprintf(out,
		        "    %lld blocks (%s) live before the trace began are still live at its "
		        "end: not counted above\n",
		        (long long)t.preexisting_live_at_end.count,
		        mp_analyze_bytes(b, sizeof(b), t.preexisting_live_at_end.bytes));
}

struct note_printer {
	FILE *out;
	int n;
};

static void print_note(void *ctx, const char *note)
{
	struct note_printer *p = ctx;

	fprintf(p->out, "%s  - %s\n", p->n++ ? "" : "\nnotes\n", note);
}

void mp_analyze_print_text(FILE *out, const struct mp_analysis *a)
{
	const struct mp_memstate *ms = a->ms;
	int order[MP_MEM_MAX_DEVICES], n, i;
	struct note_printer notes = {out, 0};
	char d[32];

	fprintf(out, "trace  %s", a->path);
	if (a->source)
		fprintf(out, " (%s)", a->source);
	if (a->no_timestamps)
		fprintf(out, "\nevents %lld (no timestamps: in event order only)\n",
		        (long long)ms->n_events);
	else
		fprintf(out, "\nevents %lld over %s\n", (long long)ms->n_events,
		        mp_format_duration(d, sizeof(d), mp_memstate_span_ns(ms)));
	n = mp_analyze_device_order(a, order);
	for (i = 0; i < n; i++) {
		const struct mp_mem_device *dev = &ms->devices[order[i]];
		const struct mp_frag_device *fd = mp_frag_device(a->frag, dev->device);

		fprintf(out, "\ndevice %d (%lld events)\n", dev->device, (long long)dev->n_events);
		print_peaks(out, a, dev);
		if (fd) {
			print_frag(out, a, fd);
			print_ooms(out, a, fd);
		}
		print_attribution(out, a, dev->device);
		print_lifetime(out, a, dev->device);
	}
	mp_analyze_print_ranks_text(out, a);
	mp_analyze_print_plan_text(out, a);
	mp_analyze_print_numa_text(out, a);
	mp_analyze_notes(a, print_note, &notes);
}
