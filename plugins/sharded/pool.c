/*
 * plugins/sharded/pool.c - the "sharded" pool's ABI glue (cached bucket
 * shards): requests whose site+size recurs every iteration take a free
 * slot of their key from the slab laid out by plan (a table lookup, no
 * allocator call, no view); everything else goes to the embedded caching
 * model.  A handle's top bit (SH_MINE) marks a slot.
 */
#include <stdlib.h>

#include "sharded.h"

static int sharded_create(const struct memprof_pool_host *host,
                          const struct memprof_pool_option *opts, size_t n_opts,
                          struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);
	int rc;

	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	p->second_start = INT64_MAX;
	pl_keymap_init(&p->serve);
	rc = sh_parse_options(host, opts, n_opts, &p->cfg);
	if (rc == MEMPROF_POOL_OK)
		rc = cb_pool_create(host, NULL, 0, &p->fallback);
	if (rc != MEMPROF_POOL_OK) {
		sh_config_free(&p->cfg);
		free(p);
		return rc;
	}
	*out = p;
	return MEMPROF_POOL_OK;
}

static int sharded_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n)
{
	int rc;

	if (p->planned) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "plan called twice");
		return MEMPROF_POOL_EINVAL;
	}
	rc = sh_plan(p, items, n);
	p->planned = rc == MEMPROF_POOL_OK;
	return rc;
}

/* The table key of a request, or -1 when it is not a recurring one. */
static int64_t recurring_key(const struct memprof_pool *p, const struct memprof_pool_request *req)
{
	char buf[SH_KEY_BYTES];
	uint64_t k;

	if (!p->planned || p->tab.n_keys == 0 || p->slab_state < 0 || !req->site)
		return -1;
	if (!pl_keymap_get(&p->serve, buf, sh_key_of(buf, req->site, req->size_bytes), &k))
		return -1;
	return (int64_t)k;
}

/* Key k's request into a slot: 0 served, 1 for the fallback to serve, < 0 an error. */
static int take_slot(struct memprof_pool *p, int64_t k, const struct memprof_pool_request *req,
                     struct memprof_pool_block *out)
{
	int64_t s;
	int rc;

	if (p->slab_state == 0 && (rc = sh_slab_create(p, req->stream)) != MEMPROF_POOL_OK)
		return rc;
	if (p->slab_state < 0)
		return 1;
	if ((s = sh_table_take(&p->tab, (uint32_t)k)) < 0) {
		if (p->n_slot_misses++ == 0)
			p->host->log(
			        p->host->ctx, MEMPROF_POOL_LOG_WARN,
			        "allocation %lld: every slot of its site+size is live, more than "
			        "planned; the caching fallback serves such requests",
			        (long long)req->index);
		return 1;
	}
	out->addr = p->tab.slots[s].addr;
	out->size_bytes = p->tab.keys[k].slot_bytes;
	out->handle = SH_MINE | (uint64_t)s;
	if (req->index >= p->second_start)
		p->n_avoided++;
	return MEMPROF_POOL_OK;
}

static int sharded_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                         struct memprof_pool_block *out)
{
	int64_t k = recurring_key(p, req);
	int rc;

	if (k >= 0 && (rc = take_slot(p, k, req, out)) <= 0)
		return rc;
	p->n_fallback++;
	rc = cb_pool_alloc(p->fallback, req, out);
	if (rc == MEMPROF_POOL_OK && (out->handle & SH_MINE)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "the caching fallback gave a handle with the top bit set");
		cb_pool_free(p->fallback, out, req->stream);
		return MEMPROF_POOL_EFAULT;
	}
	return rc;
}

static int sharded_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	uint64_t s = b->handle & ~SH_MINE;

	if (!(b->handle & SH_MINE))
		return cb_pool_free(p->fallback, b, stream);
	if (s >= p->tab.n_slots || p->tab.slots[s].addr != b->addr ||
	    sh_table_put(&p->tab, s) < 0) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a slot that is not live (handle 0x%llx, address 0x%llx)",
		             (unsigned long long)b->handle, (unsigned long long)b->addr);
		return MEMPROF_POOL_EINVAL;
	}
	return MEMPROF_POOL_OK;
}

static void sharded_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	emit(ctx, "iterations", (double)p->n_iters, "count");
	emit(ctx, "iterations_from", (double)p->iters_from, "count");
	if (p->iters_from == SH_FROM_PERIOD)
		emit(ctx, "period_allocs", (double)p->period_allocs, "count");
	emit(ctx, "recurring_sites", (double)p->tab.n_keys, "count");
	emit(ctx, "slots", (double)p->tab.n_slots, "count");
	emit(ctx, "allocations_avoided", (double)p->n_avoided, "count");
	emit(ctx, "slab_bytes", p->slab_state == 1 ? (double)p->slab.size_bytes : 0, "bytes");
	emit(ctx, "shard_bytes_per_rank", (double)p->tab.shard_bytes_per_rank, "bytes");
	emit(ctx, "fallback_requests", (double)p->n_fallback, "count");
	emit(ctx, "slot_misses", (double)p->n_slot_misses, "count");
	emit(ctx, "collectives_run", (double)p->n_collectives, "count");
	emit(ctx, "all_gather_ns", (double)p->all_gather_ns, "ns");
	emit(ctx, "reduce_scatter_ns", (double)p->reduce_scatter_ns, "ns");
}

static void sharded_destroy(struct memprof_pool *p)
{
	if (p->slab_state == 1)
		p->host->release(p->host->ctx, &p->slab);
	cb_pool_destroy(p->fallback);
	sh_table_free(&p->tab);
	pl_keymap_free(&p->serve);
	sh_config_free(&p->cfg);
	free(p);
}

const struct sh_table *sh_pool_table(const struct memprof_pool *p)
{
	return &p->tab;
}

static const struct memprof_pool_ops sharded_ops = {
        MEMPROF_POOL_OPS_HEADER("sharded",
                                "cached bucket shards: requests whose site and size recur every "
                                "iteration served from a persistent slab of precomputed shards"),
        .options = sh_option_specs,
        .create = sharded_create,
        .alloc = sharded_alloc,
        .free = sharded_free,
        .stats = sharded_stats,
        .destroy = sharded_destroy,
        .plan = sharded_plan,
};

MEMPROF_POOL_DEFINE(sharded_ops)
