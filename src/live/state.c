/*
 * live/state.c - the live figures, item by item: processes from spool
 * headers and meta items, devices, allocations and frees from API call
 * events (deduplicated by address), VMM mappings, OOMs and losses.  Call
 * sites and quantiles are in sites.c.  Never reads files, never prints.
 */
#include "live/state.h"
#include "live/state_internal.h"
#include "util/array.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double mp_live_bucket_bounds_s[MP_LIVE_N_BUCKETS] = {
        1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 1e-2, 1e-1,
};

void mp_live_state_init(struct mp_live_state *st, int64_t start_ns)
{
	memset(st, 0, sizeof(*st));
	st->start_ns = st->now_ns = st->tick_ns = start_ns;
}

static void process_free(struct mp_live_process *p)
{
	mp_live_sites_free(p);
	mp_intmap_free(&p->live);
	mp_intmap_free(&p->mapped);
	mp_intmap_free(&p->handles);
	free(p->slots);
	free(p->devices);
	free(p);
}

void mp_live_state_free(struct mp_live_state *st)
{
	size_t i;

	for (i = 0; i < st->n_procs; i++)
		if (st->procs[i])
			process_free(st->procs[i]);
	free(st->procs);
	memset(st, 0, sizeof(*st));
}

/* --- processes and devices ------------------------------------------------------------ */

static struct mp_live_process *process_of(struct mp_live_state *st,
                                          const struct mp_live_spool *spool)
{
	size_t i = mp_live_spool_index(spool), cap = st->n_procs;
	const struct mp_spool_header *h = mp_live_spool_header(spool);
	struct mp_live_process *p;

	if (i >= st->n_procs) {
		if (mp_array_reserve((void **)&st->procs, &cap, i + 1, sizeof(*st->procs)) < 0)
			return NULL;
		memset(st->procs + st->n_procs, 0, (cap - st->n_procs) * sizeof(*st->procs));
		st->n_procs = cap; /* the slots past i stay NULL until their spool speaks */
	}
	if (st->procs[i])
		return st->procs[i];
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->spool = spool;
	p->pid = h ? h->pid : 0;
	mp_spool_labels_init(&p->labels);
	mp_intmap_init(&p->live);
	mp_intmap_init(&p->mapped);
	mp_intmap_init(&p->handles);
	mp_intmap_init(&p->stack_site);
	mp_intmap_init(&p->pc_site);
	return st->procs[i] = p;
}

/* The device entry of ordinal (unknown, -1, is 0 as in the trace); NULL when out of memory. */
static struct mp_live_device *device_of(struct mp_live_process *p, int32_t ordinal)
{
	size_t i;

	if (ordinal < 0)
		ordinal = 0;
	for (i = 0; i < p->n_devices; i++)
		if (p->devices[i].device == ordinal)
			return &p->devices[i];
	if (mp_array_reserve((void **)&p->devices, &p->cap_devices, p->n_devices + 1,
	                     sizeof(*p->devices)) < 0)
		return NULL;
	for (i = p->n_devices; i > 0 && p->devices[i - 1].device > ordinal; i--)
		;
	memmove(&p->devices[i + 1], &p->devices[i], (p->n_devices - i) * sizeof(*p->devices));
	memset(&p->devices[i], 0, sizeof(*p->devices));
	p->devices[i].device = ordinal;
	p->n_devices++;
	return &p->devices[i];
}

static const char *text(const struct mp_live_process *p, uint32_t id, char *buf, size_t size)
{
	size_t len = 0;
	const char *s = mp_live_spool_string(p->spool, id, &len);

	if (!s)
		len = 0;
	if (len >= size)
		len = size - 1;
	memcpy(buf, s ? s : "", len);
	buf[len] = '\0';
	return buf;
}

/* A meta pair: the labels it gives (capture/spool_labels.h, as the importer reads them). */
static void meta(struct mp_live_process *p, const struct mp_spool_meta *m)
{
	char key[64], value[1024];

	mp_spool_labels_meta(&p->labels, text(p, m->key, key, sizeof(key)),
	                     text(p, m->value, value, sizeof(value)));
}

/* --- totals over all devices ------------------------------------------------------------ */

/* Add delta bytes to the live (segment 0) or reserved bytes of d, and the totals. */
static void add_bytes(struct mp_live_state *st, struct mp_live_device *d, int segment,
                      int64_t delta)
{
	if (segment) {
		d->reserved_known = st->reserved_known = 1;
		d->reserved_bytes += delta;
		st->reserved_bytes += delta;
		if (d->reserved_bytes > d->peak_reserved_bytes)
			d->peak_reserved_bytes = d->reserved_bytes;
	} else {
		d->live_known = st->live_known = 1;
		d->live_bytes += delta;
		st->live_bytes += delta;
		if (d->live_bytes > d->peak_live_bytes)
			d->peak_live_bytes = d->live_bytes;
	}
}

