/*
 * analysis/memstate.c - the live blocks and per-device live, requested,
 * active and reserved bytes with their peaks, updated event by event, and
 * the listeners fed from them.  Computes figures only: never prints, never
 * reads the store itself.
 */
#include "analysis/memstate.h"
#include "util/error.h"
#include "util/limits.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

#define SIZE_BITS MP_MAX_SIZE_BITS
#define NO_SLOT   0xffULL
#define SIZE_MASK ((1ULL << SIZE_BITS) - 1)
#define MAX_TOTAL (INT64_C(1) << 62) /* sums beyond 4 EiB are refused, never overflowed */

void mp_memstate_init(struct mp_memstate *ms)
{
	memset(ms, 0, sizeof(*ms));
	mp_live_sets_init(&ms->live);
	mp_live_sets_init(&ms->segments);
	mp_slot_pool_init(&ms->blocks, sizeof(struct mp_mem_block));
	mp_strmap_init(&ms->streams);
	ms->last_stream = -1;
}

void mp_memstate_free(struct mp_memstate *ms)
{
	mp_live_sets_free(&ms->live);
	mp_live_sets_free(&ms->segments);
	mp_slot_pool_free(&ms->blocks);
	mp_strmap_free(&ms->streams);
	free(ms->stream_counts);
	free(ms->stream_keys);
}

/* Which listener callback a change of a block calls; then the kinds of
 * mp_memstate.calls that are no block change. */
enum notice { NOTICE_ALLOC, NOTICE_FREE, NOTICE_RELEASE, NOTICE_HELD, CALL_EVENT, CALL_PREFETCH };

static void add_call(struct mp_memstate *ms, int kind, const struct mp_mem_listener *l,
                     int (*block)(void *, const struct mp_mem_block *,
                                  const struct memprof_record *))
{
	struct mp_mem_call *c;

	if (kind == CALL_EVENT ? !l->on_event : kind == CALL_PREFETCH ? !l->prefetch : !block)
		return;
	c = &ms->calls[kind][ms->n_calls[kind]++];
	c->ctx = l->ctx;
	c->block = block;
	c->event = l->on_event;
	c->prefetch = l->prefetch;
}

int mp_memstate_listen(struct mp_memstate *ms, const struct mp_mem_listener *l)
{
	if (ms->n_listeners == MP_MEM_MAX_LISTENERS)
		return MP_EINVAL;
	ms->listeners[ms->n_listeners++] = *l;
	add_call(ms, NOTICE_ALLOC, l, l->on_alloc);
	add_call(ms, NOTICE_FREE, l, l->on_free);
	add_call(ms, NOTICE_RELEASE, l, l->on_release);
	add_call(ms, NOTICE_HELD, l, l->on_held);
	add_call(ms, CALL_EVENT, l, NULL);
	add_call(ms, CALL_PREFETCH, l, NULL);
	return 0;
}

static int device_index(struct mp_memstate *ms, int32_t device)
{
	int i;

	for (i = 0; i < ms->n_devices; i++)
		if (ms->devices[i].device == device)
			return i;
	if (ms->n_devices == MP_MEM_MAX_DEVICES) {
		ms->devices_truncated = 1;
		return -1;
	}
	memset(&ms->devices[ms->n_devices], 0, sizeof(ms->devices[0]));
	ms->devices[ms->n_devices].device = device;
	return ms->n_devices++;
}

const struct mp_mem_device *mp_memstate_device(const struct mp_memstate *ms, int32_t device)
{
	int i;

	for (i = 0; i < ms->n_devices; i++)
		if (ms->devices[i].device == device)
			return &ms->devices[i];
	return NULL;
}

/* Sizes of 2^56 bytes and more are refused (64 PiB is far beyond any
 * device) rather than silently truncated in packed entries. */
static int size_fits(int64_t size)
{
	return mp_size_ok(size);
}

static int raise_peak(struct mp_mem_peak *p, int64_t bytes, const struct memprof_event *ev)
{
	if (bytes <= p->bytes)
		return 0;
	p->bytes = bytes;
	p->ts_ns = ev->ts_ns;
	p->seq = ev->seq;
	return 1;
}

