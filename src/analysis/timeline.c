/*
 * analysis/timeline.c - each device's states folded into buckets of W
 * consecutive events that keep their first, last and extreme states; W
 * doubles, merging neighbours, when the rows would pass max_points.  The
 * only allocation is the growth of a device's bucket array (at most
 * max_points + 1 buckets).  Never prints.
 */
#include "analysis/timeline.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

enum { ROLE_FIRST, ROLE_LAST, ROLE_MIN_LIVE, ROLE_MAX_LIVE, ROLE_MAX_REQUESTED, ROLE_MAX_RESERVED };

int mp_timeline_init(struct mp_timeline *t, int64_t max_points)
{
	memset(t, 0, sizeof(*t));
	if (max_points < MP_TIMELINE_MIN_POINTS || max_points > MP_TIMELINE_MAX_POINTS)
		return MP_EINVAL;
	t->max_points = max_points;
	return 0;
}

void mp_timeline_free(struct mp_timeline *t)
{
	int i;

	for (i = 0; i < t->n_series; i++)
		free(t->series[i].buckets);
	t->n_series = 0;
	t->last = 0;
}

/* Distinct events among the bucket's roles: its rows. */
static int bucket_rows(const struct mp_timeline_bucket *b)
{
	int i, j, rows = 0;

	for (i = 0; i < MP_TIMELINE_ROLES; i++) {
		for (j = 0; j < i && b->role[j].n != b->role[i].n; j++)
			;
		rows += j == i;
	}
	return rows;
}

/* The new event is in role[ROLE_LAST]: the bucket's first. */
static void bucket_start(struct mp_timeline_bucket *b)
{
	int i;

	for (i = 0; i < MP_TIMELINE_ROLES; i++)
		if (i != ROLE_LAST)
			b->role[i] = b->role[ROLE_LAST];
	b->n_events = 1;
}

/* The new event is already in role[ROLE_LAST].  Strict comparisons: on a
 * tie the earlier event keeps the role. */
static void bucket_add(struct mp_timeline_bucket *b)
{
	const struct mp_timeline_point *p = &b->role[ROLE_LAST];

	if (p->live_bytes < b->role[ROLE_MIN_LIVE].live_bytes)
		b->role[ROLE_MIN_LIVE] = *p;
	else if (p->live_bytes > b->role[ROLE_MAX_LIVE].live_bytes)
		b->role[ROLE_MAX_LIVE] = *p;
	if (p->requested_bytes > b->role[ROLE_MAX_REQUESTED].requested_bytes)
		b->role[ROLE_MAX_REQUESTED] = *p;
	if (p->reserved_bytes > b->role[ROLE_MAX_RESERVED].reserved_bytes)
		b->role[ROLE_MAX_RESERVED] = *p;
	b->n_events++;
}

/* out = l followed by r; out may be l. */
static void bucket_merge(struct mp_timeline_bucket *out, const struct mp_timeline_bucket *l,
                         const struct mp_timeline_bucket *r)
{
	struct mp_timeline_bucket m = *l;

	m.role[ROLE_LAST] = r->role[ROLE_LAST];
	if (r->role[ROLE_MIN_LIVE].live_bytes < m.role[ROLE_MIN_LIVE].live_bytes)
		m.role[ROLE_MIN_LIVE] = r->role[ROLE_MIN_LIVE];
	if (r->role[ROLE_MAX_LIVE].live_bytes > m.role[ROLE_MAX_LIVE].live_bytes)
		m.role[ROLE_MAX_LIVE] = r->role[ROLE_MAX_LIVE];
	if (r->role[ROLE_MAX_REQUESTED].requested_bytes >
	    m.role[ROLE_MAX_REQUESTED].requested_bytes)
		m.role[ROLE_MAX_REQUESTED] = r->role[ROLE_MAX_REQUESTED];
	if (r->role[ROLE_MAX_RESERVED].reserved_bytes > m.role[ROLE_MAX_RESERVED].reserved_bytes)
		m.role[ROLE_MAX_RESERVED] = r->role[ROLE_MAX_RESERVED];
	m.n_events = l->n_events + r->n_events;
	*out = m;
}

/* Double W: merge buckets pairwise.  Every bucket but the last holds W
 * events before and 2W after; the last keeps fewer.  Returns the last. */
static struct mp_timeline_bucket *halve(struct mp_timeline_series *s)
{
	int64_t i, j = 0;

	for (i = 0; i + 1 < s->n_buckets; i += 2)
		bucket_merge(&s->buckets[j++], &s->buckets[i], &s->buckets[i + 1]);
	if (i < s->n_buckets)
		s->buckets[j++] = s->buckets[i];
	s->n_buckets = j;
	s->bucket_events *= 2;
	s->closed_rows = 0;
	for (i = 0; i + 1 < j; i++)
		s->closed_rows += bucket_rows(&s->buckets[i]);
	return &s->buckets[j - 1];
}

/* Each bucket has a row, so while the rows fit there are at most
 * max_points buckets, and one more the moment an event opens a bucket. */
