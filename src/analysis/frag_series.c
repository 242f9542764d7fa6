/*
 * analysis/frag_series.c - each device's fragmentation after every event,
 * read from analysis/frag, folded into buckets of W consecutive events that
 * keep their first, last and highest states; W doubles, merging
 * neighbours, when the rows would pass max_points (the scheme of
 * analysis/timeline).  Computes no figure of its own but the two ratios.
 */
#include "analysis/frag_series.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

enum { ROLE_FIRST, ROLE_LAST, ROLE_MAX_SHARE, ROLE_MAX_EXT };

int mp_frag_series_init(struct mp_frag_series *s, const struct mp_frag *frag, int64_t max_points)
{
	memset(s, 0, sizeof(*s));
	if (max_points < MP_FRAG_SERIES_MIN_POINTS || max_points > MP_FRAG_SERIES_MAX_POINTS)
		return MP_EINVAL;
	s->frag = frag;
	s->max_points = max_points;
	return 0;
}

void mp_frag_series_free(struct mp_frag_series *s)
{
	int i;

	for (i = 0; i < s->n_devices; i++)
		free(s->devices[i].buckets);
	s->n_devices = 0;
}

static int bucket_rows(const struct mp_frag_series_bucket *b)
{
	int i, j, rows = 0;

	for (i = 0; i < MP_FRAG_SERIES_ROLES; i++) {
		for (j = 0; j < i && b->role[j].n != b->role[i].n; j++)
			;
		rows += j == i;
	}
	return rows;
}

/* Strict comparisons: on a tie the earlier event keeps the role. */
static void take_max(struct mp_frag_series_point *role, const struct mp_frag_series_point *p)
{
	if (p->free_share > role[ROLE_MAX_SHARE].free_share)
		role[ROLE_MAX_SHARE] = *p;
	if (p->ext_ratio > role[ROLE_MAX_EXT].ext_ratio)
		role[ROLE_MAX_EXT] = *p;
}

static void merge(struct mp_frag_series_bucket *out, const struct mp_frag_series_bucket *l,
                  const struct mp_frag_series_bucket *r)
{
	struct mp_frag_series_bucket m = *l;

	m.role[ROLE_LAST] = r->role[ROLE_LAST];
	if (r->role[ROLE_MAX_SHARE].free_share > m.role[ROLE_MAX_SHARE].free_share)
		m.role[ROLE_MAX_SHARE] = r->role[ROLE_MAX_SHARE];
	if (r->role[ROLE_MAX_EXT].ext_ratio > m.role[ROLE_MAX_EXT].ext_ratio)
		m.role[ROLE_MAX_EXT] = r->role[ROLE_MAX_EXT];
	m.n_events = l->n_events + r->n_events;
	*out = m;
}

/* Double W; returns the last bucket. */
static struct mp_frag_series_bucket *halve(struct mp_frag_series_device *d)
{
	int64_t i, j = 0;

	for (i = 0; i + 1 < d->n_buckets; i += 2)
		merge(&d->buckets[j++], &d->buckets[i], &d->buckets[i + 1]);
	if (i < d->n_buckets)
		d->buckets[j++] = d->buckets[i];
	d->n_buckets = j;
	d->bucket_events *= 2;
	d->closed_rows = 0;
	for (i = 0; i + 1 < j; i++)
		d->closed_rows += bucket_rows(&d->buckets[i]);
	return &d->buckets[j - 1];
}

/* While the rows fit there are at most max_points buckets, and one more
 * the moment an event opens a bucket. */
static struct mp_frag_series_bucket *open_bucket(struct mp_frag_series_device *d,
                                                 int64_t max_points)
{
	if (d->n_buckets == d->cap_buckets) {
		int64_t cap = d->cap_buckets ? d->cap_buckets * 2 : 64;
		struct mp_frag_series_bucket *b;

		if (cap > max_points + 1)
			cap = max_points + 1;
		if (cap <= d->cap_buckets)
			return NULL;
		if (!(b = realloc(d->buckets, (size_t)cap * sizeof(*b))))
			return NULL;
		d->buckets = b;
		d->cap_buckets = cap;
	}
	if (d->n_buckets)
		d->closed_rows += bucket_rows(&d->buckets[d->n_buckets - 1]);
	d->buckets[d->n_buckets].n_events = 0;
	return &d->buckets[d->n_buckets++];
}

