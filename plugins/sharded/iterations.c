/*
 * plugins/sharded/iterations.c - where the trace's iterations are: from
 * phase markers (each entry of the iteration phase starts one; auto picks
 * the phase whose entries cut the trace into segments alike in the
 * site+size keys they hold, covering most of it), else from the period of the sequence of
 * site+size keys (period.c), which key_ids.c numbers from the key text
 * written here.  Pure: it logs nothing; plan.c says what it found.
 */
#include <stdlib.h>
#include <string.h>

#include "sharded.h"

size_t sh_key_of(char *buf, const char *site, uint64_t size_bytes)
{
	return pl_key_text_u64(buf, SH_KEY_BYTES, site, size_bytes);
}

static int has_phase(const char *ph)
{
	return ph && *ph;
}

/* The id of phase text s (len bytes) in m, a new one when new (entries[] set to 0); -1: ENOMEM. */
static int64_t phase_id(struct pl_keymap *m, const char *s, size_t len, uint64_t *entries)
{
	uint64_t id;

	if (pl_keymap_get(m, s, len, &id))
		return (int64_t)id;
	id = m->n;
	if (pl_keymap_put(m, s, len, id) < 0)
		return -1;
	entries[id] = 0;
	return (int64_t)id;
}

/*
 * Phase ids (first appearance order) into ph[] (-1: none); entries[] per id.
 * An address holds one text while the items are held: an item with the last
 * item's phase address takes its id without hashing.
 */
static int phase_ids(const struct memprof_pool_lifetime *items, size_t n, int64_t *ph,
                     uint64_t *entries, size_t *n_phases)
{
	struct pl_keymap m;
	const char *last = NULL;
	int64_t last_id = -1;

	pl_keymap_init(&m);
	for (size_t i = 0; i < n; i++) {
		const char *s = items[i].phase;

		ph[i] = -1;
		if (!has_phase(s))
			continue;
		if (s != last && (last_id = phase_id(&m, s, strlen(s), entries)) < 0) {
			pl_keymap_free(&m);
			return MEMPROF_POOL_ENOMEM;
		}
		last = s;
		ph[i] = last_id;
		if (i == 0 || ph[i - 1] != ph[i])
			entries[last_id]++;
	}
	*n_phases = m.n;
	pl_keymap_free(&m);
	return MEMPROF_POOL_OK;
}

/* The named phase's id, if entered twice; -1: none. */
static int64_t named_phase(const struct memprof_pool_lifetime *items, size_t n, const int64_t *ph,
                           const uint64_t *entries, const char *phase_opt)
{
	for (size_t i = 0; i < n; i++)
		if (ph[i] >= 0 && entries[ph[i]] >= 2 && strcmp(items[i].phase, phase_opt) == 0)
			return ph[i];
	return -1;
}

