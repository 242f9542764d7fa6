/*
 * tests/plugins/broken_oversize.c - a plugin whose ops struct is larger than
 * the host's while its minor is the host's own: a corrupt header, refused.
 */
#include "stub_pool.h"

struct oversize_ops {
	struct memprof_pool_ops ops;
	uint64_t tail[2];
};

static const struct oversize_ops oversize = {
        .ops = {.struct_size = sizeof(struct oversize_ops),
                .abi_major = MEMPROF_POOL_ABI_MAJOR,
                .abi_minor = MEMPROF_POOL_ABI_MINOR,
                .name = "oversize",
                .description = "a larger struct with the host's own minor",
                STUB_CALLBACKS},
        .tail = {1, 2},
};

MEMPROF_POOL_DEFINE(oversize.ops)
