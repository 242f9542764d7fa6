/*
 * tests/plugins/broken_null.c - a plugin whose init returns NULL, as one
 * that does not support the host's major would: refused.
 */
#include <memprof/pool.h>

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major)
{
	(void)host_abi_major;
	return NULL;
}
