/*
 * replay/input_seed.c - the start-of-window state of input_seed.h: collects
 * the reservations and preexisting blocks a device's trace holds before its
 * first allocation, then tiles each segment with the blocks inside it (free
 * blocks in the gaps).  Only a prelude with preexisting blocks is a window
 * that started mid-run; without them, reservations before the first
 * allocation are the trace's own and are replayed as such.  A segment whose blocks overlap each other or its
 * edge is left out and counted.  Pure computation; never touches a pool.
 */
#include <stdlib.h>
#include <string.h>

#include "replay/input_seed.h"
#include "util/array.h"
#include "util/error.h"

static int push(struct mp_seed_item **a, size_t *n, size_t *cap, const struct mp_seed_item *it)
{
	if (mp_array_reserve((void **)a, cap, *n + 1, sizeof **a) < 0)
		return MP_ENOMEM;
	(*a)[(*n)++] = *it;
	return 0;
}

int mp_seed_note(struct mp_seed_build *b, const struct memprof_event *ev, int64_t index,
                 size_t n_ops)
{
	struct mp_seed_item it = {ev->address, ev->size_bytes > 0 ? (uint64_t)ev->size_bytes : 0,
	                          ev->stream, ev->alloc_id};

	if (b->closed)
		return 0;
	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
		b->closed = 1;
		b->prelude_ops = n_ops;
		return 0;
	case MEMPROF_OP_RESERVE:
		return it.size_bytes ? push(&b->segs, &b->n_segs, &b->cap_segs, &it) : 0;
	case MEMPROF_OP_RELEASE:
		for (size_t i = 0; i < b->n_segs; i++)
			if (b->segs[i].id == ev->alloc_id) {
				b->segs[i] = b->segs[--b->n_segs];
				break;
			}
		return 0;
	case MEMPROF_OP_PREEXISTING:
		it.id = index;
		return it.size_bytes ? push(&b->blocks, &b->n_blocks, &b->cap_blocks, &it) : 0;
	default:
		return 0;
	}
}

static int by_addr(const void *x, const void *y)
{
	const struct mp_seed_item *a = x, *b = y;

	return (a->addr > b->addr) - (a->addr < b->addr);
}

/* Blocks [*k, ...) inside segment s, tiled with free gaps; the count of blocks, or -1: no tiling.
 */
static long count_tiles(const struct mp_seed_item *s, const struct mp_seed_item *blocks, size_t n,
                        size_t k)
{
	uint64_t at = s->addr, end = s->addr + s->size_bytes;
	long count = 0;

	for (; k < n && blocks[k].addr < end; k++) {
		if (blocks[k].addr < at || blocks[k].size_bytes > end - blocks[k].addr)
			return -1;
		count += 1 + (blocks[k].addr > at);
		at = blocks[k].addr + blocks[k].size_bytes;
	}
	return count + (at < end);
}

static size_t tile(const struct mp_seed_item *s, const struct mp_seed_item *blocks, size_t n,
                   size_t *k, struct memprof_pool_seed_block *out)
{
	uint64_t at = s->addr, end = s->addr + s->size_bytes;
	size_t m = 0;

	for (; *k < n && blocks[*k].addr < end; (*k)++) {
		if (blocks[*k].addr > at)
			out[m++] = (struct memprof_pool_seed_block){at - s->addr,
			                                            blocks[*k].addr - at, -1};
		out[m++] = (struct memprof_pool_seed_block){blocks[*k].addr - s->addr,
		                                            blocks[*k].size_bytes, blocks[*k].id};
		at = blocks[*k].addr + blocks[*k].size_bytes;
	}
	if (at < end)
		out[m++] = (struct memprof_pool_seed_block){at - s->addr, end - at, -1};
	return m;
}

int mp_seed_finish(struct mp_seed_build *b, struct mp_replay_device *d)
{
	size_t k = 0, n_out = 0, total = 0, j = 0;
	long c;

	if (b->n_blocks == 0)
		b->n_segs = 0; /* no block live before the window: its reservations are its own */
	if (b->n_segs) /* qsort takes no NULL array, even empty */
		qsort(b->segs, b->n_segs, sizeof *b->segs, by_addr);
	if (b->n_blocks)
		qsort(b->blocks, b->n_blocks, sizeof *b->blocks, by_addr);
	d->seed_segments = calloc(b->n_segs + 1, sizeof *d->seed_segments);
	d->seed_blocks = calloc(2 * b->n_blocks + b->n_segs + 1, sizeof *d->seed_blocks);
	if (!d->seed_segments || !d->seed_blocks) {
		mp_seed_free(b);
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < b->n_segs; i++) {
		const struct mp_seed_item *s = &b->segs[i];
		struct memprof_pool_seed_segment *out = &d->seed_segments[n_out];

		while (k < b->n_blocks && b->blocks[k].addr < s->addr)
			k++; /* a block in no segment (an expandable range): not seeded */
		if ((c = count_tiles(s, b->blocks, b->n_blocks, k)) < 0) {
			d->n_seed_skipped++;
			while (k < b->n_blocks && b->blocks[k].addr < s->addr + s->size_bytes)
				k++;
			continue;
		}
		j = k;
		*out = (struct memprof_pool_seed_segment){.struct_size = sizeof *out,
		                                          .size_bytes = s->size_bytes,
		                                          .stream = s->stream,
		                                          .blocks = d->seed_blocks + total};
		out->n_blocks = tile(s, b->blocks, b->n_blocks, &j, d->seed_blocks + total);
		total += out->n_blocks;
		k = j;
		n_out++;
	}
	d->n_seed_segments = n_out;
	d->n_preexisting = b->n_blocks;
	d->n_prelude_ops = b->closed ? b->prelude_ops : d->n_ops;
	mp_seed_free(b);
	return 0;
}

void mp_seed_free(struct mp_seed_build *b)
{
	free(b->segs);
	free(b->blocks);
	memset(b, 0, sizeof *b);
}
