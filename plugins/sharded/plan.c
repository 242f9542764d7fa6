/*
 * plugins/sharded/plan.c - the offline analysis behind the sharded pool:
 * iterations (iterations.c), recurring keys and their slots (recurring.c),
 * the shard table (table.c) and the site+size map serving looks slots up
 * in.  It reserves nothing: the slab is reserved at the first recurring
 * request (slab.c).  It logs what it found, once, at INFO.
 */
#include <stdlib.h>

#include "sharded.h"

static void log_iterations(struct memprof_pool *p, const struct sh_iters *it)
{
	const struct memprof_pool_host *h = p->host;

	if (p->cfg.iteration_phase && it->from != SH_FROM_PHASES)
		h->log(h->ctx, MEMPROF_POOL_LOG_WARN,
		       "phase '%s' is not entered twice: looking for a period instead",
		       p->cfg.iteration_phase);
	if (it->from == SH_FROM_PHASES)
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "iterations from phase markers: %llu, each starting where phase '%s' is "
		       "entered",
		       (unsigned long long)it->n_iters, it->phase);
	else if (it->from == SH_FROM_PERIOD)
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "iterations from periodicity: %llu of a period of %llu allocations (%.1f%% "
		       "of site+size keys repeat one period later)",
		       (unsigned long long)it->n_iters, (unsigned long long)it->period_allocs,
		       100.0 * it->match_share);
	else if (it->best_period)
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "no iterations found (no phase entered twice; the best period, %llu "
		       "allocations, repeats %.1f%% of site+size keys, below %.0f%%): every "
		       "request "
		       "goes to the caching fallback",
		       (unsigned long long)it->best_period, 100.0 * it->best_share,
		       100.0 * SH_MIN_MATCH_SHARE);
	else
		h->log(h->ctx, MEMPROF_POOL_LOG_INFO,
		       "no iterations found (no phase entered twice, no site+size key occurs twice): every request "
		       "goes to the caching fallback");
}

/* The serving map: each table key's site+size text -> its index. */
static int build_serve_map(struct memprof_pool *p, const struct memprof_pool_lifetime *items,
                           const size_t *rep, size_t m)
{
	char buf[SH_KEY_BYTES];

	for (size_t j = 0; j < m; j++) {
		size_t len = sh_key_of(buf, items[rep[j]].site, items[rep[j]].size_bytes);

		if (pl_keymap_put(&p->serve, buf, len, j) < 0)
			return MEMPROF_POOL_ENOMEM;
	}
	return MEMPROF_POOL_OK;
}

/* The recurring keys (n_slots_of_key[k] > 0) into the shard table and serving map. */
static int build_table(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n,
                       const uint32_t *key_of, size_t n_keys, const uint32_t *n_slots_of_key)
{
	size_t *rep = malloc((n_keys ? n_keys : 1) * sizeof *rep), m = 0;
	uint64_t *sizes = malloc((n_keys ? n_keys : 1) * sizeof *sizes);
	uint32_t *slots = malloc((n_keys ? n_keys : 1) * sizeof *slots);
	int rc = MEMPROF_POOL_ENOMEM;

	if (!rep || !sizes || !slots)
		goto out;
	for (size_t k = 0; k < n_keys; k++)
		rep[k] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) /* each key's first allocation, in key order */
		if (rep[key_of[i]] == SIZE_MAX)
			rep[key_of[i]] = i;
	for (size_t k = 0; k < n_keys; k++)
		if (n_slots_of_key[k]) {
			rep[m] = rep[k];
			sizes[m] = items[rep[k]].size_bytes;
			slots[m++] = n_slots_of_key[k];
		}
	rc = sh_table_build(&p->tab, p->cfg.world_size, sizes, slots, m);
	if (rc == MEMPROF_POOL_EINVAL) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_WARN,
		             "the shard table for %zu recurring keys is too large: caching nothing",
		             m);
		rc = MEMPROF_POOL_OK;
	} else if (rc == MEMPROF_POOL_OK) {
		rc = build_serve_map(p, items, rep, m);
	}
out:
	free(rep);
	free(sizes);
	free(slots);
	return rc;
}

static void log_table(struct memprof_pool *p)
{
	const struct sh_table *t = &p->tab;

	if (p->iters_from == SH_FROM_NONE)
		return;
	p->host->log(p->host->ctx, MEMPROF_POOL_LOG_INFO,
	             "%zu recurring site+size keys in %zu slots: a slab of %llu bytes, %llu per "
	             "rank of %u",
	             t->n_keys, t->n_slots, (unsigned long long)t->slab_bytes,
	             (unsigned long long)t->shard_bytes_per_rank, t->world_size);
}

int sh_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n)
{
	uint32_t *key_of = malloc((n ? n : 1) * sizeof *key_of), *n_slots_of_key = NULL;
	struct sh_iters it = {0};
	size_t n_keys = 0;
	int rc = MEMPROF_POOL_ENOMEM;

	if (!key_of || n > UINT32_MAX || sh_key_ids(items, n, key_of, &n_keys) != MEMPROF_POOL_OK)
		goto out;
	if ((rc = sh_iters_detect(items, n, key_of, p->cfg.iteration_phase, &it)) != 0)
		goto out;
	log_iterations(p, &it);
	p->iters_from = it.from;
	p->n_iters = it.n_iters;
	p->period_allocs = it.period_allocs;
	p->second_start = it.second_start;
	rc = MEMPROF_POOL_ENOMEM;
	if (!(n_slots_of_key = malloc((n_keys ? n_keys : 1) * sizeof *n_slots_of_key)))
		goto out;
	rc = sh_recurring(items, n, key_of, n_keys, &it, p->cfg.min_share, n_slots_of_key);
	if (rc == MEMPROF_POOL_OK)
		rc = build_table(p, items, n, key_of, n_keys, n_slots_of_key);
	if (rc == MEMPROF_POOL_OK)
		log_table(p);
out:
	if (rc == MEMPROF_POOL_ENOMEM)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "out of memory planning %zu allocations", n);
	sh_iters_free(&it);
	free(key_of);
	free(n_slots_of_key);
	return rc;
}
