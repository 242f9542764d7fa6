/*
 * plugins/planned/clock.h - the planner's deadline clock: monotonic wall time
 * in ns (libc, not the host's clock: deadlines must be real time), here so
 * that the search files need no function of plan.c.
 */
#ifndef MEMPROF_PLUGIN_PLANNED_CLOCK_H
#define MEMPROF_PLUGIN_PLANNED_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t planned_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
