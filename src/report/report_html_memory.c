/*
 * report/report_html_memory.c - the two time charts of a device: 'memory'
 * (live, requested and reserved bytes from analysis/timeline, phases
 * shaded, the live peak and every kept OOM marked) and 'frag' (free share
 * and external ratio from analysis/frag_series).  Every row the analyses
 * kept is drawn once; nothing is computed here but coordinates.
 */
#include "report/report_html.h"
#include "util/format.h"

#define MEM_HEIGHT  300
#define FRAG_HEIGHT 210
#define LEFT        78
#define TOP         30

enum { COL_LIVE, COL_REQUESTED, COL_RESERVED };

struct series_ctx {
	struct mp_svg_path path;
	int column;
};

static int memory_row(void *ctx, const struct mp_timeline_point *p)
{
	struct series_ctx *c = ctx;
	int64_t v = c->column == COL_LIVE        ? p->live_bytes
	            : c->column == COL_REQUESTED ? p->requested_bytes
	                                         : p->reserved_bytes;

	if (v < 0)
		mp_svg_path_gap(&c->path);
	else
		mp_svg_path_point(&c->path, p->ts_ns, (double)v);
	return 0;
}

static void memory_series(struct mp_html_page *pg, const struct mp_svg_plot *plot,
                          const struct mp_timeline_series *s, int column, const char *cls)
{
	struct series_ctx c;

	c.column = column;
	mp_svg_path_begin(&c.path, pg->out, plot, cls);
	mp_timeline_foreach(s, memory_row, &c);
	mp_svg_path_end(&c.path);
}

void mp_html_peak_marker(struct mp_html_page *pg, const struct mp_svg_plot *p,
                         const struct mp_mem_device *d)
{
	char b[64], t[32];

	if (!d || d->live_peak.seq == 0)
		return;
	mp_html_text_reset(&pg->tip);
	mp_html_text_add(&pg->tip, "%s%slive peak: %s\nat %s, event %lld", pg->run ? pg->run : "",
	                 pg->run ? " " : "", mp_html_bytes(b, sizeof(b), d->live_peak.bytes),
	                 mp_html_at(pg, t, sizeof(t), d->live_peak.ts_ns),
	                 (long long)d->live_peak.seq);
	fprintf(pg->out, "<circle class=\"peak-marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"",
	        mp_svg_x(p, d->live_peak.ts_ns), mp_svg_y(p, (double)d->live_peak.bytes));
	mp_html_tip_open(pg, 1);
	fputs("</circle>\n", pg->out);
}

static void oom_marker(struct mp_html_page *pg, const struct mp_svg_plot *p,
                       const struct mp_frag_oom *o)
{
	double x = mp_svg_x(p, o->at.ts_ns);
	char b[5][64], t[32];

	mp_html_text_reset(&pg->tip);
	mp_html_text_add(&pg->tip,
	                 "out of memory at %s, event %lld\nrequested: %s\ndevice free: %s%s\n"
	                 "live: %s\nfree in reserved: %s\nlargest hole: %s",
	                 mp_html_at(pg, t, sizeof(t), o->at.ts_ns), (long long)o->at.seq,
	                 mp_html_bytes(b[0], sizeof(b[0]), o->requested_bytes),
	                 mp_html_bytes(b[1], sizeof(b[1]), o->device_free_bytes),
	                 o->device_free_bytes >= 0 ? " (as recorded)" : "",
	                 mp_html_bytes(b[2], sizeof(b[2]), o->at.live_bytes),
	                 mp_html_bytes(b[3], sizeof(b[3]), o->at.free_in_reserved_bytes),
	                 mp_html_bytes(b[4], sizeof(b[4]), o->at.largest_free_bytes));
	fputs("<g class=\"oom-marker\"", pg->out);
	mp_html_tip_open(pg, 1);
	/* the line, the triangle above it, and a transparent band to hover */
	fprintf(pg->out,
	        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
	        "<path d=\"M%.1f,%.1fH%.1fL%.1f,%.1fZ\"/>"
	        "<rect class=\"hit\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"%.1f\"/></g>\n",
	        x, p->top, x, p->top + p->height, x - 5, p->top - 8, x + 5, x, p->top, x - 4,
	        p->top - 8, p->height + 8);
}

