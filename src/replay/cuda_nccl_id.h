/*
 * replay/cuda_nccl_id.h - the NCCL unique id that rank 0 of 'replay --mpi'
 * makes and the launcher (cmd/replay_mpi.c) sends to every rank, without
 * cuda.h or nccl.h: usable from cmd/ whatever memprof was built with.
 * Defined in cuda_collective.c.
 */
#ifndef MP_REPLAY_CUDA_NCCL_ID_H
#define MP_REPLAY_CUDA_NCCL_ID_H

#include "replay/rank_group.h"
#include "util/error.h"

/*
 * A new NCCL unique id (ncclGetUniqueId, NCCL loaded at run time:
 * libnccl.so.2, or MEMPROF_LIBNCCL) into id, for group->nccl_id.  Needs no
 * GPU.  0, or MP_EIO with err saying why (memprof built without CUDA, NCCL
 * not found, or NCCL's own error); the caller then leaves
 * group->have_nccl_id 0 on every rank, and the cuda backend runs the
 * replay without collectives (ENOTSUP: the pool notes it) instead of
 * waiting for a communicator that cannot be made.
 */
int mp_cuda_nccl_unique_id(unsigned char id[MP_NCCL_UNIQUE_ID_BYTES], struct mp_error *err);

#endif
