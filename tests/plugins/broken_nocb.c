/*
 * tests/plugins/broken_nocb.c - a plugin without two required callbacks
 * (free and destroy): refused, naming both.
 */
#include "stub_pool.h"

static const struct memprof_pool_ops nocb_ops = {
        MEMPROF_POOL_OPS_HEADER("nocb", "lacks free and destroy"),
        .create = stub_create,
        .alloc = stub_alloc,
};

MEMPROF_POOL_DEFINE(nocb_ops)
