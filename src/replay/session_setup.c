/*
 * replay/session_setup.c - what a replay session (replay/session.h) sets
 * up besides its pools: how many GPUs the cuda backend sees, and for
 * 'replay --mpi' the pools' world size and the hash of what every rank
 * must share.  Never prints.
 */
#include "replay/session.h"

#ifdef HAVE_CUDA
#include "replay/cuda_api.h"
#endif

#include <stdio.h>
#include <string.h>

void mp_replay_session_count_gpus(struct mp_replay_session *s)
{
	int n = 0;

#ifdef HAVE_CUDA
	char why[256];

	if (strcmp(s->backend->name, "cuda") == 0 && !mp_cu_probe(why, sizeof why, &n))
		n = 0;
#endif
	s->n_gpus = n;
}

/* 64-bit FNV-1a over n bytes, chained from h. */
static uint64_t hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t mp_replay_session_hash(const struct mp_replay_session *s, const char *options_text)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t sizes[2] = {sizeof(struct mp_replay_result), MP_REPLAY_MAX_STATS};
	const char *texts[3] = {s->backend->name, s->set->baseline, options_text};

	h = hash(h, sizes, sizeof sizes);
	for (size_t i = 0; i < 3; i++)
		h = hash(h, texts[i], strlen(texts[i]) + 1);
	for (size_t k = 0; k < s->n_pools; k++)
		h = hash(h, s->pools[k]->ops.name, strlen(s->pools[k]->ops.name) + 1);
	return h;
}

int mp_replay_session_world_size(struct mp_replay_session *s, char *text, size_t n)
{
	const struct mp_replay_settings *set = s->set;
	int declared = 0;

	for (size_t i = 0; i < set->n_pool_opts; i++)
		if (mp_replay_same_option_name(set->pool_opts[i].name, "world-size"))
			return 0;
	for (size_t k = 0; k < s->n_pools; k++)
		for (const struct memprof_pool_option_spec *o = s->pools[k]->ops.options;
		     o && o->name; o++)
			declared |= mp_replay_same_option_name(o->name, "world-size");
	if (!declared || !s->group)
		return 0;
	snprintf(text, n, "world-size=%d", s->group->size);
	if (s->group->rank == 0) /* the same on every rank: said once */
		mp_replay_session_note(s,
		                       "--world-size=%d: the number of ranks (give --world-size "
		                       "to choose another)",
		                       s->group->size);
	return 1;
}
