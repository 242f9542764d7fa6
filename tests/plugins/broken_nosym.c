/*
 * tests/plugins/broken_nosym.c - a shared object without memprof_pool_init
 * (its init is misspelt): not a memprof pool plugin.
 */
#include "stub_pool.h"

static const struct memprof_pool_ops nosym_ops = {
        MEMPROF_POOL_OPS_HEADER("nosym", "the init symbol is misspelt"),
        STUB_CALLBACKS,
};

const struct memprof_pool_ops *memprof_pool_inti(uint16_t host_abi_major);

const struct memprof_pool_ops *memprof_pool_inti(uint16_t host_abi_major)
{
	(void)host_abi_major;
	return &nosym_ops;
}
