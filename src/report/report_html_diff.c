/*
 * report/report_html_diff.c - 'memprof report BASE HEAD': two traces on
 * one page.  The gate's figures exactly as 'memprof diff' prints them
 * (report/gate.h's text writer, so every label is the gate's), per device
 * the call sites that grew or shrank at the peak (the gate's comparison),
 * and both runs' active memory timelines on one axis, zoomed together.
 * Computes nothing: it lays out what the gate and the analyses found.
 */
#include "report/gate.h"
#include "report/report_html.h"
#include "util/satmath.h"

#include <stdlib.h>

static void page_init(struct mp_html_page *pg, FILE *out, const struct mp_report_input *in)
{
	const struct mp_memstate *ms = in->a->ms;

	pg->out = out;
	pg->in = in;
	mp_html_page_times(pg, ms);
}

static double axis_len(const struct mp_html_page *pg)
{
	if (pg->in->a->no_timestamps)
		return pg->in->spans ? (double)pg->in->spans->last_seq : 0;
	return (double)mp_sat_sub(pg->t1_ns, pg->t0_ns);
}

static void header(FILE *out, const struct mp_report_input *base,
                   const struct mp_report_input *head)
{
	fputs("<header>\n<h1>memprof report: two runs</h1>\n<dl class=\"meta\">\n<dt>BASE</dt><dd>"
	      "<code>",
	      out);
	mp_html_escape(out, base->a->path);
	fputs("</code></dd>\n<dt>HEAD</dt><dd><code>", out);
	mp_html_escape(out, head->a->path);
	fputs("</code></dd>\n</dl>\n</header>\n", out);
}

/* The gate's text, as 'memprof diff BASE HEAD' prints it without thresholds. */
static int gate_figures(FILE *out, const struct mp_gate_diff *d, int32_t device, int top)
{
	struct mp_gate_report r = {.command = "diff",
	                           .base = d->base,
	                           .head = d->head,
	                           .diff = d,
	                           .device = device,
	                           .top = top};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m)
		return MP_ENOMEM;
	rc = mp_gate_write_text(m, &r);
	if (fclose(m) != 0 && rc == 0)
		rc = MP_ENOMEM;
	if (rc == 0) {
		fputs("<section class=\"gate\">\n<h2>The gate's figures</h2>\n<p class=\"sub\">As "
		      "<code>memprof diff BASE HEAD</code> prints them (memprof-diff(1)); no "
		      "threshold is checked here.</p>\n<pre class=\"gate\">",
		      out);
		mp_html_escape_n(out, buf, len);
		fputs("</pre>\n</section>\n", out);
	}
	free(buf);
	return rc;
}

static void site_row(FILE *out, const struct mp_gate_site_change *sc)
{
	const struct mp_gate_site *site = sc->head ? sc->head : sc->base;
	char b[32], h[32], c[32], text[512];

	snprintf(b, sizeof(b), "%lld", (long long)(sc->base ? sc->base->bytes : 0));
	snprintf(h, sizeof(h), "%lld", (long long)(sc->head ? sc->head->bytes : 0));
	fprintf(out,
	        "<tr class=\"%s\"><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
	        "class=\"num\" data-delta=\"%lld\">%s</td><td>",
	        sc->delta_bytes > 0 ? "grew" : "shrank", sc->base ? b : "-", sc->head ? h : "-",
	        (long long)sc->delta_bytes, mp_gate_signed_bytes(c, sizeof(c), sc->delta_bytes));
	mp_html_escape(out, mp_gate_site_text(text, sizeof(text), site, 120));
	fprintf(out, "%s</td></tr>\n", !sc->base ? " [new]" : !sc->head ? " [gone]" : "");
}

static void sites_table(FILE *out, const struct mp_gate_device_change *c, int top)
{
	size_t i;

	fputs("<h3>Call sites that grew or shrank at the peak</h3>\n", out);
	if (!c->base || !c->head) {
		fprintf(out, "<p>Device %d is in %s only.</p>\n", (int)c->device,
		        c->base ? "BASE" : "HEAD");
		return;
	}
	if (c->n_sites == 0) {
		fputs("<p>No call site changed at the peak.</p>\n", out);
		return;
	}
	fputs("<table class=\"site-changes\">\n<tr><th class=\"num\">BASE bytes</th><th "
	      "class=\"num\">HEAD bytes</th><th class=\"num\">change</th><th>call site</th></tr>\n",
	      out);
	for (i = 0; i < c->n_sites && i < (size_t)top; i++)
		site_row(out, &c->sites[i]);
	fputs("</table>\n", out);
	if (c->n_sites > (size_t)top)
		fprintf(out, "<p class=\"sub\">%zu more not listed (--top=%d).</p>\n",
		        c->n_sites - (size_t)top, top);
}

struct live_ctx {
	struct mp_svg_path path;
};

