/*
 * plugins/direct.c - the naive baseline pool: one backend reservation per
 * request (cudaMalloc), given back at its free (cudaFree).  It keeps no
 * state beyond the host, so its peak reserved bytes are the trace's peak of
 * granted bytes and its time is one backend call per alloc and per free.
 */
#include <stdlib.h>

#include "memprof/pool.h"

struct memprof_pool {
	const struct memprof_pool_host *host;
};

static int direct_create(const struct memprof_pool_host *host,
                         const struct memprof_pool_option *opts, size_t n_opts,
                         struct memprof_pool **out)
{
	struct memprof_pool *p;

	(void)opts, (void)n_opts;
	p = calloc(1, sizeof *p);
	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	*out = p;
	return MEMPROF_POOL_OK;
}

static int direct_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                        struct memprof_pool_block *out)
{
	struct memprof_region r;
	int rc = p->host->reserve(p->host->ctx, req->size_bytes, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	out->addr = r.addr;
	out->size_bytes = r.size_bytes;
	out->handle = r.token;
	return MEMPROF_POOL_OK;
}

static int direct_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	struct memprof_region r = {
	        .addr = b->addr, .size_bytes = b->size_bytes, .token = b->handle};

	(void)stream;
	return p->host->release(p->host->ctx, &r);
}

static void direct_destroy(struct memprof_pool *p)
{
	free(p);
}

static const struct memprof_pool_ops direct_ops = {
        MEMPROF_POOL_OPS_HEADER("direct", "one backend allocation per request: the naive baseline"),
        .create = direct_create,
        .alloc = direct_alloc,
        .free = direct_free,
        .destroy = direct_destroy,
};

MEMPROF_POOL_DEFINE(direct_ops)
