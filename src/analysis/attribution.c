/*
 * analysis/attribution.c - running per-group totals of live blocks, and a
 * copy of them taken at the chosen moment.  Each table keeps, per group,
 * the current totals and the copy; groups changed since the last copy sit
 * on a dirty list, so a copy costs what changed, not the table size.
 */
#include "analysis/attribution.h"
#include "util/densemap.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct totals {
	int64_t count, bytes, requested_bytes;
};

struct entry {
	int64_t key;
	struct totals now, kept;
	int dirty;
	const struct memprof_stack *stack;
	const char *name;
};

struct mp_attr_table {
	struct mp_densemap index; /* key -> entry number */
	struct entry *entries;
	size_t n, cap;
	size_t *dirty; /* entry numbers changed since the last copy */
	size_t n_dirty, cap_dirty;
};

static inline int size_class(int64_t size_bytes)
{
	return size_bytes > 0 ? 64 - __builtin_clzll((unsigned long long)size_bytes) : 0;
}

int mp_attr_size_class(int64_t size_bytes)
{
	return size_class(size_bytes);
}

void mp_attribution_init(struct mp_attribution *a, const struct mp_memstate *ms, unsigned kinds,
                         int at, int64_t at_ts_ns)
{
	memset(a, 0, sizeof(*a));
	a->ms = ms;
	a->kinds = kinds;
	a->at = at;
	a->at_ts_ns = at_ts_ns;
}

static void table_free(struct mp_attr_table *t)
{
	if (!t)
		return;
	mp_densemap_free(&t->index);
	free(t->entries);
	free(t->dirty);
	free(t);
}

void mp_attribution_free(struct mp_attribution *a)
{
	int i, k;

	for (i = 0; i < MP_MEM_MAX_DEVICES; i++)
		for (k = 0; k < MP_ATTR_KINDS; k++)
			table_free(a->devices[i].tables[k]);
}

const struct mp_attr_device *mp_attribution_device(const struct mp_attribution *a, int32_t device)
{
	int i;

	for (i = 0; i < a->n_devices; i++)
		if (a->devices[i].device == device)
			return &a->devices[i];
	return NULL;
}

/* The device's tables, made on its first use; NULL when out of memory. */
static struct mp_attr_device *make_device(struct mp_attribution *a, int slot)
{
	struct mp_attr_device *d = &a->devices[slot];
	int k;

	if (slot >= a->n_devices) {
		a->n_devices = slot + 1;
		d->device = a->ms->devices[slot].device;
	}
	for (k = 0; k < MP_ATTR_KINDS; k++)
		if ((a->kinds & (1u << k)) && !d->tables[k]) {
			if (!(d->tables[k] = calloc(1, sizeof(*d->tables[k]))))
				return NULL;
			mp_densemap_init(&d->tables[k]->index);
		}
	if (slot == a->n_ready)
		a->n_ready++;
	return d;
}

static inline struct mp_attr_device *slot_device(struct mp_attribution *a, int slot)
{
	if (slot < 0)
		return NULL;
	if (slot < a->n_ready)
		return &a->devices[slot]; /* its tables are made */
	return make_device(a, slot);
}

/* A new entry for key, made from block b; NULL when out of memory. */
static struct entry *new_entry(struct mp_attr_table *t, const struct mp_mem_block *b, int kind,
                               int64_t key)
{
	struct entry *e;

	if (t->n >= MP_DENSEMAP_NONE)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct entry *p = realloc(t->entries, cap * sizeof(*p));
		size_t *dp = realloc(t->dirty, cap * sizeof(*dp));

		if (p)
			t->entries = p;
		if (dp)
			t->dirty = dp;
		if (!p || !dp)
			return NULL;
		t->cap = t->cap_dirty = cap;
	}
	if (mp_densemap_put(&t->index, (uint64_t)key, (uint32_t)t->n) < 0)
		return NULL;
	e = &t->entries[t->n++];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->stack = kind == MP_ATTR_STACK ? b->stack : NULL;
	e->name = kind == MP_ATTR_PHASE ? b->phase : kind == MP_ATTR_API ? b->api : NULL;
	return e;
}

/* Add to table t, under key, the change c (block b's count and bytes, or
 * their negation when it is freed). */
static inline int bump(struct mp_attr_table *t, const struct mp_mem_block *b, int kind, int64_t key,
                       const struct totals *c)
{
	uint32_t i;
	struct entry *e;

	if (!t)
		return 0;
	i = mp_densemap_get(&t->index, (uint64_t)key);
	if (i != MP_DENSEMAP_NONE)
		e = &t->entries[i];
	else if (!(e = new_entry(t, b, kind, key)))
		return MP_ENOMEM;
	e->now.count += c->count;
	e->now.bytes += c->bytes;
	e->now.requested_bytes += c->requested_bytes;
	if (!e->dirty) {
		e->dirty = 1;
		t->dirty[t->n_dirty++] = (size_t)(e - t->entries);
	}
	return 0;
}