/* The key of a (process, device, stream) in ms->streams. */
static void stream_key(char key[20], int64_t process_id, int32_t device, uint64_t stream)
{
	memcpy(key, &process_id, 8);
	memcpy(key + 8, &device, 4);
	memcpy(key + 12, &stream, 8);
}

/* The index of a stream key in stream_counts, or -1: the few streams of a
 * trace are compared one by one, more go through the string map. */
static int64_t find_stream(const struct mp_memstate *ms, const char key[20])
{
	int64_t i, idx;

	if (ms->n_streams <= MP_MEM_STREAMS_SCANNED) {
		for (i = 0; i < ms->n_streams; i++)
			if (memcmp(ms->stream_keys[i], key, 20) == 0)
				return i;
		return -1;
	}
	return mp_strmap_get(&ms->streams, key, 20, &idx) ? idx : -1;
}

/* A new stream key with its counter at 0: its index, or -1 when out of memory. */
static int64_t add_stream(struct mp_memstate *ms, const char key[20])
{
	if ((size_t)ms->n_streams == ms->cap_streams) {
		size_t cap = ms->cap_streams ? ms->cap_streams * 2 : 16;
		int64_t *p = realloc(ms->stream_counts, cap * sizeof(*p));
		char(*k)[20];

		if (!p)
			return -1;
		ms->stream_counts = p;
		if (!(k = realloc(ms->stream_keys, cap * sizeof(*k))))
			return -1;
		ms->stream_keys = k;
		ms->cap_streams = cap;
	}
	if (mp_strmap_put(&ms->streams, key, 20, ms->n_streams, NULL) < 0)
		return -1;
	memcpy(ms->stream_keys[ms->n_streams], key, 20);
	ms->stream_counts[ms->n_streams] = 0;
	return ms->n_streams++;
}

/* The stream's allocation counter, created at 0 on first use. */
static int64_t *stream_counter(struct mp_memstate *ms, int64_t process_id, int32_t device,
                               uint64_t stream)
{
	char key[20];
	int64_t idx;

	stream_key(key, process_id, device, stream);
	if (ms->last_stream >= 0 && memcmp(key, ms->last_stream_key, sizeof(key)) == 0)
		return &ms->stream_counts[ms->last_stream];
	if ((idx = find_stream(ms, key)) < 0 && (idx = add_stream(ms, key)) < 0)
		return NULL;
	ms->last_stream = idx;
	memcpy(ms->last_stream_key, key, sizeof(key));
	return &ms->stream_counts[idx];
}

int64_t mp_memstate_stream_allocs(const struct mp_memstate *ms, int64_t process_id, int32_t device,
                                  uint64_t stream)
{
	char key[20];
	int64_t idx;

	stream_key(key, process_id, device, stream);
	idx = find_stream(ms, key);
	return idx < 0 ? 0 : ms->stream_counts[idx];
}

static int notify(struct mp_memstate *ms, enum notice what, const struct mp_mem_block *b,
                  const struct memprof_record *rec)
{
	const struct mp_mem_call *c = ms->calls[what];
	int i, n = ms->n_calls[what], rc;

	for (i = 0; i < n; i++)
		if ((rc = c[i].block(c[i].ctx, b, rec)) < 0)
			return rc;
	return 0;
}

static void fill_block(struct mp_mem_block *b, const struct memprof_record *rec, int slot)
{
	const struct memprof_event *ev = &rec->ev;

	b->alloc_id = ev->alloc_id;
	b->process_id = ev->process_id;
	b->size_bytes = ev->size_bytes;
	b->requested_bytes = ev->requested_bytes < 0                ? 0
	                     : ev->requested_bytes < ev->size_bytes ? ev->requested_bytes
	                                                            : ev->size_bytes;
	b->address = ev->address;
	b->alloc_ts_ns = ev->ts_ns;
	b->alloc_seq = ev->seq;
	b->stream = ev->stream;
	b->device = ev->device;
	b->dev_slot = slot;
	b->preexisting = ev->op == MEMPROF_OP_PREEXISTING;
	b->pending = 0;
	b->stack_id = ev->stack_id;
	b->phase_id = ev->phase_id;
	b->api_id = ev->api_id;
	b->stack = rec->stack;
	b->phase = rec->phase;
	b->api = rec->api;
	b->tag = 0;
}

