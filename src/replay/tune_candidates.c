/*
 * replay/tune_candidates.c - the settings 'memprof tune' tries, drawn from the
 * trace: max_split_size_mb at the sizes of its large requests (so that
 * each size class in turn becomes "oversize", never split), rounding
 * tolerances from the gaps between those sizes, roundup_power2_divisions
 * over the intervals where its sizes vary most, and a small grid; each
 * with and without expandable segments, and garbage-collection thresholds
 * when a capacity is given.  Settings that change one thing come first, so
 * a --budget cut keeps them.  Pure computation.
 */
#include <stdlib.h>
#include <string.h>

#include "replay/input.h"
#include "replay/tune.h"
#include "util/error.h"

#define MB            (1024ull * 1024ull)
#define MAX_SPLITS    12
#define MAX_NONSPLITS 4
#define MAX_DIVS      16

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* Sorted distinct request sizes (rounded to 512 B) above 1 MiB; *n of them. */
static uint64_t *large_sizes(const struct mp_replay_device *d, size_t *n)
{
	uint64_t *v = malloc((d->n_allocs + 1) * sizeof *v);
	size_t k = 0, m = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < d->n_allocs; i++) {
		uint64_t r = (d->allocs[i].requested_bytes + 511) / 512 * 512;
		if (r > MB)
			v[k++] = r;
	}
	qsort(v, k, sizeof *v, cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	*n = m;
	return v;
}

static void add_unique(uint64_t *set, size_t *n, size_t cap, uint64_t v)
{
	for (size_t i = 0; i < *n; i++)
		if (set[i] == v)
			return;
	if (*n < cap)
		set[(*n)++] = v;
}

/* max_split_size_mb values: each at or below some request size, so it makes it oversize. */
static size_t split_values(const uint64_t *sizes, size_t n, uint64_t *out)
{
	static const uint64_t grid_mb[] = {32, 64, 128, 256, 512, 1024};
	uint64_t above[64];
	size_t k = 0, m = 0;

	for (size_t i = 0; i < n; i++)
		if (sizes[i] / MB > 20 && k < 64)
			add_unique(above, &k, 64, sizes[i] / MB * MB);
	/* up to 8 of the trace's sizes, spread over its distinct ones */
	for (size_t j = 0; j < 8 && k; j++)
		add_unique(out, &m, MAX_SPLITS, above[j * (k - 1) / 7]);
	for (size_t j = 0; j < sizeof grid_mb / sizeof grid_mb[0]; j++)
		if (n && grid_mb[j] * MB <= sizes[n - 1])
			add_unique(out, &m, MAX_SPLITS, grid_mb[j] * MB);
	return m;
}

/* max_non_split_rounding_mb values beyond the default: the median gap between large sizes. */
static size_t nonsplit_values(const uint64_t *sizes, size_t n, uint64_t *out)
{
	uint64_t gaps[256], median;
	size_t k = 0, m = 0;

	out[m++] = 0; /* PyTorch's default */
	for (size_t i = 1; i < n && k < 256; i++)
		if (sizes[i - 1] > 20 * MB)
			gaps[k++] = sizes[i] - sizes[i - 1];
	if (k) {
		qsort(gaps, k, sizeof *gaps, cmp_u64);
		median = (gaps[k / 2] + MB - 1) / MB * MB;
		if (median > 20 * MB)
			add_unique(out, &m, MAX_NONSPLITS, median);
		if (2 * median > 20 * MB)
			add_unique(out, &m, MAX_NONSPLITS, 2 * median);
	}
	add_unique(out, &m, MAX_NONSPLITS, 256 * MB);
	return m;
}

/* Division settings: off, uniform, and per-interval where the sizes vary most. */
static size_t division_values(const uint64_t *sizes, size_t n, uint32_t out[][MP_TUNE_N_INTERVALS])
{
	static const uint32_t uniform[] = {2, 4, 8, 16};
	size_t count[MP_TUNE_N_INTERVALS] = {0}, m = 1, top[3] = {0};

	memset(out, 0, MAX_DIVS * sizeof out[0]);
	for (size_t j = 0; j < 4; j++, m++)
		for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
			out[m][i] = uniform[j];
	for (size_t i = 0; i < n; i++) {
		size_t idx = 63u - (unsigned)__builtin_clzll(sizes[i]) - 20;
		count[idx < MP_TUNE_N_INTERVALS ? idx : MP_TUNE_N_INTERVALS - 1]++;
	}
	for (size_t t = 0; t < 3; t++) {
		for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
			if (count[i] > count[top[t]])
				top[t] = i;
		if (count[top[t]] < 2)
			break;
		out[m++][top[t]] = 4;
		out[m++][top[t]] = 8;
		for (size_t i = top[t]; i < MP_TUNE_N_INTERVALS; i++)
			out[m][i] = 4;
		m++;
		count[top[t]] = 0;
	}
	return m;
}

/* How many knobs differ from PyTorch's defaults: fewer first. */
static int n_knobs(const struct mp_tune_setting *s)
{
	int k = s->expandable + (s->max_split_bytes != 0) + (s->max_non_split_bytes != 0) +
	        (s->gc_threshold > 0);

	for (size_t i = 0; i < MP_TUNE_N_INTERVALS; i++)
		if (s->divisions[i] > 1)
			return k + 1;
	return k;
}

static int by_knobs(const void *x, const void *y)
{
	int a = n_knobs(x), b = n_knobs(y);

	return (a > b) - (a < b);
}

int mp_tune_candidates(const struct mp_replay_device *d, const struct mp_tune_setting *current,
                       uint64_t capacity_bytes, struct mp_tune_setting **out, size_t *n)
{
	static const double gcs[] = {0, 0.7, 0.8, 0.9};
	uint64_t splits[MAX_SPLITS + 1] = {0}, nonsplits[MAX_NONSPLITS];
	uint32_t divs[MAX_DIVS][MP_TUNE_N_INTERVALS];
	size_t n_sizes, n_splits, n_nonsplits, n_divs, n_gcs = capacity_bytes ? 4 : 1, k = 1, cap;
	uint64_t *sizes = large_sizes(d, &n_sizes);
	struct mp_tune_setting *c;

	if (!sizes)
		return MP_ENOMEM;
	n_splits = 1 + split_values(sizes, n_sizes, splits + 1);
	n_nonsplits = nonsplit_values(sizes, n_sizes, nonsplits);
	n_divs = division_values(sizes, n_sizes, divs);
	free(sizes);
	cap = 1 + 2 * n_splits * n_nonsplits * n_divs * n_gcs;
	if (!(c = calloc(cap, sizeof *c)))
		return MP_ENOMEM;
	c[0] = *current;
	for (int e = 0; e < 2; e++)
		for (size_t s = 0; s < n_splits; s++)
			for (size_t r = 0; r < (s ? n_nonsplits : 1); r++)
				for (size_t v = 0; v < n_divs; v++)
					for (size_t g = 0; g < n_gcs; g++) {
						struct mp_tune_setting t = {
						        .expandable = e,
						        .max_split_bytes = splits[s],
						        .max_non_split_bytes = nonsplits[r],
						        .gc_threshold = gcs[g]};
						memcpy(t.divisions, divs[v], sizeof t.divisions);
						if (!mp_tune_setting_equal(&t, current))
							c[k++] = t;
					}
	qsort(c + 1, k - 1, sizeof *c, by_knobs);
	*out = c;
	*n = k;
	return 0;
}
