/*
 * tests/plugins/future_minor.c - a plugin built for the next minor of the
 * pool ABI: a larger ops struct with a tail this host does not know.  It
 * must load, the tail ignored.  The pool itself is direct's: one backend
 * reservation per request, so test_loader can run it through the copy.
 */
#include <stdlib.h>

#include <memprof/pool.h>

struct memprof_pool {
	const struct memprof_pool_host *host;
};

static int future_create(const struct memprof_pool_host *host,
                         const struct memprof_pool_option *opts, size_t n_opts,
                         struct memprof_pool **out)
{
	(void)opts, (void)n_opts;
	if (!(*out = calloc(1, sizeof **out)))
		return MEMPROF_POOL_ENOMEM;
	(*out)->host = host;
	return MEMPROF_POOL_OK;
}

static int future_alloc(struct memprof_pool *p,
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

static int future_free(struct memprof_pool *p,
                       const struct memprof_pool_block *b, uint64_t stream)
{
	struct memprof_region r = {.addr = b->addr,
	                           .size_bytes = b->size_bytes,
	                           .token = b->handle};

	(void)stream;
	return p->host->release(p->host->ctx, &r);
}

static void future_destroy(struct memprof_pool *p)
{
	free(p);
}

static void future_stats(struct memprof_pool *p, memprof_pool_emit_fn emit,
                         void *emit_ctx)
{
	(void)p;
	emit(emit_ctx, "future", 1, "count");
}

/* What a 1.1 header might append: fields this host has never heard of. */
struct future_ops {
	struct memprof_pool_ops ops;
	int (*unknown_callback)(struct memprof_pool *p);
	uint64_t unknown_field;
};

static const struct future_ops future = {
        .ops = {.struct_size = sizeof(struct future_ops),
                .abi_major = MEMPROF_POOL_ABI_MAJOR,
                .abi_minor = MEMPROF_POOL_ABI_MINOR + 1,
                .name = "future",
                .description = "built for the next pool ABI minor",
                .create = future_create,
                .alloc = future_alloc,
                .free = future_free,
                .stats = future_stats,
                .destroy = future_destroy},
        .unknown_callback = NULL,
        .unknown_field = 0xfeedfacecafebeefull,
};

MEMPROF_POOL_DEFINE(future.ops)
