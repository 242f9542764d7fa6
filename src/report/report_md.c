/*
 * report/report_md.c - 'memprof report --format=md': a Markdown summary of
 * one trace for a pull request comment: per device the peaks,
 * fragmentation at the peak, OOMs and the call sites live at the peak; the
 * stored replay results; the lifetime findings; the notes.  Every string
 * that came from a trace is written by md_text, which escapes Markdown and
 * HTML, so a frame cannot break a table nor put markup on the page.
 */
#include "report/runs.h"
#include "report/report_doc.h"
#include "util/format.h"
#include "util/stack_text.h"

#include <stdlib.h>
#include <string.h>

/*
 * Text from a trace, escaped: & < > as HTML entities; the characters
 * Markdown (GitHub's included) gives a meaning to behind a backslash;
 * line breaks and other control characters as spaces, so the text stays in
 * its table cell or list item.
 */
static void md_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', out);
		else if (strchr("\\`*_[]|~@#$!{}", c)) {
			fputc('\\', out);
			fputc(c, out);
		} else
			fputc(c, out);
	}
}

/* The call site and the source frames toward the caller, plain text:
 * "forward (model.py:41) ← train (train.py:88)".  Escaped when written. */
static const char *site_text(char *buf, size_t n, const struct memprof_stack *s, int depth)
{
	mp_stack_summary(buf, n, s, depth, " \u2190 ");
	return buf[0] ? buf : "(no call stack)";
}

static void write_title(FILE *out, const struct mp_report_input *in)
{
	const struct mp_analysis *a = in->a;
	const struct mp_memstate *ms = a->ms;
	const char *base = strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path;
	char d[32];

	fputs("## memprof report: ", out);
	md_text(out, base);
	fprintf(out, "\n\n%lld events over %s", (long long)ms->n_events,
	        mp_format_duration(d, sizeof(d), mp_memstate_span_ns(ms)));
	if (a->source) {
		fputs(", source ", out);
		md_text(out, a->source);
	}
	if (a->truncated)
		fputs(", **truncated**", out);
	if (a->lossy)
		fputs(", **lossy**", out);
	fputs(".", out);
	if (in->command_line) {
		fputs(" Made by: ", out);
		md_text(out, in->command_line);
		if (in->created) {
			fputs(" (", out);
			md_text(out, in->created);
			fputs(")", out);
		}
	}
	fputs("\n", out);
}

static void peak_row(FILE *out, const struct mp_analysis *a, const char *label,
                     const struct mp_mem_peak *p)
{
	char b[32], t[32];

	fprintf(out, "| %s | %s | %s (event %lld) |\n", label,
	        mp_analyze_bytes(b, sizeof(b), p->bytes),
	        mp_analyze_at_time(t, sizeof(t), a, p->ts_ns), (long long)p->seq);
}

static void write_peaks(FILE *out, const struct mp_analysis *a, const struct mp_mem_device *d)
{
	fputs("| peak | bytes | when |\n|:--|--:|:--|\n", out);
	peak_row(out, a, "live", &d->live_peak);
	peak_row(out, a, "requested", &d->requested_peak);
	if (d->has_segments)
		peak_row(out, a, "reserved", &d->reserved_peak);
	else
		fputs("| reserved | unknown | no segment-level events |\n", out);
}

/* Fragmentation at the live peak, in a sentence. */
static void write_frag(FILE *out, const struct mp_analysis *a, const struct mp_frag_device *fd)
{
	const struct mp_frag_point *p = &fd->at_live_peak;
	int64_t internal = p->live_bytes - p->requested_bytes;
	char b1[32], b2[32], b3[32], g[32];

	if (p->seq == 0)
		return;
	fprintf(out,
	        "\n**Fragmentation at the live peak**: internal fragmentation %s (%.1f%% of live)",
	        mp_analyze_bytes(b1, sizeof(b1), internal),
	        p->live_bytes > 0 ? 100.0 * (double)internal / (double)p->live_bytes : 0.0);
	if (fd->model == MP_FRAG_NONE || p->free_in_reserved_bytes < 0 || p->reserved_bytes <= 0) {
		fputs("; free share and external fragmentation unknown (no segments and no "
		      "addresses, or blocks outside the segments).\n",
		      out);
		return;
	}
	fprintf(out, "; %s free in reserved (free share %.3f of %s reserved)",
	        mp_analyze_bytes(b1, sizeof(b1), p->free_in_reserved_bytes),
	        (double)p->free_in_reserved_bytes / (double)p->reserved_bytes,
	        mp_analyze_bytes(b2, sizeof(b2), p->reserved_bytes));
	if (p->free_in_reserved_bytes > 0 && p->largest_free_bytes >= 0)
		fprintf(out, ", largest hole %s, external fragmentation %.3f",
		        mp_analyze_bytes(b3, sizeof(b3), p->largest_free_bytes),
		        1.0 - (double)p->largest_free_bytes / (double)p->free_in_reserved_bytes);
	else
		fputs(", external fragmentation 0", out);
	if (fd->model == MP_FRAG_ADDRESS_SPACE)
		fprintf(out, " (reserved memory modelled from block addresses, %s granules)",
		        mp_format_bytes(g, sizeof(g), (int64_t)a->opts.granularity));
	fputs(".\n", out);
}

