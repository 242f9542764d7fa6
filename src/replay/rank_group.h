/*
 * replay/rank_group.h - the ranks of one replay spread over several
 * processes ('memprof replay --mpi'): what the engine and the backends need
 * from the launcher that coordinates the processes (cmd/replay_mpi.c, over
 * MPI), without replay/ including MPI.
 *
 * Collectives across processes only work when every rank asks for the same
 * one at the same time, and the ranks' traces need not agree (one rank has a
 * recurring buffer more, or of another size).  So before each collective the
 * ranks agree: each says what it wants (or that its replay of this pool is
 * done); the collective runs only when all want the same, and otherwise
 * collectives stop for this pool on every rank at once, never hanging one.
 * Every rank calls mp_rank_group_done after each pool's replay, whatever
 * happened in it, so each agreement round is matched on every rank.
 * Not thread-safe.
 */
#ifndef MP_REPLAY_RANK_GROUP_H
#define MP_REPLAY_RANK_GROUP_H

#include <stdint.h>

#define MP_NCCL_UNIQUE_ID_BYTES 128 /* sizeof(ncclUniqueId), NCCL's stable ABI */

struct mp_rank_group {
	int rank, size;  /* this process's rank, and how many there are */
	int local_rank;  /* among the ranks on this host: picks the GPU */
	/*
	 * On every rank at once: v[i] becomes the largest v[i] over the ranks.
	 * Returns 0, or -1 when the launcher failed (the replay then fails).
	 */
	int (*allreduce_max)(void *ctx, int64_t *v, int n);
	/*
	 * Host backend: an in-place collective (enum memprof_pool_collective,
	 * int8 shards, sum) over the ranks' host buffers of n_bytes each, rank
	 * r's shard at r * n_bytes / size.  Returns 0 or -1.  NULL: none.
	 */
	int (*host_collective)(void *ctx, int kind, void *buf, uint64_t n_bytes);
	void *ctx;
	/* Cuda backend: NCCL's unique id, made by rank 0 and sent to all. */
	unsigned char nccl_id[MP_NCCL_UNIQUE_ID_BYTES];
	int have_nccl_id;
	/* Private: collectives stopped for the pool being replayed. */
	int stopped;
	uint64_t n_agreed, n_refused; /* rounds of this pool (for its notes) */
};

/*
 * Before a collective of kind over n_bytes: 1 when every rank asked for
 * the same now (run it), 0 when collectives stop for this pool (some rank
 * asked for another, or had finished), -1 when the launcher failed.
 */
int mp_rank_group_agree(struct mp_rank_group *g, int kind, uint64_t n_bytes);

/*
 * After a pool's replay, on every rank: takes part in the rounds of the
 * ranks still replaying until all are done, then makes the group ready for
 * the next pool.  Returns 0 or -1 when the launcher failed.
 */
int mp_rank_group_done(struct mp_rank_group *g);

#endif
