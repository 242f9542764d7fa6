/*
 * report/report_html_tables.c - the tables of a device: the largest call
 * stacks and phases live at the peak (analysis/attribution) and the
 * lifetime findings, leaks, churn, reuse candidates and idle blocks, by
 * call site with the bytes at stake (analysis/lifetime), top N of each.
 */
#include "report/report_html.h"
#include "util/format.h"
#include "util/stack_text.h"

#include <stdlib.h>

/* The call site's frame as the cell text, the whole stack in its tooltip. */
static void site_cell(struct mp_html_page *pg, const struct memprof_stack *s)
{
	int site = s ? mp_stack_call_site(s) : -1;
	uint32_t k;

	if (site < 0) {
		fputs("<td>(no call stack)</td>", pg->out);
		return;
	}
	mp_html_text_reset(&pg->tip);
	mp_html_text_add(&pg->tip, "call stack, outermost first:");
	for (k = s->n_frames; k > 0; k--) {
		mp_html_text_add(&pg->tip, "\n");
		mp_html_frame_text(&pg->tip, &s->frames[k - 1], 0);
	}
	fputs("<td", pg->out);
	mp_html_tip_html(pg);
	mp_html_text_reset(&pg->tip);
	mp_html_frame_text(&pg->tip, &s->frames[site], 0);
	mp_html_escape_n(pg->out, pg->tip.buf, pg->tip.len);
	fputs("</td>", pg->out);
}

static int any_name(const struct mp_attr_group *g, ptrdiff_t n)
{
	ptrdiff_t i;

	for (i = 0; i < n; i++)
		if (g[i].name)
			return 1;
	return 0;
}

/* A table of the top groups of a kind; phases and APIs only when some
 * block has one. */
static void group_rows(struct mp_html_page *pg, const struct mp_attr_device *ad, int kind,
                       const char *title)
{
	const struct mp_analysis *a = pg->in->a;
	struct mp_attr_group *g;
	ptrdiff_t n, i;
	char b[32];

	if (!(a->kinds & (1u << kind)) || !(g = mp_attribution_groups(ad, kind, &n)))
		return;
	if (kind != MP_ATTR_STACK && !any_name(g, n)) {
		free(g);
		return;
	}
	fprintf(pg->out,
	        "<h3>Largest at the peak, by %s</h3>\n<table class=\"groups\" data-by=\"%s\">\n"
	        "<tr><th class=\"num\">bytes</th><th class=\"num\">share</th>"
	        "<th class=\"num\">blocks</th><th>%s</th></tr>\n",
	        title, mp_attr_kind_names[kind], title);
	for (i = 0; i < n && i < a->top; i++) {
		fprintf(pg->out,
		        "<tr><td class=\"num\">%s</td><td class=\"num\">%.1f%%</td>"
		        "<td class=\"num\">%lld</td>",
		        mp_format_bytes(b, sizeof(b), g[i].bytes),
		        ad->live_bytes ? 100.0 * (double)g[i].bytes / (double)ad->live_bytes : 0.0,
		        (long long)g[i].count);
		if (kind == MP_ATTR_STACK) {
			site_cell(pg, g[i].stack);
		} else {
			fputs("<td>", pg->out);
			mp_html_escape(pg->out, g[i].name               ? g[i].name
			                        : kind == MP_ATTR_PHASE ? "(no phase)"
			                                                : "(no API)");
			fputs("</td>", pg->out);
		}
		fputs("</tr>\n", pg->out);
	}
	fputs("</table>\n", pg->out);
	if (n > a->top)
		fprintf(pg->out, "<p class=\"sub\">%lld more not listed (--top=%d).</p>\n",
		        (long long)(n - a->top), a->top);
	free(g);
}

void mp_html_groups_tables(struct mp_html_page *pg, int32_t device)
{
	const struct mp_attr_device *ad = mp_attribution_device(pg->in->a->attr, device);

	if (!ad || !ad->taken || ad->live_blocks == 0)
		return;
	group_rows(pg, ad, MP_ATTR_STACK, "call site");
	group_rows(pg, ad, MP_ATTR_PHASE, "phase");
	group_rows(pg, ad, MP_ATTR_API, "API");
}

