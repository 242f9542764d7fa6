/*
 * replay/cuda_nccl.h - NCCL for the cuda backend's collectives, loaded at
 * run time (libnccl.so.2, or MEMPROF_LIBNCCL for the tests' fake) and
 * never linked, declared here with the slice of NCCL's stable C ABI used,
 * so that no nccl.h is needed to build.  Internal to cuda_collective*.c.
 * Only with HAVE_CUDA.
 */
#ifndef MP_REPLAY_CUDA_NCCL_H
#define MP_REPLAY_CUDA_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "replay/rank_group.h"
#include "util/error.h"

typedef struct nccl_comm *ncclComm_t;
typedef int ncclResult_t;
typedef struct {
	char internal[MP_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
#define ncclSuccess    0
#define ncclInProgress 7
#define ncclInt8       0
#define ncclSum        0

/*
 * ncclConfig_t as NCCL 2.14 laid it out: NCCL reads the first `size` bytes
 * and, for a version before 2.17, gives every field after blocking its
 * default, so this prefix stays valid in later NCCLs.
 */
struct mp_nccl_config {
	size_t size;
	unsigned int magic, version;
	int blocking, cga_cluster_size, min_ctas, max_ctas;
	const char *net_name;
};
#define MP_NCCL_CONFIG_MAGIC   0xcafebeefu
#define MP_NCCL_CONFIG_VERSION 21400u /* NCCL_VERSION(2, 14, 0) */

struct mp_nccl_api {
	ncclResult_t (*GetUniqueId)(ncclUniqueId *);
	ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
	ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*CommDestroy)(ncclComm_t);
	ncclResult_t (*AllGather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
	ncclResult_t (*ReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
	ncclResult_t (*GroupStart)(void);
	ncclResult_t (*GroupEnd)(void);
	const char *(*GetErrorString)(ncclResult_t);
	/* Optional (NULL in an NCCL older than 2.14): the non-blocking init. */
	ncclResult_t (*CommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int,
	                                   struct mp_nccl_config *);
	ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t *);
	ncclResult_t (*CommAbort)(ncclComm_t);
	ncclResult_t (*CommFinalize)(ncclComm_t);
	const char *(*GetLastError)(ncclComm_t);
};
extern struct mp_nccl_api mp_nccl;

/*
 * 1 when NCCL is loaded (once per process); 0 with why saying what is
 * missing.  Where from: MEMPROF_LIBNCCL, the nvidia/nccl wheel of the python3
 * on PATH (MEMPROF_PYTHON names another), CUDA_HOME, CUDA_PATH, the build's
 * toolkit, then the soname libnccl.so.2 (util/libfind.h).
 */
int mp_nccl_load(char *why, size_t why_size);
/* The file loaded (a path, or the soname when found by the loader); NULL before. */
const char *mp_nccl_path(void);

/*
 * Describe a failed NCCL call (its result and, where NCCL has one, its last
 * error message) on err; returns MEMPROF_POOL_EFAULT.
 */
int mp_nccl_failed(struct mp_error *err, const char *call, ncclResult_t rc, ncclComm_t comm);

/*
 * Seconds to wait for a peer (communicator init, a collective, finalize)
 * before giving up: MEMPROF_NCCL_TIMEOUT, default 120.
 */
double mp_nccl_timeout_s(void);

/*
 * Poll a non-blocking communicator until it leaves ncclInProgress, at most
 * timeout_s; *state is its last state.  Returns 1 when it left it, 0 on
 * timeout.  A communicator without CommGetAsyncError is never in progress.
 */
int mp_nccl_wait(ncclComm_t comm, double timeout_s, ncclResult_t *state);

/* Seconds since an arbitrary start (CLOCK_MONOTONIC), and a short sleep. */
double mp_nccl_now_s(void);
void mp_nccl_nap(void);

/* The group mode of cuda_collective.h: one rank of the group per process. */
struct mp_cuda_group_coll;
struct mp_cuda_coll_where;
int mp_cuda_group_collective(struct mp_cuda_group_coll **state, const struct mp_cuda_coll_where *w,
                             int kind, uint64_t addr, uint64_t n_bytes, uint64_t *elapsed_ns,
                             struct mp_error *err);
void mp_cuda_group_collective_free(struct mp_cuda_group_coll *state);

#endif
