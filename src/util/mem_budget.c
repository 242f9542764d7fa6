/*
 * util/mem_budget.c - the memory budget of a reader of untrusted input:
 * MEMPROF_MAX_MEMORY, else the smallest of 80% of physical memory, 80% of
 * the cgroup's memory.max and 90% of the memory available now (plus what
 * the process holds); and the process's resident bytes.
 */
#include "util/mem_budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "123", "64M", "2G": bytes; 0 when malformed or 0. */
static uint64_t parse_bytes(const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return 0;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return 0;
	return (uint64_t)v << shift;
}

/* memory.max of this process's cgroup (v2): bytes, 0 when none or unknown. */
static uint64_t cgroup_max(void)
{
	char line[4096], path[4200];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) { /* v2: "0::/the/path" */
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", line + 3);
			found = 1;
			break;
		}
	fclose(f);
	if (!found || !(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%llu", &v) != 1) /* "max": no limit */
		v = 0;
	fclose(f);
	return v;
}

/* MemAvailable of /proc/meminfo: bytes, 0 when unknown. */
static uint64_t available(void)
{
	char line[256];
	unsigned long long kib = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib << 10;
}

uint64_t mp_mem_budget(const char **why)
{
	const char *set = getenv("MEMPROF_MAX_MEMORY"), *unused;
	uint64_t v = set && *set ? parse_bytes(set) : 0, cg, avail;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (!why)
		why = &unused;
	*why = "MEMPROF_MAX_MEMORY";
	if (v)
		return v;
	v = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 5 * 4 : 0;
	*why = "80% of this machine's memory";
	cg = cgroup_max() / 5 * 4;
	if (cg && (!v || cg < v)) {
		v = cg;
		*why = "80% of its cgroup's memory.max";
	}
	avail = available();
	if (avail) {
		avail = avail / 10 * 9 + mp_mem_resident();
		if (!v || avail < v) {
			v = avail;
			*why = "90% of the memory available when it started, and what it held then";
		}
	}
	return v;
}

uint64_t mp_mem_resident(void)
{
	unsigned long long size = 0, resident = 0;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}