static int grow(struct mp_timeline_series *s, int64_t max_points)
{
	int64_t cap = s->cap_buckets ? s->cap_buckets * 2 : 64;
	struct mp_timeline_bucket *b;

	if (cap > max_points + 1)
		cap = max_points + 1;
	if (cap <= s->cap_buckets)
		return MP_ENOMEM; /* cannot happen while the rows fit */
	b = realloc(s->buckets, (size_t)cap * sizeof(*b));
	if (!b)
		return MP_ENOMEM;
	s->buckets = b;
	s->cap_buckets = cap;
	return 0;
}

static struct mp_timeline_series *series_of(struct mp_timeline *t, int32_t device)
{
	struct mp_timeline_series *s;
	int i;

	if (t->n_series && t->series[t->last].device == device)
		return &t->series[t->last];
	for (i = 0; i < t->n_series; i++)
		if (t->series[i].device == device) {
			t->last = i;
			return &t->series[i];
		}
	if (t->n_series == MP_TIMELINE_MAX_DEVICES) {
		t->devices_truncated = 1;
		return NULL;
	}
	s = &t->series[t->n_series];
	memset(s, 0, sizeof(*s));
	s->device = device;
	s->bucket_events = 1;
	t->last = t->n_series++;
	return s;
}

/* Close the last bucket (when there is one) and open another. */
static struct mp_timeline_bucket *open_bucket(struct mp_timeline_series *s, int64_t max_points)
{
	struct mp_timeline_bucket *b;

	if (s->n_buckets == s->cap_buckets && grow(s, max_points) < 0)
		return NULL;
	if (s->n_buckets)
		s->closed_rows += bucket_rows(&s->buckets[s->n_buckets - 1]);
	b = &s->buckets[s->n_buckets++];
	b->n_events = 0;
	return b;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
                    unsigned changes)
{
	struct mp_timeline *t = ctx;
	struct mp_timeline_series *s;
	struct mp_timeline_bucket *b;
	struct mp_timeline_point *p;

	(void)changes;
	if (!d || !(s = series_of(t, d->device)))
		return 0;
	b = s->n_buckets ? &s->buckets[s->n_buckets - 1] : NULL;
	if ((!b || b->n_events == s->bucket_events) && !(b = open_bucket(s, t->max_points)))
		return MP_ENOMEM;
	p = &b->role[ROLE_LAST];
	p->n = ++s->n_events;
	p->seq = rec->ev.seq;
	p->ts_ns = rec->ev.ts_ns;
	p->live_bytes = d->live_bytes;
	p->requested_bytes = d->requested_bytes;
	p->reserved_bytes = d->has_segments ? d->reserved_bytes : -1;
	if (b->n_events)
		bucket_add(b);
	else
		bucket_start(b);
	/* the last bucket has at most MP_TIMELINE_ROLES rows: count them only
	 * when that could pass the limit */
	if (s->closed_rows + MP_TIMELINE_ROLES > t->max_points)
		while (s->closed_rows + bucket_rows(b) > t->max_points)
			b = halve(s);
	return 0;
}

struct mp_mem_listener mp_timeline_listener(struct mp_timeline *t)
{
	struct mp_mem_listener l;

	memset(&l, 0, sizeof(l));
	l.ctx = t;
	l.on_event = on_event;
	return l;
}

int mp_timeline_devices(const struct mp_timeline *t, int32_t *out)
{
	int i, j;

	for (i = 0; i < t->n_series; i++) {
		int32_t dev = t->series[i].device;

		for (j = i; j > 0 && out[j - 1] > dev; j--)
			out[j] = out[j - 1];
		out[j] = dev;
	}
	return t->n_series;
}

const struct mp_timeline_series *mp_timeline_series(const struct mp_timeline *t, int32_t device)
{
	int i;

	for (i = 0; i < t->n_series; i++)
		if (t->series[i].device == device)
			return &t->series[i];
	return NULL;
}

int64_t mp_timeline_n_rows(const struct mp_timeline_series *s)
{
	return s->n_buckets ? s->closed_rows + bucket_rows(&s->buckets[s->n_buckets - 1]) : 0;
}

int mp_timeline_foreach(const struct mp_timeline_series *s,
                        int (*fn)(void *ctx, const struct mp_timeline_point *p), void *ctx)
{
	const struct mp_timeline_point *sorted[MP_TIMELINE_ROLES];
	int64_t k;
	int i, j, rc;

	for (k = 0; k < s->n_buckets; k++) {
		const struct mp_timeline_bucket *b = &s->buckets[k];

		for (i = 0; i < MP_TIMELINE_ROLES; i++) {
			for (j = i; j > 0 && sorted[j - 1]->n > b->role[i].n; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = &b->role[i];
		}
		for (i = 0; i < MP_TIMELINE_ROLES; i++) {
			if (i && sorted[i]->n == sorted[i - 1]->n)
				continue;
			if ((rc = fn(ctx, sorted[i])) < 0)
				return rc;
		}
	}
	return 0;
}

struct copy_ctx {
	struct mp_timeline_point *out;
	int64_t cap, n;
};

static int copy_point(void *ctx, const struct mp_timeline_point *p)
{
	struct copy_ctx *c = ctx;

	if (c->n < c->cap)
		c->out[c->n] = *p;
	c->n++;
	return 0;
}

int64_t mp_timeline_points(const struct mp_timeline_series *s, struct mp_timeline_point *out,
                           int64_t cap)
{
	struct copy_ctx c = {out, cap, 0};

	mp_timeline_foreach(s, copy_point, &c);
	return c.n;
}
