/*
 * replay/latency.h - a log-linear histogram of nanosecond durations for
 * percentiles in constant memory: exact below 64 ns, then 32 buckets per
 * power of two (a percentile is within 1/32 of the true value).  Pure;
 * not thread-safe.
 */
#ifndef MP_REPLAY_LATENCY_H
#define MP_REPLAY_LATENCY_H

#include <stdint.h>

#define MP_LATENCY_BUCKETS (64 + 58 * 32)

struct mp_latency {
	uint64_t counts[MP_LATENCY_BUCKETS];
	uint64_t n, max_ns;
};

void mp_latency_add(struct mp_latency *h, uint64_t ns);
/* The q-quantile (0 < q <= 1): the upper edge of the bucket holding it; 0 when empty. */
uint64_t mp_latency_quantile(const struct mp_latency *h, double q);

#endif