/* --- slots ------------------------------------------------------------------------------ */

static int new_slot(struct mp_live_process *p, size_t *index)
{
	if (p->free_slot) {
		*index = p->free_slot - 1;
		p->free_slot = (size_t)p->slots[*index].size; /* the free list runs through size */
		return 0;
	}
	if (mp_array_reserve((void **)&p->slots, &p->cap_slots, p->n_slots + 1, sizeof(*p->slots)) <
	    0)
		return MP_ENOMEM;
	*index = p->n_slots++;
	return 0;
}

static void drop_slot(struct mp_live_process *p, size_t i)
{
	p->slots[i].size = (int64_t)p->free_slot;
	p->free_slot = i + 1;
}

/* An allocation (or mapping) of size bytes at address on device, made by e. */
static int open_slot(struct mp_live_state *st, struct mp_live_process *p, struct mp_intmap *map,
                     const struct mp_spool_event *e, int32_t device, int segment, int counted)
{
	struct mp_live_device *d = device_of(p, device);
	struct mp_live_slot *s;
	size_t i;

	if (!d || new_slot(p, &i) < 0 || mp_intmap_put(map, e->address, i + 1) < 0)
		return MP_ENOMEM;
	s = &p->slots[i];
	memset(s, 0, sizeof(*s));
	s->size = (int64_t)e->bytes;
	s->dev = (uint32_t)(d - p->devices);
	s->segment = segment;
	if (mp_live_site_of(p, e->stack, &s->site) < 0)
		return MP_ENOMEM;
	mp_live_site_add(p, s->site, s->size);
	add_bytes(st, d, segment, s->size);
	if (counted) {
		d->n_allocs++;
		d->allocated_bytes += s->size;
		mp_live_latency_add(d, s, e->duration_ns);
	}
	return 0;
}

static void close_slot(struct mp_live_state *st, struct mp_live_process *p, struct mp_intmap *map,
                       uint64_t address, size_t i, int counted)
{
	struct mp_live_slot *s = &p->slots[i];
	struct mp_live_device *d = &p->devices[s->dev];

	add_bytes(st, d, s->segment, -s->size);
	mp_live_site_add(p, s->site, -s->size);
	if (counted)
		d->n_frees++;
	mp_intmap_del(map, address);
	drop_slot(p, i);
}

/* --- events ----------------------------------------------------------------------------- */

static int torch_segments(const struct mp_live_process *p)
{
	return mp_spool_labels_torch_caching(&p->labels);
}

static int host_memory(const struct mp_spool_event *e)
{
	return (e->flags & MP_SE_HOST_MEMORY) || e->mem_kind == MP_MK_PINNED ||
	       e->mem_kind == MP_MK_PAGEABLE;
}

/* An allocation or free call, or an allocation live when recording began. */
static int call(struct mp_live_state *st, struct mp_live_process *p, const struct mp_spool_event *e,
                int counted)
{
	int segment;
	uint64_t i;

	if ((e->kind == MP_SK_API && e->extra != 0) || e->address == 0)
		return 0; /* a failed call, or cudaFree(0) */
	if (e->kind == MP_SK_API && (e->flags & MP_SE_FREE_CALL)) {
		if (mp_intmap_get(&p->live, e->address, &i))
			close_slot(st, p, &p->live, e->address, i - 1, 1);
		return 0; /* else: not live (an inner call freed it, or it is not ours) */
	}
	if (host_memory(e))
		return 0;
	if (mp_intmap_get(&p->live, e->address, &i)) {
		if (counted) /* the same allocation, reported by the call around the first */
			mp_live_latency_longer(&p->devices[p->slots[i - 1].dev], &p->slots[i - 1],
			                       e->duration_ns);
		return 0;
	}
	segment = torch_segments(p) && !(e->flags & (MP_SE_ASYNC | MP_SE_MANAGED)) &&
	          (e->mem_kind == MP_MK_UNKNOWN || e->mem_kind == MP_MK_DEVICE);
	return open_slot(st, p, &p->live, e, e->device, segment, counted);
}

static int vmm(struct mp_live_state *st, struct mp_live_process *p, const struct mp_spool_event *e)
{
	int32_t device = e->device;
	uint64_t h, i;

	switch (e->kind) {
	case MP_SK_VMM_CREATE:
		return mp_intmap_put(&p->handles, e->extra,
		                     (uint64_t)(e->device + 1) << 8 | e->mem_kind) < 0
		               ? MP_ENOMEM
		               : 0;
	case MP_SK_VMM_RELEASE:
		mp_intmap_del(&p->handles, e->extra);
		return 0;
	case MP_SK_VMM_UNMAP:
		if (mp_intmap_get(&p->mapped, e->address, &i))
			close_slot(st, p, &p->mapped, e->address, i - 1, 0);
		return 0;
	default: /* a map, or a mapping live when recording began */
		if (mp_intmap_get(&p->handles, e->extra, &h)) {
			if ((h & 0xff) == MP_MK_PINNED || (h & 0xff) == MP_MK_PAGEABLE)
				return 0;
			if (device < 0)
				device = (int32_t)(h >> 8) - 1;
		}
		if (mp_intmap_get(&p->mapped, e->address, NULL))
			return 0;
		return open_slot(st, p, &p->mapped, e, device, 1, 0);
	}
}

