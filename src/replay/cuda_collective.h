/*
 * replay/cuda_collective.h - in-place NCCL all-gather and reduce-scatter
 * for the cuda backend (the sharded pool proves its shard views are valid
 * collective buffers with them): NCCL is loaded at run time
 * (libnccl.so.2, or MEMPROF_LIBNCCL).  In one process, one rank per
 * visible GPU (ncclCommInitAll); under 'replay --mpi', one rank per process
 * of the group (ncclCommInitRank with the id rank 0 made:
 * cuda_nccl_id.h).
 */
#ifndef MP_REPLAY_CUDA_COLLECTIVE_H
#define MP_REPLAY_CUDA_COLLECTIVE_H

#include <stdint.h>

#include <cuda.h>

#include "replay/cuda_nccl_id.h"
#include "replay/rank_group.h"
#include "util/error.h"

struct mp_cuda_coll; /* communicators and the other ranks' scratch, kept between calls */

/* Where the calling rank runs: its device, context (current) and stream. */
struct mp_cuda_coll_where {
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	const struct mp_rank_group *group; /* ranks in other processes, or NULL */
	int local_rc; /* with a group: this rank failed already (err set); it still tells the others
	               */
};

/*
 * Run kind (enum memprof_pool_collective) in place over [addr, addr +
 * n_bytes) and wait; *elapsed_ns is this rank's device time (events on
 * w->stream).  *state is created on first use.
 *
 * Without a group: world_size shards, rank 0 on w->dev with the buffer,
 * ranks 1.. on the other visible GPUs (at most world_size ranks in all),
 * each on a scratch buffer of its own.
 *
 * With a group: group->size shards of n_bytes / group->size, rank
 * group->rank's at rank * that, every rank on its own real buffer (no
 * scratch); world_size is not used.  Every rank of the group must make the
 * same call (the engine agreed on it first): the first one checks, in one
 * group round, that every rank has NCCL and a GPU of its own and no rank
 * failed already (w->local_rc), and all ranks get the same verdict.
 *
 * MEMPROF_POOL_ENOTSUP when NCCL cannot be loaded (with a group: on some
 * rank, or no id came from rank 0), EINVAL (err set) when n_bytes does not
 * split into the group's shards, EFAULT (err set) when a call fails, two
 * ranks share a GPU, or a peer does not answer within MEMPROF_NCCL_TIMEOUT
 * seconds.
 */
int mp_cuda_collective(struct mp_cuda_coll **state, const struct mp_cuda_coll_where *w, int kind,
                       uint64_t addr, uint64_t n_bytes, uint32_t world_size, uint64_t *elapsed_ns,
                       struct mp_error *err);
/* Destroy the communicators and free the scratch buffers. */
void mp_cuda_collective_free(struct mp_cuda_coll *state);

#endif
