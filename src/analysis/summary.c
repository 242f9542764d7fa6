/*
 * analysis/summary.c - counts, time span, and the live, requested, active
 * and reserved bytes of each device over the event stream, with their
 * peaks.  A reader consumer; memory grows with the live set only.
 */
#include "analysis/summary.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define SIZE_BITS 56
#define NO_SLOT   0xffULL
#define SIZE_MASK ((1ULL << SIZE_BITS) - 1)
#define MAX_TOTAL (INT64_C(1) << 62) /* sums beyond 4 EiB are refused, never overflowed */

void mp_summary_init(struct mp_summary *s)
{
	memset(s, 0, sizeof(*s));
	mp_live_sets_init(&s->live);
	mp_live_sets_init(&s->segments);
	mp_slot_pool_init(&s->blocks, sizeof(struct mp_summary_block));
}

void mp_summary_free(struct mp_summary *s)
{
	mp_live_sets_free(&s->live);
	mp_live_sets_free(&s->segments);
	mp_slot_pool_free(&s->blocks);
}

static struct mp_device_peak *device_slot(struct mp_summary *s, int32_t device)
{
	int i;

	for (i = 0; i < s->n_devices; i++)
		if (s->devices[i].device == device)
			return &s->devices[i];
	if (s->n_devices == MP_SUMMARY_MAX_DEVICES) {
		s->devices_truncated = 1;
		return NULL;
	}
	memset(&s->devices[s->n_devices], 0, sizeof(s->devices[0]));
	s->devices[s->n_devices].device = device;
	return &s->devices[s->n_devices++];
}

/* Sizes of 2^56 bytes and more are refused (64 PiB is far beyond any
 * device) rather than silently truncated in packed entries. */
static int size_fits(int64_t size)
{
	return size >= 0 && (uint64_t)size < (1ULL << SIZE_BITS);
}

static void check_live_peak(struct mp_summary *s, struct mp_device_peak *d,
                            const struct memprof_event *ev)
{
	if (s->live_bytes > s->peak_bytes) {
		s->peak_bytes = s->live_bytes;
		s->peak_ts_ns = ev->ts_ns;
		s->peak_seq = ev->seq;
	}
	if (d && d->live_bytes > d->peak_bytes) {
		d->peak_bytes = d->live_bytes;
		d->peak_ts_ns = ev->ts_ns;
		d->peak_seq = ev->seq;
	}
}

static void check_all_peaks(struct mp_summary *s, const struct memprof_event *ev)
{
	int i;

	if (s->live_bytes > s->peak_bytes) {
		s->peak_bytes = s->live_bytes;
		s->peak_ts_ns = ev->ts_ns;
		s->peak_seq = ev->seq;
	}
	for (i = 0; i < s->n_devices; i++)
		check_live_peak(s, &s->devices[i], ev);
}

static struct mp_device_peak *slot_device(struct mp_summary *s, int slot)
{
	return slot < 0 ? NULL : &s->devices[slot];
}

static int on_alloc(struct mp_summary *s, struct mp_intmap *live, const struct memprof_event *ev)
{
	struct mp_device_peak *d;
	struct mp_summary_block *b;
	size_t slot;

	if (!size_fits(ev->size_bytes) || s->held_bytes + ev->size_bytes > MAX_TOTAL) {
		s->oversized_seq = ev->seq;
		return MP_EFORMAT;
	}
	s->held_bytes += ev->size_bytes;
	d = device_slot(s, ev->device);
	if (!(b = mp_slot_pool_take(&s->blocks, &slot)) ||
	    mp_intmap_put(live, (uint64_t)ev->alloc_id, slot) < 0)
		return MP_ENOMEM;
	b->size = ev->size_bytes;
	b->requested = ev->requested_bytes < b->size ? ev->requested_bytes : b->size;
	b->slot = d ? (int)(d - s->devices) : -1;
	b->pending = 0;
	s->live_bytes += b->size;
	if (d) {
		d->live_bytes += b->size;
		d->requested_bytes += b->requested;
		d->active_bytes += b->size;
	}
	if (ev->op == MEMPROF_OP_PREEXISTING) { /* its peak waits: see on_record */
		s->deferred_id = ev->alloc_id;
		s->deferred_process = ev->process_id;
		s->deferred_copy = *ev;
		s->deferred_ev = &s->deferred_copy;
		return 0;
	}
	check_live_peak(s, d, ev);
	return 0;
}

/* free_requested ends a block's life; free also returns its memory. */
static int on_free(struct mp_summary *s, struct mp_intmap *live, const struct memprof_event *ev)
{
	struct mp_device_peak *d;
	struct mp_summary_block *b;
	uint64_t slot;

	if (!mp_intmap_get(live, (uint64_t)ev->alloc_id, &slot)) {
		s->n_unmatched_frees++;
		return 0;
	}
	b = mp_slot_pool_at(&s->blocks, slot);
	d = slot_device(s, b->slot);
	if (!b->pending) {
		s->live_bytes -= b->size;
		if (d) {
			d->live_bytes -= b->size;
			d->requested_bytes -= b->requested;
		}
		b->pending = 1;
		s->n_pending++;
	}
	if (ev->op == MEMPROF_OP_FREE) {
		s->held_bytes -= b->size;
		if (d)
			d->active_bytes -= b->size;
		mp_intmap_del(live, (uint64_t)ev->alloc_id);
		s->n_pending--;
		mp_slot_pool_give(&s->blocks, slot);
	}
	return 0;
}

