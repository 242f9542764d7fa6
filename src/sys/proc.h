/*
 * sys/proc.h - a running process as /proc shows it, for 'memprof watch':
 * whether it is alive, and its pids in nested pid namespaces (NSpid),
 * which NVML may list instead of ours.  Reads /proc only.
 */
#ifndef MP_SYS_PROC_H
#define MP_SYS_PROC_H

#include <stddef.h>

/*
 * Read /proc/PID/status: 1 when the process is alive (not a zombie), 0
 * when it is gone.  When it has an NSpid line, pids[0] stays the pid and
 * its other NSpid values follow (at most max in all), *n_pids their count;
 * without one, pids and *n_pids are left as they are.
 */
int mp_proc_alive(long pid, unsigned *pids, size_t max, size_t *n_pids);

#endif
