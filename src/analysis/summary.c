/*
 * analysis/summary.c - counts, time span and peak live bytes over the event
 * stream.  Live bytes are the granted sizes of block-level allocations
 * (alloc, preexisting) not yet freed; a free takes back what its alloc gave.
 */
#include "analysis/summary.h"
#include "util/error.h"

#include <string.h>

void mp_summary_init(struct mp_summary *s)
{
	memset(s, 0, sizeof(*s));
	mp_live_sets_init(&s->live);
}

void mp_summary_free(struct mp_summary *s)
{
	mp_live_sets_free(&s->live);
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

/*
 * A live entry packs the allocation's size (low 56 bits) and its device's
 * slot (high 8 bits, 0xff for none) so a free is charged to the device of
 * its allocation, whatever device its own record names.
 */
#define SIZE_BITS 56
#define NO_SLOT   0xffULL

static uint64_t pack(int64_t size, const struct mp_device_peak *d, const struct mp_summary *s)
{
	uint64_t slot = d ? (uint64_t)(d - s->devices) : NO_SLOT;

	return (slot << SIZE_BITS) | (uint64_t)size;
}

/* Sizes of 2^56 bytes and more do not fit a packed entry: they are refused
 * (64 PiB is far beyond any device) rather than silently truncated. */
static int size_fits(int64_t size)
{
	return size >= 0 && (uint64_t)size < (1ULL << SIZE_BITS);
}

static void account(struct mp_summary *s, struct mp_device_peak *d, const struct memprof_event *ev,
                    int64_t delta)
{
	s->live_bytes += delta;
	if (s->live_bytes > s->peak_bytes) {
		s->peak_bytes = s->live_bytes;
		s->peak_ts_ns = ev->ts_ns;
		s->peak_seq = ev->seq;
	}
	if (!d)
		return;
	d->live_bytes += delta;
	if (d->live_bytes > d->peak_bytes) {
		d->peak_bytes = d->live_bytes;
		d->peak_ts_ns = ev->ts_ns;
		d->peak_seq = ev->seq;
	}
}

static int on_record(void *ctx, const struct memprof_record *rec)
{
	struct mp_summary *s = ctx;
	const struct memprof_event *ev = &rec->ev;
	struct mp_device_peak *d;
	struct mp_intmap *live;
	uint64_t size, key = (uint64_t)ev->alloc_id;

	if (s->n_events == 0)
		s->first_ts_ns = ev->ts_ns;
	s->last_ts_ns = ev->ts_ns;
	s->n_events++;
	if (ev->op >= MEMPROF_OP_MIN && ev->op <= MEMPROF_OP_MAX)
		s->n_by_op[ev->op]++;
	if (ev->op != MEMPROF_OP_ALLOC && ev->op != MEMPROF_OP_PREEXISTING &&
	    ev->op != MEMPROF_OP_FREE)
		return 0;
	live = mp_live_sets_of(&s->live, ev->process_id);
	if (!live)
		return MP_ENOMEM;
	switch (ev->op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_PREEXISTING:
		if (!size_fits(ev->size_bytes)) {
			s->oversized_seq = ev->seq;
			return MP_EFORMAT;
		}
		d = device_slot(s, ev->device);
		if (mp_intmap_put(live, key, pack(ev->size_bytes, d, s)) < 0)
			return MP_ENOMEM;
		account(s, d, ev, ev->size_bytes);
		break;
	case MEMPROF_OP_FREE:
		if (!mp_intmap_get(live, key, &size)) {
			s->n_unmatched_frees++;
			break;
		}
		mp_intmap_del(live, key);
		d = (size >> SIZE_BITS) == NO_SLOT ? NULL : &s->devices[size >> SIZE_BITS];
		account(s, d, ev, -(int64_t)(size & ((1ULL << SIZE_BITS) - 1)));
		break;
	}
	return 0;
}

static int on_end(void *ctx)
{
	struct mp_summary *s = ctx;

	s->n_live_at_end = mp_live_sets_count(&s->live);
	return 0;
}

struct mp_consumer mp_summary_consumer(struct mp_summary *s)
{
	struct mp_consumer c = {"summary", s, 0, on_record, on_end};

	return c;
}
