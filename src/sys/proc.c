/*
 * sys/proc.c - whether a process is alive and its NSpid values, from
 * /proc/PID/status (sys/proc.h).  Never prints.
 */
#include "sys/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NSpid values of line (after "NSpid:") other than pid, after pids[0]. */
static void nspids(const char *p, long pid, unsigned *pids, size_t max, size_t *n_pids)
{
	char *end;

	*n_pids = 1;
	while (*n_pids < max) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (v != (unsigned long)pid)
			pids[(*n_pids)++] = (unsigned)v;
		p = end;
	}
}

int mp_proc_alive(long pid, unsigned *pids, size_t max, size_t *n_pids)
{
	char path[64], line[256];
	FILE *f;
	int alive = 1;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char state;

		if (sscanf(line, "State: %c", &state) == 1 && (state == 'Z' || state == 'X'))
			alive = 0;
		if (strncmp(line, "NSpid:", 6) == 0)
			nspids(line + 6, pid, pids, max, n_pids);
	}
	fclose(f);
	return alive;
}