/* Scratch for scoring candidate phases: per segment (its first item and length), per key. */
struct scratch {
	uint64_t *seg_start, *seg_n, *sorted, *stamp_key, *typical_key;
	uint64_t stamp;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/*
 * The keys of segment s (items seg_start[s] on, seg_n[s] of them) are
 * stamped into keys[] with a fresh stamp; their number.
 */
static uint64_t stamp_segment(struct scratch *w, const uint32_t *key_of, int64_t s, uint64_t *keys,
                              const uint64_t *typical, uint64_t *in_typical)
{
	uint64_t distinct = 0, stamp = ++w->stamp;

	*in_typical = 0;
	for (size_t i = w->seg_start[s]; i < w->seg_start[s] + w->seg_n[s]; i++) {
		if (keys[key_of[i]] == stamp)
			continue;
		keys[key_of[i]] = stamp;
		distinct++;
		if (typical && typical[key_of[i]] == w->typical_key[0])
			(*in_typical)++;
	}
	return distinct;
}

/*
 * Entries of phase x cut the trace into segments (from its first entry
 * on).  The typical segment is one of median length; a segment matches it
 * when their sets of site+size keys overlap by half or more (Jaccard).  x
 * is an iteration phase when at least two segments match, at most one (a
 * warm-up or a teardown) does not, and the matching segments hold at least
 * half of all allocations; returns how many they hold, else 0.
 */
static uint64_t coverage_of(struct scratch *w, const int64_t *ph, const uint32_t *key_of, size_t n,
                            int64_t x, uint64_t n_segments)
{
	int64_t seg = -1, typical = 0;
	uint64_t covered = 0, n_match = 0, n_typ, in_typ;

	for (uint64_t k = 0; k < n_segments; k++)
		w->seg_n[k] = 0;
	for (size_t i = 0; i < n; i++) {
		if (ph[i] == x && (i == 0 || ph[i - 1] != x))
			w->seg_start[++seg] = i; /* a segment runs to the next entry */
		if (seg >= 0)
			w->seg_n[seg]++;
	}
	memcpy(w->sorted, w->seg_n, n_segments * sizeof *w->sorted);
	qsort(w->sorted, n_segments, sizeof *w->sorted, cmp_u64);
	while (w->seg_n[typical] != w->sorted[n_segments / 2])
		typical++;
	n_typ = stamp_segment(w, key_of, typical, w->typical_key + 1, NULL, &in_typ);
	w->typical_key[0] = w->stamp; /* typical_key[1 + key] == this stamp: key is typical */
	for (uint64_t k = 0; k < n_segments; k++) {
		uint64_t d = stamp_segment(w, key_of, (int64_t)k, w->stamp_key, w->typical_key + 1,
		                           &in_typ);
		if (d && 2 * in_typ >= d + n_typ - in_typ) {
			n_match++;
			covered += w->seg_n[k];
		}
	}
	if (n_match < 2 || n_match + 1 < n_segments || 2 * covered < n)
		return 0;
	return covered;
}

/* The iteration phase's id (see the top of the file); -1: none. */
static int64_t pick_phase(const struct memprof_pool_lifetime *items, size_t n, const int64_t *ph,
                          const uint64_t *entries, size_t n_phases, const uint32_t *key_of,
                          const char *phase_opt)
{
	struct scratch w = {0};
	uint64_t best = 0, n_keys = 0;
	int64_t pick = -1;

	if (phase_opt)
		return named_phase(items, n, ph, entries, phase_opt);
	for (size_t i = 0; i < n; i++)
		if (key_of[i] + 1ull > n_keys)
			n_keys = key_of[i] + 1ull;
	w.seg_start = malloc((n ? n : 1) * sizeof *w.seg_start);
	w.seg_n = malloc((n ? n : 1) * sizeof *w.seg_n);
	w.sorted = malloc((n ? n : 1) * sizeof *w.sorted);
	w.stamp_key = calloc(n_keys + 1, sizeof *w.stamp_key);
	w.typical_key = calloc(n_keys + 2, sizeof *w.typical_key);
	for (size_t x = 0;
	     w.seg_start && w.seg_n && w.sorted && w.stamp_key && w.typical_key && x < n_phases;
	     x++) {
		uint64_t c = entries[x] >= 2 && entries[x] <= n
		                     ? coverage_of(&w, ph, key_of, n, (int64_t)x, entries[x])
		                     : 0;
		if (c > best) {
			best = c;
			pick = (int64_t)x;
		}
	}
	free(w.seg_start);
	free(w.seg_n);
	free(w.sorted);
	free(w.stamp_key);
	free(w.typical_key);
	return pick;
}

static int from_phases(const struct memprof_pool_lifetime *items, size_t n, const uint32_t *key_of,
                       const char *phase_opt, struct sh_iters *out)
{
	int64_t *ph = malloc((n ? n : 1) * sizeof *ph), x;
	uint64_t *entries = malloc((n ? n : 1) * sizeof *entries);
	size_t n_phases = 0;
	int32_t cur = 0;
	int rc = MEMPROF_POOL_ENOMEM;

	if (!ph || !entries || phase_ids(items, n, ph, entries, &n_phases) != MEMPROF_POOL_OK)
		goto out;
	rc = MEMPROF_POOL_OK;
	x = pick_phase(items, n, ph, entries, n_phases, key_of, phase_opt);
	if (x < 0 || entries[x] > INT32_MAX)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (ph[i] == x && (i == 0 || ph[i - 1] != x) && ++cur == 2)
			out->second_start = (int64_t)i;
		out->iter_of[i] = cur;
	}
	out->from = SH_FROM_PHASES;
	out->n_iters = entries[x];
	for (size_t i = 0; i < n; i++)
		if (ph[i] == x) {
			out->phase = items[i].phase;
			break;
		}
out:
	free(ph);
	free(entries);
	return rc;
}

static void from_period(const uint32_t *key_of, size_t n, size_t n_keys, struct sh_iters *out)
{
	double share = 0;
	uint64_t p = sh_find_period(key_of, n, n_keys, &share), n_iters;
	size_t s = 0;

	out->best_period = p;
	out->best_share = share;
	if (p == 0 || share < SH_MIN_MATCH_SHARE || n / p < 2)
		return;
	while (s + p < n && key_of[s] != key_of[s + p])
		s++;
	n_iters = (n - s) / p;
	if (n_iters < 2 || n_iters > INT32_MAX)
		return;
	for (size_t i = s; i < n; i++) {
		uint64_t k = (i - s) / p; /* 0-based window */
		out->iter_of[i] = k < n_iters ? (int32_t)(k + 1) : -1;
	}
	out->from = SH_FROM_PERIOD;
	out->n_iters = n_iters;
	out->period_allocs = p;
	out->match_share = share;
	out->second_start = (int64_t)(s + p);
}

int sh_iters_detect(const struct memprof_pool_lifetime *items, size_t n, const uint32_t *key_of,
                    const char *phase_opt, struct sh_iters *out)
{
	size_t n_keys = 0;
	int rc;

	*out = (struct sh_iters){.from = SH_FROM_NONE, .second_start = INT64_MAX};
	out->iter_of = calloc(n ? n : 1, sizeof *out->iter_of);
	if (!out->iter_of)
		return MEMPROF_POOL_ENOMEM;
	rc = from_phases(items, n, key_of, phase_opt, out);
	if (rc != MEMPROF_POOL_OK || out->from != SH_FROM_NONE)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (key_of[i] + (size_t)1 > n_keys)
			n_keys = key_of[i] + (size_t)1;
	from_period(key_of, n, n_keys, out);
	if (out->from == SH_FROM_NONE)
		memset(out->iter_of, 0, (n ? n : 1) * sizeof *out->iter_of);
	return MEMPROF_POOL_OK;
}

void sh_iters_free(struct sh_iters *it)
{
	free(it->iter_of);
	it->iter_of = NULL;
}