static void write_ooms(FILE *out, const struct mp_analysis *a, const struct mp_frag_device *fd)
{
	char b1[32], b2[32], b3[32], t[32];
	size_t i;

	if (fd->n_ooms_total == 0) {
		fputs("\n**OOMs**: none.\n", out);
		return;
	}
	fprintf(out, "\n**OOMs**: %lld\n\n", (long long)fd->n_ooms_total);
	for (i = 0; i < fd->n_ooms && i < (size_t)a->top; i++) {
		const struct mp_frag_oom *o = &fd->ooms[i];

		fprintf(out, "- event %lld at %s: the request was %s", (long long)o->at.seq,
		        mp_analyze_at_time(t, sizeof(t), a, o->at.ts_ns),
		        mp_analyze_bytes(b1, sizeof(b1), o->requested_bytes));
		if (o->at.free_in_reserved_bytes >= 0)
			fprintf(out, "; %s free in reserved, largest hole %s",
			        mp_analyze_bytes(b2, sizeof(b2), o->at.free_in_reserved_bytes),
			        mp_analyze_bytes(b3, sizeof(b3), o->at.largest_free_bytes));
		if (o->at.free_in_reserved_bytes >= o->requested_bytes &&
		    o->at.largest_free_bytes < o->requested_bytes)
			fputs(" (fragmentation: it fit in the free bytes, not in one hole)", out);
		fputs("\n", out);
	}
	if (fd->n_ooms_total > (int64_t)i)
		fprintf(out, "- and %lld more\n", (long long)(fd->n_ooms_total - (int64_t)i));
}

/* The call sites live at the attribution moment, largest first. */
static int write_sites(FILE *out, const struct mp_analysis *a, int32_t device)
{
	const struct mp_attr_device *ad = mp_attribution_device(a->attr, device);
	char b[32], t[32], label[512];
	struct mp_attr_group *g;
	ptrdiff_t n, i;

	if (!ad || !ad->taken || !(a->opts.kinds & (1u << MP_ATTR_STACK)))
		return 0;
	if (!(g = mp_attribution_groups(ad, MP_ATTR_STACK, &n)) && n < 0)
		return MP_ENOMEM;
	fprintf(out, "\n**Live at %s** (event %lld, %s): %s in %lld blocks\n\n",
	        a->opts.at == MP_ATTR_AT_PEAK  ? "the live peak"
	        : a->opts.at == MP_ATTR_AT_OOM ? "the first OOM"
	                                  : "the time asked",
	        (long long)ad->seq, mp_analyze_at_time(t, sizeof(t), a, ad->ts_ns),
	        mp_analyze_bytes(b, sizeof(b), ad->live_bytes), (long long)ad->live_blocks);
	fputs("| bytes | share | blocks | call site |\n|--:|--:|--:|:--|\n", out);
	for (i = 0; i < n && i < a->top; i++) {
		fprintf(out, "| %s | %.1f%% | %lld | ", mp_format_bytes(b, sizeof(b), g[i].bytes),
		        ad->live_bytes > 0 ? 100.0 * (double)g[i].bytes / (double)ad->live_bytes
		                           : 0.0,
		        (long long)g[i].count);
		md_text(out, site_text(label, sizeof(label), g[i].stack, a->stack_depth));
		fputs(" |\n", out);
	}
	if (n > a->top)
		fprintf(out, "| | | | and %lld more call sites |\n", (long long)(n - a->top));
	free(g);
	return 0;
}

