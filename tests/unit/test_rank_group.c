/*
 * tests/unit/test_rank_group.c - the agreement rounds of replay/rank_group.c
 * with N threads standing in for the ranks of 'replay --mpi' and a real
 * allreduce (every thread writes its values, a barrier, each takes the max,
 * a barrier).  Each rank follows a script of collective requests, then
 * calls mp_rank_group_done; a hang fails the test by its timeout.  Checked:
 * equal requests agree; another kind, another size, an extra request or a
 * rank done early stop collectives on every rank at once; done() resets the
 * group for the next pool; a failing allreduce is -1.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "memprof/pool.h"
#include "replay/rank_group.h"

#define MAX_RANKS 8
#define MAX_STEPS 8
#define MAX_VALS  8

struct world {
	int n;
	pthread_barrier_t barrier;
	int64_t vals[MAX_RANKS][MAX_VALS];
	int fail_after; /* allreduce calls that succeed before one fails (-1: never) */
	int n_calls;    /* allreduces made by rank 0 */
};

struct request {
	int kind;
	uint64_t n_bytes;
};

struct rank {
	struct world *w;
	int rank;
	struct mp_rank_group g;
	struct request script[MAX_STEPS]; /* ends at n_bytes 0 */
	int got[MAX_STEPS];
	int done_rc;
	uint64_t agreed_before_done, refused_before_done;
};

static int allreduce_max(void *ctx, int64_t *v, int n)
{
	struct rank *r = ctx;
	struct world *w = r->w;
	int fail;

	cr_assert_leq(n, MAX_VALS);
	memcpy(w->vals[r->rank], v, (size_t)n * sizeof *v);
	pthread_barrier_wait(&w->barrier);
	for (int k = 0; k < w->n; k++)
		for (int i = 0; i < n; i++)
			if (w->vals[k][i] > v[i])
				v[i] = w->vals[k][i];
	fail = w->fail_after >= 0 && w->n_calls >= w->fail_after;
	pthread_barrier_wait(&w->barrier);
	if (r->rank == 0)
		w->n_calls++;
	pthread_barrier_wait(&w->barrier);
	return fail ? -1 : 0;
}

static void *play(void *arg)
{
	struct rank *r = arg;

	for (int i = 0; i < MAX_STEPS && r->script[i].n_bytes; i++)
		r->got[i] = mp_rank_group_agree(&r->g, r->script[i].kind, r->script[i].n_bytes);
	r->agreed_before_done = r->g.n_agreed;
	r->refused_before_done = r->g.n_refused;
	r->done_rc = mp_rank_group_done(&r->g);
	return NULL;
}

static struct world world;
static struct rank ranks[MAX_RANKS];

static void setup(int n)
{
	memset(&world, 0, sizeof world);
	memset(ranks, 0, sizeof ranks);
	world.n = n;
	world.fail_after = -1;
	pthread_barrier_init(&world.barrier, NULL, (unsigned)n);
	for (int k = 0; k < n; k++)
		ranks[k] = (struct rank){.w = &world,
		                         .rank = k,
		                         .g = {.rank = k,
		                               .size = n,
		                               .allreduce_max = allreduce_max,
		                               .ctx = &ranks[k]}};
}

/* Every rank plays its script; returns when all are done (or the test times out). */
static void play_all(void)
{
	pthread_t t[MAX_RANKS];

	for (int k = 0; k < world.n; k++)
		cr_assert_eq(pthread_create(&t[k], NULL, play, &ranks[k]), 0);
	for (int k = 0; k < world.n; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&world.barrier);
}

static void script(int k, const struct request *reqs, int n)
{
	memcpy(ranks[k].script, reqs, (size_t)n * sizeof *reqs);
}

static const struct request ag = {MEMPROF_POOL_ALL_GATHER, 1 << 20};
static const struct request rs = {MEMPROF_POOL_REDUCE_SCATTER, 1 << 20};

Test(rank_group, equal_requests_agree, .timeout = 20)
{
	setup(4);
	for (int k = 0; k < 4; k++)
		script(k, (struct request[]){ag, rs, ag}, 3);
	play_all();
	for (int k = 0; k < 4; k++) {
		cr_assert_eq(ranks[k].got[0] + ranks[k].got[1] + ranks[k].got[2], 3, "rank %d", k);
		cr_assert_eq(ranks[k].agreed_before_done, 3);
		cr_assert_eq(ranks[k].refused_before_done, 0);
		cr_assert_eq(ranks[k].done_rc, 0);
	}
}

