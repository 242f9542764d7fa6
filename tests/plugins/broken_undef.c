/*
 * tests/plugins/broken_undef.c - a plugin calling a function nothing
 * provides, as one calling memprof's internals would: dlopen's RTLD_NOW
 * refuses it at load time, and the loader says what a plugin may use.
 */
#include "stub_pool.h"

int memprof_no_such_service(void);

static int undef_create(const struct memprof_pool_host *host,
                        const struct memprof_pool_option *opts, size_t n_opts,
                        struct memprof_pool **out)
{
	(void)host, (void)opts, (void)n_opts, (void)out;
	return memprof_no_such_service();
}

static const struct memprof_pool_ops undef_ops = {
        MEMPROF_POOL_OPS_HEADER("undef", "calls a function nothing provides"),
        .create = undef_create,
        .alloc = stub_alloc,
        .free = stub_free,
        .destroy = stub_destroy,
};

MEMPROF_POOL_DEFINE(undef_ops)
