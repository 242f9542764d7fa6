/*
 * replay/tune_internal.h - what tune.c shares with tune_fidelity.c (one
 * setting's replay, fidelity) and tune_search.c (the candidates in
 * threads).  Private to src/replay/tune*.
 */
#ifndef MP_REPLAY_TUNE_INTERNAL_H
#define MP_REPLAY_TUNE_INTERNAL_H

#include "replay/input.h"
#include "replay/loader.h"
#include "replay/tune.h"

struct mp_tune_job {
	const struct mp_tune_options *o;
	const char *path;
	struct mp_replay_input *in;
	const struct mp_replay_device *d;
	struct mp_pool_plugin *pool;
};

/* Replay one setting into f under capacity_bytes (0: none), with the fragmentation at the
 * peak when frag.  0 or MP_E* with err set (the pool refused the setting). */
int mp_tune_replay(const struct mp_tune_job *job, const struct mp_tune_setting *s, int frag,
                   uint64_t capacity_bytes, struct mp_tune_figures *f, uint64_t *n_seeded,
                   struct mp_error *err);
/* The trace's own setting replayed and compared with what the trace recorded. */
int mp_tune_fidelity(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                     struct mp_tune_result *res, struct mp_error *err);
/* With a capacity, the trace's own setting replayed again under it, into res->current. */
int mp_tune_current(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                    struct mp_tune_result *res, struct mp_error *err);
/* Every candidate, in threads; the best o->n_best into res->ranked. */
int mp_tune_search(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                   struct mp_tune_result *res, struct mp_error *err);

#endif
