/*
 * report/report_html.c - 'memprof report' as one self-contained HTML file:
 * the page (Content-Security-Policy, inline style, the one inline script
 * that shows data-tip tooltips), the header and notes, and per device its
 * charts and tables, drawn by report_html_*.c.  No trace text ever enters
 * the <style> or <script> element; all of it goes through report/html.h.
 */
#include "report/report_html.h"
#include "util/error.h"
#include "util/format.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

static const char style[] =
        "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:0 16px;"
        "color:#222;background:#fff}\n"
        "h1{font-size:22px;margin:18px 0 6px}h2{font-size:18px;margin:28px 0 6px;"
        "border-bottom:1px solid #ccc}h3{font-size:15px;margin:18px 0 4px}\n"
        "dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}"
        "dl.meta dt{color:#555}dl.meta dd{margin:0;word-break:break-all}\n"
        ".notes{background:#fff4d6;border:1px solid #e0b84a;padding:6px 12px;margin:14px 0}"
        ".notes ul{margin:4px 0;padding-left:20px}\n"
        "p.sub{color:#555;margin:2px 0 6px}\n"
        "svg.chart{display:block;max-width:100%;height:auto;font-size:11px}\n"
        ".grid{stroke:#e4e4e4}.axis{stroke:#888;fill:none}.tickmark{stroke:#888}"
        ".tick{fill:#555}.axis-title{fill:#555}\n"
        ".series{fill:none;stroke-width:1.5}.live{stroke:#1f6fb4}.base-live{stroke:#999}"
        ".swatch.base-live{fill:#999}.requested{stroke:#49a84a;"
        "stroke-dasharray:4 2}.reserved{stroke:#c9372c}.free-share{stroke:#8a4fbf}"
        ".ext-ratio{stroke:#e08a1e}\n"
        ".swatch.live{fill:#1f6fb4}.swatch.requested{fill:#49a84a}.swatch.reserved{fill:#c9372c}"
        ".swatch.free-share{fill:#8a4fbf}.swatch.ext-ratio{fill:#e08a1e}\n"
        ".swatch.peak-marker{fill:#111}.swatch.oom-marker{fill:#d00}.swatch.phase{fill:#9ab;"
        "opacity:.5}\n"
        ".phase{opacity:.16}.phase:hover,.phase:focus{opacity:.32}\n"
        ".p0{fill:#4c72b0}.p1{fill:#dd8452}.p2{fill:#55a868}.p3{fill:#c44e52}.p4{fill:#8172b3}"
        ".p5{fill:#937860}.p6{fill:#da8bc3}.p7{fill:#8c8c8c}\n"
        "circle.peak-marker{fill:#111;stroke:#fff;stroke-width:1.5}"
        ".oom-marker line{stroke:#d00;stroke-dasharray:3 2}.oom-marker path{fill:#d00}"
        ".hit{fill:transparent}\n"
        ".cell rect{stroke:#fff;stroke-width:.5}.cell text{fill:#111;pointer-events:none}"
        ".cell:hover rect,.cell:focus rect{stroke:#000;stroke-width:1}.cell.other rect{fill:#ccc}\n"
        ".bar{fill:#5b8fc7}.bar.baseline{fill:#9bb7d6}.lower-bound{stroke:#111;stroke-width:2}"
        ".bar-label{fill:#222}\n"
        "table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}"
        "th,td{border-bottom:1px solid #e4e4e4;padding:3px 8px;text-align:left;"
        "vertical-align:top}td.num,th.num{text-align:right;white-space:nowrap}\n"
        "code{font-size:12px;word-break:break-all}\n"
        "#tooltip{position:fixed;z-index:10;max-width:640px;background:#222;color:#fff;"
        "padding:6px 8px;border-radius:4px;font-size:12px;white-space:pre-line;"
        "pointer-events:none;word-break:break-all}\n"
        ".controls{margin:4px 0;font-size:13px}.facts dl.meta dd,"
        ".facts code{word-break:normal;overflow-wrap:break-word}.bands-box{position:relative}"
        "canvas.bands,canvas.state{display:block;max-width:100%;height:auto;cursor:crosshair}"
        ".brush{position:absolute;top:8px;height:290px;background:rgba(31,111,180,.2);"
        "pointer-events:none}\n";

