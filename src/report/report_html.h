/*
 * report/report_html.h - what the parts of the HTML report share (private
 * to src/report/report_html*.c): the page's context and one function per
 * chart or table.  Each part writes one self-contained element; all trace
 * text goes through report/html.h.
 */
#ifndef MP_REPORT_REPORT_DOC_HTML_H
#define MP_REPORT_REPORT_DOC_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "report/html.h"
#include "report/report_doc.h"
#include "report/svg.h"

struct mp_memstate;

#define MP_HTML_CHART_WIDTH 960

struct mp_html_page {
	FILE *out;
	const struct mp_report_input *in;
	int64_t t0_ns, t1_ns;    /* the trace's time range (t1 > t0) */
	struct mp_html_text tip; /* scratch for tooltips */
	double x1_shared;        /* > 0: the timeline's axis length, shared with another page */
	const char *group;       /* NULL, or the timelines zoomed together ("d0") */
	const char *run;         /* NULL, or which run the timeline is ("BASE", "HEAD") */
};

/* The page's head (CSP, style) and <body>, titled after one trace or two;
 * then its end: the tooltip, the one script, </html>. */
/* Set pg's time range from the trace: first to last event, at least 1 ns wide
 * (t1 > t0 even for one event, or one at INT64_MAX). */
void mp_html_page_times(struct mp_html_page *pg, const struct mp_memstate *ms);
void mp_html_page_open(FILE *out, const char *title, const char *title2);
void mp_html_page_close(FILE *out);
/* "+1.23 ms": a timestamp from the trace's first event. */
const char *mp_html_at(const struct mp_html_page *pg, char *buf, size_t n, int64_t ts_ns);
/* "1.50 GiB (1610612736 B)", or "unknown" for a negative count. */
const char *mp_html_bytes(char *buf, size_t n, int64_t bytes);
/* "name (file:line)" of a frame into t: in full, the name (at most 300
 * bytes) and the file's path; else the name without its C++ argument list
 * (at most 80 bytes) and the file without its directories. */
void mp_html_frame_text(struct mp_html_text *t, const struct memprof_frame *f, int full);
/* An SVG element's tooltip from pg->tip: the data-tip attribute (and
 * tabindex when focusable), then '>' and a <title> child with the tip's
 * first two lines, for readers without JavaScript. */
void mp_html_tip_open(struct mp_html_page *pg, int focusable);
/* The same for an HTML element: data-tip and tabindex, then '>'. */
void mp_html_tip_html(struct mp_html_page *pg);
/* Shade the top-level phases of a device (and of no device) on a plot;
 * then, after the chart, say what was merged or left out. */
struct mp_html_phase_counts {
	int64_t n_phases, n_spans, n_merged, n_merged_into, n_not_drawn, n_open_at_end;
	int64_t n_unmatched_ends, n_too_deep;
};
void mp_html_phase_shading(struct mp_html_page *pg, const struct mp_svg_plot *p, int32_t device,
                           struct mp_html_phase_counts *c);
void mp_html_phase_sentence(struct mp_html_page *pg, const struct mp_html_phase_counts *c);

/* The charts and tables of one device (report_html_memory.c, ...). */
void mp_html_memory_chart(struct mp_html_page *pg, int32_t device);
/* The live peak's marker on a memory chart, its tooltip naming pg->run when set. */
void mp_html_peak_marker(struct mp_html_page *pg, const struct mp_svg_plot *p,
                         const struct mp_mem_device *d);
void mp_html_frag_chart(struct mp_html_page *pg, int32_t device);
void mp_html_peak_chart(struct mp_html_page *pg, int32_t device);
void mp_html_groups_tables(struct mp_html_page *pg, int32_t device);
void mp_html_findings_table(struct mp_html_page *pg, int32_t device);
/* The active memory timeline and the allocator state, drawn by the script
 * (report_html_bands.c, report_views.js). */
void mp_html_bands_view(struct mp_html_page *pg, int32_t device);
/* The trace's own facts: clock, window, modelled figures, allocator settings
 * and private pools (report_html_facts.c). */
void mp_html_facts(struct mp_html_page *pg);
/* The call sites live at the peak, as the gate keys them (report_html_sites.c). */
void mp_html_sites_table(struct mp_html_page *pg, int32_t device);
/* The stored replay results of every device shown (report_html_pools.c). */
void mp_html_pools(struct mp_html_page *pg);

#endif
