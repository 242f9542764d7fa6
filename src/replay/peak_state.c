/*
 * replay/peak_state.c - the state of reserved memory at the reserved peak
 * (peak_state.h): the current segments and mapped runs (the caller keeps
 * the current blocks), the state saved at the last rise of the peak, and
 * the journal of changes since.
 * Blocks and segments are dense arrays indexed by an intmap (removal moves
 * the last item into the hole); mapped ranges are a sorted array of
 * disjoint, non-touching runs, as the address map merges them.  Measures
 * the saved state once, by sorting it, with the address map's own rules
 * (an mp_extents is built only when containers overlap); never prints.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/extents.h"
#include "replay/peak_state.h"
#include "util/array.h"
#include "util/error.h"
#include "util/intmap.h"
#include "util/radix_sort.h"

/* Items keyed by key (a block's key, a segment's address), each with an address and a size. */
struct item {
	uint64_t key, addr, size;
};

struct dense {
	struct mp_intmap at; /* key -> position in v, for keys from n_keys on */
	uint32_t *pos1; /* key -> 1 + position in v, for keys below n_keys (made at first use) */
	size_t n_keys;
	struct item *v;
	size_t n, cap;
};

struct run {
	uint64_t lo, hi;
};

struct runs {
	struct run *v;
	size_t n, cap;
};

struct side {
	struct dense blocks, segments;
	struct runs maps;
};

enum { J_ADD_BLOCK, J_DEL_BLOCK, J_ADD_SEGMENT, J_DEL_SEGMENT };

struct jentry {
	uint64_t key, addr, size;
	int op;
};

struct mp_peak_state {
	struct side cur, saved; /* cur.blocks stays empty: the caller has them */
	size_t n_blocks;        /* blocks added less blocks removed: the journal's limit */
	struct jentry *journal;
	size_t n_journal, cap_journal;
	int overflowed; /* the journal was dropped: the next save copies cur */
	int has_saved;
};

static void dense_init(struct dense *d)
{
	memset(d, 0, sizeof *d);
	mp_intmap_init(&d->at);
}

static void dense_free(struct dense *d)
{
	mp_intmap_free(&d->at);
	free(d->pos1);
	free(d->v);
}

/* Whether key is in d, and where. */
static int dense_find(const struct dense *d, uint64_t key, uint64_t *pos)
{
	if (key >= d->n_keys)
		return mp_intmap_get(&d->at, key, pos);
	if (!d->pos1 || !d->pos1[key])
		return 0;
	*pos = d->pos1[key] - 1;
	return 1;
}

/* key is at pos; 0 or MP_ENOMEM (never when key was there already). */
static int dense_place(struct dense *d, uint64_t key, uint64_t pos)
{
	if (key >= d->n_keys)
		return mp_intmap_put(&d->at, key, pos) < 0 ? MP_ENOMEM : 0;
	if (!d->pos1 && !(d->pos1 = calloc(d->n_keys, sizeof *d->pos1)))
		return MP_ENOMEM;
	d->pos1[key] = (uint32_t)pos + 1;
	return 0;
}

static void dense_forget(struct dense *d, uint64_t key)
{
	if (key >= d->n_keys)
		mp_intmap_del(&d->at, key);
	else
		d->pos1[key] = 0;
}

static int dense_put(struct dense *d, uint64_t key, uint64_t addr, uint64_t size)
{
	uint64_t pos;

	if (dense_find(d, key, &pos)) {
		d->v[pos] = (struct item){key, addr, size};
		return 0;
	}
	if (d->n >= UINT32_MAX ||
	    mp_array_reserve((void **)&d->v, &d->cap, d->n + 1, sizeof *d->v) < 0 ||
	    dense_place(d, key, d->n) < 0)
		return MP_ENOMEM;
	d->v[d->n++] = (struct item){key, addr, size};
	return 0;
}

static void dense_del(struct dense *d, uint64_t key)
{
	uint64_t pos;

	if (!dense_find(d, key, &pos))
		return;
	dense_forget(d, key);
	if (pos != --d->n) {
		d->v[pos] = d->v[d->n];
		dense_place(d, d->v[pos].key, pos); /* replaces: cannot fail */
	}
}

/* Empty d, keeping its memory (the map's table is cleared, not shrunk). */
static void dense_clear(struct dense *d)
{
	for (size_t i = 0; d->pos1 && i < d->n; i++)
		if (d->v[i].key < d->n_keys)
			d->pos1[d->v[i].key] = 0;
	if (d->at.cap)
		memset(d->at.used, 0, d->at.cap);
	d->at.n = 0;
	d->n = 0;
}

