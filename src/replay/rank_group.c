/*
 * replay/rank_group.c - the agreement rounds of rank_group.h: each round
 * is one allreduce-max of what every rank wants, with its negation, so
 * every rank learns both the largest and the smallest request and sees the
 * same verdict.
 */
#include "replay/rank_group.h"

#define DONE (-1) /* the kind a rank sends when its replay of the pool is over */

/* One round; *all_same: every rank sent (kind, n_bytes); *all_done: every rank sent DONE. */
static int round_trip(struct mp_rank_group *g, int64_t kind, int64_t n_bytes, int *all_same,
                      int *all_done)
{
	int64_t v[4] = {kind, -kind, n_bytes, -n_bytes};

	if (g->allreduce_max(g->ctx, v, 4) < 0)
		return -1;
	*all_same = v[0] == -v[1] && v[2] == -v[3];
	*all_done = *all_same && v[0] == DONE;
	return 0;
}

int mp_rank_group_agree(struct mp_rank_group *g, int kind, uint64_t n_bytes)
{
	int same, done;

	if (g->stopped)
		return 0;
	/* A request no round can carry still takes part, as a wish no rank shares. */
	if (kind < 0 || n_bytes > (uint64_t)INT64_MAX) {
		kind = DONE - 1;
		n_bytes = 0;
	}
	if (round_trip(g, kind, (int64_t)n_bytes, &same, &done) < 0)
		return -1;
	if (same && kind >= 0) {
		g->n_agreed++;
		return 1;
	}
	g->stopped = 1;
	g->n_refused++;
	return 0;
}

int mp_rank_group_done(struct mp_rank_group *g)
{
	int same = 0, done = 0, rc = 0;

	while (!done && rc == 0)
		rc = round_trip(g, DONE, 0, &same, &done);
	g->stopped = 0;
	g->n_agreed = g->n_refused = 0;
	return rc;
}