/* The interactive views (report/report_views.js, made into a string by make). */
static const char views_script[] =
#include "report/report_views_js.h"
        ;

/* The one script: shows an element's data-tip in #tooltip on hover and
 * focus, and drops the <title> fallbacks so only one tooltip shows. */
static const char script[] =
        "(function () {\n"
        "  var tip = document.getElementById('tooltip');\n"
        "  var t = document.querySelectorAll('[data-tip] > title');\n"
        "  for (var i = 0; i < t.length; i++) t[i].parentNode.removeChild(t[i]);\n"

        "  function owner(n) {\n"
        "    return n && n.closest ? n.closest('[data-tip]') : null;\n"
        "  }\n"
        "  function place(x, y) {\n"
        "    var r = tip.getBoundingClientRect();\n"
        "    tip.style.left = Math.max(0, Math.min(x + 14, window.innerWidth - r.width - 4)) + "
        "'px';\n"
        "    tip.style.top = Math.max(0, Math.min(y + 14, window.innerHeight - r.height - 4)) + "
        "'px';\n"
        "  }\n"
        "  function show(n, x, y) {\n"
        "    tip.textContent = n.getAttribute('data-tip');\n"
        "    tip.hidden = false;\n"
        "    place(x, y);\n"
        "  }\n"
        "  document.addEventListener('mouseover', function (e) {\n"
        "    var n = owner(e.target);\n"
        "    if (n) show(n, e.clientX, e.clientY); else tip.hidden = true;\n"
        "  });\n"
        "  document.addEventListener('mousemove', function (e) {\n"
        "    if (!tip.hidden) place(e.clientX, e.clientY);\n"
        "  });\n"
        "  document.addEventListener('focusin', function (e) {\n"
        "    var n = owner(e.target);\n"
        "    if (!n) return;\n"
        "    var r = n.getBoundingClientRect();\n"
        "    show(n, r.left, r.bottom);\n"
        "  });\n"
        "  document.addEventListener('focusout', function () { tip.hidden = true; });\n"
        "})();\n";

void mp_html_page_times(struct mp_html_page *pg, const struct mp_memstate *ms)
{
	pg->t0_ns = ms->n_events ? ms->first_ts_ns : 0;
	if (ms->n_events && ms->last_ts_ns > pg->t0_ns)
		pg->t1_ns = ms->last_ts_ns;
	else if (pg->t0_ns < INT64_MAX)
		pg->t1_ns = pg->t0_ns + 1;
	else
		pg->t1_ns = pg->t0_ns--;
}

void mp_html_page_open(FILE *out, const char *title, const char *title2)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>memprof report: ",
	      out);
	mp_html_escape(out, title);
	if (title2) {
		fputs(" against ", out);
		mp_html_escape(out, title2);
	}
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

void mp_html_page_close(FILE *out)
{
	fprintf(out,
	        "<div id=\"tooltip\" role=\"tooltip\" hidden></div>\n<script>\n%s%s</script>\n"
	        "</body>\n</html>\n",
	        script, views_script);
}

const char *mp_html_at(const struct mp_html_page *pg, char *buf, size_t n, int64_t ts_ns)
{
	char d[32];

	if (pg->in->a->no_timestamps)
		snprintf(buf, n, "an unknown time");
	else
		snprintf(buf, n, "+%s",
		         mp_format_duration(d, sizeof(d), mp_sat_sub(ts_ns, pg->t0_ns)));
	return buf;
}