static void prefetch(const struct mp_memstate *ms, const struct memprof_record *rec,
                     const struct mp_mem_block *b)
{
	const struct mp_mem_call *c = ms->calls[CALL_PREFETCH];
	int i, n = ms->n_calls[CALL_PREFETCH];

	for (i = 0; i < n; i++)
		c[i].prefetch(c[i].ctx, rec, b);
}

/* The block the next allocation will take (the pool's first free slot,
 * freed perhaps long ago): fetched while this event is handled, so that
 * taking it does not wait on its link to the next free one. */
static void prefetch_next_block(const struct mp_memstate *ms)
{
	const unsigned char *p;
	size_t off;

	if (!ms->blocks.free_head)
		return;
	p = mp_slot_pool_at(&ms->blocks, ms->blocks.free_head - 1);
	for (off = 0; off < ms->blocks.item_size; off += 64)
		__builtin_prefetch(p + off, 1);
}

/* A block becomes live, or (pending_from_start) only active: a block the
 * program freed before recording began. */
static int on_alloc(struct mp_memstate *ms, const struct memprof_record *rec, int slot,
                    int pending_from_start, unsigned *changes)
{
	const struct memprof_event *ev = &rec->ev;
	struct mp_intmap *live = mp_live_sets_of(&ms->live, ev->process_id);
	struct mp_mem_device *d = slot < 0 ? NULL : &ms->devices[slot];
	struct mp_mem_block *b;
	int64_t *counter;
	size_t bslot;

	if (!size_fits(ev->size_bytes) || ms->held_bytes + ev->size_bytes > MAX_TOTAL) {
		ms->oversized_seq = ev->seq;
		return MP_EFORMAT;
	}
	if (!live || !(counter = stream_counter(ms, ev->process_id, ev->device, ev->stream)) ||
	    !(b = mp_slot_pool_take(&ms->blocks, &bslot)) ||
	    mp_intmap_put(live, (uint64_t)ev->alloc_id, bslot) < 0)
		return MP_ENOMEM;
	prefetch_next_block(ms);
	fill_block(b, rec, slot);
	b->key = bslot;
	b->stream_ordinal = ++*counter;
	ms->held_bytes += b->size_bytes;
	if (ev->size_bytes == 0)
		ms->n_zero_size++;
	if (d)
		d->active_bytes += b->size_bytes;
	if (pending_from_start) {
		b->pending = 1;
		ms->n_pending++;
		return notify(ms, NOTICE_HELD, b, rec);
	}
	ms->live_bytes += b->size_bytes;
	raise_peak(&ms->live_peak, ms->live_bytes, ev);
	if (d) {
		d->live_bytes += b->size_bytes;
		d->requested_bytes += b->requested_bytes;
		d->n_live++;
		*changes |= raise_peak(&d->live_peak, d->live_bytes, ev) ? MP_MEM_NEW_LIVE_PEAK : 0;
		*changes |= raise_peak(&d->requested_peak, d->requested_bytes, ev)
		                    ? MP_MEM_NEW_REQUESTED_PEAK
		                    : 0;
	}
	return notify(ms, NOTICE_ALLOC, b, rec);
}

/* free_requested ends a block's life; free also returns its memory. */
static int on_free(struct mp_memstate *ms, const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	struct mp_intmap *live = mp_live_sets_of(&ms->live, ev->process_id);
	struct mp_mem_device *d;
	struct mp_mem_block *b;
	size_t at;
	uint64_t bslot;
	int rc;

	if (!live)
		return MP_ENOMEM;
	if ((at = mp_intmap_slot(live, (uint64_t)ev->alloc_id)) == MP_INTMAP_NO_SLOT) {
		ms->n_unmatched_frees++;
		return 0;
	}
	bslot = live->vals[at]; /* the listeners below change no live set: at stays valid */
	b = mp_slot_pool_at(&ms->blocks, bslot);
	d = b->dev_slot < 0 ? NULL : &ms->devices[b->dev_slot];
	if (!b->pending) {
		prefetch(ms, rec, b);
		ms->live_bytes -= b->size_bytes;
		if (d) {
			d->live_bytes -= b->size_bytes;
			d->requested_bytes -= b->requested_bytes;
			d->n_live--;
		}
		if ((rc = notify(ms, NOTICE_FREE, b, rec)) < 0)
			return rc;
		b->pending = 1;
		ms->n_pending++;
	}
	if (ev->op == MEMPROF_OP_FREE) {
		if ((rc = notify(ms, NOTICE_RELEASE, b, rec)) < 0)
			return rc;
		ms->held_bytes -= b->size_bytes;
		if (d)
			d->active_bytes -= b->size_bytes;
		mp_intmap_del_slot(live, at);
		ms->n_pending--;
		mp_slot_pool_give(&ms->blocks, bslot);
	}
	return 0;
}

