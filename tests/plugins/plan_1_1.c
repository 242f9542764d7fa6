/*
 * tests/plugins/plan_1_1.c - a planning plugin built for pool ABI 1.1, from
 * before the lifetimes' own times: its plan() reads the items with the 1.0
 * stride (MEMPROF_POOL_LIFETIME_SIZE_1_0 bytes) and refuses them unless
 * each is the allocation it names (index k at position k, a lifetime that
 * ends after it starts).  The pool itself is direct's.  For
 * tests/cli/plan-abi.sh: a host that gave it 1.2 items would fail it.
 */
#include <stdlib.h>
#include <string.h>

#include <memprof/pool.h>

struct memprof_pool {
	const struct memprof_pool_host *host;
	size_t n_checked;
};

static int old_create(const struct memprof_pool_host *host,
                      const struct memprof_pool_option *opts, size_t n_opts,
                      struct memprof_pool **out)
{
	(void)opts, (void)n_opts;
	if (!(*out = calloc(1, sizeof **out)))
		return MEMPROF_POOL_ENOMEM;
	(*out)->host = host;
	return MEMPROF_POOL_OK;
}

static int old_plan(struct memprof_pool *p,
                    const struct memprof_pool_lifetime *items, size_t n)
{
	const char *at = (const char *)items;
	size_t k;

	for (k = 0; k < n; k++) {
		struct memprof_pool_lifetime it;
		memset(&it, 0, sizeof it);
		memcpy(&it, at + k * MEMPROF_POOL_LIFETIME_SIZE_1_0,
		       MEMPROF_POOL_LIFETIME_SIZE_1_0);
		if (it.index != (int64_t)k || it.free_at < it.alloc_at ||
		    it.size_bytes == 0) {
			p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
			             "item %zu read with the 1.0 stride is not "
			             "allocation %zu (index %lld)",
			             k, k, (long long)it.index);
			return MEMPROF_POOL_EINVAL;
		}
	}
	p->n_checked = n;
	return MEMPROF_POOL_OK;
}

static int old_alloc(struct memprof_pool *p,
                     const struct memprof_pool_request *req,
                     struct memprof_pool_block *out)
{
	struct memprof_region r;
	int rc = p->host->reserve(p->host->ctx, req->size_bytes, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	*out = (struct memprof_pool_block){
	        .addr = r.addr, .size_bytes = r.size_bytes, .handle = r.token};
	return MEMPROF_POOL_OK;
}

static int old_free(struct memprof_pool *p, const struct memprof_pool_block *b,
                    uint64_t stream)
{
	struct memprof_region r = {.addr = b->addr,
	                           .size_bytes = b->size_bytes,
	                           .token = b->handle};

	(void)stream;
	return p->host->release(p->host->ctx, &r);
}

static void old_stats(struct memprof_pool *p, memprof_pool_emit_fn emit,
                      void *emit_ctx)
{
	emit(emit_ctx, "plan_items_checked", (double)p->n_checked, "count");
}

static void old_destroy(struct memprof_pool *p)
{
	free(p);
}

static const struct memprof_pool_ops old = {
        .struct_size = sizeof(struct memprof_pool_ops),
        .abi_major = MEMPROF_POOL_ABI_MAJOR,
        .abi_minor = 1,
        .name = "plan_1_1",
        .description = "a planning plugin built for pool ABI 1.1",
        .create = old_create,
        .alloc = old_alloc,
        .free = old_free,
        .stats = old_stats,
        .destroy = old_destroy,
        .plan = old_plan,
};

MEMPROF_POOL_DEFINE(old)
