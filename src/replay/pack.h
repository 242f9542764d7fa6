/*
 * replay/pack.h - a rank's replay results and notes as bytes, and the
 * job's from every rank's bytes: what 'memprof replay --mpi' sends to
 * rank 0 (the gather itself is cmd/'s).  Never prints.
 */
#ifndef MP_REPLAY_PACK_H
#define MP_REPLAY_PACK_H

#include <stddef.h>

#include "replay/engine.h"

/*
 * [n_results, n_notes] int32, the results (backend NULL: a pointer means
 * nothing in another process), the notes each NUL-ended; malloc'd, its
 * length in *size.  NULL when out of memory.
 */
unsigned char *mp_replay_pack(const struct mp_replay_result *res, size_t n_res, char *const *notes,
                              size_t n_notes, size_t *size);

/* The job's results (in rank order, ranks[] their ranks) and notes ("rank N: ..."). */
struct mp_replay_unpacked {
	struct mp_replay_result *results; /* malloc'd */
	int *ranks;                       /* malloc'd */
	size_t n_results;
	char **notes; /* the caller's array of max_notes; each note malloc'd */
	size_t n_notes, max_notes;
};

/*
 * n_ranks ranks' packed bytes, back to back in all (lens[r] each), into u
 * (notes and max_notes set by the caller), results' backend set to backend.
 * 0, or -1 when out of memory or the bytes are not packed ranks.
 */
int mp_replay_unpack(const unsigned char *all, const size_t *lens, int n_ranks, const char *backend,
                     struct mp_replay_unpacked *u);

#endif
