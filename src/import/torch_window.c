/*
 * import/torch_window.c - the allocator state at the start of a snapshot's
 * trace window.  The trace is a ring buffer: what was live before its first
 * entry shows only as a free without an alloc, or as a block of the final
 * state the window never touched.  One forward pass over the window, then
 * one over the final state.  Pure computation on a tp_device's entries
 * (read in order with a tp_reader: they may be in the spill file).
 */
#include "import/torch.h"
#include "util/error.h"
#include "util/intmap.h"

#include <stdlib.h>
#include <string.h>

/* What the window says of an address: state in the low 2 bits, the index
 * of the entry that allocated it above them. */
enum { W_ALLOCATED = 1, W_PENDING = 2, W_FREED = 3 };

#define W_STATE(v)   ((int)((v)&3))
#define W_INDEX(v)   ((size_t)((v) >> 2))
#define W_PACK(i, s) (((uint64_t)(i) << 2) | (uint64_t)(s))

/* a + b held within +-2^62: sums of many sizes (each below 2^56) of a
 * crafted snapshot must not overflow. */
static int64_t sat_add(int64_t a, int64_t b)
{
	const int64_t lim = INT64_C(1) << 62;

	return a + b > lim ? lim : a + b < -lim ? -lim : a + b;
}

int64_t mp_torch_round_size(int64_t requested)
{
	return requested < 512 ? 512 : (requested + 511) / 512 * 512;
}

static int add_block(struct tp_device *d, size_t *cap, uint64_t addr, int64_t size,
                     int64_t requested, int pending, const struct mp_pk *frames)
{
	struct tp_block *b;

	if (d->n_initial_blocks == *cap) {
		size_t c = *cap ? 2 * *cap : 64;

		b = realloc(d->initial_blocks, c * sizeof(*b));
		if (!b)
			return MP_ENOMEM;
		d->initial_blocks = b;
		*cap = c;
	}
	b = &d->initial_blocks[d->n_initial_blocks++];
	b->addr = addr;
	b->size = size;
	b->requested = requested;
	b->pending = pending;
	b->frames = frames;
	return 0;
}

static int add_segment(struct tp_device *d, size_t *cap, const struct tp_segment *s)
{
	if (d->n_initial_segments == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct tp_segment *a = realloc(d->initial_segments, c * sizeof(*a));

		if (!a)
			return MP_ENOMEM;
		d->initial_segments = a;
		*cap = c;
	}
	d->initial_segments[d->n_initial_segments++] = *s;
	return 0;
}

/* The window pass over blocks: w maps address -> W_PACK(entry, state). */
static int walk_blocks(struct tp_device *d, struct tp_reader *r, struct mp_intmap *w, size_t *cap)
{
	size_t i;
	uint64_t v;

	for (i = 0; i < d->n_entries; i++) {
		const struct tp_entry *e = tp_reader_at(r, i);
		int known, st, rc = 0;

		if (!e)
			return r->failed;
		known = mp_intmap_get(w, e->addr, &v);
		st = known ? W_STATE(v) : 0;

		switch (e->action) {
		case TP_ALLOC:
			rc = mp_intmap_put(w, e->addr, W_PACK(i, W_ALLOCATED));
			break;
		case TP_FREE_REQUESTED:
			if (!known) /* live before the window */
				rc = add_block(d, cap, e->addr, mp_torch_round_size(e->size),
				               e->size, 0, NULL);
			else if (st != W_ALLOCATED)
				d->n_mismatches++; /* a free of nothing live */
			if (rc == 0 && (!known || st == W_ALLOCATED))
				rc = mp_intmap_put(w, e->addr,
				                   W_PACK(known ? W_INDEX(v) : i, W_PENDING));
			break;
		case TP_FREE_COMPLETED:
		case TP_FREE:
			if (!known) /* pending (or, for 'free', live) before the window */
				rc = add_block(d, cap, e->addr, mp_torch_round_size(e->size),
				               e->size, e->action == TP_FREE_COMPLETED, NULL);
			else if (st == W_FREED)
				d->n_mismatches++;
			rc = rc ? rc : mp_intmap_put(w, e->addr, W_PACK(i, W_FREED));
			break;
		default:
			break;
		}
		if (rc < 0)
			return MP_ENOMEM;
	}
	return 0;
}

/* The final state against the window: blocks it never touched were live
 * all along; window allocs still live or pending get the final block's
 * size as their granted size. */
