/*
 * report/svg.h - the SVG drawing the HTML report's charts share: a chart's
 * <svg> element, a plot area mapping time and values to coordinates, axes
 * with ticks in bytes (B, KiB, MiB, ...), ratios (%) and time since the
 * first event (ns, us, ms, s), step lines, and a legend.  Numbers only: no
 * trace text passes through here (labels are the caller's, escaped there).
 */
#ifndef MP_REPORT_SVG_H
#define MP_REPORT_SVG_H

#include <stdint.h>
#include <stdio.h>

/* The plot area (user units of the viewBox) and what it shows. */
struct mp_svg_plot {
	double left, top, width, height;
	int64_t t0_ns, t1_ns; /* x: time; t1 > t0 */
	double y_max;         /* y: [0, y_max], y_max > 0 */
};

double mp_svg_x(const struct mp_svg_plot *p, int64_t ts_ns);
double mp_svg_y(const struct mp_svg_plot *p, double v);

/*
 * '<svg class="chart" data-chart="NAME" [data-device="N"] viewBox="0 0 W H"
 * role="img" aria-label="LABEL">'.  name and label are the caller's own
 * text (not escaped here); device < -1 writes no data-device.
 */
void mp_svg_open(FILE *out, const char *name, int32_t device, int width, int height,
                 const char *label);
void mp_svg_close(FILE *out);

/* A step of 1, 2, 2.5 or 5 times a power of ten, at least raw (> 0). */
double mp_svg_nice_step(double raw);
/* The top of a byte axis for values up to max_bytes: a whole number of
 * ticks in the unit that suits it. */
double mp_svg_bytes_top(double max_bytes);

/* Grid lines, ticks and labels on the left of the plot, for [0, y_max]. */
void mp_svg_axis_bytes(FILE *out, const struct mp_svg_plot *p);
void mp_svg_axis_ratio(FILE *out, const struct mp_svg_plot *p); /* y_max 1: ratios 0 to 1 */
/* A byte axis along x at y, for [0, max_bytes] over [left, left + width]
 * (max_bytes from mp_svg_bytes_top), with vertical grid lines up to top. */
void mp_svg_axis_bytes_x(FILE *out, double left, double width, double top, double y,
                         double max_bytes);
/* Ticks below the plot: time since t0, and the axis title. */
void mp_svg_axis_time(FILE *out, const struct mp_svg_plot *p);

/*
 * A step line: each point holds its value until the next point's time.
 * Each point adds at most one H and one V command to the path's d; points
 * that draw nothing new are dropped.  data-points on the element counts
 * the points drawn.
 */
struct mp_svg_path {
	FILE *out;
	const struct mp_svg_plot *p;
	char cls[32];
	int open, started;
	double x, y;
	int64_t n_points;
};

void mp_svg_path_begin(struct mp_svg_path *s, FILE *out, const struct mp_svg_plot *p,
                       const char *cls);
void mp_svg_path_point(struct mp_svg_path *s, int64_t ts_ns, double v);
/* The value is unknown from here: the next point starts a new stretch. */
void mp_svg_path_gap(struct mp_svg_path *s);
void mp_svg_path_end(struct mp_svg_path *s);

/* A legend in a row from (x, y): a swatch of classes[i] and labels[i]. */
void mp_svg_legend(FILE *out, double x, double y, const char *const *classes,
                   const char *const *labels, int n);

#endif
