/*
 * plugins/bucketed/stats.c - the bucketed pool's own figures: three per
 * bucket that saw requests (the 15 with the most requests when more were
 * used, the rest summed as "other"), totals, and the large pool's peak.
 * At most 15 * 3 + 3 + 11 = 59 stats.  Figures the engine already reports
 * (reserved bytes, backend calls, time) are not repeated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../caching/embed.h"
#include "bucketed.h"

void bk_size_name(uint64_t size_bytes, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;

	while (u < 4 && size_bytes && size_bytes % 1024 == 0) {
		size_bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)size_bytes, unit[u]);
}

static double ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0.0;
}

static void emit_bucket(memprof_pool_emit_fn emit, void *ctx, const char *label,
                        uint64_t n_requests, uint64_t waste_bytes, double occupancy)
{
	char name[64];

	snprintf(name, sizeof name, "bucket_%s_requests", label);
	emit(ctx, name, (double)n_requests, "count");
	snprintf(name, sizeof name, "bucket_%s_waste_bytes", label);
	emit(ctx, name, (double)waste_bytes, "bytes");
	snprintf(name, sizeof name, "bucket_%s_slab_occupancy", label);
	emit(ctx, name, occupancy, "ratio");
}

/* The n_top used buckets with most requests (ties: the smaller), marked in top[]. */
static void pick_top(const struct memprof_pool *p, uint8_t *top, size_t n_top)
{
	for (size_t k = 0; k < n_top; k++) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < p->cfg.n_sizes; i++)
			if (!top[i] && p->buckets[i].n_requests &&
			    (best == SIZE_MAX ||
			     p->buckets[i].n_requests > p->buckets[best].n_requests))
				best = i;
		if (best == SIZE_MAX)
			return;
		top[best] = 1;
	}
}

static void emit_buckets(const struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx,
                         size_t *n_used)
{
	uint8_t top[BK_MAX_BUCKETS] = {0};
	uint64_t o_req = 0, o_waste = 0, o_live = 0, o_carved = 0;
	char label[32];

	pick_top(p, top, BK_TOP_BUCKETS);
	*n_used = 0;
	for (size_t i = 0; i < p->cfg.n_sizes; i++) {
		const struct bk_bucket *b = &p->buckets[i];

		if (!b->n_requests)
			continue;
		++*n_used;
		if (top[i]) {
			bk_size_name(b->size_bytes, label, sizeof label);
			emit_bucket(emit, ctx, label, b->n_requests, b->waste_bytes,
			            ratio(b->peak_live, b->peak_carved));
			continue;
		}
		o_req += b->n_requests;
		o_waste += b->waste_bytes;
		o_live += b->peak_live;
		o_carved += b->peak_carved;
	}
	if (o_req)
		emit_bucket(emit, ctx, "other", o_req, o_waste, ratio(o_live, o_carved));
}

/* The caching pool's figure name, caught from its stats. */
struct catch_stat {
	const char *name;
	double value;
};

static void catch_one(void *ctx, const char *name, double value, const char *unit)
{
	struct catch_stat *c = ctx;

	(void)unit;
	if (!strcmp(name, c->name))
		c->value = value;
}

void bk_stats_emit(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct bk_stats *s = &p->st;
	struct catch_stat large = {"peak_reserved_bytes", 0};
	size_t n_used;

	emit_buckets(p, emit, ctx, &n_used);
	cb_pool_stats(p->large, catch_one, &large);
	emit(ctx, "buckets_used", (double)n_used, "count");
	emit(ctx, "bucketed_requests", (double)s->n_bucketed, "count");
	emit(ctx, "large_requests", (double)s->n_large, "count");
	emit(ctx, "slabs_reserved", (double)s->n_slabs_reserved, "count");
	emit(ctx, "slabs_released", (double)s->n_slabs_released, "count");
	emit(ctx, "slab_bytes_peak", (double)s->peak_slab_bytes, "bytes");
	emit(ctx, "large_pool_peak_reserved_bytes", large.value, "bytes");
	emit(ctx, "oom_retries", (double)s->n_oom_retries, "count");
	emit(ctx, "rounding_waste_bytes", (double)s->waste_bytes, "bytes");
	emit(ctx, "rounding_waste_peak_bytes", (double)s->peak_live_waste_bytes, "bytes");
	emit(ctx, "internal_fragmentation_share_at_end", ratio(s->live_waste_bytes, s->live_slot_bytes), "ratio");
}
