/*
 * analysis/frag.c - fragmentation figures per device, taken after every
 * event from the memory state and the device's hole tracker: kept at the
 * peaks, at OOMs and at the end, and integrated over time.  A device moves
 * to the segments model at its first segment-level event (its live and
 * pending blocks are then placed in the segments, and the integrals start
 * again there).  Holes are what no block holds: a pending block is no hole.
 */
#include "analysis/frag.h"
#include "util/error.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

void mp_frag_init(struct mp_frag *f, const struct mp_memstate *ms, uint64_t granularity)
{
	memset(f, 0, sizeof(*f));
	f->ms = ms;
	f->granularity = granularity ? granularity : MP_FRAG_DEFAULT_GRANULARITY;
}

void mp_frag_free(struct mp_frag *f)
{
	int i;

	for (i = 0; i < MP_MEM_MAX_DEVICES; i++) {
		mp_extents_destroy(f->devices[i].x);
		free(f->devices[i].ooms);
	}
}

const char *mp_frag_model_name(int model)
{
	switch (model) {
	case MP_FRAG_SEGMENTS:
		return "segments";
	case MP_FRAG_ADDRESS_SPACE:
		return "address-space";
	default:
		return "none";
	}
}

const struct mp_frag_device *mp_frag_device(const struct mp_frag *f, int32_t device)
{
	int i;

	for (i = 0; i < f->n_devices; i++)
		if (f->devices[i].device == device)
			return &f->devices[i];
	return NULL;
}

static struct mp_frag_device *slot_device(struct mp_frag *f, int slot)
{
	struct mp_frag_device *fd;

	if (slot < 0)
		return NULL;
	fd = &f->devices[slot];
	if (slot >= f->n_devices) { /* memstate gives slots in order, from 0 */
		f->n_devices = slot + 1;
		fd->device = f->ms->devices[slot].device;
	}
	return fd;
}

struct readd {
	struct mp_frag_device *fd;
	int slot;
	int rc;
};

static int readd_block(void *ctx, const struct mp_mem_block *b)
{
	struct readd *r = ctx;

	if (b->dev_slot != r->slot || b->address == 0)
		return 0;
	return mp_extents_add_block(r->fd->x, b->key, b->address, (uint64_t)b->size_bytes);
}

/* Start (or restart) a device's hole tracker in a model; live blocks of
 * the device are placed in it. */
static int set_model(struct mp_frag *f, struct mp_frag_device *fd, int slot, int model, int64_t seq)
{
	struct readd r = {fd, slot, 0};
	int rc;

	mp_extents_destroy(fd->x);
	fd->x = NULL;
	if ((rc = mp_extents_new(model == MP_FRAG_SEGMENTS ? 0 : f->granularity, &fd->x)) < 0)
		return rc;
	fd->model = model;
	fd->model_since_seq = seq;
	memset(&fd->tw, 0, sizeof(fd->tw));
	fd->started = 0;
	return mp_memstate_foreach_held(f->ms, readd_block, &r);
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_frag *f = ctx;
	struct mp_frag_device *fd = slot_device(f, b->dev_slot);
	int rc;

	if (!fd)
		return 0;
	if (b->address == 0) {
		fd->n_no_address++;
		return 0;
	}
	if (fd->model == MP_FRAG_NONE) /* set_model adds b, which already is live */
		return set_model(f, fd, b->dev_slot, MP_FRAG_ADDRESS_SPACE, rec->ev.seq);
	rc = mp_extents_add_block(fd->x, b->key, b->address, (uint64_t)b->size_bytes);
	return rc == MP_EINVAL ? 0 : rc; /* a wrapping range: left out of the model */
}

/*
 * A block leaves the hole tracker when the allocator takes it back, not when
 * the program frees it: a pending block (PyTorch's active_pending_free, waiting
 * for its stream) still occupies its range and is no hole anyone could reuse.
 */
static int on_release(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_frag *f = ctx;
	struct mp_frag_device *fd = b->dev_slot < 0 ? NULL : &f->devices[b->dev_slot];

	(void)rec;
	if (fd && fd->x && b->address != 0)
		mp_extents_remove_block(fd->x, b->key, b->address);
	return 0;
}

static int on_segment(struct mp_frag *f, struct mp_frag_device *fd, int slot,
                      const struct memprof_event *ev)
{
	uint64_t addr = ev->address, size = (uint64_t)ev->size_bytes;
	int64_t n;
	int rc = 0;

	if (fd->model != MP_FRAG_SEGMENTS &&
	    (rc = set_model(f, fd, slot, MP_FRAG_SEGMENTS, ev->seq)) < 0)
		return rc;
	switch (ev->op) {
	case MEMPROF_OP_RESERVE:
		rc = mp_extents_add_segment(fd->x, addr, size);
		break;
	case MEMPROF_OP_RELEASE:
		if (mp_extents_remove_segment(fd->x, addr) == 0)
			f->n_segment_mismatches++;
		break;
	case MEMPROF_OP_MAP:
		rc = mp_extents_map(fd->x, addr, size);
		break;
	default: /* unmap */
		if ((n = mp_extents_unmap(fd->x, addr, size)) < 0)
			return (int)n;
		if ((uint64_t)n != size)
			f->n_segment_mismatches++;
		break;
	}
	if (rc == MP_EINVAL) { /* a wrapping range or a second reserve at one address */
		f->n_segment_mismatches++;
		rc = 0;
	}
	return rc;
}

