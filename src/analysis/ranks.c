/*
 * analysis/ranks.c - the per-unit running figures of analysis/ranks.h, fed
 * by memstate.  Bytes at a unit's own live peak by call site: per unit,
 * running totals per site and a copy taken at each new peak of the unit,
 * copying only the entries changed since the last copy (as attribution.c
 * does).  Chosen over a second pass that stops at each unit's peak seq:
 * that pass re-reads the whole trace (a merged job is the largest trace
 * memprof sees) and needs the reader again, while the copy costs O(1)
 * amortized per event (an event dirties at most one entry) and memory is
 * one entry per (unit, site) that the unit ever used.
 */
#include "analysis/ranks.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/call_site.h"
#include "util/error.h"

struct mp_rank_site_entry {
	size_t site;
	int64_t now_bytes, now_blocks;
	int64_t kept_bytes, kept_blocks;
	int dirty;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2;
	void *q;

	if (need <= *cap)
		return 0;
	cap2 = *cap ? *cap * 2 : 8;
	while (cap2 < need)
		cap2 *= 2;
	if (!(q = realloc(*p, cap2 * size)))
		return MP_ENOMEM;
	*p = q;
	*cap = cap2;
	return 0;
}

/* A new unit, zeroed, at the end of r->units; NULL when out of memory. */
static struct mp_rank *new_unit(struct mp_ranks *r, int64_t rank, int64_t process_id)
{
	struct mp_rank *u;

	if (grow((void **)&r->units, &r->cap_units, r->n_units + 1, sizeof(*u)) < 0)
		return NULL;
	u = &r->units[r->n_units++];
	memset(u, 0, sizeof(*u));
	u->rank = rank;
	u->local_rank = -1;
	u->first_process = process_id;
	mp_densemap_init(&u->site_index);
	return u;
}

static int add_pid(struct mp_rank *u, int64_t pid)
{
	int64_t *p = realloc(u->pids, (u->n_pids + 1) * sizeof(*p));

	if (!p)
		return MP_ENOMEM;
	u->pids = p;
	u->pids[u->n_pids++] = pid;
	return 0;
}

/* Add the process to its rank's unit (or a unit of its own). */
static int add_process(struct mp_ranks *r, struct mp_intmap *by_rank,
                       const struct memprof_process *p)
{
	struct mp_rank *u = NULL;
	uint64_t i;

	if (p->rank >= 0 && mp_intmap_get(by_rank, (uint64_t)p->rank, &i))
		u = &r->units[i];
	else if (!(u = new_unit(r, p->rank >= 0 ? p->rank : -1, p->id)) ||
	         (p->rank >= 0 && mp_intmap_put(by_rank, (uint64_t)p->rank, r->n_units - 1) < 0))
		return MP_ENOMEM;
	if (!u->host && p->host && !(u->host = strdup(p->host)))
		return MP_ENOMEM;
	if (u->local_rank < 0)
		u->local_rank = p->local_rank;
	if (add_pid(u, p->pid) < 0)
		return MP_ENOMEM;
	return mp_densemap_put(&r->by_process, (uint64_t)p->id, (uint32_t)(u - r->units));
}

int mp_ranks_init(struct mp_ranks *r, const struct memprof_process *procs, size_t n_procs,
                  int32_t device)
{
	struct mp_intmap by_rank;
	size_t i;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->device = device;
	r->last_process = -1;
	mp_densemap_init(&r->by_process);
	mp_densemap_init(&r->by_stack);
	mp_strmap_init(&r->site_keys);
	mp_live_sets_init(&r->segments);
	mp_intmap_init(&by_rank);
	for (i = 0; i < n_procs && rc == 0; i++)
		rc = add_process(r, &by_rank, &procs[i]);
	mp_intmap_free(&by_rank);
	return rc;
}

void mp_rank_unit_free(struct mp_rank *u)
{
	free(u->host);
	free(u->pids);
	free(u->devices);
	mp_densemap_free(&u->site_index);
	free(u->entries);
	free(u->dirty);
}

void mp_ranks_free(struct mp_ranks *r)
{
	size_t i;

	for (i = 0; i < r->n_units; i++)
		mp_rank_unit_free(&r->units[i]);
	free(r->units);
	for (i = 0; i < r->n_sites; i++) {
		free(r->sites[i].key);
		free(r->sites[i].name);
		free(r->sites[i].file);
		free(r->sites[i].lines);
	}
	free(r->sites);
	free(r->diffs);
	free(r->spread.above);
	mp_densemap_free(&r->by_process);
	mp_densemap_free(&r->by_stack);
	mp_strmap_free(&r->site_keys);
	mp_live_sets_free(&r->segments);
}

/* The unit of a process; a process the table lacks gets a unit of its own. */
/* The unit of a process not the last one seen (see unit_of). */
static struct mp_rank *find_unit(struct mp_ranks *r, int64_t process_id, int64_t pid)
{
	struct mp_rank *u;
	uint32_t i;

