/*
 * analysis/block_spans.c - records the life of every block and segment of
 * each device (analysis/block_spans.h) from the memory state's callbacks:
 * on_alloc and on_held open a block, on_free and on_release close its two
 * ends, on_event opens and closes segments.  With a limit the kept blocks
 * are a min-heap by size until the last event (on_end puts them in order
 * of allocation); a block that cannot or can no longer be kept goes to the
 * merged series (analysis/span_merged).  Never prints.
 */
#include "analysis/block_spans.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define MAP_KEY (UINT64_C(1) << 63) /* map/unmap are matched by address */

void mp_block_spans_init(struct mp_block_spans *s)
{
	memset(s, 0, sizeof(*s));
	s->max_blocks = SIZE_MAX;
}

void mp_block_spans_limit(struct mp_block_spans *s, size_t max_blocks)
{
	s->max_blocks = max_blocks;
}

void mp_block_spans_free(struct mp_block_spans *s)
{
	int i;

	for (i = 0; i < s->n_devices; i++) {
		free(s->devices[i].blocks);
		free(s->devices[i].segments);
		free(s->devices[i].by_time);
		free(s->devices[i].by_seq);
		mp_intmap_free(&s->devices[i].open_blocks);
		mp_intmap_free(&s->devices[i].open_segments);
		mp_intmap_free(&s->devices[i].open_merged);
	}
	s->n_devices = 0;
}

const struct mp_block_spans_device *mp_block_spans_device(const struct mp_block_spans *s,
                                                          int32_t device)
{
	int i;

	for (i = 0; i < s->n_devices; i++)
		if (s->devices[i].device == device)
			return &s->devices[i];
	return NULL;
}

static struct mp_block_spans_device *device_of(struct mp_block_spans *s, int32_t device)
{
	struct mp_block_spans_device *d =
	        (struct mp_block_spans_device *)mp_block_spans_device(s, device);

	if (d || s->n_devices == MP_MEM_MAX_DEVICES)
		return d;
	d = &s->devices[s->n_devices++];
	memset(d, 0, sizeof(*d));
	d->device = device;
	mp_intmap_init(&d->open_blocks);
	mp_intmap_init(&d->open_segments);
	mp_intmap_init(&d->open_merged);
	return d;
}