static int add_block(struct mp_attribution *a, const struct mp_mem_block *b, int sign)
{
	struct mp_attr_device *d = slot_device(a, b->dev_slot);
	struct mp_attr_table *const *t;
	/* read before the entries change: they could alias b's fields */
	const struct totals c = {sign, sign * b->size_bytes, sign * b->requested_bytes};
	int64_t stack_id = b->stack_id, phase_id = b->phase_id, stream = (int64_t)b->stream;
	int64_t size = size_class(b->size_bytes), api_id = b->api_id;

	if (!d)
		return b->dev_slot < 0 ? 0 : MP_ENOMEM;
	t = d->tables;
	if (bump(t[MP_ATTR_STACK], b, MP_ATTR_STACK, stack_id, &c) < 0 ||
	    bump(t[MP_ATTR_PHASE], b, MP_ATTR_PHASE, phase_id, &c) < 0 ||
	    bump(t[MP_ATTR_STREAM], b, MP_ATTR_STREAM, stream, &c) < 0 ||
	    bump(t[MP_ATTR_SIZE], b, MP_ATTR_SIZE, size, &c) < 0 ||
	    bump(t[MP_ATTR_API], b, MP_ATTR_API, api_id, &c) < 0)
		return MP_ENOMEM;
	return 0;
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	(void)rec;
	return add_block(ctx, b, 1);
}

static int on_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	(void)rec;
	return add_block(ctx, b, -1);
}

/* Copy what changed since the last copy: the moment is now. */
static void keep(struct mp_attr_device *d, const struct mp_mem_device *md,
                 const struct memprof_event *ev)
{
	int k;
	size_t i;

	for (k = 0; k < MP_ATTR_KINDS; k++) {
		struct mp_attr_table *t = d->tables[k];

		if (!t)
			continue;
		for (i = 0; i < t->n_dirty; i++) {
			struct entry *e = &t->entries[t->dirty[i]];

			e->kept = e->now;
			e->dirty = 0;
		}
		t->n_dirty = 0;
	}
	d->taken = 1;
	d->ts_ns = ev->ts_ns;
	d->seq = ev->seq;
	d->live_bytes = md->live_bytes;
	d->live_blocks = md->n_live;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *md,
                    unsigned changes)
{
	struct mp_attribution *a = ctx;
	const struct memprof_event *ev = &rec->ev;
	struct mp_attr_device *d;
	int now;

	if (a->at_relative) {
		a->at_relative = 0;
		a->at_ts_ns += ev->ts_ns;
	}
	if (!md)
		return 0;
	if (!(d = slot_device(a, (int)(md - a->ms->devices))))
		return MP_ENOMEM;
	switch (a->at) {
	case MP_ATTR_AT_PEAK:
		now = (changes & MP_MEM_NEW_LIVE_PEAK) != 0;
		break;
	case MP_ATTR_AT_OOM:
		now = ev->op == MEMPROF_OP_OOM && !d->taken;
		break;
	default:
		now = ev->ts_ns <= a->at_ts_ns;
		break;
	}
	if (now)
		keep(d, md, ev);
	return 0;
}

struct mp_mem_listener mp_attribution_listener(struct mp_attribution *a)
{
	struct mp_mem_listener l = {
	        .ctx = a, .on_alloc = on_alloc, .on_free = on_free, .on_event = on_event};

	return l;
}

static int by_size(const void *pa, const void *pb)
{
	const struct mp_attr_group *x = pa, *y = pb;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

struct mp_attr_group *mp_attribution_groups(const struct mp_attr_device *d, int kind, ptrdiff_t *n)
{
	const struct mp_attr_table *t = d->taken ? d->tables[kind] : NULL;
	struct mp_attr_group *g;
	size_t i, m = 0;

	*n = 0;
	if (!t || t->n == 0)
		return NULL;
	if (!(g = malloc(t->n * sizeof(*g)))) {
		*n = -1;
		return NULL;
	}
	for (i = 0; i < t->n; i++) {
		const struct entry *e = &t->entries[i];

		if (e->kept.count <= 0)
			continue;
		g[m].key = e->key;
		g[m].count = e->kept.count;
		g[m].bytes = e->kept.bytes;
		g[m].requested_bytes = e->kept.requested_bytes;
		g[m].stack = e->stack;
		g[m].name = e->name;
		m++;
	}
	qsort(g, m, sizeof(*g), by_size);
	*n = (ptrdiff_t)m;
	return g;
}