static int live_row(void *ctx, const struct mp_timeline_point *p)
{
	struct live_ctx *c = ctx;

	if (p->live_bytes < 0)
		mp_svg_path_gap(&c->path);
	else
		mp_svg_path_point(&c->path, p->ts_ns, (double)p->live_bytes);
	return 0;
}

/* Live bytes of both runs over time on one axis, each from its first event. */
static void live_chart(struct mp_html_page *pg, int32_t device, double x1)
{
	static const char *const cls[] = {"base-live", "live"};
	static const char *const lab[] = {"BASE live", "HEAD live"};
	const struct mp_timeline_series *s[2];
	struct mp_svg_plot p[2];
	double top = 0;
	int k;

	for (k = 0; k < 2; k++) {
		const struct mp_mem_device *d = mp_memstate_device(pg[k].in->a->ms, device);

		s[k] = pg[k].in->timeline ? mp_timeline_series(pg[k].in->timeline, device) : NULL;
		if (d && (double)d->live_peak.bytes > top)
			top = (double)d->live_peak.bytes;
	}
	if (!s[0] || !s[1] || pg[0].in->a->no_timestamps || pg[1].in->a->no_timestamps) {
		fputs("<p>No live bytes over time of both runs: one has no events on this device "
		      "or "
		      "no timestamps.</p>\n",
		      pg[0].out);
		return;
	}
	for (k = 0; k < 2; k++)
		p[k] = (struct mp_svg_plot){.left = 78,
		                            .top = 30,
		                            .width = MP_HTML_CHART_WIDTH - 108,
		                            .height = 260 - 76,
		                            .t0_ns = pg[k].t0_ns,
		                            .t1_ns = mp_sat_add(pg[k].t0_ns, mp_sat_i64_of_double(x1)),
		                            .y_max = mp_svg_bytes_top(top)};
	mp_svg_open(pg[0].out, "memory", device, MP_HTML_CHART_WIDTH, 260,
	            "live bytes of BASE and HEAD over time");
	mp_svg_axis_bytes(pg[0].out, &p[0]);
	mp_svg_axis_time(pg[0].out, &p[0]);
	for (k = 0; k < 2; k++) {
		struct live_ctx c;

		mp_svg_path_begin(&c.path, pg[0].out, &p[k], cls[k]);
		mp_timeline_foreach(s[k], live_row, &c);
		mp_svg_path_end(&c.path);
	}
	for (k = 0; k < 2; k++)
		mp_html_peak_marker(&pg[k], &p[k], mp_memstate_device(pg[k].in->a->ms, device));
	mp_svg_legend(pg[0].out, 78, 16, cls, lab, 2);
	mp_svg_close(pg[0].out);
}

static void timelines(struct mp_html_page *pg, int32_t device, double x1)
{
	char group[24];
	int k;

	snprintf(group, sizeof(group), "d%d", (int)device);
	fputs("<h3>Live bytes over time, both runs on one axis</h3>\n", pg[0].out);
	live_chart(pg, device, x1);
	fputs("<h3>Active memory over time, both runs on one axis</h3>\n<p class=\"sub\">Each "
	      "run's time counts from its own first event; zooming one zooms both.</p>\n",
	      pg[0].out);
	for (k = 0; k < 2; k++) {
		pg[k].group =
		        pg[0].in->a->no_timestamps == pg[1].in->a->no_timestamps ? group : NULL;
		fprintf(pg[k].out, "<h4>%s</h4>\n", pg[k].run);
		mp_html_bands_view(&pg[k], device);
	}
}

int mp_report_write_diff_html(FILE *out, const struct mp_report_input *base,
                              const struct mp_report_input *head, const struct mp_gate_diff *d,
                              int32_t device, int top)
{
	struct mp_html_page *pg = calloc(2, sizeof(*pg));
	double x1;
	size_t i;
	int rc;

	if (!pg)
		return MP_ENOMEM;
	page_init(&pg[0], out, base);
	page_init(&pg[1], out, head);
	pg[0].run = "BASE";
	pg[1].run = "HEAD";
	x1 = axis_len(&pg[0]) > axis_len(&pg[1]) ? axis_len(&pg[0]) : axis_len(&pg[1]);
	if (base->a->no_timestamps == head->a->no_timestamps)
		pg[0].x1_shared = pg[1].x1_shared = x1;
	mp_html_page_open(out, base->a->path, head->a->path);
	header(out, base, head);
	rc = gate_figures(out, d, device, top);
	for (i = 0; rc == 0 && i < d->n_devices; i++) {
		if (device >= 0 && d->devices[i].device != device)
			continue;
		fprintf(out, "<section class=\"device\" id=\"device-%d\">\n<h2>Device %d</h2>\n",
		        (int)d->devices[i].device, (int)d->devices[i].device);
		sites_table(out, &d->devices[i], top);
		timelines(pg, d->devices[i].device, x1);
		fputs("</section>\n", out);
	}
	mp_html_page_close(out);
	free(pg);
	return rc < 0 ? rc : ferror(out) ? MP_EIO : 0;
}
