/*
 * cmd/replay_job.h - the ranks of 'memprof replay --mpi' as one job, for
 * cmd/replay.c: who may speak (rank 0 prints; the others keep their
 * stderr, and rank 0 shows it, each line prefixed "rank N: ", only when
 * they failed themselves), one exit status for every rank, the check that
 * every rank was given the same replay, and the gather of every rank's
 * results and notes to rank 0 (packed by replay/pack.c).  MPI itself is in
 * cmd/replay_mpi.c.  Not thread-safe.
 */
#ifndef MP_CMD_REPLAY_JOB_H
#define MP_CMD_REPLAY_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "replay/engine.h"
#include "replay/rank_group.h"

struct mp_replay_job {
	struct mp_rank_group g;
	int started;
	int own_rc;      /* this rank's first failure of its own (0: none) */
	FILE *captured;  /* ranks > 0: what they wrote to stderr */
	int real_stderr; /* a dup of the original fd 2, or -1 */
	int real_stdout;
};

/* Start MPI and quiet ranks > 0.  0, or MP_EXIT_ERROR (said on stderr). */
int mp_replay_job_start(struct mp_replay_job *j);

/*
 * Every rank at once: the job's status (the largest of the ranks' rc).  A
 * rank with rc != 0 failed of its own; rank 0 names the failed ranks when
 * some other than itself did.
 */
int mp_replay_job_status(struct mp_replay_job *j, int rc);

/*
 * Every rank at once: 0 when every rank has the same hash h (of its pools
 * and options), else MP_EXIT_USAGE on all (rank 0 says why).
 */
int mp_replay_job_same(struct mp_replay_job *j, uint64_t h);

/* The largest v over the ranks (v on failure). */
int64_t mp_replay_job_max(struct mp_replay_job *j, int64_t v);

/*
 * Every rank at once: the ranks' results and notes, to rank 0.  There the
 * arrays are replaced by the job's (results in rank order, *ranks their
 * ranks, notes prefixed "rank N: "), results' backend set to backend;
 * elsewhere left as they are.  0, or -1 (out of memory, MPI) on every rank.
 */
int mp_replay_job_gather(struct mp_replay_job *j, struct mp_replay_result **results,
                         size_t *n_results, int **ranks, char **notes, size_t *n_notes,
                         size_t max_notes, const char *backend);

/*
 * Every rank at once: what ranks > 0 that failed of their own wrote goes
 * to rank 0, which shows each distinct text once, prefixed "rank N: " (or
 * "ranks 1, 2: "); then MPI stops.
 */
void mp_replay_job_end(struct mp_replay_job *j);

#endif
