/*
 * plugins/sharded/period.c - the period of a sequence of keys, for traces
 * without phase markers: candidates are the most frequent gaps between an
 * occurrence of a key and its next four; the candidate P with the largest
 * share of key[i] == key[i + P] wins (ties: the shorter).  Whether it is
 * good enough is iterations.c's call.
 */
#include <stdlib.h>

#include "sharded.h"

#define SH_GAP_DEPTH 4 /* gaps to the next 1..4 occurrences of a key */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Every gap of at most n/2 between an occurrence and its next few; *n_gaps. */
static uint64_t *collect_gaps(const uint32_t *key_of, size_t n, size_t n_keys, size_t *n_gaps)
{
	uint64_t *gaps = malloc(SH_GAP_DEPTH * n * sizeof *gaps);
	uint64_t *last = malloc(SH_GAP_DEPTH * n_keys * sizeof *last); /* last + 1; 0: none */
	size_t m = 0;

	if (!gaps || !last) {
		free(gaps);
		free(last);
		return NULL;
	}
	for (size_t k = 0; k < SH_GAP_DEPTH * n_keys; k++)
		last[k] = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *l = &last[(size_t)key_of[i] * SH_GAP_DEPTH];

		for (int d = 0; d < SH_GAP_DEPTH && l[d]; d++)
			if (i - (l[d] - 1) <= n / 2)
				gaps[m++] = i - (l[d] - 1);
		for (int d = SH_GAP_DEPTH - 1; d > 0; d--)
			l[d] = l[d - 1];
		l[0] = i + 1;
	}
	free(last);
	*n_gaps = m;
	return gaps;
}

/* The (up to SH_N_CANDIDATES) most frequent gaps into cand[]; how many. */
static size_t top_gaps(uint64_t *gaps, size_t m, uint64_t *cand)
{
	uint64_t count[SH_N_CANDIDATES];
	size_t n_cand = 0;

	qsort(gaps, m, sizeof *gaps, cmp_u64);
	for (size_t i = 0, j; i < m; i = j) {
		size_t at;

		for (j = i; j < m && gaps[j] == gaps[i]; j++)
			;
		at = n_cand < SH_N_CANDIDATES ? n_cand++ : SH_N_CANDIDATES;
		while (at > 0 && count[at - 1] < j - i) { /* insertion, most frequent first */
			if (at < SH_N_CANDIDATES) {
				count[at] = count[at - 1];
				cand[at] = cand[at - 1];
			}
			at--;
		}
		if (at < SH_N_CANDIDATES) {
			count[at] = j - i;
			cand[at] = gaps[i];
		}
	}
	return n_cand;
}

static double match_share(const uint32_t *key_of, size_t n, uint64_t p)
{
	size_t hits = 0;

	for (size_t i = 0; i + p < n; i++)
		hits += key_of[i] == key_of[i + p];
	return (double)hits / (double)(n - p);
}

uint64_t sh_find_period(const uint32_t *key_of, size_t n, size_t n_keys, double *share)
{
	uint64_t cand[SH_N_CANDIDATES], best = 0;
	double best_share = -1;
	size_t m = 0, n_cand;
	uint64_t *gaps;

	*share = 0;
	if (n < 2 || n_keys == 0 || !(gaps = collect_gaps(key_of, n, n_keys, &m)))
		return 0;
	n_cand = top_gaps(gaps, m, cand);
	free(gaps);
	for (size_t c = 0; c < n_cand; c++) {
		double s = match_share(key_of, n, cand[c]);

		if (s > best_share || (s == best_share && cand[c] < best)) {
			best_share = s;
			best = cand[c];
		}
	}
	if (best)
		*share = best_share;
	return best;
}