	if ((i = mp_densemap_get(&r->by_process, (uint64_t)process_id)) == MP_DENSEMAP_NONE) {
		if (r->n_units >= MP_DENSEMAP_NONE || !(u = new_unit(r, -1, process_id)) ||
		    add_pid(u, pid) < 0)
			return NULL;
		i = (uint32_t)(r->n_units - 1);
		if (mp_densemap_put(&r->by_process, (uint64_t)process_id, i) < 0)
			return NULL;
	}
	r->last_process = process_id;
	r->last_unit = (size_t)i;
	return &r->units[i];
}

/* The unit of a process, made on its first event; NULL when out of memory. */
static inline struct mp_rank *unit_of(struct mp_ranks *r, int64_t process_id, int64_t pid)
{
	if (process_id == r->last_process)
		return &r->units[r->last_unit];
	return find_unit(r, process_id, pid);
}

static int add_device(struct mp_rank *u, int32_t device)
{
	size_t i;
	int32_t *p;

	for (i = 0; i < u->n_devices && u->devices[i] < device; i++)
		;
	if (i < u->n_devices && u->devices[i] == device)
		return 0;
	if (!(p = realloc(u->devices, (u->n_devices + 1) * sizeof(*p))))
		return MP_ENOMEM;
	u->devices = p;
	memmove(p + i + 1, p + i, (u->n_devices - i) * sizeof(*p));
	p[i] = device;
	u->n_devices++;
	return 0;
}

/* A new site for stack s; its number, or -1 when out of memory. */
static int64_t new_site(struct mp_ranks *r, const struct memprof_stack *s)
{
	const struct memprof_frame *f;
	char *key = mp_call_site_key(s, &f);
	struct mp_rank_site *site;
	int64_t i;

	if (!key)
		return -1;
	if (mp_strmap_get(&r->site_keys, key, strlen(key), &i)) {
		free(key);
		site = &r->sites[i];
		return mp_call_site_add_line(&site->lines, &site->n_lines,
		                             f && mp_call_site_has_file(f) ? f->line : 0) < 0
		               ? -1
		               : i;
	}
	if (grow((void **)&r->sites, &r->cap_sites, r->n_sites + 1, sizeof(*site)) < 0) {
		free(key);
		return -1;
	}
	site = &r->sites[r->n_sites];
	site->key = key;
	site->name = strdup(f && f->name ? f->name : "");
	site->file = strdup(f && mp_call_site_has_file(f) ? f->file : "");
	site->line = f && mp_call_site_has_file(f) ? f->line : 0;
	site->lines = NULL;
	site->n_lines = 0;
	if (!site->name || !site->file ||
	    mp_call_site_add_line(&site->lines, &site->n_lines, site->line) < 0 ||
	    mp_strmap_put(&r->site_keys, key, strlen(key), (int64_t)r->n_sites, NULL) < 0) {
		free(site->name);
		free(site->file);
		free(site->lines);
		free(key);
		return -1;
	}
	return (int64_t)r->n_sites++;
}

static int64_t site_of(struct mp_ranks *r, const struct mp_mem_block *b)
{
	uint64_t key = (uint64_t)(b->stack ? b->stack_id : 0);
	uint32_t i = mp_densemap_get(&r->by_stack, key);
	int64_t site;

	if (i != MP_DENSEMAP_NONE)
		return (int64_t)i;
	if ((site = new_site(r, b->stack)) < 0 || site >= (int64_t)MP_DENSEMAP_NONE ||
	    mp_densemap_put(&r->by_stack, key, (uint32_t)site) < 0)
		return -1;
	return site;
}

static struct mp_rank_site_entry *entry_of(struct mp_rank *u, size_t site)
{
	struct mp_rank_site_entry *e;
	size_t cap;
	uint32_t i = mp_densemap_get(&u->site_index, site);

	if (i != MP_DENSEMAP_NONE)
		return &u->entries[i];
	if (u->n_entries >= MP_DENSEMAP_NONE)
		return NULL;
	cap = u->cap_entries;
	if (grow((void **)&u->entries, &u->cap_entries, u->n_entries + 1, sizeof(*e)) < 0 ||
	    grow((void **)&u->dirty, &cap, u->n_entries + 1, sizeof(size_t)) < 0)
		return NULL;
	if (mp_densemap_put(&u->site_index, site, (uint32_t)u->n_entries) < 0)
		return NULL;
	e = &u->entries[u->n_entries++];
	memset(e, 0, sizeof(*e));
	e->site = site;
	return e;
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

/* A new live peak of u: keep what changed since the last one. */
static void keep(struct mp_rank *u)
{
	size_t i;

	for (i = 0; i < u->n_dirty; i++) {
		struct mp_rank_site_entry *e = &u->entries[u->dirty[i]];

		e->kept_bytes = e->now_bytes;
		e->kept_blocks = e->now_blocks;
		e->dirty = 0;
	}
	u->n_dirty = 0;
}

static int add_block(struct mp_ranks *r, const struct mp_mem_block *b,
                     const struct memprof_record *rec, int sign)
{
	struct mp_rank *u;
	struct mp_rank_site_entry *e;
	int64_t site;

	if (r->device >= 0 && b->device != r->device)
		return 0;
	if (!(u = unit_of(r, b->process_id, rec->pid)) || (site = site_of(r, b)) < 0 ||
	    !(e = entry_of(u, (size_t)site)))
		return MP_ENOMEM;
	e->now_bytes += sign * b->size_bytes;
	e->now_blocks += sign;
	if (!e->dirty) {
		e->dirty = 1;
		u->dirty[u->n_dirty++] = (size_t)(e - u->entries);
	}
	u->live_bytes += sign * b->size_bytes;
	u->live_blocks += sign;
	u->requested_bytes += sign * b->requested_bytes;
	if (sign < 0)
		return 0;
	raise_peak(&u->requested_peak, u->requested_bytes, &rec->ev);
	if (raise_peak(&u->live_peak, u->live_bytes, &rec->ev))
		keep(u);
	return add_device(u, b->device);
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	return add_block(ctx, b, rec, 1);
}

static int on_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	return add_block(ctx, b, rec, -1);
}

