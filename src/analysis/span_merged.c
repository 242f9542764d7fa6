/*
 * analysis/span_merged.c - the merged blocks' highest live bytes per bucket
 * (analysis/span_merged.h): buckets that double in width as the axis
 * grows, exact levels for blocks merged as the trace goes, whole-bucket
 * lives for blocks merged after the fact.  Never allocates, never prints.
 */
#include "analysis/span_merged.h"
#include "util/satmath.h"

#include <string.h>

void mp_span_merged_init(struct mp_span_merged *m)
{
	memset(m, 0, sizeof(*m));
	m->width = 1;
}

/* Halve the number of buckets: each pair becomes one of twice the width. */
static void coarsen(struct mp_span_merged *m)
{
	size_t i, n = (m->n + 1) / 2;

	for (i = 0; i < n; i++) {
		double a = m->peak[2 * i], b = 2 * i + 1 < m->n ? m->peak[2 * i + 1] : 0;

		m->peak[i] = a > b ? a : b;
		m->starts[i] = m->starts[2 * i] + m->starts[2 * i + 1];
		m->ends[i] = m->ends[2 * i] + m->ends[2 * i + 1];
	}
	memset(&m->peak[n], 0, (MP_SPAN_BUCKETS - n) * sizeof(m->peak[0]));
	memset(&m->starts[n], 0, (MP_SPAN_BUCKETS - n) * sizeof(m->starts[0]));
	memset(&m->ends[n], 0, (MP_SPAN_BUCKETS - n) * sizeof(m->ends[0]));
	m->n = n;
	m->width *= 2;
}

/* x's bucket, the buckets coarsened until it fits; the first x seen is the origin. */
static size_t bucket(struct mp_span_merged *m, int64_t x)
{
	int64_t d;

	if (!m->started) {
		m->started = 1;
		m->origin = x;
		m->n = 1;
		m->peak[0] = m->level;
	}
	d = mp_sat_sub(x, m->origin);
	if (d <= 0)
		return 0;
	while (d / m->width >= MP_SPAN_BUCKETS)
		coarsen(m);
	return (size_t)(d / m->width);
}

void mp_span_merged_advance(struct mp_span_merged *m, int64_t x)
{
	size_t b = bucket(m, x);

	for (; m->n <= b; m->n++)
		m->peak[m->n] = m->level;
}

void mp_span_merged_change(struct mp_span_merged *m, int64_t x, double delta)
{
	size_t b = bucket(m, x);

	mp_span_merged_advance(m, x);
	m->level += delta;
	if (m->level > m->peak[b])
		m->peak[b] = m->level;
}

void mp_span_merged_add_life(struct mp_span_merged *m, int64_t a, int64_t b, double bytes)
{
	size_t i, j;

	mp_span_merged_advance(m, b);
	i = bucket(m, a); /* after b's: a coarsening would move a's bucket */
	j = bucket(m, b);
	m->starts[i] += bytes;
	m->ends[j < i ? i : j] += bytes;
}

size_t mp_span_merged_values(const struct mp_span_merged *m, double *out)
{
	double cover = 0;
	size_t i;

	for (i = 0; i < m->n; i++) {
		cover += m->starts[i];
		out[i] = m->peak[i] + cover;
		cover -= m->ends[i];
	}
	out[m->n] = m->level;
	return m->n + 1;
}
