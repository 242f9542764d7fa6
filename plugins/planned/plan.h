/*
 * plugins/planned/plan.h - a finished plan: each allocation's offset and
 * size, found by request index in O(1) (O(log n) when the indices are
 * sparse), and the figures of how it was made.  Built by plan.c from the
 * lifetimes; pool.c serves requests from it.  Never talks to the host.
 */
#ifndef MEMPROF_PLUGIN_PLANNED_PLAN_H
#define MEMPROF_PLUGIN_PLANNED_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

struct planned_config {
	uint64_t plan_time_ns; /* budget of the whole plan (the first greedy pass always ends) */
	uint64_t plan_nodes;   /* the search's node budget; 0: none (plan_time only) */
	int order;             /* enum planned_order */
	uint64_t align_bytes;  /* sizes rounded up to this (a power of two) */
};

enum planned_slot_state { PLANNED_SLOT_NONE, PLANNED_SLOT_IDLE, PLANNED_SLOT_LIVE };

struct planned_plan {
	size_t n_slots;
	int64_t *index;         /* sorted request indices; NULL: slot = index (dense) */
	uint64_t *offset_bytes; /* per slot */
	uint64_t *size_bytes;   /* per slot: the size set aside (rounded) */
	uint8_t *state;         /* per slot: enum planned_slot_state */
	uint64_t makespan_bytes, lower_bound_bytes, proven_bound_bytes;
	uint64_t plan_ns, n_runs, n_nodes, n_pairs;
	int optimal, swept; /* proved optimal; placed by the time-ordered sweep */
	int out_of_budget;  /* the search stopped at plan_time or plan_nodes: the best so far */
};

/*
 * Plan the items.  0; MEMPROF_POOL_EINVAL with why[] saying what is wrong
 * with the items; MEMPROF_POOL_ENOMEM; MEMPROF_POOL_EFAULT when the
 * placement failed its own check (a bug, said in why[]).
 */
int planned_plan_build(struct planned_plan *pl, const struct memprof_pool_lifetime *items, size_t n,
                       const struct planned_config *cfg, char *why, size_t why_len);
/* The slot of a request index, or -1 when the plan has none. */
int64_t planned_plan_slot(const struct planned_plan *pl, int64_t index);
void planned_plan_free(struct planned_plan *pl);

#endif
