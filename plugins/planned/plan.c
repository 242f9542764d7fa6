/*
 * plugins/planned/plan.c - turns the plan's lifetimes into a plan: checks
 * them, builds the problem, places it (greedy best fit over overlap lists, or
 * the time-ordered sweep when there are too many overlapping pairs, then the
 * exact search while the lower bound is not met and time is left), checks the
 * placement, and files each allocation's offset under its request index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "plan.h"
#include "planned.h"

#define MAX_TOTAL_BYTES (1ull << 62)

struct index_item {
	int64_t index;
	size_t item;
};

static int cmp_index_item(const void *a, const void *b)
{
	const struct index_item *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static int check_items(const struct memprof_pool_lifetime *items, size_t n, char *why,
                       size_t why_len)
{
	uint64_t total = 0;
	size_t i;

	if (n >= UINT32_MAX - 2) {
		snprintf(why, why_len, "too many allocations to plan (%zu)", n);
		return MEMPROF_POOL_EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct memprof_pool_lifetime *it = &items[i];
		if (it->index < 0 || it->free_at < it->alloc_at) {
			snprintf(why, why_len,
			         "allocation %lld has a bad lifetime (index %lld, made at %lld, "
			         "freed "
			         "at %lld)",
			         (long long)i, (long long)it->index, (long long)it->alloc_at,
			         (long long)it->free_at);
			return MEMPROF_POOL_EINVAL;
		}
		total += it->size_bytes;
		if (it->size_bytes > MAX_TOTAL_BYTES || total > MAX_TOTAL_BYTES) {
			snprintf(why, why_len, "allocation sizes add up to more than 2^62 bytes");
			return MEMPROF_POOL_EINVAL;
		}
	}
	return MEMPROF_POOL_OK;
}

/*
 * The common case, as memprof's host gives them: indices strictly rising
 * and dense.  Then slot = index with no sort (and no copy of the indices,
 * nor a slot per item).
 */
static int rising_dense_slots(struct planned_plan *pl, const struct memprof_pool_lifetime *items,
                              size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (items[i].index <= items[i - 1].index)
			return 0;
	if (n && (uint64_t)items[n - 1].index >= 2 * (uint64_t)n + 1024)
		return 0;
	pl->n_slots = n ? (size_t)items[n - 1].index + 1 : 0;
	return 1;
}

/*
 * Slots for the items' indices: dense (slot = index) unless the indices are
 * sparse.  *slot_of (malloc'd) gives item i's slot; NULL: its index.
 */
static int make_slots(struct planned_plan *pl, const struct memprof_pool_lifetime *items, size_t n,
                      size_t **slot_out, char *why, size_t why_len)
{
	struct index_item *v;
	size_t i, *slot_of;
	int dense;

	*slot_out = NULL;
	if (rising_dense_slots(pl, items, n))
		return MEMPROF_POOL_OK;
	if (!(*slot_out = slot_of = malloc((n + 1) * sizeof *slot_of)))
		return MEMPROF_POOL_ENOMEM;
	if (!(v = malloc((n + 1) * sizeof *v)))
		return MEMPROF_POOL_ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = (struct index_item){.index = items[i].index, .item = i};
	qsort(v, n, sizeof *v, cmp_index_item);
	for (i = 1; i < n; i++)
		if (v[i].index == v[i - 1].index) {
			snprintf(why, why_len, "allocation index %lld appears twice in the plan",
			         (long long)v[i].index);
			free(v);
			return MEMPROF_POOL_EINVAL;
		}
	dense = n == 0 || (uint64_t)v[n - 1].index < 2 * (uint64_t)n + 1024;
	pl->n_slots = dense && n ? (size_t)v[n - 1].index + 1 : n;
	if (!dense && !(pl->index = malloc(n * sizeof *pl->index))) {
		free(v);
		return MEMPROF_POOL_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		slot_of[v[i].item] = dense ? (size_t)v[i].index : i;
		if (!dense)
			pl->index[i] = v[i].index;
	}
	free(v);
	return MEMPROF_POOL_OK;
}

