/*
 * plugins/async.c - the async pool: every request goes to the driver's own
 * stream-ordered pool (cudaMallocAsync on the request's stream, cudaFreeAsync
 * on the free's stream).  It decides nothing itself, so its figures are the
 * driver's; it needs the cuda backend, and refuses any other at create.
 */
#include <stdlib.h>
#include <string.h>

#include "memprof/pool.h"

struct memprof_pool {
	const struct memprof_pool_host *host;
};

static int async_create(const struct memprof_pool_host *host,
                        const struct memprof_pool_option *opts, size_t n_opts,
                        struct memprof_pool **out)
{
	struct memprof_pool *p;

	(void)opts, (void)n_opts;
	*out = NULL;
	if (!host->backend || strcmp(host->backend, "cuda") != 0) {
		host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
		          "async needs --backend=cuda: cudaMallocAsync is the driver's own "
		          "stream-ordered pool and only a GPU has one");
		return MEMPROF_POOL_ENOTSUP;
	}
	if (!host->alloc_async || !host->free_async) {
		host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
		          "async: this host offers no stream-ordered allocation (alloc_async)");
		return MEMPROF_POOL_ENOTSUP;
	}
	p = calloc(1, sizeof *p);
	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	*out = p;
	return MEMPROF_POOL_OK;
}

static int async_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                       struct memprof_pool_block *out)
{
	struct memprof_region r;
	int rc = p->host->alloc_async(p->host->ctx, req->size_bytes, req->stream, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	out->addr = r.addr;
	out->size_bytes = r.size_bytes;
	out->handle = r.token;
	return MEMPROF_POOL_OK;
}

static int async_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	struct memprof_region r = {
	        .addr = b->addr, .size_bytes = b->size_bytes, .token = b->handle};

	return p->host->free_async(p->host->ctx, &r, stream);
}

static void async_destroy(struct memprof_pool *p)
{
	free(p);
}

static const struct memprof_pool_ops async_ops = {
        MEMPROF_POOL_OPS_HEADER("async", "cudaMallocAsync/cudaFreeAsync on the driver's "
                                         "stream-ordered pool (cuda backend only)"),
        .create = async_create,
        .alloc = async_alloc,
        .free = async_free,
        .destroy = async_destroy,
};

MEMPROF_POOL_DEFINE(async_ops)