static void account_reserved(struct mp_mem_device *d, const struct memprof_event *ev, int64_t delta,
                             unsigned *changes)
{
	if (!d)
		return;
	d->has_segments = 1;
	d->reserved_bytes += delta;
	if (raise_peak(&d->reserved_peak, d->reserved_bytes, ev))
		*changes |= MP_MEM_NEW_RESERVED_PEAK;
}

/* reserve/release pair by id (a release takes back its reserve's size, on
 * its reserve's device); map/unmap count their own sizes. */
static int on_segment(struct mp_memstate *ms, const struct memprof_event *ev, int slot,
                      unsigned *changes)
{
	struct mp_intmap *segs = mp_live_sets_of(&ms->segments, ev->process_id);
	struct mp_mem_device *d = slot < 0 ? NULL : &ms->devices[slot];
	uint64_t v;

	if (!segs)
		return MP_ENOMEM;
	if (!size_fits(ev->size_bytes) || (d && (d->reserved_bytes > MAX_TOTAL - ev->size_bytes ||
	                                         d->reserved_bytes < ev->size_bytes - MAX_TOTAL))) {
		ms->oversized_seq = ev->seq;
		return MP_EFORMAT;
	}
	switch (ev->op) {
	case MEMPROF_OP_RESERVE:
		if (mp_intmap_put(segs, (uint64_t)ev->alloc_id,
		                  ((slot < 0 ? NO_SLOT : (uint64_t)slot) << SIZE_BITS) |
		                          (uint64_t)ev->size_bytes) < 0)
			return MP_ENOMEM;
		account_reserved(d, ev, ev->size_bytes, changes);
		return 0;
	case MEMPROF_OP_RELEASE:
		if (!mp_intmap_get(segs, (uint64_t)ev->alloc_id, &v)) {
			ms->n_unmatched_releases++;
			if (d)
				d->has_segments = 1;
			return 0;
		}
		mp_intmap_del(segs, (uint64_t)ev->alloc_id);
		d = (v >> SIZE_BITS) == NO_SLOT ? NULL : &ms->devices[v >> SIZE_BITS];
		account_reserved(d, ev, -(int64_t)(v & SIZE_MASK), changes);
		return 0;
	default: /* map, unmap */
		account_reserved(d, ev, ev->op == MEMPROF_OP_MAP ? ev->size_bytes : -ev->size_bytes,
		                 changes);
		return 0;
	}
}

static int notify_event(struct mp_memstate *ms, const struct memprof_record *rec, int slot,
                        unsigned changes)
{
	const struct mp_mem_device *d = slot < 0 ? NULL : &ms->devices[slot];
	const struct mp_mem_call *c = ms->calls[CALL_EVENT];
	int i, n = ms->n_calls[CALL_EVENT], rc;

	for (i = 0; i < n; i++)
		if ((rc = c[i].event(c[i].ctx, rec, d, changes)) < 0)
			return rc;
	return 0;
}

