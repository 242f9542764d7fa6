/*
 * analysis/ranks_summary.c - after the last event, the cross-rank figures
 * of analysis/ranks.h read off the per-unit totals: the units in order, the
 * spread of their peak live bytes, and the call sites whose bytes at the
 * units' own peaks differ.  Costs sites x units lookups once; prints nothing.
 */
#include "analysis/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static int64_t first_pid(const struct mp_rank *u)
{
	return u->n_pids ? u->pids[0] : 0;
}

/* Ranks ascending, then processes without a rank by pid, then row id. */
static int unit_cmp(const void *pa, const void *pb)
{
	const struct mp_rank *a = pa, *b = pb;

	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (first_pid(a) != first_pid(b))
		return first_pid(a) < first_pid(b) ? -1 : 1;
	return (a->first_process > b->first_process) - (a->first_process < b->first_process);
}

/* Leave out units without an event (a process of the table that did
 * nothing, or nothing on the device asked), then order the rest. */
static void order_units(struct mp_ranks *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->n_units; i++) {
		if (r->units[i].n_events == 0) {
			mp_rank_unit_free(&r->units[i]);
			continue;
		}
		r->units[n++] = r->units[i];
	}
	r->n_units = n;
	if (n > 1) /* units is NULL when there are none */
		qsort(r->units, n, sizeof(*r->units), unit_cmp);
	r->last_process = -1; /* unit numbers moved */
}

static int count_hosts(struct mp_ranks *r)
{
	struct mp_strmap hosts;
	size_t i;
	int rc = 0;

	mp_strmap_init(&hosts);
	r->n_ranked = r->n_hosts = 0;
	for (i = 0; i < r->n_units && rc == 0; i++) {
		const char *h = r->units[i].host;

		if (r->units[i].rank >= 0)
			r->n_ranked++;
		if (h && !mp_strmap_get(&hosts, h, strlen(h), NULL)) {
			rc = mp_strmap_put(&hosts, h, strlen(h), 0, NULL);
			r->n_hosts++;
		}
	}
	mp_strmap_free(&hosts);
	return rc < 0 ? MP_ENOMEM : 0;
}

static int by_bytes(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Twice the median of the units' peaks (exact in integers). */
static int median_x2(const struct mp_ranks *r, int64_t *out)
{
	int64_t *v = malloc(r->n_units * sizeof(*v));
	size_t i, n = r->n_units;

	if (!v)
		return MP_ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = r->units[i].live_peak.bytes;
	qsort(v, n, sizeof(*v), by_bytes);
	*out = n % 2 ? 2 * v[n / 2] : v[n / 2 - 1] + v[n / 2];
	free(v);
	return 0;
}

static int spread(struct mp_ranks *r)
{
	struct mp_ranks_spread *s = &r->spread;
	double sum = 0;
	int64_t m2;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (r->n_units == 0)
		return 0;
	for (i = 0; i < r->n_units; i++) {
		int64_t b = r->units[i].live_peak.bytes;

		if (b > r->units[s->worst].live_peak.bytes)
			s->worst = i;
		if (b < r->units[s->best].live_peak.bytes)
			s->best = i;
		sum += (double)b;
	}
	s->max_bytes = r->units[s->worst].live_peak.bytes;
	s->min_bytes = r->units[s->best].live_peak.bytes;
	s->spread_bytes = s->max_bytes - s->min_bytes;
	s->max_over_min = s->min_bytes > 0 ? (double)s->max_bytes / (double)s->min_bytes : 0;
	s->max_over_mean = sum > 0 ? (double)s->max_bytes / (sum / (double)r->n_units) : 0;
	if (median_x2(r, &m2) < 0 || !(s->above = malloc(r->n_units * sizeof(*s->above))))
		return MP_ENOMEM;
	s->median_bytes = (double)m2 / 2;
	for (i = 0; i < r->n_units; i++) /* peak > median * (1 + pct / 100) */
		if ((__int128)r->units[i].live_peak.bytes * 200 >
		    (__int128)m2 * (100 + MP_RANKS_ABOVE_MEDIAN_PCT))
			s->above[s->n_above++] = i;
	return 0;
}

/* The site across the units: min, max (first unit at each), presence. */
static void site_range(const struct mp_ranks *r, size_t site, struct mp_rank_site_diff *d)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->site = site;
	d->key = r->sites[site].key;
	for (i = 0; i < r->n_units; i++) {
		int64_t b = mp_rank_site_bytes(&r->units[i], site);

		if (b > 0)
			d->n_present++;
		if (i == 0 || b < d->min_bytes)
			d->min_bytes = b, d->min_unit = i;
		if (i == 0 || b > d->max_bytes)
			d->max_bytes = b, d->max_unit = i;
	}
}

static int diff_cmp(const void *pa, const void *pb)
{
	const struct mp_rank_site_diff *a = pa, *b = pb;
	int64_t da = a->max_bytes - a->min_bytes, db = b->max_bytes - b->min_bytes;

	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int differing_sites(struct mp_ranks *r)
{
	size_t i;

	r->n_diffs = 0;
	if (r->n_sites == 0 || r->n_units < 2)
		return 0;
	if (!(r->diffs = malloc(r->n_sites * sizeof(*r->diffs))))
		return MP_ENOMEM;
	for (i = 0; i < r->n_sites; i++) {
		struct mp_rank_site_diff *d = &r->diffs[r->n_diffs];

		site_range(r, i, d);
		if (d->max_bytes != d->min_bytes)
			r->n_diffs++;
	}
	qsort(r->diffs, r->n_diffs, sizeof(*r->diffs), diff_cmp);
	return 0;
}

int mp_ranks_summarize(struct mp_ranks *r)
{
	int rc;

	order_units(r);
	if ((rc = count_hosts(r)) < 0 || (rc = spread(r)) < 0)
		return rc;
	return differing_sites(r);
}
