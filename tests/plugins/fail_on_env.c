/*
 * fail_on_env.c - a test pool, "envfail": one backend reservation per block
 * (like direct), except that create fails, as a backend fault, when the
 * environment variable MEMPROF_TEST_POOL_FAIL is set.  tests/cli/replay-mpi.sh
 * sets it on one MPI rank only, to make that rank's replay fail while the
 * others go on.  Not installed.
 */
#include <stdlib.h>

#include <memprof/pool.h>

struct memprof_pool {
	const struct memprof_pool_host *host;
};

static int envfail_create(const struct memprof_pool_host *host,
                          const struct memprof_pool_option *opts, size_t n_opts,
                          struct memprof_pool **out)
{
	struct memprof_pool *p;

	(void)opts, (void)n_opts;
	if (getenv("MEMPROF_TEST_POOL_FAIL")) {
		host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
		          "cannot reserve: MEMPROF_TEST_POOL_FAIL is set");
		return MEMPROF_POOL_EFAULT;
	}
	if (!(p = calloc(1, sizeof *p)))
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	*out = p;
	return MEMPROF_POOL_OK;
}

static int envfail_alloc(struct memprof_pool *p,
                         const struct memprof_pool_request *req,
                         struct memprof_pool_block *out)
{
	struct memprof_region r;
	int rc = p->host->reserve(p->host->ctx,
	                          req->size_bytes ? req->size_bytes : 1, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	out->addr = r.addr;
	out->size_bytes = r.size_bytes;
	out->handle = r.token;
	return MEMPROF_POOL_OK;
}

static int envfail_free(struct memprof_pool *p,
                        const struct memprof_pool_block *b, uint64_t stream)
{
	const struct memprof_region r = {.addr = b->addr,
	                                 .size_bytes = b->size_bytes,
	                                 .token = b->handle};

	(void)stream;
	return p->host->release(p->host->ctx, &r);
}

static void envfail_destroy(struct memprof_pool *p)
{
	free(p);
}

static const struct memprof_pool_ops envfail_ops = {
        MEMPROF_POOL_OPS_HEADER(
                "envfail",
                "direct, or failing when MEMPROF_TEST_POOL_FAIL is set"),
        .create = envfail_create,
        .alloc = envfail_alloc,
        .free = envfail_free,
        .destroy = envfail_destroy,
};

MEMPROF_POOL_DEFINE(envfail_ops)
