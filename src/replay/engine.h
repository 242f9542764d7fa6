/*
 * replay/engine.h - replays one device of an input against one pool on one
 * backend, and computes every figure itself (DESIGN.md section 4): the pool
 * only decides addresses.  The engine wraps each host service the pool
 * calls, so it counts backend calls, reserved bytes and their peak, bytes
 * copied and set, enforces --capacity, and times each call (measured on
 * backends that measure, modelled by cost_model otherwise).  With verify it
 * checks every block lies in reserved memory and overlaps no live block
 * (and, on real memory, a pattern written at alloc is intact at free).
 * One run at a time per engine; runs of the same input and plugin may go
 * on in several threads at once (each makes its own backend and pool).
 */
#ifndef MP_REPLAY_ENGINE_H
#define MP_REPLAY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"
#include "replay/backend.h"
#include "replay/input.h"
#include "replay/loader.h"
#include "util/error.h"

struct mp_replay_options {
	const struct mp_backend_ops *backend;
	uint64_t capacity_bytes; /* 0: unlimited */
	int verify;
	/* Requests of fewer bytes go straight to the backend (one reserve and
	 * release each, as direct does) and never reach the pool; 0: none. */
	uint64_t pool_threshold_bytes;
	const struct memprof_pool_option *pool_opts; /* only those this pool declares */
	size_t n_pool_opts;
	/* With gpu_set, the GPU the cuda backend uses for this device (cmd/
	 * maps a trace's devices to the visible GPUs); else the device's own
	 * ordinal. */
	int gpu_set, gpu;
	/* Ranks in other processes (replay --mpi), or NULL.  The caller calls
	 * mp_rank_group_done after each mp_replay_run, whatever it returned. */
	struct mp_rank_group *group;
	/* Where pool log lines go (cmd prints them); NULL drops them. */
	void (*log)(void *log_ctx, const char *pool, int level, const char *msg);
	void *log_ctx;
	/* Do not give a pool with seed the trace window's starting segments. */
	int no_seed;
	/* Do not keep the state at the reserved peak (replay/peak_state.h) without
	 * verify: frag_at_peak stays 0; free_at_peak_bytes is still measured. */
	int no_frag;
	/*
	 * The device's lifetimes (mp_replay_input_lifetimes), made once by the
	 * caller for every pool that plans, or NULL: the engine makes its own.
	 * Read only; a pool that sees them all at its own ABI gets them as they
	 * are, else a filtered or packed copy.
	 */
	const struct memprof_pool_lifetime *lifetimes;
};

enum mp_verify_state { MP_VERIFY_OFF = 0, MP_VERIFY_PASSED = 1, MP_VERIFY_FAILED = 2 };

#define MP_REPLAY_MAX_STATS 256

struct mp_replay_stat {
	char name[48];
	double value;
	char unit[8];
};

struct mp_replay_oom {
	int64_t seq; /* the trace event of the alloc that failed */
	uint64_t request_bytes;
	uint64_t live_bytes; /* live (granted) bytes when it failed */
	uint64_t reserved_bytes;
};

struct mp_replay_result {
	char pool[64];
	const char *backend; /* static */
	int32_t device;
	int level;   /* enum mp_replay_level */
	int started; /* the pool was created (a failure before is the pool refusing this setup) */
	uint64_t peak_reserved_bytes;
	int64_t peak_reserved_seq;  /* trace event at which it was first reached */
	uint64_t lower_bound_bytes; /* peak requested bytes */
	uint64_t peak_live_bytes;   /* peak of granted bytes of live blocks */
	uint64_t end_reserved_bytes;
	/* At the reserved peak: reserved minus bytes the pool set aside for live blocks, and 1 -
	 * largest hole / that. */
	uint64_t free_at_peak_bytes;
	double frag_at_peak;
	uint64_t n_allocs, n_frees;
	uint64_t pool_threshold_bytes; /* the option this run had, 0: none */
	uint64_t n_below_threshold;    /* allocations sent straight to the backend */
	uint64_t backend_calls;        /* every service call that reached the backend */
	uint64_t n_calls[16];          /* by enum mp_cost_call */
	uint64_t call_ns[16];          /* their time, measured or modelled, by enum mp_cost_call */
	uint64_t alloc_ns_p50, alloc_ns_p99, alloc_ns_max;
	uint64_t free_ns_p50, free_ns_p99;
	uint64_t total_ns;   /* allocator time: pool host time plus backend time */
	uint64_t host_ns;    /* measured: time inside the pool, less backend calls */
	uint64_t backend_ns; /* backend call time, measured or modelled */
	int time_measured;   /* 1: backend times measured on the device; 0: modelled */
	uint64_t bytes_copied, bytes_set;
	uint64_t n_shared; /* blocks the pool placed inside another live block (block_shares) */
	uint64_t n_ooms;
	struct mp_replay_oom first_oom;
	int verify; /* enum mp_verify_state */
	char verify_msg[512];
	uint64_t replay_ns;     /* wall time of the replay loop itself (for bench) */
	uint64_t replay_cpu_ns; /* the process's CPU time in that loop (for bench) */
	struct mp_replay_stat stats[MP_REPLAY_MAX_STATS]; /* the pool's own figures */
	size_t n_stats;
	/* What the trace itself recorded on this device, the same for every
	 * pool (replay/input.h): its segment-level events, if any. */
	int trace_has_segments;
	uint64_t trace_peak_reserved_bytes;
	uint64_t trace_segments;         /* reserve and map events */
	uint64_t trace_segments_at_peak; /* held when reserved bytes first peaked */
	/* Runs of this pool (replay --repeat), 1 by default: with more, host_ns
	 * (and backend_ns when measured) are the median over the runs, and
	 * these their least and greatest; every other figure is the first
	 * run's.  Set by the caller, not by mp_replay_run (which sets 1). */
	uint32_t n_runs;
	uint64_t host_ns_min, host_ns_max;
	uint64_t backend_ns_min, backend_ns_max;
	/* Segments the pool adopted from the trace window's start (seed, ABI 1.3). */
	uint64_t n_seeded_segments;
};

/*
 * Replay device d of in against pool.  Returns 0 when the replay ran to the
 * end (OOMs and a failed verify are results, not errors: see res), or MP_E*
 * with err set when the pool or backend could not be created or failed.
 */
int mp_replay_run(const struct mp_replay_input *in, const struct mp_replay_device *d,
                  const struct mp_pool_plugin *pool, const struct mp_replay_options *o,
                  struct mp_replay_result *res, struct mp_error *err);

#endif
