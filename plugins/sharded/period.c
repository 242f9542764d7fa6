/*
 * plugins/sharded/period.c - the period of a sequence of keys, for traces
 * without phase markers: candidates are the most frequent gaps between an
 * occurrence of a key and its next four; the candidate P with the largest
 * share of key[i] == key[i + P] wins (ties: the shorter).  Whether it is
 * good enough is iterations.c's call.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sharded.h"

#define SH_GAP_DEPTH 4 /* gaps to the next 1..4 occurrences of a key */

/*
 * How often each gap g in 1..n/2 occurs between an occurrence of a key and
 * one of its next SH_GAP_DEPTH occurrences: hist[g].  Counting replaces
 * sorting every gap (4n of them: at 10^8 trace events, 800 MB and most of
 * the replay's time in qsort).  An occurrence adds at most 1 to a gap (its
 * next occurrences lie at different distances), so a count is at most n,
 * which the caller keeps within uint32_t.  NULL when out of memory.
 */
static uint32_t *gap_histogram(const uint32_t *key_of, size_t n, size_t n_keys)
{
	uint32_t *hist = calloc(n / 2 + 1, sizeof *hist);
	uint64_t *last = calloc(SH_GAP_DEPTH * n_keys, sizeof *last); /* last + 1; 0: none */

	if (!hist || !last) {
		free(hist);
		free(last);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t *l = &last[(size_t)key_of[i] * SH_GAP_DEPTH];

		for (int d = 0; d < SH_GAP_DEPTH && l[d]; d++)
			if (i - (l[d] - 1) <= n / 2)
				hist[i - (l[d] - 1)]++;
		for (int d = SH_GAP_DEPTH - 1; d > 0; d--)
			l[d] = l[d - 1];
		l[0] = i + 1;
	}
	free(last);
	return hist;
}

/* The (up to SH_N_CANDIDATES) most frequent gaps into cand[], the most
 * frequent first, a tie to the shorter gap; how many. */
static size_t top_gaps(const uint32_t *hist, size_t max_gap, uint64_t *cand)
{
	uint64_t count[SH_N_CANDIDATES];
	size_t n_cand = 0;

	for (size_t g = 1; g <= max_gap; g++) {
		size_t at;

		if (!hist[g])
			continue;
		at = n_cand < SH_N_CANDIDATES ? n_cand++ : SH_N_CANDIDATES;
		while (at > 0 && count[at - 1] < hist[g]) { /* insertion, most frequent first */
			if (at < SH_N_CANDIDATES) {
				count[at] = count[at - 1];
				cand[at] = cand[at - 1];
			}
			at--;
		}
		if (at < SH_N_CANDIDATES) {
			count[at] = hist[g];
			cand[at] = g;
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
	size_t n_cand;
	uint32_t *hist;

	*share = 0;
	/* counts are at most n (gap_histogram); a host caps a device's
	 * allocations far below UINT32_MAX (memprof: 2^30) */
	if (n < 2 || n > UINT32_MAX || n_keys == 0 || !(hist = gap_histogram(key_of, n, n_keys)))
		return 0;
	n_cand = top_gaps(hist, n / 2, cand);
	free(hist);
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
