/*
 * replay/tune_search.c - the candidates of tune_candidates.c replayed in worker
 * threads (one per core unless told), each thread taking the next
 * candidate until none is left or the budget is spent, and the best kept
 * in order.  A candidate the pool refuses is skipped, not fatal.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "replay/tune_internal.h"

struct search {
	const struct mp_tune_job *job;
	const struct mp_tune_setting *cands;
	struct mp_tune_figures *figs;
	unsigned char *done;
	size_t n, next;
	uint64_t deadline_ns; /* 0: none */
	int budget_hit;
	pthread_mutex_t lock;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The next candidate's index, or n when done (all taken, or out of budget). */
static size_t take(struct search *s)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (s->deadline_ns && s->next < s->n && now_ns() >= s->deadline_ns) {
		s->budget_hit = 1;
		s->next = s->n;
	}
	i = s->next < s->n ? s->next++ : s->n;
	pthread_mutex_unlock(&s->lock);
	return i;
}

static void *worker(void *arg)
{
	struct search *s = arg;
	struct mp_error err = {0};

	for (size_t i = take(s); i < s->n; i = take(s)) {
		mp_err_clear(&err);
		if (mp_tune_replay(s->job, &s->cands[i], 0, s->job->o->capacity_bytes, &s->figs[i],
		                   NULL, &err) == 0)
			s->done[i] = 1;
	}
	return NULL;
}

static int n_threads(const struct mp_tune_options *o, size_t n)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int k = o->n_threads > 0 ? o->n_threads : cores > 0 ? (int)cores : 1;

	if (k > 64)
		k = 64;
	return (size_t)k > n ? (int)(n ? n : 1) : k;
}

static void run_threads(struct search *s, int k)
{
	pthread_t t[64];
	int started = 0;

	for (int i = 1; i < k; i++)
		if (pthread_create(&t[started], NULL, worker, s) == 0)
			started++;
	worker(s); /* this thread works too */
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}

/* Two settings with the same figures: only the better-ranked one is shown. */
static int same_figures(const struct mp_tune_figures *a, const struct mp_tune_figures *b)
{
	return a->peak_reserved_bytes == b->peak_reserved_bytes && a->n_malloc == b->n_malloc &&
	       a->n_map == b->n_map && a->n_backend_calls == b->n_backend_calls &&
	       a->backend_ns == b->backend_ns && a->n_ooms == b->n_ooms;
}

/* Drop the candidates whose figures equal a better one's (they are counted as equivalent). */
static void drop_equivalent(struct search *s, struct mp_tune_result *res)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; s->done[i] && j < s->n; j++)
			if (j != i && s->done[j] && same_figures(&s->figs[i], &s->figs[j]) &&
			    mp_tune_better(&s->figs[j], &s->figs[i], res->objective)) {
				s->done[i] = 2; /* replayed, not ranked */
				res->n_equivalent++;
				break;
			}
}

/* Keep the best n_best of the replayed candidates, in order (insertion into a short list). */
static int rank(struct search *s, struct mp_tune_result *res)
{
	size_t keep = res->n_ranked = 0, want = s->job->o->n_best ? s->job->o->n_best : 5;

	if (!(res->ranked = calloc(want, sizeof *res->ranked)))
		return MP_ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		res->n_evaluated += s->done[i] != 0;
	drop_equivalent(s, res);
	for (size_t i = 0; i < s->n; i++) {
		size_t at;

		if (s->done[i] != 1 || i == 0) /* the current setting has its own row */
			continue;
		for (at = keep;
		     at > 0 && mp_tune_better(&s->figs[i], &res->ranked[at - 1], res->objective);
		     at--)
			;
		if (at == want)
			continue;
		memmove(&res->ranked[at + 1], &res->ranked[at],
		        (keep - at - (keep == want)) * sizeof *res->ranked);
		res->ranked[at] = s->figs[i];
		keep += keep < want;
	}
	res->n_ranked = keep;
	return 0;
}

int mp_tune_search(const struct mp_tune_job *job, const struct mp_tune_setting *current,
                   struct mp_tune_result *res, struct mp_error *err)
{
	struct search s = {.job = job};
	struct mp_tune_setting *cands = NULL;
	int rc = mp_tune_candidates(job->d, current, job->o->capacity_bytes, &cands, &s.n);

	if (rc == 0) {
		s.cands = cands;
		s.figs = calloc(s.n, sizeof *s.figs);
		s.done = calloc(s.n, 1);
		rc = s.figs && s.done ? 0 : MP_ENOMEM;
	}
	if (rc == 0) {
		/* the current setting is candidate 0: replayed already */
		s.figs[0] = res->current;
		s.done[0] = 1;
		s.next = 1;
		if (job->o->budget_s > 0)
			s.deadline_ns = now_ns() + (uint64_t)(job->o->budget_s * 1e9);
		pthread_mutex_init(&s.lock, NULL);
		res->n_threads = n_threads(job->o, s.n - 1);
		run_threads(&s, res->n_threads);
		pthread_mutex_destroy(&s.lock);
		res->n_candidates = s.n;
		res->budget_hit = s.budget_hit;
		rc = rank(&s, res);
	}
	/* the fragmentation at the peak, for the settings shown */
	for (size_t i = 0; rc == 0 && i < res->n_ranked; i++) {
		struct mp_error e = {0};
		if (mp_tune_setting_equal(&res->ranked[i].setting, current))
			res->ranked[i] = res->current;
		else
			mp_tune_replay(job, &res->ranked[i].setting, 1, job->o->capacity_bytes,
			               &res->ranked[i], NULL, &e);
	}
	free(cands);
	free(s.figs);
	free(s.done);
	return rc < 0 ? mp_err(err, rc, "out of memory tuning '%s'", job->path) : 0;
}
