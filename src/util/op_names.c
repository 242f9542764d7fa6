/*
 * util/op_names.c - the table of operation names.  Must match enum
 * memprof_op and memprof-trace(5).
 */
#include "util/op_names.h"
#include "memprof/trace.h"

#include <string.h>

static const char *const names[MEMPROF_OP_MAX + 1] = {
        [MEMPROF_OP_ALLOC] = "alloc",
        [MEMPROF_OP_FREE] = "free",
        [MEMPROF_OP_PREEXISTING] = "preexisting",
        [MEMPROF_OP_RESERVE] = "reserve",
        [MEMPROF_OP_RELEASE] = "release",
        [MEMPROF_OP_MAP] = "map",
        [MEMPROF_OP_UNMAP] = "unmap",
        [MEMPROF_OP_OOM] = "oom",
        [MEMPROF_OP_PHASE_BEGIN] = "phase_begin",
        [MEMPROF_OP_PHASE_END] = "phase_end",
        [MEMPROF_OP_FREE_REQUESTED] = "free_requested",
};

const char *mp_op_name(int op)
{
	return op >= MEMPROF_OP_MIN && op <= MEMPROF_OP_MAX ? names[op] : NULL;
}

int mp_op_from_name(const char *name, size_t len)
{
	int op;

	for (op = MEMPROF_OP_MIN; op <= MEMPROF_OP_MAX; op++)
		if (strlen(names[op]) == len && memcmp(names[op], name, len) == 0)
			return op;
	return 0;
}

const char *mp_op_name_list(void)
{
	return "alloc, free, preexisting, reserve, release, map, unmap, oom, phase_begin, "
	       "phase_end, free_requested";
}
