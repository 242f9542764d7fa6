/*
 * plugins/planned/search.c - bounded exact search over the makespan: asks
 * dfs.c whether a capacity can be met, first at the lower bound (most real
 * instances are tight), then in steps down from the best placement found
 * toward what is proved impossible.  Each question tries three static preorders
 * in turn with doubling node limits, so one bad preorder cannot eat the
 * budget; every question stops at its share of the deadline.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dfs.h"

#define N_PREORDERS 3

/* Is there a placement within cap bytes?  Round robin over the preorders. */
static enum dfs_result decide(struct dfs *s, uint64_t cap, uint64_t deadline_ns,
                              uint64_t node_deadline)
{
	static const char *const preorders[N_PREORDERS] = {"WAT", "TAW", "TWA"};
	int64_t limit = (int64_t)s->pb->n_bufs + 1;
	int h;

	s->cap = cap;
	s->deadline_ns = deadline_ns;
	s->node_deadline = node_deadline;
	for (;;) {
		limit = limit < INT64_MAX / 2 ? 2 * limit : INT64_MAX;
		for (h = 0; h < N_PREORDERS; h++) {
			enum dfs_result rc;
			s->preorder = preorders[h];
			s->nodes_left = limit;
			rc = dfs_run(s);
			if (rc != DFS_ABORTED)
				return rc;
		}
	}
}

/* Half of what is left before end (all of it for the last question). */
static uint64_t share(uint64_t now, uint64_t end, int last)
{
	if (end == UINT64_MAX)
		return UINT64_MAX;
	return now + (last ? end - now : (end - now) / 2);
}

/*
 * The next capacity to ask about, in units of the gcd: the bound first, then
 * step below the best so far (the first step a quarter of the way down from
 * the first placement), but no lower than the lowest capacity still worth
 * asking about: above what is proved impossible and above any capacity
 * given up on (a question given less time than one that failed would fail
 * too).  hi when none is left.
 */
static uint64_t next_cap(uint64_t lo, uint64_t hi, uint64_t given_up, uint64_t *step, int first)
{
	uint64_t base = lo > given_up ? lo : given_up + 1;

	if (first)
		return lo;
	if (base >= hi)
		return hi;
	if (*step == 0)
		*step = (hi - base) / 4 ? (hi - base) / 4 : 1;
	return hi - base > *step ? hi - *step : base;
}

/*
 * Descent in units of the sizes' gcd: lo..hi, hi met (the best so far).  A
 * question at the bound first (tight instances meet it), then questions
 * step below the best, the step halving each time one is given up on:
 * placements just below a loose best are found in few nodes, while a
 * bisection's midpoint is often neither found nor proved impossible.  Each
 * question gets half the time and half the nodes left, the last all.
 * 0; 1 when the budget ran out with a gap left; MEMPROF_POOL_ENOMEM.
 */
static int descend_caps(struct dfs *s, const struct planned_budget *budget, uint64_t *best_off,
                        uint64_t *best, uint64_t *proven)
{
	const struct planned_problem *pb = s->pb;
	uint64_t g = pb->gcd_bytes, lo = *proven, hi = *best / g, now, step = 0, given_up = 0;
	uint64_t node_end = budget->n_nodes ? budget->n_nodes : UINT64_MAX;
	int first = 1, was_first;

	while (lo < hi && (now = planned_now_ns()) < budget->deadline_ns && s->n_nodes < node_end) {
		uint64_t cap = next_cap(lo, hi, given_up, &step, first);
		int last = cap + 1 >= hi;
		enum dfs_result rc;

		if (cap >= hi)
			break;
		rc = decide(s, cap * g, share(now, budget->deadline_ns, last),
		            share(s->n_nodes, node_end, last));
		was_first = first;
		first = 0;
		if (rc == DFS_FAILED)
			return MEMPROF_POOL_ENOMEM;
		if (rc == DFS_FOUND) {
			memcpy(best_off, s->sol, pb->n_bufs * sizeof *best_off);
			*best = planned_makespan(pb, best_off);
			hi = *best / g;
		} else if (rc == DFS_NONE) {
			lo = *proven = cap + 1; /* proved: nothing fits below cap + 1 */
		} else {
			given_up = cap > given_up ? cap : given_up;
			step = was_first ? step : step > 1 ? step / 2 : 1;
		}
	}
	return lo < hi ? 1 : MEMPROF_POOL_OK; /* 1: the budget ran out first */
}

int planned_search(const struct planned_problem *pb, const struct planned_budget *budget,
                   uint64_t *best_off, uint64_t *best, struct planned_search_stats *st)
{
	uint64_t g = pb->gcd_bytes, proven = (pb->lower_bound_bytes + g - 1) / g;
	struct dfs s;
	int rc;

	st->proven_bound_bytes = pb->lower_bound_bytes;
	if (proven * g >= *best || pb->n_bufs > PLANNED_SEARCH_MAX_BUFS || !pb->adj_start)
		return MEMPROF_POOL_OK;
	rc = dfs_init(&s, pb);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	rc = descend_caps(&s, budget, best_off, best, &proven);
	st->out_of_budget = rc == 1;
	rc = rc == 1 ? MEMPROF_POOL_OK : rc;
	if (proven * g > st->proven_bound_bytes)
		st->proven_bound_bytes = proven * g;
	st->n_nodes += s.n_nodes;
	dfs_free(&s);
	return rc;
}
