/*
 * analysis/block_spans.c - records the life of every block and segment of
 * each device (analysis/block_spans.h) from the memory state's callbacks:
 * on_alloc and on_held open a block, on_free and on_release close its two
 * ends, on_event opens and closes segments.  Never prints.
 */
#include "analysis/block_spans.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define MAP_KEY (UINT64_C(1) << 63) /* map/unmap are matched by address */

void mp_block_spans_init(struct mp_block_spans *s)
{
	memset(s, 0, sizeof(*s));
}

void mp_block_spans_free(struct mp_block_spans *s)
{
	int i;

	for (i = 0; i < s->n_devices; i++) {
		free(s->devices[i].blocks);
		free(s->devices[i].segments);
		mp_intmap_free(&s->devices[i].open_blocks);
		mp_intmap_free(&s->devices[i].open_segments);
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

static int open_block(struct mp_block_spans *s, const struct mp_mem_block *b,
                      const struct memprof_record *rec, int never_live)
{
	struct mp_block_spans_device *d = device_of(s, b->device);
	struct mp_block_span *x;

	if (!d)
		return 0;
	if (grow((void **)&d->blocks, d->n_blocks, &d->cap_blocks, sizeof(*d->blocks)) < 0 ||
	    mp_intmap_put(&d->open_blocks, b->key, d->n_blocks) < 0)
		return MP_ENOMEM;
	x = &d->blocks[d->n_blocks++];
	if (b->preexisting)
		d->preexisting_bytes += b->size_bytes;
	*x = (struct mp_block_span){
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
	};
	return 0;
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

static int on_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_block_span *x = find_block(ctx, b, 0);

	if (x && x->free_seq == MP_SPAN_OPEN) {
		x->free_ts_ns = rec->ev.ts_ns;
		x->free_seq = rec->ev.seq;
	}
	return 0;
}

static int on_release(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_block_span *x = find_block(ctx, b, 1);

	if (!x)
		return 0;
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

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *dev,
                    unsigned changes)
{
	struct mp_block_spans *s = ctx;
	int op = rec->ev.op;

	(void)dev;
	(void)changes;
	s->last_ts_ns = rec->ev.ts_ns;
	s->last_seq = rec->ev.seq;
	if (op == MEMPROF_OP_RESERVE || op == MEMPROF_OP_RELEASE || op == MEMPROF_OP_MAP ||
	    op == MEMPROF_OP_UNMAP)
		return on_segment(s, &rec->ev);
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
	};
}
