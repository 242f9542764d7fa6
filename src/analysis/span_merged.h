/*
 * analysis/span_merged.h - the live bytes of the blocks that
 * analysis/block_spans merges instead of keeping whole, over one axis
 * (timestamps or event numbers): their highest in each of at most
 * MP_SPAN_BUCKETS buckets of equal width from the first coordinate seen.
 * When the axis outgrows the buckets their width doubles and pairs merge,
 * so memory is fixed whatever the length of the trace.
 *
 * Blocks merged as the trace goes (mp_span_merged_change at their
 * allocation and free) are counted exactly: a bucket holds the highest
 * level they reach in it.  A block merged after the fact (pushed out of
 * the kept blocks by a larger one) is added over its whole life at once
 * (mp_span_merged_add_life), and counted over the whole buckets at its two
 * ends: there the figure may exceed the true highest by that block's
 * bytes, never fall short.  Not thread-safe.
 */
#ifndef MP_ANALYSIS_SPAN_MERGED_H
#define MP_ANALYSIS_SPAN_MERGED_H

#include <stddef.h>
#include <stdint.h>

#define MP_SPAN_BUCKETS 4096

struct mp_span_merged {
	int started;
	int64_t origin, width; /* bucket i covers [origin + i*width, origin + (i+1)*width) */
	size_t n;              /* buckets in use: the last holds the latest coordinate seen */
	double level;          /* live bytes of the merged blocks now */
	double peak[MP_SPAN_BUCKETS];   /* highest level reached in the bucket */
	double starts[MP_SPAN_BUCKETS]; /* bytes of lives added at once, by first bucket */
	double ends[MP_SPAN_BUCKETS];   /* the same, by last bucket */
};

void mp_span_merged_init(struct mp_span_merged *m);
/* Time moved on to x: the buckets up to x's hold the level. */
void mp_span_merged_advance(struct mp_span_merged *m, int64_t x);
/* At x the merged blocks' live bytes change by delta. */
void mp_span_merged_change(struct mp_span_merged *m, int64_t x, double delta);
/* A block of bytes live from a to b (a <= b), added after the fact. */
void mp_span_merged_add_life(struct mp_span_merged *m, int64_t a, int64_t b, double bytes);
/* The highest merged bytes of each bucket in use into out (room for
 * MP_SPAN_BUCKETS + 1), then the level now; returns how many: m->n + 1. */
size_t mp_span_merged_values(const struct mp_span_merged *m, double *out);

#endif
