/*
 * replay/cuda_collective.h - in-place NCCL all-gather and reduce-scatter
 * for the cuda backend (the sharded pool proves its shard views are valid
 * collective buffers with them): NCCL is loaded at run time
 * (libnccl.so.2, or MEMPROF_LIBNCCL), one rank per visible GPU.
 */
#ifndef MP_REPLAY_CUDA_COLLECTIVE_H
#define MP_REPLAY_CUDA_COLLECTIVE_H

#include <stdint.h>

#include <cuda.h>

#include "util/error.h"

struct mp_cuda_coll; /* communicators and the other ranks' scratch, kept between calls */

/*
 * Run kind (enum memprof_pool_collective) in place over world_size shards
 * of [addr, addr + n_bytes) on dev (rank 0: its context ctx, current, and
 * stream s0), with ranks 1.. on
 * the other visible GPUs (at most world_size ranks in all; they work on a
 * scratch buffer of their own).  Waits; *elapsed_ns is rank 0's device
 * time.  MEMPROF_POOL_ENOTSUP when NCCL cannot be loaded, EFAULT (err set)
 * when a call fails.  *state is created on first use.
 */
int mp_cuda_collective(struct mp_cuda_coll **state, CUdevice dev, CUcontext ctx, CUstream s0,
                       int kind, uint64_t addr, uint64_t n_bytes, uint32_t world_size,
                       uint64_t *elapsed_ns, struct mp_error *err);
/* Destroy the communicators and free the scratch buffers. */
void mp_cuda_collective_free(struct mp_cuda_coll *state);

#endif
