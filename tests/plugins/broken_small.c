/*
 * tests/plugins/broken_small.c - a plugin whose ops struct is smaller than
 * the ops of pool ABI 1.0, which every 1.x plugin has: refused.
 */
#include "stub_pool.h"

static const struct memprof_pool_ops small_ops = {
        .struct_size = 16,
        .abi_major = MEMPROF_POOL_ABI_MAJOR,
        .abi_minor = MEMPROF_POOL_ABI_MINOR,
        .name = "small",
        .description = "a struct size below pool ABI 1.0's",
        STUB_CALLBACKS,
};

MEMPROF_POOL_DEFINE(small_ops)