static void account_reserved(struct mp_device_peak *d, const struct memprof_event *ev,
                             int64_t delta)
{
	if (!d)
		return;
	d->has_segments = 1;
	d->reserved_bytes += delta;
	if (d->reserved_bytes > d->peak_reserved_bytes) {
		d->peak_reserved_bytes = d->reserved_bytes;
		d->peak_reserved_ts_ns = ev->ts_ns;
		d->peak_reserved_seq = ev->seq;
	}
}

/* reserve/release pair by id (a release takes back its reserve's size, on
 * its reserve's device); map/unmap count their own sizes. */
static int on_segment(struct mp_summary *s, const struct memprof_event *ev)
{
	struct mp_intmap *segs = mp_live_sets_of(&s->segments, ev->process_id);
	struct mp_device_peak *d;
	uint64_t v;

	if (!segs)
		return MP_ENOMEM;
	d = device_slot(s, ev->device);
	if (!size_fits(ev->size_bytes) || (d && (d->reserved_bytes > MAX_TOTAL - ev->size_bytes ||
	                                         d->reserved_bytes < ev->size_bytes - MAX_TOTAL))) {
		s->oversized_seq = ev->seq;
		return MP_EFORMAT;
	}
	switch (ev->op) {
	case MEMPROF_OP_RESERVE:
		d = device_slot(s, ev->device);
		if (mp_intmap_put(segs, (uint64_t)ev->alloc_id,
		                  ((d ? (uint64_t)(d - s->devices) : NO_SLOT) << SIZE_BITS) |
		                          (uint64_t)ev->size_bytes) < 0)
			return MP_ENOMEM;
		account_reserved(d, ev, ev->size_bytes);
		return 0;
	case MEMPROF_OP_RELEASE:
		if (!mp_intmap_get(segs, (uint64_t)ev->alloc_id, &v)) {
			if ((d = device_slot(s, ev->device)))
				d->has_segments = 1;
			return 0;
		}
		mp_intmap_del(segs, (uint64_t)ev->alloc_id);
		d = (v >> SIZE_BITS) == NO_SLOT ? NULL : &s->devices[v >> SIZE_BITS];
		account_reserved(d, ev, -(int64_t)(v & SIZE_MASK));
		return 0;
	default: /* map, unmap */
		d = device_slot(s, ev->device);
		account_reserved(d, ev,
		                 ev->op == MEMPROF_OP_MAP ? ev->size_bytes : -ev->size_bytes);
		return 0;
	}
}

static int on_record(void *ctx, const struct memprof_record *rec)
{
	struct mp_summary *s = ctx;
	const struct memprof_event *ev = &rec->ev;
	struct mp_intmap *live;

	/* A preexisting block freed by the program before recording began is
	 * written as preexisting + free_requested: it never was live, so the
	 * peak check of the preexisting waits for the next event. */
	if (s->deferred_ev) {
		const struct memprof_event *d = s->deferred_ev;

		s->deferred_ev = NULL;
		if (!(ev->op == MEMPROF_OP_FREE_REQUESTED && ev->alloc_id == s->deferred_id &&
		      ev->process_id == s->deferred_process))
			check_all_peaks(s, d);
	}
	if (s->n_events == 0)
		s->first_ts_ns = ev->ts_ns;
	s->last_ts_ns = ev->ts_ns;
	s->n_events++;
	if (ev->op >= MEMPROF_OP_MIN && ev->op <= MEMPROF_OP_MAX)
		s->n_by_op[ev->op]++;
	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
	case MEMPROF_OP_FREE:
	case MEMPROF_OP_FREE_REQUESTED:
		live = mp_live_sets_of(&s->live, ev->process_id);
		if (!live)
			return MP_ENOMEM;
		if (ev->op == MEMPROF_OP_ALLOC || ev->op == MEMPROF_OP_PREEXISTING)
			return on_alloc(s, live, ev);
		return on_free(s, live, ev);
	case MEMPROF_OP_RESERVE:
	case MEMPROF_OP_RELEASE:
	case MEMPROF_OP_MAP:
	case MEMPROF_OP_UNMAP:
		return on_segment(s, ev);
	default:
		return 0;
	}
}

static int on_end(void *ctx)
{
	struct mp_summary *s = ctx;

	if (s->deferred_ev) {
		check_all_peaks(s, s->deferred_ev);
		s->deferred_ev = NULL;
	}
	s->n_live_at_end = mp_live_sets_count(&s->live) - s->n_pending;
	return 0;
}

struct mp_consumer mp_summary_consumer(struct mp_summary *s)
{
	struct mp_consumer c = {"summary", s, 0, on_record, on_end};

	return c;
}