/* Grow *p (of n items of size sz, capacity *cap) to hold one more. */
static int grow(void **p, size_t n, size_t *cap, size_t sz)
{
	void *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	if (!(q = realloc(*p, c * sz)))
		return MP_ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* a is worse than b: smaller, or as large and allocated later. */
static int worse(const struct mp_block_span *a, const struct mp_block_span *b)
{
	return a->size_bytes < b->size_bytes ||
	       (a->size_bytes == b->size_bytes && a->ordinal > b->ordinal);
}

static int is_open(const struct mp_block_span *x)
{
	return x->release_seq == MP_SPAN_OPEN;
}

/* Put x at heap position i, its key pointing there while it is open. */
static int place(struct mp_block_spans_device *d, size_t i, const struct mp_block_span *x)
{
	d->blocks[i] = *x;
	return is_open(x) ? mp_intmap_put(&d->open_blocks, x->key, i) : 0;
}

static int sift_up(struct mp_block_spans_device *d, size_t i)
{
	struct mp_block_span x = d->blocks[i];

	while (i > 0 && worse(&x, &d->blocks[(i - 1) / 2])) {
		if (place(d, i, &d->blocks[(i - 1) / 2]) < 0)
			return MP_ENOMEM;
		i = (i - 1) / 2;
	}
	return place(d, i, &x);
}

static int sift_down(struct mp_block_spans_device *d, size_t i)
{
	struct mp_block_span x = d->blocks[i];
	size_t c;

	while ((c = 2 * i + 1) < d->n_blocks) {
		if (c + 1 < d->n_blocks && worse(&d->blocks[c + 1], &d->blocks[c]))
			c++;
		if (!worse(&d->blocks[c], &x))
			break;
		if (place(d, i, &d->blocks[c]) < 0)
			return MP_ENOMEM;
		i = c;
	}
	return place(d, i, &x);
}

/* The device's merged series, made at its first merge with the trace's
 * first event as their origin. */
static int merged_series(const struct mp_block_spans *s, struct mp_block_spans_device *d)
{
	if (d->by_time)
		return 0;
	d->by_time = malloc(sizeof(*d->by_time));
	d->by_seq = malloc(sizeof(*d->by_seq));
	if (!d->by_time || !d->by_seq) {
		free(d->by_time), free(d->by_seq);
		d->by_time = d->by_seq = NULL;
		return MP_ENOMEM;
	}
	mp_span_merged_init(d->by_time);
	mp_span_merged_init(d->by_seq);
	mp_span_merged_advance(d->by_time, s->first_ts_ns);
	mp_span_merged_advance(d->by_seq, s->first_seq);
	return 0;
}

/* x, not kept whole, goes to the merged series at rec: its life so far
 * added at once, the rest as the trace goes while it is live. */
static int merge(const struct mp_block_spans *s, struct mp_block_spans_device *d,
                 const struct mp_block_span *x, const struct memprof_record *rec)
{
	double bytes = (double)x->size_bytes;

	if (merged_series(s, d) < 0)
		return MP_ENOMEM;
	if (is_open(x))
		mp_intmap_del(&d->open_blocks, x->key);
	if (x->never_live)
		return 0;
	if (x->free_seq != MP_SPAN_OPEN) {
		mp_span_merged_add_life(d->by_time, x->alloc_ts_ns, x->free_ts_ns, bytes);
		mp_span_merged_add_life(d->by_seq, x->alloc_seq, x->free_seq, bytes);
		return 0;
	}
	if (x->alloc_seq < rec->ev.seq) {
		mp_span_merged_add_life(d->by_time, x->alloc_ts_ns, rec->ev.ts_ns, bytes);
		mp_span_merged_add_life(d->by_seq, x->alloc_seq, rec->ev.seq, bytes);
	}
	mp_span_merged_change(d->by_time, rec->ev.ts_ns, bytes);
	mp_span_merged_change(d->by_seq, rec->ev.seq, bytes);
	return mp_intmap_put(&d->open_merged, x->key, (uint64_t)x->size_bytes);
}

/* Keep x whole, or merge it (or the heap's worst, which x then replaces). */
static int keep(struct mp_block_spans *s, struct mp_block_spans_device *d,
                const struct mp_block_span *x, const struct memprof_record *rec)
{
	if (d->n_blocks < s->max_blocks) {
		if (grow((void **)&d->blocks, d->n_blocks, &d->cap_blocks, sizeof(*d->blocks)) < 0)
			return MP_ENOMEM;
		d->blocks[d->n_blocks++] = *x;
		if (s->max_blocks == SIZE_MAX)
			return mp_intmap_put(&d->open_blocks, x->key, d->n_blocks - 1);
		return sift_up(d, d->n_blocks - 1);
	}
	if (!d->n_blocks || !worse(&d->blocks[0], x))
		return merge(s, d, x, rec);
	if (merge(s, d, &d->blocks[0], rec) < 0)
		return MP_ENOMEM;
	d->blocks[0] = *x;
	return sift_down(d, 0);
}

static void note_first(struct mp_block_spans *s, const struct memprof_record *rec)
{
	if (s->seen)
		return;
	s->seen = 1;
	s->first_ts_ns = rec->ev.ts_ns;
	s->first_seq = rec->ev.seq;
}

static int open_block(struct mp_block_spans *s, const struct mp_mem_block *b,
                      const struct memprof_record *rec, int never_live)
{
	struct mp_block_spans_device *d = device_of(s, b->device);
	struct mp_block_span x;

	note_first(s, rec);
	if (!d)
		return 0;
	if (b->preexisting)
		d->preexisting_bytes += b->size_bytes;
	x = (struct mp_block_span){
	        .alloc_ts_ns = rec->ev.ts_ns,
	        .free_ts_ns = never_live ? rec->ev.ts_ns : MP_SPAN_OPEN,
	        .release_ts_ns = MP_SPAN_OPEN,
	        .alloc_seq = rec->ev.seq,
	        .free_seq = never_live ? rec->ev.seq : MP_SPAN_OPEN,
	        .release_seq = MP_SPAN_OPEN,
	        .size_bytes = b->size_bytes,
	        .requested_bytes = b->requested_bytes,
	        .address = b->address,
	        .stack = b->stack,
	        .stack_id = b->stack_id,
	        .never_live = never_live,
	        .key = b->key,
	        .ordinal = d->n_total++,
	};
	return keep(s, d, &x, rec);
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	return open_block(ctx, b, rec, 0);
}

static int on_held(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	return open_block(ctx, b, rec, 1);
}

static struct mp_block_span *find_block(struct mp_block_spans *s, const struct mp_mem_block *b,
                                        int del)
{
	struct mp_block_spans_device *d =
	        (struct mp_block_spans_device *)mp_block_spans_device(s, b->device);
	uint64_t i;

	if (!d || !mp_intmap_get(&d->open_blocks, b->key, &i))
		return NULL;
	if (del)
		mp_intmap_del(&d->open_blocks, b->key);
	return &d->blocks[i];
}

/* A merged block the program freed at rec leaves the merged live bytes. */
static void merged_free(struct mp_block_spans *s, const struct mp_mem_block *b,
                        const struct memprof_record *rec)
{
	struct mp_block_spans_device *d =
	        (struct mp_block_spans_device *)mp_block_spans_device(s, b->device);
	uint64_t bytes;

	if (!d || !mp_intmap_get(&d->open_merged, b->key, &bytes))
		return;
	mp_intmap_del(&d->open_merged, b->key);
	mp_span_merged_change(d->by_time, rec->ev.ts_ns, -(double)bytes);
	mp_span_merged_change(d->by_seq, rec->ev.seq, -(double)bytes);
}

static int on_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_block_span *x = find_block(ctx, b, 0);

	if (!x)
		merged_free(ctx, b, rec);
	else if (x->free_seq == MP_SPAN_OPEN) {
		x->free_ts_ns = rec->ev.ts_ns;
		x->free_seq = rec->ev.seq;
	}
	return 0;
}

