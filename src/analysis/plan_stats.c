/*
 * analysis/plan_stats.c - the small statistics of the plan metrics
 * (analysis/plan.h): the log-linear call-time histogram and its quantiles,
 * the least-squares trend, the fragmentation ratios of a step's end and
 * the verdict on an OOM.  Pure functions; no event handling.
 */
#include "analysis/plan.h"
#include "util/error.h"

#include <stdlib.h>

static size_t bucket_of(int64_t v)
{
	int e;

	if (v < MP_HIST_EXACT_NS) /* before clz, which is undefined for 0 */
		return (size_t)v;
	e = 63 - __builtin_clzll((unsigned long long)v);
	if (e > MP_HIST_MAX_EXP)
		return MP_HIST_BUCKETS - 1;
	return (size_t)(MP_HIST_EXACT_NS + (e - 7) * MP_HIST_SUB +
	                ((v >> (e - 6)) & (MP_HIST_SUB - 1)));
}

/* The middle of a bucket (the value itself below MP_HIST_EXACT_NS). */
static int64_t bucket_value(size_t b)
{
	int e, sub;

	if (b < MP_HIST_EXACT_NS)
		return (int64_t)b;
	e = 7 + (int)((b - MP_HIST_EXACT_NS) / MP_HIST_SUB);
	sub = (int)((b - MP_HIST_EXACT_NS) % MP_HIST_SUB);
	return ((int64_t)(MP_HIST_SUB + sub) << (e - 6)) + ((INT64_C(1) << (e - 6)) / 2);
}

int mp_hist_add(struct mp_hist *h, int64_t v)
{
	if (v < 0)
		v = 0;
	if (!h->counts && !(h->counts = calloc(MP_HIST_BUCKETS, sizeof(*h->counts))))
		return MP_ENOMEM;
	if (h->n == 0 || v < h->min_ns)
		h->min_ns = v;
	if (h->n == 0 || v > h->max_ns)
		h->max_ns = v;
	h->n++;
	h->counts[bucket_of(v)]++;
	return 0;
}

int64_t mp_hist_quantile(const struct mp_hist *h, double p)
{
	int64_t rank, seen = 0, v;
	size_t b;

	if (h->n == 0 || !h->counts)
		return -1;
	rank = (int64_t)(p * (double)h->n); /* ceil without libm */
	if ((double)rank < p * (double)h->n - 1e-9)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank >= h->n)
		return h->max_ns;
	if (rank == 1)
		return h->min_ns;
	for (b = 0; b < MP_HIST_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen >= rank)
			break;
	}
	v = bucket_value(b < MP_HIST_BUCKETS ? b : MP_HIST_BUCKETS - 1);
	return v < h->min_ns ? h->min_ns : v > h->max_ns ? h->max_ns : v;
}

void mp_hist_free(struct mp_hist *h)
{
	free(h->counts);
	h->counts = NULL;
	h->n = 0;
}

void mp_trend_fit(const double *x, const double *y, size_t n, struct mp_trend *t)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;
	size_t i;

	t->n = (int64_t)n;
	t->slope = t->intercept = 0;
	t->has_slope = 0;
	if (n < 2)
		return;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (sxx <= 0)
		return;
	t->slope = sxy / sxx;
	t->intercept = my - t->slope * mx;
	t->has_slope = 1;
}

double mp_plan_frag_ratio(const struct mp_plan_point *p)
{
	if (!p->seen || p->reserved_bytes < 0 || p->free_in_reserved_bytes < 0)
		return -1;
	if (p->reserved_bytes == 0)
		return 0;
	return (double)p->free_in_reserved_bytes / (double)p->reserved_bytes;
}

double mp_plan_external_ratio(const struct mp_plan_point *p)
{
	if (!p->seen || p->free_in_reserved_bytes < 0 || p->largest_free_bytes < 0)
		return -1;
	if (p->free_in_reserved_bytes == 0 || p->largest_free_bytes >= p->free_in_reserved_bytes)
		return 0;
	return 1.0 - (double)p->largest_free_bytes / (double)p->free_in_reserved_bytes;
}

int mp_plan_oom_verdict(int64_t requested_bytes, int64_t free_in_reserved_bytes,
                        int64_t largest_free_bytes)
{
	if (free_in_reserved_bytes < 0)
		return MP_OOM_UNKNOWN;
	if (requested_bytes > free_in_reserved_bytes)
		return MP_OOM_CAPACITY;
	if (largest_free_bytes < 0)
		return MP_OOM_UNKNOWN;
	if (requested_bytes <= largest_free_bytes)
		return MP_OOM_FITS_HOLE;
	return MP_OOM_FRAGMENTATION;
}

const char *mp_plan_verdict_name(int verdict)
{
	static const char *const names[MP_OOM_VERDICTS] = {"unknown", "capacity", "fragmentation",
	                                                   "fits-a-hole"};

	return verdict >= 0 && verdict < MP_OOM_VERDICTS ? names[verdict] : "unknown";
}
