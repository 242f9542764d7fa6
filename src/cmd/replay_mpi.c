/*
 * cmd/replay_mpi.c - MPI for 'memprof replay --mpi', and the only file that
 * includes mpi.h: MPI_Init_thread / MPI_Finalize, the rank_group callbacks
 * over MPI_COMM_WORLD (allreduce max of int64, in-place all-gather and
 * reduce-scatter of int8 with sum), the NCCL id sent from rank 0, and the
 * gathers of cmd/replay_job.c.  MPI errors keep MPI's default handler
 * (the job is aborted), so a failed call never leaves a rank waiting.
 * Built without MPI, every entry point says so.
 */
#include "cmd/replay_mpi.h"
#include "memprof/pool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include("replay/cuda_nccl_id.h")
#include "replay/cuda_nccl_id.h"
#define HAVE_NCCL_ID 1
#endif

#ifndef HAVE_MPI

int mp_mpi_built(void)
{
	return 0;
}

int mp_mpi_start(struct mp_rank_group *g, struct mp_error *err)
{
	memset(g, 0, sizeof *g);
	return mp_err(err, MP_EINVAL,
	              "this memprof was built without MPI, so it cannot replay with --mpi: "
	              "install an MPI (Debian: apt-get install libopenmpi-dev openmpi-bin), "
	              "then rebuild (./configure finds it: its summary then says 'MPI (replay "
	              "--mpi): yes')");
}

void mp_mpi_stop(void)
{
}

int mp_mpi_share_nccl_id(struct mp_rank_group *g, int make, char *why, size_t why_size)
{
	(void)g, (void)make, (void)why, (void)why_size;
	return -1;
}

int mp_mpi_gather(const struct mp_rank_group *g, const void *mine, size_t n, unsigned char **all,
                  size_t *lens)
{
	(void)g, (void)mine, (void)n, (void)all, (void)lens;
	return -1;
}

#else /* HAVE_MPI */

#include <limits.h>
#include <mpi.h>

int mp_mpi_built(void)
{
	return 1;
}

static int allreduce_max(void *ctx, int64_t *v, int n)
{
	(void)ctx;
	return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) ==
	                       MPI_SUCCESS
	               ? 0
	               : -1;
}

/* In place over size shards of n_bytes / size; rank r's shard at r * shard. */
static int host_collective(void *ctx, int kind, void *buf, uint64_t n_bytes)
{
	int size, rank;
	uint64_t shard;
	unsigned char *p = buf;

	(void)ctx;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	shard = n_bytes / (uint64_t)size;
	if (n_bytes % (uint64_t)size || shard > INT_MAX)
		return -1;
	if (kind == MEMPROF_POOL_ALL_GATHER)
		return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (int)shard,
		                     MPI_SIGNED_CHAR, MPI_COMM_WORLD) == MPI_SUCCESS
		               ? 0
		               : -1;
	if (kind != MEMPROF_POOL_REDUCE_SCATTER)
		return -1;
	if (MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)shard, MPI_SIGNED_CHAR, MPI_SUM,
	                             MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	/* MPI leaves the reduced shard at the front; NCCL's in-place layout has it at rank's. */
	if (rank > 0)
		memmove(p + (uint64_t)rank * shard, p, (size_t)shard);
	return 0;
}

static int local_rank_of(int rank, int *local)
{
	MPI_Comm node;

	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) !=
	    MPI_SUCCESS)
		return -1;
	MPI_Comm_rank(node, local);
	MPI_Comm_free(&node);
	return 0;
}

int mp_mpi_start(struct mp_rank_group *g, struct mp_error *err)
{
	int provided, inited = 0;

	memset(g, 0, sizeof *g);
	MPI_Initialized(&inited);
	if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return mp_err(err, MP_EIO, "MPI_Init_thread failed: run under mpirun");
	MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g->size);
	if (local_rank_of(g->rank, &g->local_rank) < 0) {
		MPI_Finalize();
		return mp_err(err, MP_EIO, "MPI_Comm_split_type failed");
	}
	g->allreduce_max = allreduce_max;
	g->host_collective = host_collective;
	return 0;
}

void mp_mpi_stop(void)
{
	int fin = 0;

	MPI_Finalized(&fin);
	if (!fin)
		MPI_Finalize();
}

int mp_mpi_share_nccl_id(struct mp_rank_group *g, int make, char *why, size_t why_size)
{
	/* byte 0: 1 when made; then the id, then why not (rank 0's words) */
	unsigned char msg[1 + MP_NCCL_UNIQUE_ID_BYTES + 256] = {0};
	struct mp_error err = {0};

	if (g->rank == 0 && make) {
#ifdef HAVE_NCCL_ID
		msg[0] = mp_cuda_nccl_unique_id(msg + 1, &err) == 0;
#else
		mp_err(&err, MP_EIO, "this memprof cannot make an NCCL unique id");
#endif
		if (!msg[0])
			snprintf((char *)msg + 1 + MP_NCCL_UNIQUE_ID_BYTES, 256, "%.255s", err.msg);
	}
	if (MPI_Bcast(msg, (int)sizeof msg, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		return -1;
	g->have_nccl_id = msg[0];
	memcpy(g->nccl_id, msg + 1, MP_NCCL_UNIQUE_ID_BYTES);
	if (why && why_size)
		snprintf(why, why_size, "%.255s", (const char *)msg + 1 + MP_NCCL_UNIQUE_ID_BYTES);
	return 0;
}

/* Rank 0: the receive buffer and displacements for counts; ok says all went well. */
static unsigned char *receive_room(const struct mp_rank_group *g, const int *counts, int *displs,
                                   int *ok)
{
	int64_t total = 0;

	for (int r = 0; r < g->size; r++) {
		displs[r] = (int)total;
		total += counts[r] < 0 ? 0 : counts[r];
		*ok &= counts[r] >= 0 && total <= INT_MAX;
	}
	return *ok ? malloc(total ? (size_t)total : 1) : NULL;
}

int mp_mpi_gather(const struct mp_rank_group *g, const void *mine, size_t n, unsigned char **all,
                  size_t *lens)
{
	int count = n > INT_MAX ? -1 : (int)n, ok = 1;
	int *counts = NULL, *displs = NULL;
	unsigned char *buf = NULL;

	if (g->rank == 0) {
		counts = calloc((size_t)g->size, sizeof *counts);
		displs = calloc((size_t)g->size, sizeof *displs);
		ok = counts && displs;
	}
	if (MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
		ok = 0;
	if (g->rank == 0 && ok && !(buf = receive_room(g, counts, displs, &ok)))
		ok = 0;
	/* Every rank learns whether rank 0 can receive before anyone sends. */
	if (MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS || !ok ||
	    MPI_Gatherv(mine, count, MPI_UNSIGNED_CHAR, buf, counts, displs, MPI_UNSIGNED_CHAR, 0,
	                MPI_COMM_WORLD) != MPI_SUCCESS)
		ok = 0;
	if (g->rank == 0 && ok) {
		for (int r = 0; r < g->size; r++)
			lens[r] = (size_t)counts[r];
		*all = buf;
		buf = NULL;
	}
	free(buf);
	free(counts);
	free(displs);
	return ok ? 0 : -1;
}

#endif /* HAVE_MPI */