static const char *const kind_label[MP_LIFETIME_N_KINDS] = {"leak", "churn", "reuse", "idle"};

static void finding_detail(struct mp_html_page *pg, const struct mp_lifetime_finding *f)
{
	char b[32], d[32];

	switch (f->kind) {
	case MP_LIFETIME_LEAK:
		fprintf(pg->out, "%s; %lld allocations at the site",
		        pg->in->a->window ? "not freed inside the window" : "never freed",
		        (long long)f->site_allocs);
		break;
	case MP_LIFETIME_CHURN:
		fprintf(pg->out, "mean life %s",
		        mp_format_duration(d, sizeof(d), f->mean_lifetime_ns));
		break;
	case MP_LIFETIME_REUSE:
		fprintf(pg->out, "%s each; one reused buffer saves %lld allocations",
		        mp_format_bytes(b, sizeof(b), f->size_bytes), (long long)f->calls_saved);
		break;
	default:
		fprintf(pg->out, "idle until the end; mean life %s",
		        mp_format_duration(d, sizeof(d), f->mean_lifetime_ns));
	}
}

static int finding_rows(struct mp_html_page *pg, int32_t device, enum mp_lifetime_kind k)
{
	size_t n, i;
	const struct mp_lifetime_finding *f = mp_lifetime_findings(pg->in->a->life, k, &n);
	char b[32];
	int shown = 0;

	for (i = 0; i < n && shown < pg->in->a->top; i++) {
		if (f[i].device != device)
			continue;
		fprintf(pg->out, "<tr class=\"%s\"><td>%s</td>", kind_label[k],
		        k == MP_LIFETIME_LEAK && pg->in->a->window ? "live at window end"
		                                                   : kind_label[k]);
		site_cell(pg, f[i].stack);
		fprintf(pg->out, "<td class=\"num\">%lld</td><td class=\"num\">%s</td><td>",
		        (long long)f[i].count, mp_format_bytes(b, sizeof(b), f[i].bytes));
		finding_detail(pg, &f[i]);
		fputs("</td></tr>\n", pg->out);
		shown++;
	}
	return shown;
}

void mp_html_findings_table(struct mp_html_page *pg, int32_t device)
{
	const struct mp_analysis *a = pg->in->a;
	struct mp_lifetime_totals t;
	char b[32], w[32];
	int k, rows = 0;

	mp_lifetime_device_totals(a->life, device, &t);
	fputs("<h3>Lifetime findings</h3>\n<p class=\"sub\">", pg->out);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		fprintf(pg->out, "%s%s: %lld, %s", k ? "; " : "",
		        k == MP_LIFETIME_LEAK && a->window ? "live at window end" : kind_label[k],
		        (long long)t.kind[k].count, mp_format_bytes(b, sizeof(b), t.kind[k].bytes));
	if (a->window)
		fputs(". Live at window end: blocks live at the end of the trace, which is a "
		      "window of the program, so they may be freed after it: not leaks",
		      pg->out);
	else
		fputs(". Leaks: blocks live at the end", pg->out);
	fprintf(pg->out,
	        "; churn: freed within %s or before the next "
	        "allocation on their stream; reuse: same site and size, lifetimes disjoint; "
	        "idle: freed after the last allocation, live %.0f%%+ of the trace "
	        "(memprof-analyze(1)). Top %d of each.</p>\n",
	        mp_format_duration(w, sizeof(w), a->churn_window_ns), 100.0 * a->idle_min_share,
	        a->top);
	fputs("<table class=\"findings\">\n<tr><th>pattern</th><th>call site</th>"
	      "<th class=\"num\">count</th><th class=\"num\">bytes at stake</th>"
	      "<th>detail</th></tr>\n",
	      pg->out);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		rows += finding_rows(pg, device, (enum mp_lifetime_kind)k);
	if (rows == 0)
		fputs("<tr><td colspan=\"5\">no leaks, churn, reuse candidates or idle blocks</td>"
		      "</tr>\n",
		      pg->out);
	fputs("</table>\n", pg->out);
}