/* The device's figures now. */
static void take_point(const struct mp_frag_device *fd, const struct mp_mem_device *d,
                       const struct memprof_event *ev, struct mp_frag_point *p)
{
	struct mp_extents_figures h;

	p->ts_ns = ev->ts_ns;
	p->seq = ev->seq;
	p->live_bytes = d->live_bytes;
	p->requested_bytes = d->requested_bytes;
	p->reserved_bytes = p->free_in_reserved_bytes = p->largest_free_bytes = -1;
	if (fd->x)
		mp_extents_figures(fd->x, &h);
	else
		memset(&h, 0, sizeof(h));
	if (fd->model == MP_FRAG_SEGMENTS) {
		p->reserved_bytes = d->reserved_bytes;
		/* held = live + pending: a pending block is neither live nor free */
		if (d->reserved_bytes >= d->active_bytes)
			p->free_in_reserved_bytes = d->reserved_bytes - d->active_bytes;
		p->largest_free_bytes = (int64_t)h.largest_hole;
	} else if (fd->model == MP_FRAG_ADDRESS_SPACE) {
		p->reserved_bytes = (int64_t)h.container_bytes;
		p->free_in_reserved_bytes = (int64_t)h.hole_bytes;
		p->largest_free_bytes = (int64_t)h.largest_hole;
	}
}

static double ext_ratio(const struct mp_frag_point *p)
{
	double r;

	if (p->free_in_reserved_bytes <= 0 || p->largest_free_bytes < 0)
		return 0;
	r = 1.0 - (double)p->largest_free_bytes / (double)p->free_in_reserved_bytes;
	return r < 0 ? 0 : r;
}

/* The figures in fd->now held from fd->last_clock until clock. */
static void integrate(struct mp_frag_device *fd, int64_t clock)
{
	const struct mp_frag_point *p = &fd->now;
	double dt;

	if (!fd->started || clock <= fd->last_clock)
		return;
	dt = (double)(clock - fd->last_clock);
	fd->tw.span_ns += clock - fd->last_clock;
	fd->tw.internal += dt * (double)(p->live_bytes - p->requested_bytes);
	fd->tw.live += dt * (double)p->live_bytes;
	if (p->free_in_reserved_bytes >= 0)
		fd->tw.free += dt * (double)p->free_in_reserved_bytes;
	fd->tw.ext_ratio += dt * ext_ratio(p);
	fd->last_clock = clock;
}

static int keep_oom(struct mp_frag_device *fd, const struct memprof_event *ev)
{
	struct mp_frag_oom *o;

	fd->n_ooms_total++;
	if (fd->n_ooms == MP_FRAG_MAX_OOMS)
		return 0;
	o = realloc(fd->ooms, (fd->n_ooms + 1) * sizeof(*o));
	if (!o)
		return MP_ENOMEM;
	fd->ooms = o;
	o = &fd->ooms[fd->n_ooms++];
	o->at = fd->now;
	o->requested_bytes = ev->requested_bytes;
	o->device_free_bytes = ev->device_free_bytes;
	return 0;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
                    unsigned changes)
{
	struct mp_frag *f = ctx;
	const struct memprof_event *ev = &rec->ev;
	int slot = d ? (int)(d - f->ms->devices) : -1;
	struct mp_frag_device *fd = slot_device(f, slot);
	int rc;

	/* time advances by the gaps between consecutive events, negative ones
	 * counting 0 */
	if (f->n_seen++ && ev->ts_ns > f->prev_ts_ns) /* saturating: any int64 times */
		f->clock = mp_sat_add(f->clock, mp_sat_sub(ev->ts_ns, f->prev_ts_ns));
	f->prev_ts_ns = ev->ts_ns;
	if (!fd)
		return 0;
	if (fd->first_seq == 0)
		fd->first_seq = ev->seq;
	if (ev->op >= MEMPROF_OP_RESERVE && ev->op <= MEMPROF_OP_UNMAP &&
	    (rc = on_segment(f, fd, slot, ev)) < 0)
		return rc;
	integrate(fd, f->clock);
	if (!fd->started)
		fd->last_clock = f->clock;
	fd->started = 1;
	take_point(fd, d, ev, &fd->now);
	if (fd->now.free_in_reserved_bytes < 0 && fd->model != MP_FRAG_NONE)
		fd->tw.n_unknown++;
	if (changes & MP_MEM_NEW_LIVE_PEAK)
		fd->at_live_peak = fd->now;
	/* at the reserved peak: of the moments reserved bytes stand at their
	 * peak, the first with the most live bytes, so a segment reserved just
	 * before the block it is for does not count as free */
	if (changes & MP_MEM_NEW_RESERVED_PEAK)
		fd->at_reserved_peak = fd->now;
	else if (d->has_segments && d->reserved_bytes == d->reserved_peak.bytes &&
	         fd->at_reserved_peak.seq > 0 &&
	         fd->now.live_bytes > fd->at_reserved_peak.live_bytes)
		fd->at_reserved_peak = fd->now;
	if (ev->op == MEMPROF_OP_OOM)
		return keep_oom(fd, ev);
	return 0;
}

static int on_end(void *ctx)
{
	struct mp_frag *f = ctx;
	int i;

	for (i = 0; i < f->n_devices; i++) {
		struct mp_frag_device *fd = &f->devices[i];

		integrate(fd, f->clock);
		fd->at_end = fd->now;
		if (fd->x)
			mp_extents_figures(fd->x, &fd->holes_at_end);
	}
	return 0;
}

struct mp_mem_listener mp_frag_listener(struct mp_frag *f)
{
	struct mp_mem_listener l = {.ctx = f,
	                            .on_alloc = on_alloc,
	                            .on_event = on_event,
	                            .on_end = on_end,
	                            .on_release = on_release,
	                            .on_held = on_alloc};

	return l;
}