const char *mp_html_bytes(char *buf, size_t n, int64_t bytes)
{
	char b[32];

	if (bytes < 0)
		snprintf(buf, n, "unknown");
	else if (bytes < 1024)
		snprintf(buf, n, "%lld B", (long long)bytes);
	else
		snprintf(buf, n, "%s (%lld B)", mp_format_bytes(b, sizeof(b), bytes),
		         (long long)bytes);
	return buf;
}

void mp_html_frame_text(struct mp_html_text *t, const struct memprof_frame *f, int full)
{
	const char *name = f->name && f->name[0] ? f->name : "(unnamed)";
	const char *file = f->file && strcmp(f->file, "??") != 0 ? f->file : "";
	const char *base = !full && strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t len = full ? strlen(name) : mp_frame_name_len(name), max = full ? 300 : 80;

	mp_html_text_add(t, "%.*s%s", (int)(len > max ? max : len), name, len > max ? "..." : "");
	if (base[0] && f->line > 0)
		mp_html_text_add(t, " (%s:%lld)", base, (long long)f->line);
	else if (base[0])
		mp_html_text_add(t, " (%s)", base);
}

void mp_html_tip_open(struct mp_html_page *pg, int focusable)
{
	const struct mp_html_text *t = &pg->tip;
	const char *nl = memchr(t->buf, '\n', t->len);
	size_t n = t->len;

	if (nl && (nl = memchr(nl + 1, '\n', t->len - (size_t)(nl + 1 - t->buf))))
		n = (size_t)(nl - t->buf);
	mp_html_tip_attr(pg->out, t);
	fputs(focusable ? " tabindex=\"0\"><title>" : "><title>", pg->out);
	mp_html_escape_n(pg->out, t->buf, n);
	fputs("</title>", pg->out);
}

void mp_html_tip_html(struct mp_html_page *pg)
{
	mp_html_tip_attr(pg->out, &pg->tip);
	fputs(" tabindex=\"0\">", pg->out);
}

static void meta_row(FILE *out, const char *label, const char *value, int code)
{
	fprintf(out, "<dt>%s</dt><dd>%s", label, code ? "<code>" : "");
	if (value)
		mp_html_escape(out, value);
	else
		fputs("unknown", out);
	fprintf(out, "%s</dd>\n", code ? "</code>" : "");
}

static const char *device_name(const struct mp_report_input *in, int32_t ordinal)
{
	size_t i;

	for (i = 0; i < in->n_devices; i++)
		if (in->devices[i].ordinal == ordinal && in->devices[i].name)
			return in->devices[i].name;
	return NULL;
}

/* A device that only carries events of no device (phases of device -1). */
static int shown(const struct mp_mem_device *d)
{
	return d->device >= 0 || d->live_peak.seq || d->has_segments || d->n_ooms;
}

static void header(struct mp_html_page *pg, const int *order, int n)
{
	const struct mp_analysis *a = pg->in->a;
	FILE *out = pg->out;
	char d[32];
	int i;

	fputs("<header>\n<h1>memprof report</h1>\n<dl class=\"meta\">\n", out);
	meta_row(out, "trace", a->path, 1);
	meta_row(out, "source", a->source, 0);
	meta_row(out, "command line", pg->in->command_line, 1);
	meta_row(out, "created", pg->in->created, 0);
	meta_row(out, "tool version", pg->in->tool_version, 0);
	fprintf(out, "<dt>%s</dt><dd>", n == 1 ? "device" : "devices");
	for (i = 0; i < n; i++) {
		const char *name = device_name(pg->in, a->ms->devices[order[i]].device);

		fprintf(out, "%s%d", i ? ", " : "", (int)a->ms->devices[order[i]].device);
		if (name) {
			fputs(" (", out);
			mp_html_escape(out, name);
			fputc(')', out);
		}
	}
	if (a->no_timestamps)
		fprintf(out,
		        "%s</dd>\n<dt>events</dt><dd>%lld (no timestamps: in event order "
		        "only)</dd>\n</dl>\n</header>\n",
		        n ? "" : "none", (long long)a->ms->n_events);
	else
		fprintf(out, "%s</dd>\n<dt>events</dt><dd>%lld over %s</dd>\n</dl>\n</header>\n",
		        n ? "" : "none", (long long)a->ms->n_events,
		        mp_format_duration(d, sizeof(d),
		                           a->ms->n_events ? mp_sat_sub(pg->t1_ns, pg->t0_ns) : 0));
}