static int on_release(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_block_span *x = find_block(ctx, b, 1);

	if (!x) {
		merged_free(ctx, b, rec);
		return 0;
	}
	if (x->free_seq == MP_SPAN_OPEN) {
		x->free_ts_ns = rec->ev.ts_ns;
		x->free_seq = rec->ev.seq;
	}
	x->release_ts_ns = rec->ev.ts_ns;
	x->release_seq = rec->ev.seq;
	return 0;
}

static uint64_t segment_key(const struct memprof_event *ev)
{
	if (ev->op == MEMPROF_OP_MAP || ev->op == MEMPROF_OP_UNMAP)
		return MAP_KEY | ev->address;
	return ((uint64_t)ev->process_id << 40) ^ (uint64_t)ev->alloc_id;
}

static int on_segment(struct mp_block_spans *s, const struct memprof_event *ev)
{
	struct mp_block_spans_device *d = device_of(s, ev->device);
	uint64_t key = segment_key(ev), i;

	if (!d)
		return 0;
	if (ev->op == MEMPROF_OP_RESERVE || ev->op == MEMPROF_OP_MAP) {
		if (grow((void **)&d->segments, d->n_segments, &d->cap_segments,
		         sizeof(*d->segments)) < 0 ||
		    mp_intmap_put(&d->open_segments, key, d->n_segments) < 0)
			return MP_ENOMEM;
		d->segments[d->n_segments++] =
		        (struct mp_segment_span){ev->ts_ns,    MP_SPAN_OPEN, ev->seq,
		                                 MP_SPAN_OPEN, ev->address,  ev->size_bytes};
		return 0;
	}
	if (!mp_intmap_get(&d->open_segments, key, &i)) {
		d->n_unmatched_ends++;
		return 0;
	}
	mp_intmap_del(&d->open_segments, key);
	d->segments[i].end_ts_ns = ev->ts_ns;
	d->segments[i].end_seq = ev->seq;
	return 0;
}

/* Every device's merged series moves on to rec's moment. */
static void advance(struct mp_block_spans *s, const struct memprof_record *rec)
{
	int i;

	for (i = 0; i < s->n_devices; i++)
		if (s->devices[i].by_time) {
			mp_span_merged_advance(s->devices[i].by_time, rec->ev.ts_ns);
			mp_span_merged_advance(s->devices[i].by_seq, rec->ev.seq);
		}
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *dev,
                    unsigned changes)
{
	struct mp_block_spans *s = ctx;
	int op = rec->ev.op;

	(void)dev;
	(void)changes;
	note_first(s, rec);
	s->last_ts_ns = rec->ev.ts_ns;
	s->last_seq = rec->ev.seq;
	advance(s, rec);
	if (op == MEMPROF_OP_RESERVE || op == MEMPROF_OP_RELEASE || op == MEMPROF_OP_MAP ||
	    op == MEMPROF_OP_UNMAP)
		return on_segment(s, &rec->ev);
	return 0;
}

static int by_ordinal(const void *pa, const void *pb)
{
	const struct mp_block_span *a = pa, *b = pb;

	return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

/* After the last event: the kept blocks in order of allocation. */
static int on_end(void *ctx)
{
	struct mp_block_spans *s = ctx;
	int i;

	for (i = 0; s->max_blocks != SIZE_MAX && i < s->n_devices; i++)
		if (s->devices[i].n_blocks) /* else blocks is NULL */
			qsort(s->devices[i].blocks, s->devices[i].n_blocks,
			      sizeof(*s->devices[i].blocks), by_ordinal);
	return 0;
}

struct mp_mem_listener mp_block_spans_listener(struct mp_block_spans *s)
{
	return (struct mp_mem_listener){
	        .ctx = s,
	        .on_alloc = on_alloc,
	        .on_free = on_free,
	        .on_event = on_event,
	        .on_release = on_release,
	        .on_held = on_held,
	        .on_end = on_end,
	};
}
