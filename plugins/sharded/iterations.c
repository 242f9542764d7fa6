/*
 * plugins/sharded/iterations.c - where the trace's iterations are: from
 * phase markers (each entry of the iteration phase starts one), else from
 * the period of the sequence of site+size keys (period.c).  Also numbers
 * the site+size keys.  Pure: it logs nothing; plan.c says what it found.
 */
#include <stdlib.h>
#include <string.h>

#include "sharded.h"

size_t sh_key_of(char *buf, const char *site, uint64_t size_bytes)
{
	return pl_key_text_u64(buf, SH_KEY_BYTES, site, size_bytes);
}

int sh_key_ids(const struct memprof_pool_lifetime *items, size_t n, uint32_t *key_of,
               size_t *n_keys)
{
	struct pl_keymap m;
	char buf[SH_KEY_BYTES];
	uint64_t id;

	pl_keymap_init(&m);
	for (size_t i = 0; i < n; i++) {
		size_t len = sh_key_of(buf, items[i].site, items[i].size_bytes);

		if (!pl_keymap_get(&m, buf, len, &id)) {
			id = m.n;
			if (pl_keymap_put(&m, buf, len, id) < 0) {
				pl_keymap_free(&m);
				return MEMPROF_POOL_ENOMEM;
			}
		}
		key_of[i] = (uint32_t)id;
	}
	*n_keys = m.n;
	pl_keymap_free(&m);
	return MEMPROF_POOL_OK;
}

static int has_phase(const char *ph)
{
	return ph && *ph;
}

/* Phase ids (first appearance order) into ph[] (-1: none); entries[] per id. */
static int phase_ids(const struct memprof_pool_lifetime *items, size_t n, int64_t *ph,
                     uint64_t *entries, size_t *n_phases)
{
	struct pl_keymap m;
	uint64_t id;

	pl_keymap_init(&m);
	for (size_t i = 0; i < n; i++) {
		const char *s = items[i].phase;

		ph[i] = -1;
		if (!has_phase(s))
			continue;
		if (!pl_keymap_get(&m, s, strlen(s), &id)) {
			id = m.n;
			if (pl_keymap_put(&m, s, strlen(s), id) < 0) {
				pl_keymap_free(&m);
				return MEMPROF_POOL_ENOMEM;
			}
			entries[id] = 0;
		}
		ph[i] = (int64_t)id;
		if (i == 0 || ph[i - 1] != ph[i])
			entries[id]++;
	}
	*n_phases = m.n;
	pl_keymap_free(&m);
	return MEMPROF_POOL_OK;
}

/* The iteration phase's id: the named one, or the first entered twice; -1: none. */
static int64_t pick_phase(const struct memprof_pool_lifetime *items, size_t n, const int64_t *ph,
                          const uint64_t *entries, const char *phase_opt)
{
	for (size_t i = 0; i < n; i++) {
		if (ph[i] < 0 || entries[ph[i]] < 2)
			continue;
		if (!phase_opt || strcmp(items[i].phase, phase_opt) == 0)
			return ph[i];
	}
	return -1;
}

static int from_phases(const struct memprof_pool_lifetime *items, size_t n, const char *phase_opt,
                       struct sh_iters *out)
{
	int64_t *ph = malloc((n ? n : 1) * sizeof *ph), x;
	uint64_t *entries = malloc((n ? n : 1) * sizeof *entries);
	size_t n_phases = 0;
	int32_t cur = 0;
	int rc = MEMPROF_POOL_ENOMEM;

	if (!ph || !entries || phase_ids(items, n, ph, entries, &n_phases) != MEMPROF_POOL_OK)
		goto out;
	rc = MEMPROF_POOL_OK;
	x = pick_phase(items, n, ph, entries, phase_opt);
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
	rc = from_phases(items, n, phase_opt, out);
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
