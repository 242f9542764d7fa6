/*
 * cmd/replay_mpi.h - the MPI side of 'memprof replay --mpi' (replay_mpi.c,
 * the only file that includes mpi.h): starting and stopping MPI, the
 * rank_group callbacks (allreduce, host collectives) on MPI_COMM_WORLD, the
 * NCCL id rank 0 makes and sends to all, and the byte gathers
 * cmd/replay_job.c uses to collect every rank's results on rank 0.
 * Without MPI (configure found none) mp_mpi_start says so.  Not
 * thread-safe: one MPI job per process.
 */
#ifndef MP_CMD_REPLAY_MPI_H
#define MP_CMD_REPLAY_MPI_H

#include <stddef.h>

#include "replay/rank_group.h"
#include "util/error.h"

/* 1 when this memprof was built with MPI. */
int mp_mpi_built(void);

/*
 * MPI_Init_thread, then g filled in: rank, size, local_rank (among the
 * ranks sharing this host), allreduce_max and host_collective.  0, or
 * MP_EINVAL (built without MPI) / MP_EIO with err set.
 */
int mp_mpi_start(struct mp_rank_group *g, struct mp_error *err);

/* MPI_Finalize (after mp_mpi_start succeeded). */
void mp_mpi_stop(void);

/*
 * Rank 0 makes an NCCL unique id (when make is 1: the cuda backend) and
 * sends it to all; on every rank g->have_nccl_id then says whether one was
 * made, and *why (room why_size) why not when it was asked for and failed.
 * Returns 0, or -1 when MPI failed.
 */
int mp_mpi_share_nccl_id(struct mp_rank_group *g, int make, char *why, size_t why_size);

/*
 * Every rank's n bytes of mine, to rank 0: there *all (malloc'd, the ranks'
 * bytes back to back in rank order) and lens[r] (room for g->size), NULL and
 * untouched elsewhere.  0 or -1 (out of memory or MPI failed).
 */
int mp_mpi_gather(const struct mp_rank_group *g, const void *mine, size_t n, unsigned char **all,
                  size_t *lens);

#endif