static int write_device(FILE *out, const struct mp_analysis *a, const struct mp_mem_device *d)
{
	const struct mp_frag_device *fd = mp_frag_device(a->frag, d->device);

	fprintf(out, "\n### Device %d\n\n", d->device);
	write_peaks(out, a, d);
	if (fd) {
		write_frag(out, a, fd);
		write_ooms(out, a, fd);
	}
	return write_sites(out, a, d->device);
}

/* A time metric with its label: "1.23 ms (modelled)", or "-". */
static const char *time_cell(char *buf, size_t n, const struct mp_report_metric *m)
{
	char d[32];

	if (!m)
		return "-";
	snprintf(buf, n, "%s (%s)", mp_format_duration(d, sizeof(d), (int64_t)m->value),
	         m->measured ? "measured" : "modelled");
	return buf;
}

static const char *bytes_cell(char *buf, size_t n, const struct mp_report_metric *m)
{
	return m ? mp_format_bytes(buf, n, (int64_t)m->value) : "-";
}

static void run_row(FILE *out, const struct mp_report_run *r)
{
	const struct mp_report_metric *ratio = mp_report_run_metric(r, "ratio_to_lower_bound");
	const struct mp_report_metric *saved = mp_report_run_metric(r, "saved_bytes");
	const struct mp_report_metric *ooms = mp_report_run_metric(r, "ooms");
	char b1[32], b2[32], b3[32], t1[48], t2[48];

	if (r->device == MP_REPORT_JOB_DEVICE)
		fputs("| job | ", out);
	else
		fprintf(out, "| %d | ", r->device);
	md_text(out, r->pool);
	fputs(" | ", out);
	md_text(out, r->backend);
	fprintf(out, " | %s | %s | ",
	        bytes_cell(b1, sizeof(b1), mp_report_run_metric(r, "peak_reserved_bytes")),
	        bytes_cell(b2, sizeof(b2), mp_report_run_metric(r, "lower_bound_bytes")));
	if (ratio)
		fprintf(out, "%.3f", ratio->value);
	else
		fputs("-", out);
	if (r->baseline && strcmp(r->baseline, r->pool) == 0)
		fputs(" | (baseline)", out);
	else if (saved && r->baseline) {
		fprintf(out, " | %s vs ", bytes_cell(b3, sizeof(b3), saved));
		md_text(out, r->baseline);
	} else
		fputs(" | -", out);
	fprintf(out, " | %s | %s | ",
	        time_cell(t1, sizeof(t1), mp_report_run_metric(r, "backend_ns")),
	        time_cell(t2, sizeof(t2), mp_report_run_metric(r, "time_saved_ns")));
	if (ooms)
		fprintf(out, "%.0f |\n", ooms->value);
	else
		fputs("- |\n", out);
}

static int write_runs(FILE *out, const struct mp_report_input *in)
{
	const struct mp_report_runs *runs = in->runs;
	size_t *idx, n, i;

	fputs("\n### Replay results stored in the trace\n\n", out);
	if (!runs || runs->n == 0) {
		fputs("None: `memprof replay --pool=all` on the trace stores them.\n", out);
		return 0;
	}
	if (!(idx = calloc(runs->n, sizeof(*idx))))
		return MP_ENOMEM;
	n = mp_report_runs_latest(runs, idx);
	fputs("The latest run of each pool: peak reserved bytes against the lower bound that "
	      "the replay computed (no allocator can hold less), and the backend's time as the "
	      "replay stored it, measured on a GPU or modelled (the pool's CPU time on the "
	      "replaying host is not part of it).\n\n",
	      out);
	fputs("| device | pool | backend | peak reserved | lower bound | ratio | saved | "
	      "backend time | time saved | OOMs |\n"
	      "|--:|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n",
	      out);
	for (i = 0; i < n; i++)
		run_row(out, &runs->runs[idx[i]]);
	free(idx);
	return 0;
}

static const char *const kind_title[MP_LIFETIME_N_KINDS] = {
        "leak (never freed)",
        "churn (freed at once)",
        "reuse candidate",
        "idle until the end",
};