struct notes {
	FILE *out;
	int n;
};

static void note(void *ctx, const char *text)
{
	struct notes *nt = ctx;

	fputs(nt->n++ ? "<li>" : "<section class=\"notes\">\n<h2>Notes</h2>\n<ul>\n<li>", nt->out);
	mp_html_escape(nt->out, text);
	fputs("</li>\n", nt->out);
}

static void device_summary(struct mp_html_page *pg, const struct mp_mem_device *d)
{
	char b1[64], b2[64], t[32];

	fprintf(pg->out, "<p class=\"sub\">%lld events; peak live %s at %s (event %lld)",
	        (long long)d->n_events, mp_html_bytes(b1, sizeof(b1), d->live_peak.bytes),
	        mp_html_at(pg, t, sizeof(t), d->live_peak.ts_ns), (long long)d->live_peak.seq);
	if (d->has_segments)
		fprintf(pg->out, "; peak reserved %s",
		        mp_html_bytes(b2, sizeof(b2), d->reserved_peak.bytes));
	fprintf(pg->out, "; %lld OOMs.</p>\n", (long long)d->n_ooms);
}

static void device_section(struct mp_html_page *pg, const struct mp_mem_device *d)
{
	FILE *out = pg->out;
	const char *name = device_name(pg->in, d->device);

	fprintf(out, "<section class=\"device\" id=\"device-%d\">\n<h2>Device %d", (int)d->device,
	        (int)d->device);
	if (name) {
		fputs(": ", out);
		mp_html_escape(out, name);
	}
	fputs("</h2>\n", out);
	device_summary(pg, d);
	if (pg->in->a->no_timestamps) /* one instant: a chart over time would be one line */
		fputs("<p class=\"sub\">No charts over time: the trace has no timestamps, only the "
		      "order of its events (a snapshot without time_us, or the state at one "
		      "moment). The active memory timeline below is drawn in event order.</p>\n",
		      out);
	else {
		mp_html_memory_chart(pg, d->device);
		mp_html_frag_chart(pg, d->device);
	}
	mp_html_bands_view(pg, d->device);
	mp_html_peak_chart(pg, d->device);
	mp_html_sites_table(pg, d->device);
	mp_html_groups_tables(pg, d->device);
	mp_html_findings_table(pg, d->device);
	fputs("</section>\n", out);
}

int mp_report_write_html(FILE *out, const struct mp_report_input *in)
{
	struct mp_html_page *pg = calloc(1, sizeof(*pg));
	const struct mp_analysis *a = in->a;
	int order[MP_MEM_MAX_DEVICES], n, i, m = 0;
	struct notes nt = {out, 0};

	if (!pg)
		return MP_ENOMEM;
	pg->out = out;
	pg->in = in;
	mp_html_page_times(pg, a->ms);
	n = mp_analyze_device_order(a, order);
	for (i = 0; i < n; i++)
		if (shown(&a->ms->devices[order[i]]))
			order[m++] = order[i];
	mp_html_page_open(out, a->path, NULL);
	header(pg, order, m);
	mp_analyze_notes(a, note, &nt);
	if (nt.n)
		fputs("</ul>\n</section>\n", out);
	mp_html_facts(pg);
	for (i = 0; i < m; i++)
		device_section(pg, &a->ms->devices[order[i]]);
	mp_html_pools(pg);
	mp_html_page_close(out);
	free(pg);
	return ferror(out) ? MP_EIO : 0;
}
