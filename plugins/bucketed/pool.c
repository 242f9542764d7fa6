/*
 * plugins/bucketed/pool.c - the "bucketed" plugin's entry points: a request
 * goes to the smallest bucket at least its size (slab.c), or above the
 * largest bucket to the embedded caching pool, the best-fit large pool.
 * When memory runs out it releases the wholly free slabs (and the caching
 * pool's cached segments) and retries once, as PyTorch does; never before.
 * Handles with the top bit set are slots; the rest are the caching pool's.
 */
#include <stdlib.h>

#include "../caching/embed.h"
#include "bucketed.h"

static int host_ok(const struct memprof_pool_host *host)
{
	return host->struct_size >= offsetof(struct memprof_pool_host, log) + sizeof host->log &&
	       host->reserve && host->release && host->log;
}

static int make_buckets(struct memprof_pool *p)
{
	p->buckets = calloc(p->cfg.n_sizes, sizeof *p->buckets);
	if (!p->buckets)
		return MEMPROF_POOL_ENOMEM;
	for (size_t i = 0; i < p->cfg.n_sizes; i++) {
		struct bk_bucket *b = &p->buckets[i];
		uint64_t n = p->cfg.slab_bytes / p->cfg.sizes[i];

		if (n < p->cfg.min_slots)
			n = p->cfg.min_slots;
		if (n > BK_MAX_SLAB_SLOTS)
			n = BK_MAX_SLAB_SLOTS;
		b->size_bytes = p->cfg.sizes[i];
		b->slots_per_slab = (uint32_t)n;
	}
	return MEMPROF_POOL_OK;
}

static int bk_create(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                     size_t n_opts, struct memprof_pool **out)
{
	struct memprof_pool *p;
	int rc;

	if (!host_ok(host))
		return MEMPROF_POOL_ENOTSUP;
	p = calloc(1, sizeof *p);
	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	rc = bk_config_parse(&p->cfg, host, opts, n_opts);
	if (rc == MEMPROF_POOL_OK)
		rc = make_buckets(p);
	if (rc == MEMPROF_POOL_OK)
		rc = cb_pool_create(host, NULL, 0, &p->large);
	if (rc != MEMPROF_POOL_OK) {
		free(p->buckets);
		free(p);
		return rc;
	}
	*out = p;
	return MEMPROF_POOL_OK;
}

/* Out of memory: give back what is cached but unused; whether anything was. */
static int release_cached(struct memprof_pool *p, int large_too)
{
	uint64_t n = bk_release_free_slabs(p);

	if (large_too)
		cb_pool_release_cached(p->large);
	return n > 0 || large_too;
}

static int alloc_large(struct memprof_pool *p, const struct memprof_pool_request *req,
                       uint64_t orig, struct memprof_pool_block *out)
{
	int rc = cb_pool_alloc(p->large, req, out);

	/* The caching pool emptied its own cache before failing; ours is left. */
	if (rc == MEMPROF_POOL_ENOMEM && orig < BK_MAX_REQUEST && release_cached(p, 0)) {
		p->st.n_oom_retries++;
		rc = cb_pool_alloc(p->large, req, out);
	}
	if (rc == MEMPROF_POOL_OK) {
		p->st.n_large++;
		if (out->handle & BK_MARK) { /* cannot happen: 2^31 reuses of one block id */
			cb_pool_free(p->large, out, req->stream);
			p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
			             "the large pool's handle collides with the slot mark");
			return MEMPROF_POOL_EFAULT;
		}
	}
	return rc;
}

static int bk_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                    struct memprof_pool_block *out)
{
	uint64_t orig = req->requested_bytes ? req->requested_bytes : req->size_bytes;
	int bi = bk_bucket_for(p, orig);
	int rc;

	if (p->fault)
		return p->fault;
	if (bi < 0)
		return alloc_large(p, req, orig, out);
	rc = bk_slot_take(p, (uint32_t)bi, orig, out);
	if (rc == MEMPROF_POOL_ENOMEM && release_cached(p, 1)) {
		p->st.n_oom_retries++;
		rc = bk_slot_take(p, (uint32_t)bi, orig, out);
	}
	return rc;
}

static int bk_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	if (b->handle & BK_MARK)
		return bk_slot_put(p, b);
	return cb_pool_free(p->large, b, stream);
}

static void bk_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	bk_stats_emit(p, emit, ctx);
}

static void bk_destroy(struct memprof_pool *p)
{
	if (!p)
		return;
	bk_slabs_destroy(p);
	cb_pool_destroy(p->large);
	free(p->buckets);
	free(p);
}

static const struct memprof_pool_ops bucketed_ops = {
        MEMPROF_POOL_OPS_HEADER("bucketed",
                                "size classes (512B to 64MiB by default) with free lists carved "
                                "from slabs; larger requests to the caching model's best-fit "
                                "large pool"),
        .options = bk_option_specs,
        .create = bk_create,
        .alloc = bk_alloc,
        .free = bk_free,
        .stats = bk_stats,
        .destroy = bk_destroy,
};

MEMPROF_POOL_DEFINE(bucketed_ops)