static int match_final_blocks(struct tp_device *d, struct mp_intmap *w, size_t *cap)
{
	size_t i, first_live;
	uint64_t v;
	struct tp_entry e;

	for (i = 0; i < d->n_final_blocks; i++) {
		const struct tp_block *b = &d->final_blocks[i];
		int st = mp_intmap_get(w, b->addr, &v) ? W_STATE(v) : 0;

		if (st == 0) {
			if (add_block(d, cap, b->addr, b->size, b->requested, b->pending,
			              b->frames) < 0)
				return MP_ENOMEM;
			continue;
		}
		if (st == W_FREED || (st == W_PENDING) != (b->pending != 0)) {
			d->n_mismatches++; /* once: marked as seen below */
		} else if (st == W_ALLOCATED || st == W_PENDING) {
			if (tp_entry_get(d, W_INDEX(v), &e) < 0 ||
			    (e.action == TP_ALLOC &&
			     tp_entry_set_granted(d, W_INDEX(v), b->size) < 0))
				return MP_EIO; /* live or pending: the same block */
		}
		if (mp_intmap_put(w, b->addr, W_PACK(W_INDEX(v), W_FREED)) < 0)
			return MP_ENOMEM;
	}
	/* what the window leaves live but the final state does not hold */
	for (i = 0; i < w->cap; i++)
		if (w->used[i] && W_STATE(w->vals[i]) != W_FREED)
			d->n_mismatches++;
	/* pending blocks first: the importer frees each right after it appears */
	for (first_live = 0, i = 0; i < d->n_initial_blocks; i++)
		if (d->initial_blocks[i].pending) {
			struct tp_block t = d->initial_blocks[i];

			d->initial_blocks[i] = d->initial_blocks[first_live];
			d->initial_blocks[first_live++] = t;
		}
	return 0;
}

/* Segments: the same walk with reserve and release; expandable segments
 * are counted in mapped bytes, since maps cover parts of them. */
static int walk_segments(struct tp_device *d, struct tp_reader *r, struct mp_intmap *w)
{
	size_t i, cap = 0;
	uint64_t v;
	int64_t mapped = 0;

	for (i = 0; i < d->n_entries; i++) {
		const struct tp_entry *e = tp_reader_at(r, i);
		struct tp_segment s;
		int st;

		if (!e)
			return r->failed;
		s = (struct tp_segment){e->addr, e->size, 0, e->stream, NULL};
		st = mp_intmap_get(w, e->addr, &v) ? W_STATE(v) : 0;

		if (e->action == TP_SEGMENT_ALLOC && mp_intmap_put(w, e->addr, W_PACK(i, 1)) < 0)
			return MP_ENOMEM;
		if (e->action == TP_SEGMENT_FREE) {
			if (st == W_FREED)
				d->n_mismatches++;
			else if (st == 0 && add_segment(d, &cap, &s) < 0)
				return MP_ENOMEM;
			if (mp_intmap_put(w, e->addr, W_PACK(i, W_FREED)) < 0)
				return MP_ENOMEM;
		}
		mapped = sat_add(mapped, e->action == TP_SEGMENT_MAP ? e->size : 0);
		mapped = sat_add(mapped, e->action == TP_SEGMENT_UNMAP ? -e->size : 0);
	}
	d->initial_mapped_bytes = -mapped;
	for (i = 0; i < d->n_final_segments; i++) {
		const struct tp_segment *s = &d->final_segments[i];
		int st = mp_intmap_get(w, s->addr, &v) ? W_STATE(v) : 0;

		if (s->expandable) {
			d->initial_mapped_bytes = sat_add(d->initial_mapped_bytes, s->size);
			if (!d->expandable_addr || s->addr < d->expandable_addr)
				d->expandable_addr = s->addr;
		} else if (st == 0) {
			if (add_segment(d, &cap, s) < 0)
				return MP_ENOMEM;
		} else if (st == W_FREED) {
			d->n_mismatches++;
		} else if (mp_intmap_put(w, s->addr, W_PACK(0, W_FREED)) < 0) {
			return MP_ENOMEM;
		}
	}
	for (i = 0; i < w->cap; i++)
		if (w->used[i] && W_STATE(w->vals[i]) != W_FREED)
			d->n_mismatches++;
	if (d->initial_mapped_bytes < 0) {
		d->n_mismatches++;
		d->initial_mapped_bytes = 0;
	}
	return 0;
}

int mp_torch_window(struct tp_device *d)
{
	struct mp_intmap w;
	struct tp_reader r;
	size_t cap = 0;
	int rc;

	tp_reader_init(&r, d);
	mp_intmap_init(&w);
	rc = walk_blocks(d, &r, &w, &cap);
	if (rc == 0)
		rc = match_final_blocks(d, &w, &cap);
	mp_intmap_free(&w);
	if (rc == 0) {
		tp_reader_free(&r); /* granted sizes were written: read again */
		tp_reader_init(&r, d);
		mp_intmap_init(&w);
		rc = walk_segments(d, &r, &w);
		mp_intmap_free(&w);
	}
	tp_reader_free(&r);
	return rc;
}