/* The ratios of a point of analysis/frag. */
static void fill(struct mp_frag_series_point *p, const struct mp_frag_point *f)
{
	p->reserved_bytes = f->reserved_bytes;
	p->free_bytes = f->free_in_reserved_bytes;
	p->largest_free_bytes = f->largest_free_bytes;
	p->free_share = p->ext_ratio = -1;
	if (f->reserved_bytes > 0 && f->free_in_reserved_bytes >= 0)
		p->free_share = (double)f->free_in_reserved_bytes / (double)f->reserved_bytes;
	if (f->free_in_reserved_bytes == 0)
		p->ext_ratio = 0;
	else if (f->free_in_reserved_bytes > 0 && f->largest_free_bytes >= 0) {
		p->ext_ratio =
		        1.0 - (double)f->largest_free_bytes / (double)f->free_in_reserved_bytes;
		if (p->ext_ratio < 0)
			p->ext_ratio = 0;
	}
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *md,
                    unsigned changes)
{
	struct mp_frag_series *s = ctx;
	const struct mp_frag_point *f = mp_frag_now(s->frag, md);
	struct mp_frag_series_device *d;
	struct mp_frag_series_bucket *b;
	struct mp_frag_series_point *p;
	int slot, i;

	(void)changes;
	if (!f)
		return 0;
	slot = (int)(md - s->frag->ms->devices);
	d = &s->devices[slot];
	if (slot >= s->n_devices) { /* memstate gives slots in order, from 0 */
		s->n_devices = slot + 1;
		d->device = md->device;
		d->bucket_events = 1;
	}
	b = d->n_buckets ? &d->buckets[d->n_buckets - 1] : NULL;
	if ((!b || b->n_events == d->bucket_events) && !(b = open_bucket(d, s->max_points)))
		return MP_ENOMEM;
	p = &b->role[ROLE_LAST];
	p->n = ++d->n_events;
	p->seq = rec->ev.seq;
	p->ts_ns = rec->ev.ts_ns;
	fill(p, f);
	if (b->n_events++ == 0)
		for (i = 0; i < MP_FRAG_SERIES_ROLES; i++)
			b->role[i] = *p;
	else
		take_max(b->role, p);
	if (d->closed_rows + MP_FRAG_SERIES_ROLES > s->max_points)
		while (d->closed_rows + bucket_rows(b) > s->max_points)
			b = halve(d);
	return 0;
}

struct mp_mem_listener mp_frag_series_listener(struct mp_frag_series *s)
{
	struct mp_mem_listener l;

	memset(&l, 0, sizeof(l));
	l.ctx = s;
	l.on_event = on_event;
	return l;
}

const struct mp_frag_series_device *mp_frag_series_device(const struct mp_frag_series *s,
                                                          int32_t device)
{
	int i;

	for (i = 0; i < s->n_devices; i++)
		if (s->devices[i].n_events && s->devices[i].device == device)
			return &s->devices[i];
	return NULL;
}

int64_t mp_frag_series_n_rows(const struct mp_frag_series_device *d)
{
	return d->n_buckets ? d->closed_rows + bucket_rows(&d->buckets[d->n_buckets - 1]) : 0;
}

int mp_frag_series_foreach(const struct mp_frag_series_device *d,
                           int (*fn)(void *ctx, const struct mp_frag_series_point *p), void *ctx)
{
	const struct mp_frag_series_point *sorted[MP_FRAG_SERIES_ROLES];
	int64_t k;
	int i, j, rc;

	for (k = 0; k < d->n_buckets; k++) {
		const struct mp_frag_series_bucket *b = &d->buckets[k];

		for (i = 0; i < MP_FRAG_SERIES_ROLES; i++) {
			for (j = i; j > 0 && sorted[j - 1]->n > b->role[i].n; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = &b->role[i];
		}
		for (i = 0; i < MP_FRAG_SERIES_ROLES; i++) {
			if (i && sorted[i]->n == sorted[i - 1]->n)
				continue;
			if ((rc = fn(ctx, sorted[i])) < 0)
				return rc;
		}
	}
	return 0;
}
