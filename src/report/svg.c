/*
 * report/svg.c - the shared SVG drawing of the report's charts
 * (report/svg.h): coordinates, axes with human units, step lines, legends.
 * Prints numbers with printf only; never receives trace text.
 */
#include "report/svg.h"

#include <string.h>

double mp_svg_x(const struct mp_svg_plot *p, int64_t ts_ns)
{
	double span = ((double)p->t1_ns - (double)p->t0_ns);

	if (ts_ns < p->t0_ns)
		ts_ns = p->t0_ns;
	if (ts_ns > p->t1_ns)
		ts_ns = p->t1_ns;
	return p->left + p->width * (((double)ts_ns - (double)p->t0_ns) / span);
}

double mp_svg_y(const struct mp_svg_plot *p, double v)
{
	if (v < 0)
		v = 0;
	if (v > p->y_max)
		v = p->y_max;
	return p->top + p->height - p->height * (v / p->y_max);
}

void mp_svg_open(FILE *out, const char *name, int32_t device, int width, int height,
                 const char *label)
{
	fprintf(out, "<svg class=\"chart\" data-chart=\"%s\"", name);
	if (device >= -1)
		fprintf(out, " data-device=\"%d\"", (int)device);
	fprintf(out,
	        " viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
	        "aria-label=\"%s\">\n",
	        width, height, width, height, label);
}

void mp_svg_close(FILE *out)
{
	fputs("</svg>\n", out);
}

