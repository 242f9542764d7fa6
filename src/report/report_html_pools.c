/*
 * report/report_html_pools.c - the 'pools' chart: the replay results
 * stored in the trace (report/runs.h), the newest run of each pool and
 * backend, per device: bars of peak reserved bytes against the lower bound
 * (peak requested bytes), the ratio, bytes saved against the baseline, times
 * labelled modelled or measured as each stored metric says; and a table.
 */
#include "report/runs.h"
#include "report/report_html.h"
#include "util/format.h"

#include <stdlib.h>
#include <string.h>

#define ROW_H   28
#define P_LEFT  230
#define P_RIGHT 210
#define P_TOP   10

static double metric(const struct mp_report_run *r, const char *name, int *measured)
{
	const struct mp_report_metric *m = mp_report_run_metric(r, name);

	if (measured)
		*measured = m ? m->measured : 0;
	return m ? m->value : -1;
}

static const char *timing(int measured)
{
	return measured ? "measured" : "modelled";
}

static void run_tip(struct mp_html_text *t, const struct mp_report_run *r)
{
	char b[3][32], d[3][32];
	double saved = metric(r, "saved_bytes", NULL),
	       ratio = metric(r, "ratio_to_lower_bound", NULL);
	int m_total, m_p50, m_p99;
	double total = metric(r, "total_ns", &m_total);
	double p50 = metric(r, "alloc_ns_p50", &m_p50), p99 = metric(r, "alloc_ns_p99", &m_p99);

	mp_html_text_reset(t);
	mp_html_text_add(
	        t, "pool %s, %s backend\npeak reserved: %s\nlower bound: %s", r->pool, r->backend,
	        mp_format_bytes(b[0], sizeof(b[0]),
	                        (int64_t)metric(r, "peak_reserved_bytes", NULL)),
	        mp_format_bytes(b[1], sizeof(b[1]), (int64_t)metric(r, "lower_bound_bytes", NULL)));
	if (ratio >= 0)
		mp_html_text_add(t, " (ratio %.3f)", ratio);
	if (r->baseline && mp_report_run_metric(r, "saved_bytes"))
		mp_html_text_add(t, "\nsaved against %s: %s", r->baseline,
		                 mp_format_bytes(b[2], sizeof(b[2]), (int64_t)saved));
	if (total >= 0)
		mp_html_text_add(t, "\nallocator time: %s (%s)",
		                 mp_format_duration(d[0], sizeof(d[0]), (int64_t)total),
		                 timing(m_total));
	if (p50 >= 0 && p99 >= 0)
		mp_html_text_add(
		        t, "\nalloc latency p50 %s (%s), p99 %s (%s)",
		        mp_format_duration(d[1], sizeof(d[1]), (int64_t)p50), timing(m_p50),
		        mp_format_duration(d[2], sizeof(d[2]), (int64_t)p99), timing(m_p99));
	if (r->options)
		mp_html_text_add(t, "\nreplayed by: %s", r->options);
}

static void bar_row(struct mp_html_page *pg, const struct mp_report_run *r, int row, double top)
{
	double y = P_TOP + row * ROW_H, w = MP_HTML_CHART_WIDTH - P_LEFT - P_RIGHT;
	double peak = metric(r, "peak_reserved_bytes", NULL),
	       lb = metric(r, "lower_bound_bytes", NULL);
	double ratio = metric(r, "ratio_to_lower_bound", NULL), x;
	char b[32];

	fprintf(pg->out, "<text class=\"bar-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
	        P_LEFT - 8, y + 17);
	mp_html_escape_cut(pg->out, r->pool, 20);
	fputs(" (", pg->out);
	mp_html_escape_cut(pg->out, r->backend, 8);
	fputs(")</text>\n", pg->out);
	run_tip(&pg->tip, r);
	x = peak > 0 ? w * peak / top : 0;
	fprintf(pg->out, "<rect class=\"bar%s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"",
	        r->baseline && strcmp(r->baseline, r->pool) == 0 ? " baseline" : "", P_LEFT, y + 4,
	        x, ROW_H - 8);
	mp_html_tip_open(pg, 1);
	fputs("</rect>\n", pg->out);
	if (lb >= 0) {
		double lx = P_LEFT + w * lb / top;

		mp_html_text_reset(&pg->tip);
		mp_html_text_add(&pg->tip, "lower bound: %s (peak requested bytes; no pool holds less)",
		                 mp_format_bytes(b, sizeof(b), (int64_t)lb));
		fprintf(pg->out,
		        "<line class=\"lower-bound\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		        "y2=\"%.1f\"",
		        lx, y + 1, lx, y + ROW_H - 1);
		mp_html_tip_open(pg, 0);
		fputs("</line>\n", pg->out);
	}
	fprintf(pg->out, "<text class=\"bar-label\" x=\"%.1f\" y=\"%.1f\">%s",
	        P_LEFT + (x > 0 ? x : 0) + 6, y + 17,
	        mp_format_bytes(b, sizeof(b), (int64_t)(peak > 0 ? peak : 0)));
	if (ratio >= 0)
		fprintf(pg->out, ", %.2f\xc3\x97 the lower bound", ratio);
	fputs("</text>\n", pg->out);
}

