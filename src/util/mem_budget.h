/*
 * util/mem_budget.h - how much memory this process may take before a reader
 * of untrusted input stops with an error instead of being killed for want
 * of memory, and how much it holds now.  For the pickle machine
 * (import/pickle.c), whose values outside the streamed trace entries are
 * held whole: a crafted pickle of a few GiB can ask for tens of GiB.
 */
#ifndef MP_UTIL_MEM_BUDGET_H
#define MP_UTIL_MEM_BUDGET_H

#include <stdint.h>

/*
 * The budget in bytes: MEMPROF_MAX_MEMORY when set (bytes, or with a K, M
 * or G suffix: powers of 1024), else the smallest of 80% of the machine's
 * physical memory, 80% of the memory.max of this process's cgroup (v2)
 * where one is set, and 90% of the memory available now (MemAvailable)
 * plus what the process holds already: the OOM killer acts on the last.  0 when none can be known (no limit then); a malformed
 * MEMPROF_MAX_MEMORY is taken as unset.  *why (when why is not NULL) says
 * which, for messages.
 */
uint64_t mp_mem_budget(const char **why);

/* The bytes resident in this process now (/proc/self/statm); 0 when unknown. */
uint64_t mp_mem_resident(void);

#endif
