/*
 * plugins/planned/cache.c - the one plan kept for the host's next pass over
 * the same allocations (cache.h): found again by the host's plan_key, a
 * hash of the items and the options; freed when another takes its place
 * and when the plugin is unloaded.  Never talks to the host.
 */
#include <string.h>

#include "cache.h"

static struct {
	uint64_t key, items_hash;
	struct planned_config cfg;
	struct planned_plan plan;
	int held;
} cache;

static void cache_drop(void)
{
	if (cache.held)
		planned_plan_free(&cache.plan);
	memset(&cache, 0, sizeof cache);
}

__attribute__((destructor)) static void cache_unload(void)
{
	cache_drop();
}

/* FNV-1a over what the plan depends on in each item. */
uint64_t planned_cache_hash(const struct memprof_pool_lifetime *v, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t k, j;

	for (k = 0; k < n; k++) {
		int64_t f[6] = {v[k].index,    (int64_t)v[k].size_bytes,
		                v[k].alloc_at, v[k].free_at,
		                v[k].alloc_ts, v[k].free_ts};
		const unsigned char *b = (const unsigned char *)f;
		for (j = 0; j < sizeof f; j++)
			h = (h ^ b[j]) * 1099511628211ull;
	}
	return h ^ (uint64_t)n;
}

static int same_config(const struct planned_config *a, const struct planned_config *b)
{
	return a->plan_time_ns == b->plan_time_ns && a->plan_nodes == b->plan_nodes &&
	       a->order == b->order && a->align_bytes == b->align_bytes;
}

int planned_cache_take(uint64_t key, uint64_t items_hash, const struct planned_config *cfg,
                       struct planned_plan *out)
{
	if (!cache.held || !key || cache.key != key || cache.items_hash != items_hash ||
	    !same_config(&cache.cfg, cfg))
		return 0;
	*out = cache.plan;
	memset(&cache, 0, sizeof cache);
	return 1;
}

void planned_cache_put(uint64_t key, uint64_t items_hash, const struct planned_config *cfg,
                       struct planned_plan *pl)
{
	size_t i;

	cache_drop();
	for (i = 0; pl->state && i < pl->n_slots; i++)
		if (pl->state[i] == PLANNED_SLOT_LIVE)
			pl->state[i] = PLANNED_SLOT_IDLE;
	cache.key = key;
	cache.items_hash = items_hash;
	cache.cfg = *cfg;
	cache.plan = *pl;
	cache.held = 1;
	memset(pl, 0, sizeof *pl);
}
