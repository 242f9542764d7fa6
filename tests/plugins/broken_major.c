/*
 * tests/plugins/broken_major.c - a plugin built for the next major of the
 * pool ABI: the loader must refuse it, naming both versions and the path.
 */
#include "stub_pool.h"

static const struct memprof_pool_ops major_ops = {
        .struct_size = sizeof(struct memprof_pool_ops),
        .abi_major = MEMPROF_POOL_ABI_MAJOR + 1,
        .abi_minor = 0,
        .name = "major",
        .description = "built for the next pool ABI major",
        STUB_CALLBACKS,
};

MEMPROF_POOL_DEFINE(major_ops)
