/*
 * report/report_html_sites.c - the table of the call sites live at a
 * device's peak, user code first: the gate's call sites (analysis/gate.h,
 * the same sites and bytes as 'memprof diff' and 'memprof check'), each
 * with its bytes, blocks and share of the peak, its whole stack on hover.
 * Reads the gate figures the command computed; computes only the shares.
 */
#include "report/gate.h"
#include "report/report_html.h"
#include "util/format.h"

void mp_html_sites_table(struct mp_html_page *pg, int32_t device)
{
	const struct mp_gate_device *g =
	        pg->in->gate ? mp_gate_trace_device(pg->in->gate, device) : NULL;
	char b[32], text[512];
	size_t i, top = (size_t)pg->in->a->top;

	if (!g || g->n_sites == 0)
		return;
	fputs("<h3>Top call sites at the peak</h3>\n<table class=\"sites\">\n<tr><th "
	      "class=\"num\">bytes</th><th class=\"num\">share</th><th class=\"num\">blocks</th>"
	      "<th class=\"num\">stacks</th><th>call site</th></tr>\n",
	      pg->out);
	for (i = 0; i < g->n_sites && i < top; i++) {
		const struct mp_gate_site *s = &g->sites[i];

		fprintf(pg->out,
		        "<tr><td class=\"num\">%s</td><td class=\"num\">%.1f%%</td><td "
		        "class=\"num\">%lld</td><td class=\"num\">%lld</td><td>",
		        mp_format_bytes(b, sizeof(b), s->bytes),
		        g->peak_live_bytes > 0
		                ? 100.0 * (double)s->bytes / (double)g->peak_live_bytes
		                : 0.0,
		        (long long)s->blocks, (long long)s->n_stacks);
		mp_html_escape(pg->out, mp_gate_site_text(text, sizeof(text), s, 120));
		fputs("</td></tr>\n", pg->out);
	}
	fputs("</table>\n", pg->out);
	fprintf(pg->out,
	        "<p class=\"sub\">A call site is the innermost frame of a stack that is neither "
	        "allocator, interpreter, runtime nor dispatch code, keyed by its function and "
	        "file; its lines are listed together (memprof-diff(1), CALL SITES).%s</p>\n",
	        g->n_sites > top ? " More sites are not listed (--top)." : "");
}
