/*
 * plugins/planned/search.c - bounded exact search over the makespan: asks
 * dfs.c whether a capacity can be met, first at the lower bound (most real
 * instances are tight), then by bisection between what is proved impossible
 * and the best placement found.  Each question tries three static preorders
 * in turn with doubling node limits, so one bad preorder cannot eat the
 * budget; every question stops at its share of the deadline.
 */
#include <stdlib.h>
#include <string.h>

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
 * Bisection in units of the sizes' gcd: lo..hi, hi met (the best so far).
 * Each question gets half the time and half the nodes left.
 */
static int bisect(struct dfs *s, const struct planned_budget *budget, uint64_t *best_off,
                  uint64_t *best, uint64_t *proven)
{
	const struct planned_problem *pb = s->pb;
	uint64_t g = pb->gcd_bytes, lo = *proven, hi = *best / g, now;
	uint64_t node_end = budget->n_nodes ? budget->n_nodes : UINT64_MAX;
	int first = 1;

	while (lo < hi && (now = planned_now_ns()) < budget->deadline_ns && s->n_nodes < node_end) {
		uint64_t mid = first ? lo : lo + (hi - lo) / 2;
		enum dfs_result rc =
		        decide(s, mid * g, share(now, budget->deadline_ns, hi - lo == 1),
		               share(s->n_nodes, node_end, hi - lo == 1));

		first = 0;
		if (rc == DFS_FAILED)
			return MEMPROF_POOL_ENOMEM;
		if (rc == DFS_FOUND) {
			memcpy(best_off, s->sol, pb->n_bufs * sizeof *best_off);
			*best = planned_makespan(pb, best_off);
			hi = *best / g;
		} else {
			if (rc == DFS_NONE && mid + 1 > *proven)
				*proven = mid + 1;
			lo = mid + 1; /* proved, or given up on */
		}
	}
	return MEMPROF_POOL_OK;
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
	rc = bisect(&s, budget, best_off, best, &proven);
	if (proven * g > st->proven_bound_bytes)
		st->proven_bound_bytes = proven * g;
	st->n_nodes += s.n_nodes;
	dfs_free(&s);
	return rc;
}