static void plot_for(const struct mp_html_page *pg, struct mp_svg_plot *p, int height, double y_max)
{
	p->left = LEFT;
	p->top = TOP;
	p->width = MP_HTML_CHART_WIDTH - LEFT - 30;
	p->height = height - TOP - 46;
	p->t0_ns = pg->t0_ns;
	p->t1_ns = pg->t1_ns;
	p->y_max = y_max;
}

static double memory_top(const struct mp_mem_device *d)
{
	double m = (double)d->live_peak.bytes;

	if ((double)d->requested_peak.bytes > m)
		m = (double)d->requested_peak.bytes;
	if (d->has_segments && (double)d->reserved_peak.bytes > m)
		m = (double)d->reserved_peak.bytes;
	return mp_svg_bytes_top(m);
}

/* A legend entry for each thing the chart draws, and only those. */
static void memory_legend(FILE *out, const struct mp_mem_device *d, int64_t n_ooms, int64_t n_spans)
{
	const char *cls[6], *lab[6];
	int n = 0;

#define ENTRY(c, l) (cls[n] = (c), lab[n++] = (l))
	ENTRY("live", "live");
	ENTRY("requested", "requested");
	if (d->live_peak.seq > 0)
		ENTRY("peak-marker", "live peak");
	if (n_ooms > 0)
		ENTRY("oom-marker", "OOM");
	if (n_spans > 0)
		ENTRY("phase", "phases");
	if (d->has_segments)
		ENTRY("reserved", "reserved");
#undef ENTRY
	mp_svg_legend(out, LEFT, 16, cls, lab, n);
}

void mp_html_memory_chart(struct mp_html_page *pg, int32_t device)
{
	const struct mp_report_input *in = pg->in;
	const struct mp_mem_device *d = mp_memstate_device(in->a->ms, device);
	const struct mp_timeline_series *s =
	        in->timeline ? mp_timeline_series(in->timeline, device) : NULL;
	const struct mp_frag_device *fd = mp_frag_device(in->a->frag, device);
	struct mp_html_phase_counts pc;
	struct mp_svg_plot p;
	char label[96];
	size_t i;

	fputs("<h3>Memory over time</h3>\n", pg->out);
	if (!d || !s) {
		fputs("<p>No memory timeline for this device.</p>\n", pg->out);
		return;
	}
	plot_for(pg, &p, MEM_HEIGHT, memory_top(d));
	snprintf(label, sizeof(label), "live, requested and reserved bytes over time, device %d",
	         (int)device);
	mp_svg_open(pg->out, "memory", device, MP_HTML_CHART_WIDTH, MEM_HEIGHT, label);
	mp_html_phase_shading(pg, &p, device, &pc);
	mp_svg_axis_bytes(pg->out, &p);
	mp_svg_axis_time(pg->out, &p);
	if (d->has_segments)
		memory_series(pg, &p, s, COL_RESERVED, "reserved");
	memory_series(pg, &p, s, COL_REQUESTED, "requested");
	memory_series(pg, &p, s, COL_LIVE, "live");
	mp_html_peak_marker(pg, &p, d);
	for (i = 0; fd && i < fd->n_ooms; i++)
		oom_marker(pg, &p, &fd->ooms[i]);
	memory_legend(pg->out, d, fd ? (int64_t)fd->n_ooms : 0, pc.n_spans);
	mp_svg_close(pg->out);
	fprintf(pg->out,
	        "<p class=\"sub\">Live bytes: granted sizes of blocks the program holds; "
	        "requested: what it asked for; reserved: what the allocator holds from the "
	        "driver%s (memprof-analyze(1)). %lld of the device's %lld states drawn "
	        "(at most %lld; every bucket keeps its first and last state, its lowest live "
	        "and its highest of each series).",
	        d->has_segments ? "" : ", unknown here: the trace has no segment-level events",
	        (long long)mp_timeline_n_rows(s), (long long)s->n_events,
	        (long long)in->timeline->max_points);
	if (fd && fd->n_ooms_total > (int64_t)fd->n_ooms)
		fprintf(pg->out, " %lld OOMs; the first %zu are marked.",
		        (long long)fd->n_ooms_total, fd->n_ooms);
	fputs("</p>\n", pg->out);
	mp_html_phase_sentence(pg, &pc);
}

