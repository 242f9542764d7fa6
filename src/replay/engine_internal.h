/*
 * replay/engine_internal.h - the engine's state shared by engine.c (the
 * replay loop) and engine_host.c (the services a pool calls).  Private to
 * src/replay/engine*.c.
 */
#ifndef MP_REPLAY_ENGINE_INTERNAL_H
#define MP_REPLAY_ENGINE_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "analysis/extents.h"
#include "memprof/pool.h"
#include "replay/cost_model.h"
#include "replay/driver_model.h"
#include "replay/engine.h"
#include "replay/latency.h"
#include "replay/live_blocks.h"
#include "replay/peak_state.h"
#include "util/slot_pool.h"

enum region_kind { REGION_RESERVE = 1, REGION_VA = 2, REGION_ASYNC = 3 };

/* A backend range the pool holds, named to the pool by its slot. */
struct region {
	struct memprof_region be; /* as the backend gave it */
	int kind;                 /* enum region_kind; 0: slot free */
	uint64_t mapped_bytes;    /* REGION_VA */
};

struct engine {
	const struct mp_replay_options *o;
	const struct mp_backend_ops *be_ops;
	struct mp_backend *be;
	struct memprof_pool_host host;
	const char *pool_name;
	struct mp_error *err;
	struct mp_replay_result *res;

	struct mp_slot_pool regions;
	struct mp_extents *extents;
	struct mp_live_blocks live; /* the blocks of this replay, by allocation index */
	/* Without the address map: the state at the reserved peak, for its fragmentation. */
	struct mp_peak_state *peak;

	uint64_t reserved_bytes;       /* reserve: as the driver reserves it (driver_model.h) */
	struct mp_driver_model driver; /* the small requests' shared pages */
	uint64_t set_aside_bytes;      /* sizes the pool gave for held blocks */
	uint64_t snap_peak;            /* the reserved peak the fragmentation snapshot is of */
	/* Time of backend calls inside the current pool call. */
	uint64_t call_backend_wall_ns, call_backend_ns;
	int64_t cur_seq;     /* the trace event being replayed */
	int fault;           /* a service failed outside the pool's control */
	int cleanup;         /* releasing what the pool left: not counted */
	int with_extents;    /* keep the address map (--verify) */
	int64_t cur_op;      /* position in ops[]; -1 before the first */
	int64_t allocating;  /* the block whose alloc is in progress, or -1 */
	int64_t prelude_end; /* with a seed: ops before this only claim seeded blocks */
	struct mp_latency alloc_lat, free_lat;
};

static inline uint64_t mp_engine_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The process's CPU time (every thread, user and system), read twice a loop. */
static inline uint64_t mp_engine_cpu_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Fill e->host with the wrapped services; 0 or MP_E*. */
int mp_engine_host_init(struct engine *e);
/* Release every region the pool left behind; returns how many there were. */
size_t mp_engine_host_release_all(struct engine *e);
void mp_engine_host_fini(struct engine *e);

#endif