double mp_svg_nice_step(double raw)
{
	double p = 1;

	if (!(raw > 0))
		return 1;
	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	if (raw <= p)
		return p;
	if (raw <= 2 * p)
		return 2 * p;
	if (raw <= 2.5 * p)
		return 2.5 * p;
	if (raw <= 5 * p)
		return 5 * p;
	return 10 * p;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

/* The binary unit for values up to max: 1024^u. */
static double byte_unit(double max, int *u)
{
	double unit = 1;

	*u = 0;
	while (*u < 6 && max >= unit * 1024) {
		unit *= 1024;
		++*u;
	}
	return unit;
}

#define N_TICKS 5

double mp_svg_bytes_top(double max_bytes)
{
	int u;
	double unit, step, n;

	if (!(max_bytes > 0))
		return 1;
	unit = byte_unit(max_bytes, &u);
	step = mp_svg_nice_step(max_bytes / unit / N_TICKS);
	if (u == 0 && step < 1)
		step = 1;
	for (n = 1; n * step * unit < max_bytes; n++)
		;
	return n * step * unit;
}

static void y_tick(FILE *out, const struct mp_svg_plot *p, double v, const char *label)
{
	double y = mp_svg_y(p, v);

	fprintf(out,
	        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
	        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
	        p->left, y, p->left + p->width, y, p->left - 6, y + 4, label);
}

static void axis_lines(FILE *out, const struct mp_svg_plot *p)
{
	fprintf(out, "<path class=\"axis\" d=\"M%.1f,%.1fV%.1fH%.1f\"/>\n", p->left, p->top,
	        p->top + p->height, p->left + p->width);
}

void mp_svg_axis_bytes(FILE *out, const struct mp_svg_plot *p)
{
	int u, i;
	double unit = byte_unit(p->y_max, &u);
	double step = mp_svg_nice_step(p->y_max / unit / N_TICKS);
	char label[48];

	if (u == 0 && step < 1)
		step = 1;
	for (i = 0; i * step * unit <= p->y_max * (1 + 1e-9) && i <= 4 * N_TICKS; i++) {
		snprintf(label, sizeof(label), "%.6g %s", i * step, byte_units[u]);
		y_tick(out, p, i * step * unit, label);
	}
	axis_lines(out, p);
}

void mp_svg_axis_bytes_x(FILE *out, double left, double width, double top, double y,
                         double max_bytes)
{
	int u, i;
	double unit = byte_unit(max_bytes, &u);
	double step = mp_svg_nice_step(max_bytes / unit / N_TICKS);

	if (u == 0 && step < 1)
		step = 1;
	for (i = 0; i * step * unit <= max_bytes * (1 + 1e-9) && i <= 4 * N_TICKS; i++) {
		double x = left + width * (i * step * unit / max_bytes);

		fprintf(out,
		        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.6g "
		        "%s</text>\n",
		        x, top, x, y, x, y + 14, i * step, byte_units[u]);
	}
	fprintf(out, "<path class=\"axis\" d=\"M%.1f,%.1fH%.1f\"/>\n", left, y, left + width);
}

void mp_svg_axis_ratio(FILE *out, const struct mp_svg_plot *p)
{
	int i;
	char label[16];

	for (i = 0; i <= 5; i++) {
		snprintf(label, sizeof(label), i == 0 ? "0" : i == 5 ? "1" : "0.%d", i * 2);
		y_tick(out, p, p->y_max * i / 5.0, label);
	}
	axis_lines(out, p);
}

void mp_svg_axis_time(FILE *out, const struct mp_svg_plot *p)
{
	static const char *const names[] = {"ns", "us", "ms", "s"};
	double span = ((double)p->t1_ns - (double)p->t0_ns), unit = 1, step;
	double bottom = p->top + p->height;
	int u = 0, i;

	while (u < 3 && span >= unit * 1000) {
		unit *= 1000;
		u++;
	}
	step = mp_svg_nice_step(span / unit / 8);
	if (u == 0 && step < 1)
		step = 1;
	for (i = 0; i * step * unit <= span * (1 + 1e-9) && i <= 40; i++) {
		double x = p->left + p->width * (i * step * unit / span);

		fprintf(out,
		        "<line class=\"tickmark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.6g "
		        "%s</text>\n",
		        x, bottom, x, bottom + 5, x, bottom + 18, i * step, names[u]);
	}
	fprintf(out,
	        "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time "
	        "since the first event</text>\n",
	        p->left + p->width / 2, bottom + 34);
}

void mp_svg_path_begin(struct mp_svg_path *s, FILE *out, const struct mp_svg_plot *p,
                       const char *cls)
{
	memset(s, 0, sizeof(*s));
	s->out = out;
	s->p = p;
	snprintf(s->cls, sizeof(s->cls), "%s", cls);
}

void mp_svg_path_point(struct mp_svg_path *s, int64_t ts_ns, double v)
{
	/* rounded as printed, so equal coordinates compare equal */
	double x = (double)(int64_t)(mp_svg_x(s->p, ts_ns) * 10 + 0.5) / 10;
	double y = (double)(int64_t)(mp_svg_y(s->p, v) * 10 + 0.5) / 10;

	if (!s->started) {
		fprintf(s->out, "<path class=\"series %s\" d=\"", s->cls);
		s->started = 1;
	}
	if (!s->open) {
		fprintf(s->out, "M%.1f,%.1f", x, y);
		s->open = 1;
	} else if (x == s->x && y == s->y) {
		return;
	} else {
		if (x != s->x)
			fprintf(s->out, "H%.1f", x);
		if (y != s->y)
			fprintf(s->out, "V%.1f", y);
	}
	s->x = x;
	s->y = y;
	s->n_points++;
}

void mp_svg_path_gap(struct mp_svg_path *s)
{
	s->open = 0;
}

void mp_svg_path_end(struct mp_svg_path *s)
{
	if (s->started)
		fprintf(s->out, "\" data-points=\"%lld\"/>\n", (long long)s->n_points);
}

void mp_svg_legend(FILE *out, double x, double y, const char *const *classes,
                   const char *const *labels, int n)
{
	int i;

	fputs("<g class=\"legend\">", out);
	for (i = 0; i < n; i++) {
		fprintf(out,
		        "<rect class=\"swatch %s\" x=\"%.1f\" y=\"%.1f\" width=\"14\" "
		        "height=\"10\"/>"
		        "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
		        classes[i], x, y - 9, x + 18, y, labels[i]);
		x += 26 + 7.0 * (double)strlen(labels[i]);
	}
	fputs("</g>\n", out);
}