struct frag_ctx {
	struct mp_svg_path path;
	int ext;
	int64_t n_known;
};

static int frag_row(void *ctx, const struct mp_frag_series_point *p)
{
	struct frag_ctx *c = ctx;
	double v = c->ext ? p->ext_ratio : p->free_share;

	if (v < 0) {
		mp_svg_path_gap(&c->path);
		return 0;
	}
	c->n_known++;
	mp_svg_path_point(&c->path, p->ts_ns, v);
	return 0;
}

static int64_t frag_series(struct mp_html_page *pg, const struct mp_svg_plot *plot,
                           const struct mp_frag_series_device *s, int ext)
{
	struct frag_ctx c = {.ext = ext};

	mp_svg_path_begin(&c.path, pg->out, plot, ext ? "ext-ratio" : "free-share");
	mp_frag_series_foreach(s, frag_row, &c);
	mp_svg_path_end(&c.path);
	return c.n_known;
}

static int any_known(void *ctx, const struct mp_frag_series_point *p)
{
	(void)ctx;
	return p->free_share >= 0 || p->ext_ratio >= 0 ? -1 : 0;
}

static void frag_sentence(struct mp_html_page *pg, const struct mp_frag_device *fd,
                          const struct mp_frag_series_device *s)
{
	char g[32];

	fputs("<p class=\"sub\">Free share: free in reserved / reserved bytes; external "
	      "fragmentation: 1 - largest hole / free in reserved (0: one hole, near 1: many "
	      "small ones; memprof-analyze(1)). ",
	      pg->out);
	if (fd && fd->model == MP_FRAG_ADDRESS_SPACE)
		fprintf(pg->out,
		        "No segment-level events: reserved memory and its holes are modelled from "
		        "block addresses at %s granularity. ",
		        mp_format_bytes(g, sizeof(g), (int64_t)pg->in->a->opts.granularity));
	fprintf(pg->out,
	        "%lld of %lld states drawn (at most %lld; every bucket keeps its first, last "
	        "and highest of each).</p>\n",
	        (long long)mp_frag_series_n_rows(s), (long long)s->n_events,
	        (long long)pg->in->frag_series->max_points);
}

void mp_html_frag_chart(struct mp_html_page *pg, int32_t device)
{
	const struct mp_frag_series_device *s =
	        pg->in->frag_series ? mp_frag_series_device(pg->in->frag_series, device) : NULL;
	const struct mp_frag_device *fd = mp_frag_device(pg->in->a->frag, device);
	static const char *const cls[] = {"free-share", "ext-ratio"};
	static const char *const lab[] = {"free share", "external fragmentation"};
	struct mp_svg_plot p;
	char label[96];

	fputs("<h3>Fragmentation over time</h3>\n", pg->out);
	if (!s || mp_frag_series_foreach(s, any_known, NULL) == 0) {
		fputs("<p>No fragmentation figures for this device: it has neither segment-level "
		      "events nor allocations with addresses.</p>\n",
		      pg->out);
		return;
	}
	plot_for(pg, &p, FRAG_HEIGHT, 1.0);
	snprintf(label, sizeof(label), "fragmentation over time, device %d", (int)device);
	mp_svg_open(pg->out, "frag", device, MP_HTML_CHART_WIDTH, FRAG_HEIGHT, label);
	mp_svg_axis_ratio(pg->out, &p);
	mp_svg_axis_time(pg->out, &p);
	frag_series(pg, &p, s, 0);
	frag_series(pg, &p, s, 1);
	mp_svg_legend(pg->out, LEFT, 16, cls, lab, 2);
	mp_svg_close(pg->out);
	frag_sentence(pg, fd, s);
}
