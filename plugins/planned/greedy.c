/*
 * plugins/planned/greedy.c - greedy best fit over the overlap lists: buffers
 * in one static ordering, each placed among its already-placed overlapping
 * neighbours at the lowest offset that fits (or in the smallest gap that
 * fits).  O(sum of d log d) per run, d a buffer's overlap count.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "planned.h"

const char *const planned_order_names[PLANNED_N_ORDERS] = {
        "size", "length", "area", "total", "start", "overlaps",
};

struct key {
	int dominant; /* first: some best placement has them at the bottom */
	double k[3];  /* compared in turn, larger first */
	uint32_t id;
};

struct iv {
	uint64_t lo, hi;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int i;

	if (x->dominant != y->dominant)
		return y->dominant - x->dominant;
	for (i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] > y->k[i] ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void swap_iv(struct iv *a, struct iv *b)
{
	struct iv t = *a;
	*a = *b, *b = t;
}

/* Sort by lo: quicksort (median of three, Hoare) recursing on the smaller side. */
static void sort_iv(struct iv *v, size_t n)
{
	while (n > 12) {
		size_t i, j, m = n / 2;
		uint64_t x;
		if (v[m].lo < v[0].lo)
			swap_iv(&v[m], &v[0]);
		if (v[n - 1].lo < v[0].lo)
			swap_iv(&v[n - 1], &v[0]);
		if (v[n - 1].lo < v[m].lo)
			swap_iv(&v[n - 1], &v[m]);
		swap_iv(&v[0], &v[m]); /* the median leads: the split leaves both sides non-empty */
		x = v[0].lo;
		for (i = (size_t)-1, j = n;;) {
			do
				i++;
			while (v[i].lo < x);
			do
				j--;
			while (v[j].lo > x);
			if (i >= j)
				break;
			swap_iv(&v[i], &v[j]);
		}
		if (j + 1 < n - j - 1) {
			sort_iv(v, j + 1);
			v += j + 1, n -= j + 1;
		} else {
			sort_iv(v + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j].lo < v[j - 1].lo; j--)
			swap_iv(&v[j], &v[j - 1]);
}

static double max_section_bytes(const struct planned_problem *pb, const struct planned_buf *b)
{
	uint64_t top = 0;
	uint32_t s;

	for (s = b->s_lo; s < b->s_hi; s++)
		if (pb->section_bytes[s] > top)
			top = pb->section_bytes[s];
	return (double)top;
}

/* The buffers in the named ordering, into keys[] sorted. */
static void order_keys(const struct planned_problem *pb, int order, struct key *keys)
{
	size_t i;

	for (i = 0; i < pb->n_bufs; i++) {
		const struct planned_buf *b = &pb->bufs[i];
		double size = (double)b->size_bytes;
		double len = b->width;
		double start = -(double)b->start;
		double deg = (double)(pb->adj_start[i + 1] - pb->adj_start[i]);
		double k[PLANNED_N_ORDERS][3] = {
		        [PLANNED_ORDER_SIZE] = {size, len, start},
		        [PLANNED_ORDER_LENGTH] = {len, size, start},
		        [PLANNED_ORDER_AREA] = {size * len, size, len},
		        [PLANNED_ORDER_TOTAL] = {max_section_bytes(pb, b), size, len},
		        [PLANNED_ORDER_START] = {start, size, len},
		        [PLANNED_ORDER_OVERLAPS] = {deg, size, len},
		};
		memcpy(keys[i].k, k[order], sizeof keys[i].k);
		keys[i].dominant = pb->dominant[i];
		keys[i].id = (uint32_t)i;
	}
	qsort(keys, pb->n_bufs, sizeof *keys, cmp_key);
}

/* The lowest gap of size bytes among v (first fit), or the smallest one (best fit). */
static uint64_t fit(struct iv *v, size_t n, uint64_t size, int best_gap)
{
	uint64_t cur = 0, best_at = PLANNED_UNPLACED, best_len = UINT64_MAX;
	size_t i;

	sort_iv(v, n);
	for (i = 0; i < n; i++) {
		if (v[i].lo > cur && v[i].lo - cur >= size) {
			if (!best_gap)
				return cur;
			if (v[i].lo - cur < best_len) {
				best_len = v[i].lo - cur;
				best_at = cur;
			}
		}
		if (v[i].hi > cur)
			cur = v[i].hi;
	}
	return best_at != PLANNED_UNPLACED ? best_at : cur;
}

static void place_all(const struct planned_problem *pb, const struct key *keys, int best_gap,
                      uint64_t *off, struct iv *v)
{
	size_t i, k;

	for (i = 0; i < pb->n_bufs; i++)
		off[i] = PLANNED_UNPLACED;
	for (i = 0; i < pb->n_bufs; i++) {
		uint32_t b = keys[i].id;
		size_t n = 0;

		for (k = pb->adj_start[b]; k < pb->adj_start[b + 1]; k++) {
			uint32_t c = pb->adj[k];
			if (off[c] == PLANNED_UNPLACED)
				continue;
			v[n].lo = off[c];
			v[n++].hi = off[c] + pb->bufs[c].size_bytes;
		}
		off[b] = fit(v, n, pb->bufs[b].size_bytes, best_gap);
	}
}

int planned_greedy(const struct planned_problem *pb, int order, uint64_t deadline_ns,
                   uint64_t *best_off, uint64_t *best, uint64_t *n_runs)
{
	size_t m = pb->n_bufs, max_deg = 0, i;
	struct key *keys = malloc((m + 1) * sizeof *keys);
	uint64_t *off = malloc((m + 1) * sizeof *off);
	struct iv *v;
	int o, mode;

	for (i = 0; i < m; i++)
		if (pb->adj_start[i + 1] - pb->adj_start[i] > max_deg)
			max_deg = pb->adj_start[i + 1] - pb->adj_start[i];
	v = malloc((max_deg + 1) * sizeof *v);
	if (!keys || !off || !v) {
		free(keys), free(off), free(v);
		return MEMPROF_POOL_ENOMEM;
	}
	for (o = 0; o < PLANNED_N_ORDERS; o++) {
		if ((order != PLANNED_ORDER_ALL && order != o) || *best == pb->lower_bound_bytes)
			continue;
		order_keys(pb, o, keys);
		for (mode = 0; mode < 2; mode++) {
			uint64_t top;
			if (*n_runs > 0 && planned_now_ns() > deadline_ns)
				break;
			place_all(pb, keys, mode, off, v);
			top = planned_makespan(pb, off);
			++*n_runs;
			if (top < *best) {
				*best = top;
				memcpy(best_off, off, m * sizeof *off);
			}
		}
	}
	free(keys), free(off), free(v);
	return MEMPROF_POOL_OK;
}
