/*
 * plugins/planned/planned.h - the planned pool's internal interface: the
 * placement problem built from the plan's lifetimes, and the placers that
 * solve it.  Costs, for n allocations and P pairs live at the same time:
 *   problem.c  O(n log n); O(P) overlap lists when P <= PLANNED_PAIR_LIMIT
 *   greedy.c   O(P log n) a run; 12 runs at most, none started past the deadline
 *   sweep.c    O(n log n), in place of the greedy when P is over the limit
 *   search.c   exponential, bounded by the deadline; only while above the
 *              lower bound and for n <= PLANNED_SEARCH_MAX_BUFS
 * Nothing here talks to the host: pool.c does, plan.c drives the rest.
 */
#ifndef MEMPROF_PLUGIN_PLANNED_H
#define MEMPROF_PLUGIN_PLANNED_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define PLANNED_UNPLACED UINT64_MAX
#define PLANNED_NO_TWIN  UINT32_MAX
/*
 * Above this many overlapping pairs no overlap lists are built (8 bytes a
 * pair): time-ordered first fit instead of the greedy orderings.
 */
#define PLANNED_PAIR_LIMIT 8000000u
/* Above this many buffers the exact search is not tried (nor are section members built). */
#define PLANNED_SEARCH_MAX_BUFS 2048u

/* One buffer that takes space: size > 0 and a non-empty lifetime. */
struct planned_buf {
	uint64_t size_bytes; /* rounded up to the pool's alignment */
	int64_t start, end;  /* [start, end); a never-freed end is clamped past the last event */
	/*
	 * How long it is live, for the orderings' keys: in the trace's own time
	 * when every item has usable times (alloc_ts, free_ts), else end - start.
	 */
	double width;
	uint32_t s_lo, s_hi; /* the sections it is live in: [s_lo, s_hi) */
	uint32_t item;       /* its position in the plan's item array */
};

/*
 * The problem.  Buffers are sorted by start.  A section is the instant of one
 * distinct start time: every set of buffers live together is live together
 * at some start, so the sections see every overlap and every peak.
 */
struct planned_problem {
	size_t n_bufs;
	struct planned_buf *bufs;
	size_t n_sections;
	uint64_t *section_bytes;    /* sum of sizes live in each section */
	uint64_t lower_bound_bytes; /* max of section_bytes */
	uint64_t gcd_bytes;         /* gcd of all sizes: every canonical makespan is a multiple */
	uint64_t n_pairs;           /* time-overlapping pairs */
	int timed;                  /* widths are in the trace's own time */
	/* Overlap lists (CSR), built only when n_pairs <= PLANNED_PAIR_LIMIT. */
	uint32_t *adj_start, *adj;
	/*
	 * Built with the overlap lists: a dominant buffer's lifetime holds every
	 * lifetime it overlaps, so some best placement has it at the bottom.
	 */
	uint8_t *dominant;
	/*
	 * Built for the search only (overlap lists and n_bufs <= the search's
	 * limit): section members (CSR), and twin_prev, the previous buffer (by
	 * item) of the same size and lifetime, or PLANNED_NO_TWIN: twins are
	 * interchangeable.
	 */
	uint32_t *sec_start, *sec_bufs;
	uint32_t *twin_prev;
};

/* Build from the items (sizes rounded up to align_bytes); 0 or MEMPROF_POOL_ENOMEM. */
int planned_problem_build(struct planned_problem *pb, const struct memprof_pool_lifetime *items,
                          size_t n_items, uint64_t align_bytes);
void planned_problem_free(struct planned_problem *pb);
/* Free all but the buffers (and n_bufs, the bounds and counts): for what needs only those. */
void planned_problem_free_all_but_bufs(struct planned_problem *pb);
/* Check that no two overlapping buffers overlap in space: 0 or -1 (needs the lists). */
int planned_problem_check(const struct planned_problem *pb, const uint64_t *off);
/* Makespan of a placement: max(offset + size). */
uint64_t planned_makespan(const struct planned_problem *pb, const uint64_t *off);

/* Greedy orderings, by name; PLANNED_ORDER_ALL tries them all. */
enum planned_order {
	PLANNED_ORDER_ALL = -1,
	PLANNED_ORDER_SIZE,
	PLANNED_ORDER_LENGTH,
	PLANNED_ORDER_AREA,
	PLANNED_ORDER_TOTAL,
	PLANNED_ORDER_START,
	PLANNED_ORDER_OVERLAPS,
	PLANNED_N_ORDERS
};
extern const char *const planned_order_names[PLANNED_N_ORDERS];

/*
 * Greedy best fit over the overlap lists: each ordering (one, or all), each
 * placed twice (lowest fitting offset; smallest fitting gap).  Writes the
 * best placement to best_off and its makespan to *best; stops starting new
 * runs after deadline_ns (one run always completes).  0 or ENOMEM.
 */
int planned_greedy(const struct planned_problem *pb, int order, uint64_t deadline_ns,
                   uint64_t *best_off, uint64_t *best, uint64_t *n_runs);

/* Time-ordered first fit, O(n log n), for problems without overlap lists.  0 or ENOMEM. */
int planned_sweep_fit(const struct planned_problem *pb, uint64_t *off);

/* When the search stops: at deadline_ns, or after n_nodes nodes (0: no node limit). */
struct planned_budget {
	uint64_t deadline_ns;
	uint64_t n_nodes;
};

/* What the exact search did. */
struct planned_search_stats {
	uint64_t n_nodes;
	uint64_t proven_bound_bytes; /* no placement below this exists (proved) */
	int out_of_budget;           /* stopped by the deadline or the node budget, gap left */
};

/*
 * Improve best_off and *best (a valid placement) by branch and bound until the
 * lower bound is reached, optimality is proved, or the budget is spent.
 * Needs the overlap lists.  0 or ENOMEM.
 */
int planned_search(const struct planned_problem *pb, const struct planned_budget *budget,
                   uint64_t *best_off, uint64_t *best, struct planned_search_stats *st);

#endif
