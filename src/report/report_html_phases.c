/*
 * report/report_html_phases.c - phase shading on the memory chart: the
 * top-level spans of a device and of no device (analysis/phase_spans).
 * With more spans than the plot has pixels, neighbouring spans of one name
 * that are each narrower than a pixel are merged; at most MAX_DRAWN are
 * drawn, the widest; a sentence says what was merged or left out.
 */
#include "report/report_html.h"
#include "util/format.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DRAWN 600

static int by_begin(const void *pa, const void *pb)
{
	const struct mp_phase_span *a = pa, *b = pb;

	if (a->begin_ts_ns != b->begin_ts_ns)
		return a->begin_ts_ns < b->begin_ts_ns ? -1 : 1;
	return (a->end_ts_ns > b->end_ts_ns) - (a->end_ts_ns < b->end_ts_ns);
}

static int by_width_desc(const void *pa, const void *pb)
{
	const struct mp_phase_span *a = pa, *b = pb;
	int64_t wa = mp_sat_sub(a->end_ts_ns, a->begin_ts_ns);
	int64_t wb = mp_sat_sub(b->end_ts_ns, b->begin_ts_ns);

	return (wa < wb) - (wa > wb);
}

static int same_name(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Merge runs of neighbours of one name each narrower than a pixel;
 * returns the new count. */
static size_t merge_narrow(struct mp_phase_span *s, size_t n, double ns_per_px,
                           struct mp_html_phase_counts *c)
{
	size_t i, j = 0;
	int run = 0;

	for (i = 0; i < n; i++) {
		int narrow = ((double)s[i].end_ts_ns - (double)s[i].begin_ts_ns) < ns_per_px;

		if (j && narrow && run && same_name(s[j - 1].name, s[i].name)) {
			struct mp_phase_span *m = &s[j - 1];

			if (s[i].end_ts_ns > m->end_ts_ns)
				m->end_ts_ns = s[i].end_ts_ns;
			m->n_phases += s[i].n_phases;
			c->n_merged += run == 1 ? 2 : 1;
			c->n_merged_into += run == 1;
			run++;
			continue;
		}
		s[j++] = s[i];
		run = narrow;
	}
	return j;
}

static unsigned name_colour(const char *name)
{
	unsigned h = 2166136261u;

	if (!name)
		return 7;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h % 7;
}

static void draw_span(struct mp_html_page *pg, const struct mp_svg_plot *p,
                      const struct mp_phase_span *s)
{
	double x0 = mp_svg_x(p, s->begin_ts_ns), x1 = mp_svg_x(p, s->end_ts_ns);
	char a[32], b[32], d[32];

	mp_html_text_reset(&pg->tip);
	if (s->name && s->n_phases == 1)
		mp_html_text_add(&pg->tip, "phase %s", s->name);
	else if (s->name)
		mp_html_text_add(&pg->tip, "phase %s: %lld phases merged", s->name,
		                 (long long)s->n_phases);
	else
		mp_html_text_add(&pg->tip, "%lld phases merged (several names)",
		                 (long long)s->n_phases);
	mp_html_text_add(
	        &pg->tip, "\n%s to %s (%s)", mp_html_at(pg, a, sizeof(a), s->begin_ts_ns),
	        mp_html_at(pg, b, sizeof(b), s->end_ts_ns),
	        mp_format_duration(d, sizeof(d), mp_sat_sub(s->end_ts_ns, s->begin_ts_ns)));
	fprintf(pg->out,
	        "<rect class=\"phase p%u\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
	        name_colour(s->name), x0, p->top, x1 - x0 < 0.5 ? 0.5 : x1 - x0, p->height);
	mp_html_tip_open(pg, 0);
	fputs("</rect>\n", pg->out);
}

static size_t add_device(struct mp_phase_span *s, size_t n, const struct mp_phase_device *d,
                         struct mp_html_phase_counts *c)
{
	if (!d)
		return n;
	memcpy(s + n, d->spans, d->n_spans * sizeof(*s));
	c->n_phases += d->n_phases;
	c->n_open_at_end += d->n_open_at_end;
	c->n_unmatched_ends += d->n_unmatched_ends;
	c->n_too_deep += d->n_too_deep;
	return n + d->n_spans;
}

void mp_html_phase_shading(struct mp_html_page *pg, const struct mp_svg_plot *p, int32_t device,
                           struct mp_html_phase_counts *c)
{
	const struct mp_phase_spans *ps = pg->in->phases;
	const struct mp_phase_device *own = ps ? mp_phase_spans_device(ps, device) : NULL;
	const struct mp_phase_device *none =
	        ps && device != -1 ? mp_phase_spans_device(ps, -1) : NULL;
	size_t n = (own ? own->n_spans : 0) + (none ? none->n_spans : 0), i;
	struct mp_phase_span *s;

	memset(c, 0, sizeof(*c));
	if (n == 0 || !(s = malloc(n * sizeof(*s))))
		return;
	n = add_device(s, add_device(s, 0, own, c), none, c);
	c->n_spans = (int64_t)n;
	qsort(s, n, sizeof(*s), by_begin);
	if ((double)n > p->width)
		n = merge_narrow(s, n, ((double)p->t1_ns - (double)p->t0_ns) / p->width, c);
	if (n > MAX_DRAWN) {
		qsort(s, n, sizeof(*s), by_width_desc);
		c->n_not_drawn = (int64_t)(n - MAX_DRAWN);
		n = MAX_DRAWN;
	}
	fputs("<g class=\"phases\">\n", pg->out);
	for (i = 0; i < n; i++)
		draw_span(pg, p, &s[i]);
	fputs("</g>\n", pg->out);
	free(s);
}

void mp_html_phase_sentence(struct mp_html_page *pg, const struct mp_html_phase_counts *c)
{
	FILE *out = pg->out;

	if (c->n_phases == 0 && c->n_unmatched_ends == 0)
		return;
	fprintf(out, "<p class=\"sub\">Shaded: %lld top-level phases", (long long)c->n_phases);
	if (c->n_spans < c->n_phases)
		fprintf(out, " (kept as %lld spans: neighbours merged pairwise past %d per device)",
		        (long long)c->n_spans, MP_PHASE_MAX_SPANS);
	fputs(".", out);
	if (c->n_merged)
		fprintf(out,
		        " %lld spans narrower than a pixel were merged with same-named neighbours "
		        "into %lld.",
		        (long long)c->n_merged, (long long)c->n_merged_into);
	if (c->n_not_drawn)
		fprintf(out, " The %lld narrowest were not drawn (at most %d are).",
		        (long long)c->n_not_drawn, MAX_DRAWN);
	if (c->n_open_at_end)
		fprintf(out, " Open at the end, so drawn to the last event: %lld.",
		        (long long)c->n_open_at_end);
	if (c->n_unmatched_ends)
		fprintf(out, " %lld phase ends had no open phase of their name and were ignored.",
		        (long long)c->n_unmatched_ends);
	if (c->n_too_deep)
		fprintf(out, " %lld phases nested deeper than %d were ignored.",
		        (long long)c->n_too_deep, MP_PHASE_MAX_OPEN);
	fputs("</p>\n", out);
}