Test(rank_group, an_extra_collective_stops_only_that_one, .timeout = 20)
{
	setup(3);
	script(0, (struct request[]){ag, rs}, 2);
	script(1, (struct request[]){ag, rs, ag}, 3); /* one recurring buffer more */
	script(2, (struct request[]){ag, rs}, 2);
	play_all();
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(ranks[k].got[0], 1, "rank %d", k);
		cr_assert_eq(ranks[k].got[1], 1, "rank %d", k);
		cr_assert_eq(ranks[k].done_rc, 0);
	}
	cr_assert_eq(ranks[1].got[2], 0, "the others were done: no partner");
	cr_assert_eq(ranks[1].refused_before_done, 1);
}

Test(rank_group, another_size_stops_collectives_on_every_rank, .timeout = 20)
{
	struct request big = {MEMPROF_POOL_ALL_GATHER, 2 << 20};

	setup(4);
	for (int k = 0; k < 4; k++)
		script(k, (struct request[]){ag, k == 2 ? big : ag, ag, rs}, 4);
	play_all();
	for (int k = 0; k < 4; k++) {
		cr_assert_eq(ranks[k].got[0], 1, "rank %d", k);
		/* the round that differs, and every later one: stopped, on every rank */
		cr_assert_eq(ranks[k].got[1] + ranks[k].got[2] + ranks[k].got[3], 0, "rank %d", k);
		cr_assert_eq(ranks[k].agreed_before_done, 1);
		cr_assert_eq(ranks[k].done_rc, 0);
	}
}

Test(rank_group, another_kind_stops_collectives, .timeout = 20)
{
	setup(2);
	script(0, (struct request[]){ag, ag}, 2);
	script(1, (struct request[]){rs, ag}, 2);
	play_all();
	for (int k = 0; k < 2; k++)
		cr_assert_eq(ranks[k].got[0] + ranks[k].got[1], 0, "rank %d", k);
}

Test(rank_group, a_rank_done_early_stops_the_others, .timeout = 20)
{
	setup(3);
	script(0, (struct request[]){ag, rs, ag}, 3);
	script(1, (struct request[]){ag, rs, ag}, 3);
	/* rank 2: no collective at all (fewer devices, or its replay failed) */
	play_all();
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(ranks[k].got[0] + ranks[k].got[1] + ranks[k].got[2], 0, "rank %d", k);
		cr_assert_eq(ranks[k].refused_before_done, 1, "one round refused, then no more");
		cr_assert_eq(ranks[k].done_rc, 0);
	}
	cr_assert_eq(ranks[2].done_rc, 0);
}

Test(rank_group, a_request_no_round_carries_takes_part, .timeout = 20)
{
	struct request odd = {-5, 1 << 20};

	setup(2);
	script(0, (struct request[]){odd, ag}, 2);
	script(1, (struct request[]){odd, ag}, 2);
	play_all();
	for (int k = 0; k < 2; k++)
		cr_assert_eq(ranks[k].got[0] + ranks[k].got[1], 0, "rank %d", k);
}

Test(rank_group, done_resets_the_group_for_the_next_pool, .timeout = 20)
{
	pthread_t t[2];

	setup(2);
	script(0, (struct request[]){ag}, 1);
	script(1, (struct request[]){rs}, 1);
	play_all();
	cr_assert_eq(ranks[0].got[0] + ranks[1].got[0], 0);
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(ranks[k].g.stopped, 0);
		cr_assert_eq(ranks[k].g.n_agreed + ranks[k].g.n_refused, 0);
	}
	/* the next pool: the same groups, equal requests agree again */
	pthread_barrier_init(&world.barrier, NULL, 2);
	for (int k = 0; k < 2; k++) {
		script(k, (struct request[]){rs, ag}, 2);
		cr_assert_eq(pthread_create(&t[k], NULL, play, &ranks[k]), 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&world.barrier);
	for (int k = 0; k < 2; k++)
		cr_assert_eq(ranks[k].got[0] + ranks[k].got[1], 2, "rank %d", k);
}

Test(rank_group, a_failed_allreduce_is_an_error, .timeout = 20)
{
	setup(2);
	world.fail_after = 1;
	for (int k = 0; k < 2; k++)
		script(k, (struct request[]){ag, ag}, 2);
	play_all();
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(ranks[k].got[0], 1);
		cr_assert_eq(ranks[k].got[1], -1);
		cr_assert_eq(ranks[k].done_rc, -1);
	}
}
