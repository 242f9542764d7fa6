/*
 * replay/latency.c - the percentile histogram of latency.h.
 */
#include "replay/latency.h"

static unsigned bucket_of(uint64_t ns)
{
	unsigned e;

	if (ns < 64)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns); /* 6..63 */
	return 64u + (e - 6u) * 32u + (unsigned)((ns >> (e - 5u)) & 31u);
}

/* The largest value that falls in bucket b. */
static uint64_t upper_of(unsigned b)
{
	unsigned e, sub;

	if (b < 64)
		return b;
	e = (b - 64u) / 32u + 6u;
	sub = (b - 64u) % 32u;
	if (e == 63 && sub == 31)
		return UINT64_MAX;
	return ((32ull + sub + 1) << (e - 5u)) - 1;
}

void mp_latency_add(struct mp_latency *h, uint64_t ns)
{
	h->counts[bucket_of(ns)]++;
	h->n++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t mp_latency_quantile(const struct mp_latency *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned b;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)(q * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < MP_LATENCY_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen >= rank) {
			uint64_t up = upper_of(b);
			return up < h->max_ns ? up : h->max_ns;
		}
	}
	return h->max_ns;
}