/* One event; pending_from_start only for a preexisting record (see .h). */
static int process(struct mp_memstate *ms, const struct memprof_record *rec, int pending_from_start)
{
	const struct memprof_event *ev = &rec->ev;
	int slot = device_index(ms, ev->device), rc = 0;
	unsigned changes = 0;

	if (ms->n_events == 0)
		ms->first_ts_ns = ms->min_ts_ns = ms->max_ts_ns = ev->ts_ns;
	else if (ev->ts_ns < ms->last_ts_ns)
		ms->n_out_of_order++;
	if (ev->ts_ns < ms->min_ts_ns)
		ms->min_ts_ns = ev->ts_ns;
	if (ev->ts_ns > ms->max_ts_ns)
		ms->max_ts_ns = ev->ts_ns;
	ms->last_ts_ns = ev->ts_ns;
	ms->n_events++;
	ms->n_by_op[ev->op]++;
	if (slot >= 0)
		ms->devices[slot].n_events++;
	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
		prefetch(ms, rec, NULL);
		rc = on_alloc(ms, rec, slot, pending_from_start, &changes);
		break;
	case MEMPROF_OP_FREE:
	case MEMPROF_OP_FREE_REQUESTED:
		rc = on_free(ms, rec);
		break;
	case MEMPROF_OP_RESERVE:
	case MEMPROF_OP_RELEASE:
	case MEMPROF_OP_MAP:
	case MEMPROF_OP_UNMAP:
		rc = on_segment(ms, ev, slot, &changes);
		break;
	case MEMPROF_OP_OOM:
		if (slot >= 0)
			ms->devices[slot].n_ooms++;
		break;
	default:
		break;
	}
	return rc < 0 ? rc : notify_event(ms, rec, slot, changes);
}

static int on_record(void *ctx, const struct memprof_record *rec)
{
	struct mp_memstate *ms = ctx;
	const struct memprof_event *ev = &rec->ev;
	int rc;

	if (ev->op < MEMPROF_OP_MIN || ev->op > MEMPROF_OP_MAX)
		return 0; /* the reader refuses these; a pushed record may not */
	if (ms->held) {
		const struct memprof_event *h = &ms->held_rec.ev;
		int never_live = ev->op == MEMPROF_OP_FREE_REQUESTED &&
		                 ev->alloc_id == h->alloc_id && ev->process_id == h->process_id;

		ms->held = 0;
		if ((rc = process(ms, &ms->held_rec, never_live)) < 0)
			return rc;
	}
	if (ev->op == MEMPROF_OP_PREEXISTING) { /* it waits for the next record */
		ms->held_rec = *rec;
		ms->held = 1;
		return 0;
	}
	return process(ms, rec, 0);
}

static int count_live(void *ctx, const struct mp_mem_block *b)
{
	(void)b;
	++*(int64_t *)ctx;
	return 0;
}

static int on_end(void *ctx)
{
	struct mp_memstate *ms = ctx;
	int i, rc;

	if (ms->held) {
		ms->held = 0;
		if ((rc = process(ms, &ms->held_rec, 0)) < 0)
			return rc;
	}
	ms->n_live_at_end = 0;
	mp_memstate_foreach_live(ms, count_live, &ms->n_live_at_end);
	for (i = 0; i < ms->n_listeners; i++) {
		const struct mp_mem_listener *l = &ms->listeners[i];

		if (l->on_end && (rc = l->on_end(l->ctx)) < 0)
			return rc;
	}
	return 0;
}

struct mp_consumer mp_memstate_consumer(struct mp_memstate *ms)
{
	struct mp_consumer c = {"memstate", ms, 0, on_record, on_end};

	return c;
}

/* fn for every live block, and the pending ones too when pending_too. */
static int foreach_block(const struct mp_memstate *ms, int pending_too,
                         int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx)
{
	int p, rc;
	size_t i;

	for (p = 0; p < ms->live.n; p++) {
		const struct mp_intmap *m = &ms->live.sets[p].map;

		for (i = 0; i < m->cap; i++) {
			const struct mp_mem_block *b;

			if (!m->used[i])
				continue;
			b = mp_slot_pool_at(&ms->blocks, m->vals[i]);
			if ((pending_too || !b->pending) && (rc = fn(ctx, b)) < 0)
				return rc;
		}
	}
	return 0;
}

int mp_memstate_foreach_live(const struct mp_memstate *ms,
                             int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx)
{
	return foreach_block(ms, 0, fn, ctx);
}

int mp_memstate_foreach_held(const struct mp_memstate *ms,
                             int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx)
{
	return foreach_block(ms, 1, fn, ctx);
}

int64_t mp_memstate_span_ns(const struct mp_memstate *ms)
{
	return ms->n_events ? mp_sat_sub(ms->max_ts_ns, ms->min_ts_ns) : 0;
}
