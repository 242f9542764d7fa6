/*
 * tests/plugins/stub_pool.h - callbacks for the plugins broken on purpose
 * that test the loader's refusals (test_loader.c).  The loader refuses those
 * plugins before it calls anything, so these only have to exist.
 */
#ifndef MEMPROF_TESTS_STUB_POOL_H
#define MEMPROF_TESTS_STUB_POOL_H

#include <memprof/pool.h>

static inline int stub_create(const struct memprof_pool_host *host,
                              const struct memprof_pool_option *opts,
                              size_t n_opts, struct memprof_pool **out)
{
	(void)host, (void)opts, (void)n_opts, (void)out;
	return MEMPROF_POOL_EINVAL;
}

static inline int stub_alloc(struct memprof_pool *p,
                             const struct memprof_pool_request *req,
                             struct memprof_pool_block *out)
{
	(void)p, (void)req, (void)out;
	return MEMPROF_POOL_ENOMEM;
}

static inline int stub_free(struct memprof_pool *p,
                            const struct memprof_pool_block *b, uint64_t stream)
{
	(void)p, (void)b, (void)stream;
	return MEMPROF_POOL_EINVAL;
}

static inline void stub_destroy(struct memprof_pool *p)
{
	(void)p;
}

#define STUB_CALLBACKS                                                         \
	.create = stub_create, .alloc = stub_alloc, .free = stub_free,         \
	.destroy = stub_destroy

#endif