static void pools_table(struct mp_html_page *pg, const struct mp_report_run *runs,
                        const size_t *idx, size_t n)
{
	size_t i;

	fputs("<table class=\"pools\">\n<tr><th>pool</th><th>backend</th>"
	      "<th class=\"num\">peak reserved</th><th class=\"num\">ratio</th>"
	      "<th class=\"num\">saved</th><th class=\"num\">allocator time</th></tr>\n",
	      pg->out);
	for (i = 0; i < n; i++) {
		const struct mp_report_run *r = &runs[idx[i]];
		double saved = metric(r, "saved_bytes", NULL),
		       ratio = metric(r, "ratio_to_lower_bound", NULL);
		int mt;
		double total = metric(r, "total_ns", &mt);
		char b[32], d[32];

		fputs("<tr><td>", pg->out);
		mp_html_escape(pg->out, r->pool);
		fputs("</td><td>", pg->out);
		mp_html_escape(pg->out, r->backend);
		fprintf(pg->out, "</td><td class=\"num\">%s</td><td class=\"num\">",
		        mp_format_bytes(b, sizeof(b),
		                        (int64_t)metric(r, "peak_reserved_bytes", NULL)));
		if (ratio >= 0)
			fprintf(pg->out, "%.3f", ratio);
		fputs("</td><td class=\"num\">", pg->out);
		if (r->baseline && mp_report_run_metric(r, "saved_bytes")) {
			fprintf(pg->out, "%s against ",
			        mp_format_bytes(b, sizeof(b), (int64_t)saved));
			mp_html_escape(pg->out, r->baseline);
		}
		fputs("</td><td class=\"num\">", pg->out);
		if (total >= 0)
			fprintf(pg->out, "%s %s", mp_format_duration(d, sizeof(d), (int64_t)total),
			        timing(mt));
		fputs("</td></tr>\n", pg->out);
	}
	fputs("</table>\n", pg->out);
}

/* The runs idx[0..n) of one device. */
static void device_pools(struct mp_html_page *pg, const struct mp_report_run *runs,
                         const size_t *idx, size_t n)
{
	double top = 0, w = MP_HTML_CHART_WIDTH - P_LEFT - P_RIGHT;
	int32_t device = runs[idx[0]].device;
	int height = P_TOP + (int)n * ROW_H + 24;
	char label[96];
	size_t i;

	for (i = 0; i < n; i++) {
		double p = metric(&runs[idx[i]], "peak_reserved_bytes", NULL);
		double lb = metric(&runs[idx[i]], "lower_bound_bytes", NULL);

		top = p > top ? p : top;
		top = lb > top ? lb : top;
	}
	top = mp_svg_bytes_top(top);
	char where[48];

	fprintf(pg->out, "<h3>%s</h3>\n", mp_report_run_where(where, sizeof(where), device, 1));
	snprintf(label, sizeof(label), "peak reserved bytes of replayed pools, %s",
	         mp_report_run_where(where, sizeof(where), device, 0));
	mp_svg_open(pg->out, "pools", device, MP_HTML_CHART_WIDTH, height, label);
	mp_svg_axis_bytes_x(pg->out, P_LEFT, w, P_TOP, P_TOP + (double)n * ROW_H, top);
	for (i = 0; i < n; i++)
		bar_row(pg, &runs[idx[i]], (int)i, top);
	mp_svg_close(pg->out);
	pools_table(pg, runs, idx, n);
}

void mp_html_pools(struct mp_html_page *pg)
{
	const struct mp_report_runs *runs = pg->in->runs;
	int device = pg->in->a->device;
	size_t *idx, n, i, j, shown = 0;

	fputs("<section class=\"pools\">\n<h2>Replayed pools</h2>\n", pg->out);
	idx = runs && runs->n ? malloc(runs->n * sizeof(*idx)) : NULL;
	n = idx ? mp_report_runs_latest(runs, idx) : 0;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && runs->runs[idx[j]].device == runs->runs[idx[i]].device; j++)
			;
		if (device >= 0 && runs->runs[idx[i]].device != device)
			continue;
		if (!shown++)
			fputs("<p class=\"sub\">The newest replay of each pool stored in the "
			      "trace: bars "
			      "of peak reserved bytes; the black line is the lower bound, peak "
			      "requested bytes, which no pool can go below. Times are modelled unless marked "
			      "measured (memprof-replay(1)).</p>\n",
			      pg->out);
		device_pools(pg, runs->runs, idx + i, j - i);
	}
	if (!shown) {
		fputs("<p>No replay results are stored in this trace", pg->out);
		if (device >= 0 && n)
			fprintf(pg->out, " for device %d", device);
		fputs(": <code>memprof replay ", pg->out);
		mp_html_escape(pg->out, pg->in->a->path);
		fputs(" --pool=all</code> adds them.</p>\n", pg->out);
	}
	free(idx);
	fputs("</section>\n", pg->out);
}