static int event(struct mp_live_state *st, struct mp_live_process *p,
                 const struct mp_spool_event *e)
{
	struct mp_live_device *d;

	switch (e->kind) {
	case MP_SK_API:
		return call(st, p, e, 1);
	case MP_SK_PREEXISTING:
		return e->flags & MP_SE_MAPPING ? vmm(st, p, e) : call(st, p, e, 0);
	case MP_SK_VMM_CREATE:
	case MP_SK_VMM_RELEASE:
	case MP_SK_VMM_MAP:
	case MP_SK_VMM_UNMAP:
		return vmm(st, p, e);
	case MP_SK_OOM:
		if (!(d = device_of(p, e->device)))
			return MP_ENOMEM;
		d->n_ooms++;
		return 0;
	case MP_SK_DROPPED:
		p->n_dropped += (int64_t)e->extra;
		return 0;
	case MP_SK_DISABLED:
		if (!p->disabled[0])
			text(p, e->name, p->disabled, sizeof(p->disabled));
		if (!p->disabled[0])
			strcpy(p->disabled, "no reason given");
		return 0;
	default:
		return 0; /* CUPTI's memory records, phases, pools: for the final trace */
	}
}

int mp_live_state_item(void *arg, const struct mp_live_spool *spool,
                       const struct mp_spool_item_head *item)
{
	struct mp_live_state *st = arg;
	struct mp_live_process *p = process_of(st, spool);
	const struct mp_spool_device *dev = (const void *)item;
	struct mp_live_device *d;

	if (!p)
		return MP_ENOMEM;
	st->n_items++;
	switch (item->type) {
	case MP_SI_EVENT:
		return event(st, p, (const struct mp_spool_event *)item);
	case MP_SI_META:
		meta(p, (const struct mp_spool_meta *)item);
		return 0;
	case MP_SI_MODULE:
		return mp_live_sites_module(p);
	case MP_SI_DEVICE:
		if (!(d = device_of(p, dev->ordinal)))
			return MP_ENOMEM;
		d->total_bytes = dev->total_bytes;
		return 0;
	case MP_SI_FOOTER:
		p->n_dropped += (int64_t)((const struct mp_spool_footer *)item)->n_dropped;
		p->ended = 1;
		return 0;
	default:
		return 0;
	}
}

/* --- intervals and summaries ------------------------------------------------------------ */

void mp_live_state_tick(struct mp_live_state *st, int64_t now_ns)
{
	double dt = (double)(now_ns - st->now_ns) / 1e9;
	size_t i, k;

	for (i = 0; i < st->n_procs; i++) {
		struct mp_live_process *p = st->procs[i];

		for (k = 0; p && k < p->n_devices; k++) {
			struct mp_live_device *d = &p->devices[k];

			d->allocs_per_s = dt > 0 ? (double)(d->n_allocs - d->mark_allocs) / dt : 0;
			d->bytes_per_s =
			        dt > 0 ? (double)(d->allocated_bytes - d->mark_bytes) / dt : 0;
			d->mark_allocs = d->n_allocs;
			d->mark_bytes = d->allocated_bytes;
		}
	}
	st->tick_ns = st->now_ns;
	st->now_ns = now_ns;
}

void mp_live_state_notes(struct mp_live_state *st, const struct mp_live_follow *f)
{
	size_t i;
	const char *note;

	for (i = 0; !st->note[0] && i < mp_live_follow_n_spools(f); i++)
		if ((note = mp_live_spool_note(mp_live_follow_spool(f, i))))
			snprintf(st->note, sizeof(st->note), "%s", note);
}

double mp_live_free_share(const struct mp_live_device *d)
{
	if (!d->reserved_known || !d->live_known || d->reserved_bytes <= 0)
		return -1;
	if (d->live_bytes >= d->reserved_bytes)
		return 0;
	return (double)(d->reserved_bytes - d->live_bytes) / (double)d->reserved_bytes;
}

size_t mp_live_state_n_processes(const struct mp_live_state *st)
{
	size_t i, n = 0;

	for (i = 0; i < st->n_procs; i++)
		n += st->procs[i] != NULL;
	return n;
}

int64_t mp_live_state_n_dropped(const struct mp_live_state *st)
{
	int64_t n = 0;
	size_t i;

	for (i = 0; i < st->n_procs; i++)
		if (st->procs[i])
			n += st->procs[i]->n_dropped;
	return n;
}