/* Greedy (or sweep), then search while above the bound; the placement into off. */
static int place(struct planned_plan *pl, const struct planned_problem *pb,
                 const struct planned_config *cfg, uint64_t t0, uint64_t *off)
{
	uint64_t best = UINT64_MAX, deadline = t0 + cfg->plan_time_ns;
	struct planned_search_stats st = {0};
	int rc;

	if (pb->adj_start) {
		rc = planned_greedy(pb, cfg->order, deadline, off, &best, &pl->n_runs);
	} else {
		rc = planned_sweep_fit(pb, off);
		best = planned_makespan(pb, off);
		pl->n_runs = 1;
		pl->swept = 1;
	}
	if (rc != MEMPROF_POOL_OK)
		return rc;
	st.proven_bound_bytes = pb->lower_bound_bytes;
	if (best > pb->lower_bound_bytes && cfg->plan_time_ns > 0) {
		struct planned_budget budget = {.deadline_ns = deadline,
		                                .n_nodes = cfg->plan_nodes};
		rc = planned_search(pb, &budget, off, &best, &st);
	}
	pl->makespan_bytes = best;
	pl->lower_bound_bytes = pb->lower_bound_bytes;
	pl->proven_bound_bytes = st.proven_bound_bytes;
	pl->n_nodes = st.n_nodes;
	pl->n_pairs = pb->n_pairs;
	pl->optimal = best <= st.proven_bound_bytes;
	pl->out_of_budget = st.out_of_budget && !pl->optimal;
	return rc;
}

static int fill_slots(struct planned_plan *pl, const struct memprof_pool_lifetime *items, size_t n,
                      const size_t *slot_of, const struct planned_problem *pb, const uint64_t *off,
                      uint64_t align)
{
	size_t i, slots = pl->n_slots + 1;

	pl->offset_bytes = calloc(slots, sizeof *pl->offset_bytes);
	pl->size_bytes = calloc(slots, sizeof *pl->size_bytes);
	pl->state = calloc(slots, sizeof *pl->state);
	if (!pl->offset_bytes || !pl->size_bytes || !pl->state)
		return MEMPROF_POOL_ENOMEM;
	for (i = 0; i < n; i++) {
		size_t s = slot_of ? slot_of[i] : (size_t)items[i].index;
		pl->size_bytes[s] = (items[i].size_bytes + align - 1) / align * align;
		pl->state[s] = PLANNED_SLOT_IDLE;
	}
	for (i = 0; i < pb->n_bufs; i++) {
		size_t item = pb->bufs[i].item;
		pl->offset_bytes[slot_of ? slot_of[item] : (size_t)items[item].index] = off[i];
	}
	return MEMPROF_POOL_OK;
}

int planned_plan_build(struct planned_plan *pl, const struct memprof_pool_lifetime *items, size_t n,
                       const struct planned_config *cfg, char *why, size_t why_len)
{
	uint64_t t0 = planned_now_ns(), *off = NULL;
	struct planned_problem pb = {0};
	size_t *slot_of = NULL;
	int rc;

	memset(pl, 0, sizeof *pl);
	rc = check_items(items, n, why, why_len);
	if (rc == MEMPROF_POOL_OK)
		rc = make_slots(pl, items, n, &slot_of, why, why_len);
	if (rc == MEMPROF_POOL_OK)
		rc = planned_problem_build(&pb, items, n, cfg->align_bytes);
	if (rc == MEMPROF_POOL_OK)
		rc = (off = malloc((pb.n_bufs + 1) * sizeof *off)) ? MEMPROF_POOL_OK
		                                                   : MEMPROF_POOL_ENOMEM;
	if (rc == MEMPROF_POOL_OK)
		rc = place(pl, &pb, cfg, t0, off);
	if (rc == MEMPROF_POOL_OK && pb.adj_start && planned_problem_check(&pb, off) != 0) {
		snprintf(why, why_len, "the placement overlaps itself (a bug in the planner)");
		rc = MEMPROF_POOL_EFAULT;
	}
	if (rc == MEMPROF_POOL_OK) {
		planned_problem_free_all_but_bufs(&pb); /* fill_slots needs only the buffers */
		rc = fill_slots(pl, items, n, slot_of, &pb, off, cfg->align_bytes);
	}
	pl->plan_ns = planned_now_ns() - t0;
	planned_problem_free(&pb);
	free(off), free(slot_of);
	if (rc != MEMPROF_POOL_OK)
		planned_plan_free(pl);
	return rc;
}

int64_t planned_plan_slot(const struct planned_plan *pl, int64_t index)
{
	size_t lo = 0, hi = pl->n_slots;

	if (!pl->index)
		return index >= 0 && (uint64_t)index < pl->n_slots && pl->state &&
		                       pl->state[index] != PLANNED_SLOT_NONE
		               ? index
		               : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pl->index[mid] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pl->n_slots && pl->index[lo] == index ? (int64_t)lo : -1;
}

void planned_plan_free(struct planned_plan *pl)
{
	free(pl->index), free(pl->offset_bytes), free(pl->size_bytes), free(pl->state);
	memset(pl, 0, sizeof *pl);
}