static int write_kind(FILE *out, const struct mp_analysis *a, int32_t device, int kind)
{
	size_t n, i;
	const struct mp_lifetime_finding *f = mp_lifetime_findings(a->life, kind, &n);
	struct mp_lifetime_totals t;
	char b[32], d[32], label[512];
	int shown = 0, rows;

	for (i = 0; i < n && shown < a->top; i++) {
		if (f[i].device != device)
			continue;
		fprintf(out, "| %s | %s | %lld | ",
		        kind == MP_LIFETIME_LEAK && a->window
		                ? "live at the window's end (not a leak)"
		                : kind_title[kind],
		        mp_format_bytes(b, sizeof(b), f[i].bytes), (long long)f[i].count);
		md_text(out, site_text(label, sizeof(label), f[i].stack, a->stack_depth));
		if (kind == MP_LIFETIME_REUSE)
			fprintf(out, " | %s each |\n",
			        mp_format_bytes(d, sizeof(d), f[i].size_bytes));
		else if (kind == MP_LIFETIME_CHURN || kind == MP_LIFETIME_IDLE)
			fprintf(out, " | mean life %s |\n",
			        mp_format_duration(d, sizeof(d), f[i].mean_lifetime_ns));
		else
			fputs(" | |\n", out);
		shown++;
	}
	mp_lifetime_device_totals(a->life, device, &t); /* counts the findings not kept */
	rows = (int)(t.kind[kind].n_findings - shown);
	if (rows)
		fprintf(out, "| %s | | | and %d more call sites | |\n",
		        kind == MP_LIFETIME_LEAK && a->window ? "live at the window's end"
		                                              : kind_title[kind],
		        rows);
	return shown;
}

static const char *const kind_plural[MP_LIFETIME_N_KINDS] = {"leaks", "churn", "reuse", "idle"};

/* The findings of a device in a <details> block that GitHub folds: the
 * totals in its summary (numbers only), the table inside. */
static void write_lifetime(FILE *out, const struct mp_analysis *a, int32_t device)
{
	struct mp_lifetime_totals t;
	int k, n = 0;
	char b[32];

	mp_lifetime_device_totals(a->life, device, &t);
	fprintf(out, "\n<details><summary>Device %d: ", device);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++) {
		if (t.kind[k].count == 0)
			continue;
		fprintf(out, "%s%s %lld %s%s (%s)", n++ ? ", " : "",
		        k == MP_LIFETIME_LEAK && a->window ? "live at the window's end"
		                                           : kind_plural[k],
		        (long long)t.kind[k].count, k == MP_LIFETIME_REUSE ? "allocation" : "block",
		        t.kind[k].count == 1 ? "" : "s",
		        mp_format_bytes(b, sizeof(b), t.kind[k].bytes));
	}
	if (n == 0) {
		fputs("no finding</summary></details>\n", out);
		return;
	}
	fprintf(out,
	        "</summary>\n\nThe top %d of each kind; bytes at stake as memprof-analyze(1) "
	        "defines them.\n\n",
	        a->top);
	fputs("| finding | bytes | blocks | call site | detail |\n|:--|--:|--:|:--|:--|\n", out);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		write_kind(out, a, device, k);
	fputs("\n</details>\n", out);
}

struct note_writer {
	FILE *out;
	int n;
};

static void write_note(void *ctx, const char *note)
{
	struct note_writer *w = ctx;

	if (w->n++ == 0)
		fputs("\n### Notes\n\n", w->out);
	fputs("- ", w->out);
	md_text(w->out, note);
	fputs("\n", w->out);
}

int mp_report_write_md(FILE *out, const struct mp_report_input *in)
{
	const struct mp_analysis *a = in->a;
	int order[MP_MEM_MAX_DEVICES], n, i, rc = 0;
	struct note_writer notes = {out, 0};

	write_title(out, in);
	n = mp_analyze_device_order(a, order);
	for (i = 0; i < n && rc == 0; i++)
		rc = write_device(out, a, &a->ms->devices[order[i]]);
	if (rc == 0)
		rc = write_runs(out, in);
	if (rc == 0 && n > 0) {
		fputs("\n### Lifetime findings\n", out);
		for (i = 0; i < n; i++)
			write_lifetime(out, a, a->ms->devices[order[i]].device);
	}
	if (rc == 0)
		mp_analyze_notes(a, write_note, &notes);
	if (rc == 0 && ferror(out))
		rc = MP_EIO;
	return rc;
}
