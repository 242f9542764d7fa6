/*
 * plugins/sharded/recurring.c - which site+size keys recur: a key with a
 * site that occurs the same number of times in (min-share of) the
 * iterations after the first; and how many slots each needs: the most of
 * its allocations live at once, by a sweep over their lifetimes.
 */
#include <stdlib.h>

#include "sharded.h"

struct sh_event {
	int64_t at;
	int delta; /* -1 (a free, first at a tie: lifetimes are half-open) or +1 */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_event(const void *a, const void *b)
{
	const struct sh_event *x = a, *y = b;

	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	return x->delta - y->delta;
}

/* Whether the occurrences occ[0..m) recur: per-iteration counts into tmp. */
static int recurs(const uint32_t *occ, size_t m, const struct sh_iters *it, double min_share,
                  uint64_t *tmp)
{
	size_t n_runs = 0, best = 0;
	double want = min_share * (double)(it->n_iters - 1);
	uint64_t need = (uint64_t)want; /* rounded up, bar rounding noise */

	if ((double)need < want - 1e-9)
		need++;

	for (size_t i = 0; i < m;) {
		int32_t iter = it->iter_of[occ[i]];
		size_t j = i;

		while (j < m && it->iter_of[occ[j]] == iter)
			j++;
		if (iter >= 2)
			tmp[n_runs++] = j - i;
		i = j;
	}
	qsort(tmp, n_runs, sizeof *tmp, cmp_u64);
	for (size_t i = 0, j; i < n_runs; i = j) { /* the most common count's frequency */
		for (j = i; j < n_runs && tmp[j] == tmp[i]; j++)
			;
		if (j - i > best)
			best = j - i;
	}
	return best >= 1 && best >= need;
}

/* The most of occ[0..m) live at once. */
static uint32_t max_live(const struct memprof_pool_lifetime *items, const uint32_t *occ, size_t m,
                         struct sh_event *ev)
{
	size_t n_ev = 0;
	int64_t live = 0, most = 0;

	for (size_t i = 0; i < m; i++) {
		ev[n_ev++] = (struct sh_event){items[occ[i]].alloc_at, +1};
		if (items[occ[i]].free_at != INT64_MAX)
			ev[n_ev++] = (struct sh_event){items[occ[i]].free_at, -1};
	}
	qsort(ev, n_ev, sizeof *ev, cmp_event);
	for (size_t i = 0; i < n_ev; i++)
		if ((live += ev[i].delta) > most)
			most = live;
	return most > UINT32_MAX ? UINT32_MAX : (uint32_t)most;
}

static int eligible(const struct memprof_pool_lifetime *x)
{
	return x->site && x->size_bytes > 0 && x->size_bytes <= SH_MAX_SLOT_BYTES;
}

/* occ[start[k] .. start[k + 1]): key k's allocations in index order. */
static int group_by_key(const uint32_t *key_of, size_t n, size_t n_keys, size_t *start,
                        uint32_t *occ)
{
	size_t *fill = malloc((n_keys ? n_keys : 1) * sizeof *fill);

	if (!fill)
		return MEMPROF_POOL_ENOMEM;
	for (size_t k = 0; k <= n_keys; k++)
		start[k] = 0;
	for (size_t i = 0; i < n; i++)
		start[key_of[i] + 1]++;
	for (size_t k = 0; k < n_keys; k++) {
		start[k + 1] += start[k];
		fill[k] = start[k];
	}
	for (size_t i = 0; i < n; i++)
		occ[fill[key_of[i]]++] = (uint32_t)i;
	free(fill);
	return MEMPROF_POOL_OK;
}

int sh_recurring(const struct memprof_pool_lifetime *items, size_t n, const uint32_t *key_of,
                 size_t n_keys, const struct sh_iters *it, double min_share,
                 uint32_t *n_slots_of_key)
{
	size_t *start = malloc((n_keys + 1) * sizeof *start);
	uint32_t *occ = malloc((n ? n : 1) * sizeof *occ);
	uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
	struct sh_event *ev = malloc((2 * n + 1) * sizeof *ev);
	int rc = MEMPROF_POOL_ENOMEM;

	for (size_t k = 0; k < n_keys; k++)
		n_slots_of_key[k] = 0;
	if (!start || !occ || !tmp || !ev || n > UINT32_MAX ||
	    group_by_key(key_of, n, n_keys, start, occ) != MEMPROF_POOL_OK)
		goto out;
	rc = MEMPROF_POOL_OK;
	for (size_t k = 0; it->n_iters >= 2 && k < n_keys; k++) {
		const uint32_t *o = occ + start[k];
		size_t m = start[k + 1] - start[k];

		if (m > 0 && eligible(&items[o[0]]) && recurs(o, m, it, min_share, tmp))
			n_slots_of_key[k] = max_live(items, o, m, ev);
	}
out:
	free(start);
	free(occ);
	free(tmp);
	free(ev);
	return rc;
}