/* dst := src. */
static int dense_copy(struct dense *dst, const struct dense *src)
{
	dense_clear(dst);
	for (size_t i = 0; i < src->n; i++)
		if (dense_put(dst, src->v[i].key, src->v[i].addr, src->v[i].size) < 0)
			return MP_ENOMEM;
	return 0;
}

/* Runs that touch or overlap [a, b) merge with it into one. */
static int runs_map(struct runs *r, uint64_t a, uint64_t b)
{
	size_t i = 0, j;

	while (i < r->n && r->v[i].hi < a)
		i++;
	for (j = i; j < r->n && r->v[j].lo <= b; j++) {
		a = r->v[j].lo < a ? r->v[j].lo : a;
		b = r->v[j].hi > b ? r->v[j].hi : b;
	}
	if (j == i && mp_array_reserve((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v) < 0)
		return MP_ENOMEM;
	/* runs [i, j) become one at i */
	memmove(&r->v[i + 1], &r->v[j], (r->n - j) * sizeof *r->v);
	r->n = r->n - (j - i) + 1;
	r->v[i] = (struct run){a, b};
	return 0;
}

/* [a, b) is cut out of every run. */
static int runs_unmap(struct runs *r, uint64_t a, uint64_t b)
{
	size_t i = 0;

	while (i < r->n && r->v[i].hi <= a)
		i++;
	for (; i < r->n && r->v[i].lo < b;) {
		struct run x = r->v[i];

		if (x.lo < a && x.hi > b) { /* split in two */
			if (mp_array_reserve((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v) < 0)
				return MP_ENOMEM;
			memmove(&r->v[i + 2], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
			r->n++;
			r->v[i] = (struct run){x.lo, a};
			r->v[i + 1] = (struct run){b, x.hi};
			return 0;
		}
		if (x.lo < a) {
			r->v[i++].hi = a;
		} else if (x.hi > b) {
			r->v[i].lo = b;
			return 0;
		} else {
			memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof *r->v);
			r->n--;
		}
	}
	return 0;
}

static int runs_copy(struct runs *dst, const struct runs *src)
{
	if (mp_array_reserve((void **)&dst->v, &dst->cap, src->n, sizeof *dst->v) < 0)
		return MP_ENOMEM;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof *dst->v);
	dst->n = src->n;
	return 0;
}

static void side_init(struct side *s)
{
	dense_init(&s->blocks);
	dense_init(&s->segments);
	memset(&s->maps, 0, sizeof s->maps);
}

static void side_free(struct side *s)
{
	dense_free(&s->blocks);
	dense_free(&s->segments);
	free(s->maps.v);
}

struct mp_peak_state *mp_peak_state_new_keys(size_t n_keys)
{
	struct mp_peak_state *ps = calloc(1, sizeof *ps);

	if (!ps)
		return NULL;
	side_init(&ps->cur);
	side_init(&ps->saved);
	ps->saved.blocks.n_keys = n_keys < UINT32_MAX ? n_keys : UINT32_MAX;
	return ps;
}

struct mp_peak_state *mp_peak_state_new(void)
{
	return mp_peak_state_new_keys(0);
}

void mp_peak_state_free(struct mp_peak_state *ps)
{
	if (!ps)
		return;
	side_free(&ps->cur);
	side_free(&ps->saved);
	free(ps->journal);
	free(ps);
}

/* Note a change for the next save, unless the journal has grown past the live state. */
static int journal(struct mp_peak_state *ps, int op, uint64_t key, uint64_t addr, uint64_t size)
{
	size_t limit = 2 * (ps->n_blocks + ps->cur.segments.n) + 1024;

	if (ps->overflowed)
		return 0;
	if (ps->n_journal >= limit) {
		ps->overflowed = 1;
		ps->n_journal = 0;
		return 0;
	}
	if (mp_array_reserve((void **)&ps->journal, &ps->cap_journal, ps->n_journal + 1,
	                     sizeof *ps->journal) < 0)
		return MP_ENOMEM;
	ps->journal[ps->n_journal++] = (struct jentry){key, addr, size, op};
	return 0;
}

int mp_peak_state_add_block(struct mp_peak_state *ps, uint64_t key, uint64_t addr, uint64_t size)
{
	ps->n_blocks++;
	return journal(ps, J_ADD_BLOCK, key, addr, size);
}

int mp_peak_state_remove_block(struct mp_peak_state *ps, uint64_t key)
{
	ps->n_blocks -= ps->n_blocks > 0;
	return journal(ps, J_DEL_BLOCK, key, 0, 0);
}

int mp_peak_state_add_segment(struct mp_peak_state *ps, uint64_t addr, uint64_t size)
{
	if (size == 0) /* the address map does not record it either */
		return 0;
	if (dense_put(&ps->cur.segments, addr, addr, size) < 0)
		return MP_ENOMEM;
	return journal(ps, J_ADD_SEGMENT, addr, addr, size);
}

int mp_peak_state_remove_segment(struct mp_peak_state *ps, uint64_t addr)
{
	dense_del(&ps->cur.segments, addr);
	return journal(ps, J_DEL_SEGMENT, addr, 0, 0);
}

int mp_peak_state_map(struct mp_peak_state *ps, uint64_t addr, uint64_t size)
{
	if (size == 0 || size > UINT64_MAX - addr)
		return 0;
	return runs_map(&ps->cur.maps, addr, addr + size);
}

int mp_peak_state_unmap(struct mp_peak_state *ps, uint64_t addr, uint64_t size)
{
	if (size == 0 || size > UINT64_MAX - addr)
		return 0;
	return runs_unmap(&ps->cur.maps, addr, addr + size);
}

static int apply(struct side *s, const struct jentry *j)
{
	switch (j->op) {
	case J_ADD_BLOCK:
		return dense_put(&s->blocks, j->key, j->addr, j->size);
	case J_DEL_BLOCK:
		dense_del(&s->blocks, j->key);
		return 0;
	case J_ADD_SEGMENT:
		return dense_put(&s->segments, j->key, j->addr, j->size);
	default:
		dense_del(&s->segments, j->key);
		return 0;
	}
}

static int put_saved_block(void *ctx, uint64_t key, uint64_t addr, uint64_t size)
{
	return dense_put(ctx, key, addr, size);
}

/* saved := the current state, the blocks from the caller. */
static int copy_current(struct mp_peak_state *ps, mp_peak_state_blocks_fn blocks, void *ctx)
{
	struct dense *b = &ps->saved.blocks;

	dense_clear(b);
	if (blocks(ctx, put_saved_block, b) < 0 ||
	    dense_copy(&ps->saved.segments, &ps->cur.segments) < 0)
		return MP_ENOMEM;
	return 0;
}

int mp_peak_state_save(struct mp_peak_state *ps, mp_peak_state_blocks_fn blocks, void *ctx)
{
	int rc = 0;

	if (ps->overflowed || !ps->has_saved) {
		rc = copy_current(ps, blocks, ctx);
	} else {
		for (size_t k = 0; k < ps->n_journal && rc == 0; k++)
			rc = apply(&ps->saved, &ps->journal[k]);
	}
	if (rc == 0)
		rc = runs_copy(&ps->saved.maps, &ps->cur.maps);
	ps->n_journal = 0;
	ps->overflowed = rc < 0; /* a save that failed half-way copies next time */
	ps->has_saved = rc == 0;
	return rc;
}

/* The holes of s built into an mp_extents, as the address map would hold them. */
static int holes_by_extents(const struct side *s, struct mp_extents_figures *f)
{
	struct mp_extents *x;
	int rc = 0;

	if (mp_extents_new(0, &x) < 0)
		return MP_ENOMEM;
	for (size_t i = 0; i < s->segments.n && rc != MP_ENOMEM; i++)
		rc = mp_extents_add_segment(x, s->segments.v[i].addr, s->segments.v[i].size);
	for (size_t i = 0; i < s->maps.n && rc != MP_ENOMEM; i++)
		rc = mp_extents_map(x, s->maps.v[i].lo, s->maps.v[i].hi - s->maps.v[i].lo);
	for (size_t i = 0; i < s->blocks.n && rc != MP_ENOMEM; i++)
		rc = mp_extents_add_block(x, s->blocks.v[i].key, s->blocks.v[i].addr,
		                          s->blocks.v[i].size);
	mp_extents_figures(x, f);
	mp_extents_destroy(x);
	return rc == MP_ENOMEM ? MP_ENOMEM : 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The containers of s (segments and mapped runs) in address order into
 * *out (malloc'd): 0; 1 when two overlap (the address map refuses one of
 * them, in the order it is given them); or MP_ENOMEM.
 */
static int sorted_containers(const struct side *s, struct run **out, size_t *n_out)
{
	struct run *c = malloc((s->segments.n + s->maps.n + 1) * sizeof *c);
	size_t n = 0;

	if (!c)
		return MP_ENOMEM;
	for (size_t i = 0; i < s->segments.n; i++)
		if (s->segments.v[i].size <= UINT64_MAX - s->segments.v[i].addr) /* else refused */
			c[n++] = (struct run){s->segments.v[i].addr,
			                      s->segments.v[i].addr + s->segments.v[i].size};
	if (s->maps.n)
		memcpy(c + n, s->maps.v, s->maps.n * sizeof *c);
	n += s->maps.n;
	qsort(c, n, sizeof *c, cmp_run);
	*out = c;
	*n_out = n;
	for (size_t i = 1; i < n; i++)
		if (c[i].lo < c[i - 1].hi)
			return 1;
	return 0;
}

/*
 * The blocks of s that cover bytes, as (address, position in s->blocks.v)
 * in the address map's order: by address, then by key.  Into *out
 * (malloc'd, with as much again for the sort); 0 or MP_ENOMEM.
 */
static int sorted_blocks(const struct side *s, struct mp_radix_pair **out, size_t *n_out)
{
	const struct item *v = s->blocks.v;
	struct mp_radix_pair *b = malloc((2 * s->blocks.n + 1) * sizeof *b);
	size_t n = 0;

	if (!b)
		return MP_ENOMEM;
	for (size_t i = 0; i < s->blocks.n; i++)
		if (v[i].size && v[i].size <= UINT64_MAX - v[i].addr)
			b[n++] = (struct mp_radix_pair){v[i].addr, i};
	mp_radix_sort(b, b + n, n);
	for (size_t i = 1; i < n; i++) /* equal addresses by key: insertion, as they are rare */
		for (size_t k = i;
		     k > 0 && b[k].key == b[k - 1].key && v[b[k].val].key < v[b[k - 1].val].key;
		     k--) {
			struct mp_radix_pair t = b[k];
			b[k] = b[k - 1];
			b[k - 1] = t;
		}
	*out = b;
	*n_out = n;
	return 0;
}

static void hole(struct mp_extents_figures *f, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	f->hole_bytes += hi - lo;
	f->largest_hole = hi - lo > f->largest_hole ? hi - lo : f->largest_hole;
}

/*
 * The holes of containers c[0..n_c) (disjoint, in order) around the blocks
 * b[0..n_b) (sorted_blocks), as mp_extents counts them: a hole lies between
 * a container's start or a block wholly inside it and the next block wholly
 * inside it or the container's end, measured from the previous one's end
 * only; a block across the container's end breaks the chain.
 */
static void walk_holes(const struct run *c, size_t n_c, const struct mp_radix_pair *b, size_t n_b,
                       const struct item *v, struct mp_extents_figures *f)
{
	size_t j = 0;

	for (size_t i = 0; i < n_c; i++) {
		uint64_t from = c[i].lo;
		int open = 1; /* the previous node is the start or a block inside */

		while (j < n_b && b[j].key < c[i].lo)
			j++;
		for (; j < n_b && b[j].key < c[i].hi; j++) {
			uint64_t end = b[j].key + v[b[j].val].size;

			if (end > c[i].hi) {
				open = 0;
				continue;
			}
			if (open)
				hole(f, from, b[j].key);
			from = end;
			open = 1;
		}
		if (open)
			hole(f, from, c[i].hi);
	}
}

/*
 * The holes of s, as holes_by_extents gives them, by one sort and one walk;
 * containers that overlap (which the address map refuses in an order that
 * matters) are left to holes_by_extents.
 */
static int holes_of(const struct side *s, struct mp_extents_figures *f)
{
	struct run *c = NULL;
	struct mp_radix_pair *b = NULL;
	size_t n_c = 0, n_b = 0;
	int rc = sorted_containers(s, &c, &n_c);

	memset(f, 0, sizeof *f);
	if (rc == 0)
		rc = sorted_blocks(s, &b, &n_b);
	if (rc == 0)
		walk_holes(c, n_c, b, n_b, s->blocks.v, f);
	free(c);
	free(b);
	return rc == 1 ? holes_by_extents(s, f) : rc;
}

int mp_peak_state_holes(const struct mp_peak_state *ps, uint64_t *hole_bytes,
                        uint64_t *largest_hole, int *saved)
{
	struct mp_extents_figures f;
	int rc;

	*hole_bytes = *largest_hole = 0;
	*saved = ps->has_saved;
	if (!ps->has_saved)
		return 0;
	if ((rc = holes_of(&ps->saved, &f)) < 0)
		return rc;
	*hole_bytes = f.hole_bytes;
	*largest_hole = f.largest_hole;
	return 0;
}
