/*
 * replay/backend.h - the mechanism under a pool: sim, host or cuda memory.
 *
 * A backend hands out memory and does device work; it keeps no figures and
 * enforces no capacity (the engine does both, around every call).  Each
 * backend is one file (backend_sim.c, backend_host.c, backend_cuda.c) that
 * fills in a struct mp_backend_ops.  Calls return 0 or a MEMPROF_POOL_*
 * status; on failure other than ENOMEM/ENOTSUP they set the error on the
 * mp_error given at open.  Not thread-safe.
 */
#ifndef MP_REPLAY_BACKEND_H
#define MP_REPLAY_BACKEND_H

#include <stdint.h>

#include "memprof/pool.h"
#include "replay/rank_group.h"
#include "util/error.h"

struct mp_backend;

struct mp_backend_options {
	int device;           /* cuda: the device ordinal to use */
	struct mp_error *err; /* where failures are described; outlives the backend */
	/* Ranks in other processes (replay --mpi), or NULL: collectives then
	 * span them (cuda: NCCL with group->nccl_id; host: group->host_collective). */
	const struct mp_rank_group *group;
};

struct mp_backend_ops {
	const char *name;           /* "sim", "host", "cuda" */
	int measures_time;          /* 1: device times come from the backend (cuda events) */
	int instant;                /* 1: calls do no real work (sim): the engine skips timing them */
	uint64_t granularity_bytes; /* map/unmap chunk size */
	/* Make a backend; on failure *out is NULL and opts->err says why (MP_E*). */
	int (*open)(const struct mp_backend_options *opts, struct mp_backend **out);
	void (*close)(struct mp_backend *b);
	int (*reserve)(struct mp_backend *b, uint64_t size_bytes, struct memprof_region *out);
	int (*release)(struct mp_backend *b, const struct memprof_region *r);
	int (*memset)(struct mp_backend *b, uint64_t addr, int value, uint64_t n_bytes,
	              uint64_t stream);
	int (*copy)(struct mp_backend *b, uint64_t dst, uint64_t src, uint64_t n_bytes,
	            uint64_t stream);
	int (*va_reserve)(struct mp_backend *b, uint64_t size_bytes, struct memprof_region *out);
	int (*va_release)(struct mp_backend *b, const struct memprof_region *va);
	int (*map)(struct mp_backend *b, const struct memprof_region *va, uint64_t offset,
	           uint64_t n_bytes);
	int (*unmap)(struct mp_backend *b, const struct memprof_region *va, uint64_t offset,
	             uint64_t n_bytes);
	/* NULL when the backend has no stream-ordered allocator (sim, host). */
	int (*alloc_async)(struct mp_backend *b, uint64_t size_bytes, uint64_t stream,
	                   struct memprof_region *out);
	int (*free_async)(struct mp_backend *b, const struct memprof_region *r, uint64_t stream);
	int (*sync)(struct mp_backend *b, uint64_t stream);
	/*
	 * --verify on real memory: write a pattern derived from tag over a block,
	 * and check it is intact (1 intact, 0 overwritten, <0 error).  NULL on sim.
	 * Large blocks may be sampled; memprof-replay(1) says how.
	 */
	int (*fill_pattern)(struct mp_backend *b, uint64_t addr, uint64_t n_bytes, uint64_t tag);
	int (*check_pattern)(struct mp_backend *b, uint64_t addr, uint64_t n_bytes, uint64_t tag);
	/*
	 * Measured device time: start a timed span before a backend call and end
	 * it after; returns the elapsed ns (cuda events).  NULL when !measures_time.
	 */
	int (*time_begin)(struct mp_backend *b);
	int (*time_end)(struct mp_backend *b, uint64_t *elapsed_ns);
	/* Bytes the driver's pool holds for alloc_async (cudaMemPoolAttrReservedMemCurrent). */
	int (*async_reserved)(struct mp_backend *b, uint64_t *bytes);
	/*
	 * Optional: an in-place collective (enum memprof_pool_collective) over
	 * world_size shards of [addr, addr + n_bytes): with a group, one rank
	 * per process of the group (the engine has made the ranks agree first);
	 * without, one rank per visible GPU.  Waits for it and gives its device
	 * time.  NULL: ENOTSUP.
	 */
	int (*collective)(struct mp_backend *b, int kind, uint64_t addr, uint64_t n_bytes,
	                  uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns);
};

extern const struct mp_backend_ops mp_backend_sim;
extern const struct mp_backend_ops mp_backend_host;
extern const struct mp_backend_ops mp_backend_cuda;

/* The backend called name, or NULL. */
const struct mp_backend_ops *mp_backend_find(const char *name);

/*
 * Whether a CUDA device is usable here (driver loads, a device is present).
 * On 0, why says what is missing ("no NVIDIA driver found", ...).
 */
int mp_backend_cuda_usable(char *why, size_t why_size);

#endif
