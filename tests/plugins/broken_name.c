/*
 * tests/plugins/broken_name.c - a plugin whose pool name could not be given
 * as --pool=NAME (upper case, a space): refused.
 */
#include "stub_pool.h"

static const struct memprof_pool_ops name_ops = {
        MEMPROF_POOL_OPS_HEADER("Bad Name", "an invalid pool name"),
        STUB_CALLBACKS,
};

MEMPROF_POOL_DEFINE(name_ops)