static int add_reserved(struct mp_rank *u, int64_t delta, const struct memprof_event *ev)
{
	u->has_segments = 1;
	if ((delta > 0 && u->reserved_bytes > INT64_MAX - delta) ||
	    (delta < 0 && u->reserved_bytes < INT64_MIN - delta))
		return MP_EFORMAT;
	u->reserved_bytes += delta;
	raise_peak(&u->reserved_peak, u->reserved_bytes, ev);
	return 0;
}

/* reserve/release pair by id within a process, as memstate pairs them: a
 * release takes back what its reserve added, and counts where its reserve
 * counted.  Every reserve is kept (size << 1 | counted) so that a release
 * of a segment on another device is left out with it. */
static int on_pair(struct mp_ranks *r, const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	struct mp_intmap *segs = mp_live_sets_of(&r->segments, ev->process_id);
	int here = r->device < 0 || ev->device == r->device, found = 0;
	struct mp_rank *u;
	uint64_t v = 0;

	if (!segs)
		return MP_ENOMEM;
	if (ev->op == MEMPROF_OP_RESERVE) {
		if (mp_intmap_put(segs, (uint64_t)ev->alloc_id,
		                  (uint64_t)ev->size_bytes << 1 | (uint64_t)here) < 0)
			return MP_ENOMEM;
	} else if ((found = mp_intmap_get(segs, (uint64_t)ev->alloc_id, &v))) {
		mp_intmap_del(segs, (uint64_t)ev->alloc_id);
		here = (int)(v & 1);
	}
	if (!here)
		return 0;
	if (!(u = unit_of(r, ev->process_id, rec->pid)))
		return MP_ENOMEM;
	u->n_events++;
	if (ev->op == MEMPROF_OP_RESERVE)
		return add_device(u, ev->device) < 0 ? MP_ENOMEM
		                                     : add_reserved(u, ev->size_bytes, ev);
	u->has_segments = 1;
	return found ? add_reserved(u, -(int64_t)(v >> 1), ev) : 0; /* else: unmatched */
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
                    unsigned changes)
{
	struct mp_ranks *r = ctx;
	const struct memprof_event *ev = &rec->ev;
	struct mp_rank *u;

	(void)d;
	(void)changes;
	if (ev->op == MEMPROF_OP_RESERVE || ev->op == MEMPROF_OP_RELEASE)
		return on_pair(r, rec);
	if (r->device >= 0 && ev->device != r->device)
		return 0;
	if (!(u = unit_of(r, ev->process_id, rec->pid)))
		return MP_ENOMEM;
	u->n_events++;
	if (ev->op == MEMPROF_OP_OOM)
		u->n_ooms++;
	if (ev->op != MEMPROF_OP_OOM && ev->op != MEMPROF_OP_MAP && ev->op != MEMPROF_OP_UNMAP)
		return 0;
	if (add_device(u, ev->device) < 0)
		return MP_ENOMEM;
	if (ev->op == MEMPROF_OP_OOM)
		return 0;
	return add_reserved(u, ev->op == MEMPROF_OP_MAP ? ev->size_bytes : -ev->size_bytes, ev);
}

static int on_end(void *ctx)
{
	return mp_ranks_summarize(ctx);
}

struct mp_mem_listener mp_ranks_listener(struct mp_ranks *r)
{
	struct mp_mem_listener l = {.ctx = r,
	                            .on_alloc = on_alloc,
	                            .on_free = on_free,
	                            .on_event = on_event,
	                            .on_end = on_end};

	return l;
}

static const struct mp_rank_site_entry *find_entry(const struct mp_rank *u, size_t site)
{
	uint32_t i = mp_densemap_get(&u->site_index, site);

	return i != MP_DENSEMAP_NONE ? &u->entries[i] : NULL;
}

int64_t mp_rank_site_bytes(const struct mp_rank *u, size_t site)
{
	const struct mp_rank_site_entry *e = find_entry(u, site);

	return e ? e->kept_bytes : 0;
}

int64_t mp_rank_site_blocks(const struct mp_rank *u, size_t site)
{
	const struct mp_rank_site_entry *e = find_entry(u, site);

	return e ? e->kept_blocks : 0;
}
