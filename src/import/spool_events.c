/*
 * import/spool_events.c - a spool's events become trace events: sorted by
 * time, CUPTI memory records joined to the API calls that made them by
 * correlation id, allocations paired with frees by address, VMM maps with
 * unmaps, NVTX ranges as phases, stacks symbolised.  Each allocation is
 * written once however many records describe it.  Pinned host buffers stay
 * out of the events: spool_host.c keeps them, with their NUMA placement.
 */
#include "import/spool.h"
#include "import/torch_merge.h"
#include "spool/classify.h"

#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/intmap.h"
#include "util/limits.h"

enum { COVER_ALLOC = 1, COVER_FREE = 2 };

/*
 * An allocation or mapping seen, kept for the whole conversion (about 64
 * bytes each): the thread and call interval that made it and that freed
 * it, to recognise the same allocation reported twice (a runtime call and
 * the driver call inside it).
 */
struct block {
	int64_t id, size;
	int32_t device;
	int segment;
	int64_t api_id; /* its API labelled with its origin (torch_merge.h), 0 not */
	uint32_t thread, free_thread;
	int64_t t0, t1, f0, f1; /* the calls' intervals */
};

/* Who made an event: thread, stack, phase, API and call interval. */
struct who {
	const struct mp_spool_event *e; /* the API event, else the record itself */
	int64_t t0, t1;
};

struct phase_stack {
	int64_t *ids;
	size_t n, cap;
};

struct conv {
	struct mp_spool_in *in;
	struct mp_import_ctx *c;
	struct mp_intmap api_of;  /* correlation -> index + 1 of its API event */
	struct mp_intmap covered; /* correlation -> COVER_* (a MEM_* record made it) */
	struct mp_intmap live;    /* address -> block index + 1 */
	struct mp_intmap freed;   /* address -> block index + 1, its last free */
	struct mp_intmap mapped;  /* va -> block index + 1 */
	struct mp_intmap handles; /* VMM handle -> (device + 1) << 8 | mem_kind */
	struct mp_intmap phase_of, api_id_of, stack_of; /* spool ids -> trace ids */
	struct mp_intmap thread_phases;                 /* thread -> index + 1 into stacks */
	struct phase_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct block *blocks;
	size_t n_blocks, cap_blocks;
	struct mp_spool_host host;
	int64_t next_alloc_id, next_segment_id;
	struct memprof_frame frames[MP_SPOOL_MAX_STACK_DEPTH];
};

static int nomem(struct conv *v)
{
	return mp_err(v->c->err, MP_ENOMEM, "out of memory converting '%s'", v->c->path);
}

static int writer_failed(struct conv *v)
{
	int rc = mp_err_copy(v->c->err, mp_writer_error(v->c->w));

	return rc < 0 ? rc : MP_EIO;
}

/* --- names, phases, stacks ------------------------------------------------------- */

/* The trace id of spool string id as a phase (api = 0) or API name (api = 1). */
static int64_t name_id(struct conv *v, uint32_t sid, int api)
{
	struct mp_intmap *cache = api ? &v->api_id_of : &v->phase_of;
	const char *text;
	uint64_t id;
	size_t len;
	int64_t got;

	if (!sid)
		return 0;
	if (mp_intmap_get(cache, sid, &id))
		return (int64_t)id;
	if (!(text = mp_spool_reader_string(v->in->r, sid, &len)) || len == 0)
		return 0;
	got = api ? mp_writer_api(v->c->w, text, len) : mp_writer_phase(v->c->w, text, len);
	if (got < 0)
		return writer_failed(v);
	return mp_intmap_put(cache, sid, (uint64_t)got) < 0 ? nomem(v) : got;
}

/* The trace stack of spool stack sid, its leading profiler and driver frames left out. */
static int64_t stack_id(struct conv *v, uint32_t sid)
{
	struct memprof_stack st = {0, v->frames};
	const uint64_t *pcs;
	uint32_t depth = 0, k;
	uint64_t id;
	int64_t got;
	int tool;

	if (!sid || !v->in->sym)
		return 0;
	if (mp_intmap_get(&v->stack_of, sid, &id))
		return (int64_t)id;
	if (!(pcs = mp_spool_reader_stack(v->in->r, sid, &depth)))
		depth = 0;
	for (k = 0; k < depth && k < MP_SPOOL_MAX_STACK_DEPTH; k++) {
		if (mp_symbols_frame(v->in->sym, pcs[k], &v->frames[st.n_frames], &tool) < 0)
			return nomem(v);
		if (tool && st.n_frames == 0)
			v->in->n_tool_frames++;
		else
			st.n_frames++;
	}
	if ((got = mp_writer_stack(v->c->w, &st)) < 0)
		return writer_failed(v);
	return mp_intmap_put(&v->stack_of, sid, (uint64_t)got) < 0 ? nomem(v) : got;
}

/* Thread, phase, stack, API and the call's duration of who into ev. */
static int context(struct conv *v, const struct who *who, struct memprof_event *ev)
{
	const struct mp_spool_event *e = who->e;
	int named = e->kind == MP_SK_API || e->kind == MP_SK_OOM || e->kind == MP_SK_PREEXISTING;
	int timed = e->kind == MP_SK_API ||
	            (e->kind >= MP_SK_VMM_RESERVE && e->kind <= MP_SK_VMM_UNMAP);

	int64_t phase = name_id(v, e->phase, 0), stack, api;

	if (phase < 0 || (stack = stack_id(v, e->stack)) < 0 ||
	    (api = named ? name_id(v, e->name, 1) : 0) < 0)
		return (int)v->c->err->code;
	ev->thread = e->thread;
	ev->phase_id = phase;
	ev->stack_id = stack;
	ev->api_id = api;
	ev->duration_ns = timed && e->duration_ns > 0 ? e->duration_ns : 0;
	return 0;
}

/* --- writing ------------------------------------------------------------------------ */

static int emit(struct conv *v, struct memprof_event *ev)
{
	ev->process_id = v->in->process_id;
	if (mp_writer_event(v->c->w, ev) < 0)
		return writer_failed(v);
	if (v->in->merge && mp_torch_merge_seen(v->in->merge, ev) < 0)
		return nomem(v);
	v->c->st->n_events++;
	if (ev->op == MEMPROF_OP_ALLOC || ev->op == MEMPROF_OP_PREEXISTING)
		v->c->st->n_allocs++;
	return 0;
}

/* An event at ts on device (unknown devices are written as 0: traces have no -1). */
static struct memprof_event event_at(int64_t ts, int op, int32_t device)
{
	struct memprof_event ev = {0};

	ev.ts_ns = ts;
	ev.op = op;
	ev.device = device >= 0 ? device : 0;
	ev.device_free_bytes = -1;
	return ev;
}

static int new_block(struct conv *v, size_t *index)
{
	if (mp_array_reserve((void **)&v->blocks, &v->cap_blocks, v->n_blocks + 1,
	                     sizeof(*v->blocks)) < 0)
		return nomem(v);
	memset(&v->blocks[v->n_blocks], 0, sizeof(v->blocks[0]));
	*index = v->n_blocks++;
	return 0;
}

/* Do two calls on one thread overlap in time?  Then they made (or freed) one allocation. */
static int same_call(uint32_t thread, int64_t t0, int64_t t1, const struct who *who)
{
	return thread && thread == who->e->thread && t0 <= who->t1 && who->t0 <= t1;
}

/* --- allocations --------------------------------------------------------------------- */

/* What e's memory is (spool/classify.h), PyTorch's segments as this spool says. */
static enum mp_spool_class classify(const struct conv *v, const struct mp_spool_event *e)
{
	return mp_spool_classify(e, v->in->torch_segments);
}

/* --- pinned host buffers ------------------------------------------------------------- */

/* A pinned host buffer made by e (call, record, preexisting, cuMemCreate) for who. */
static int host_open(struct conv *v, const struct mp_spool_event *e, const struct who *who,
                     uint64_t handle)
{
	struct memprof_event ids = {0};
	struct mp_host_buffer b = {0};
	int rc;

	if ((rc = context(v, who, &ids)) < 0)
		return rc;
	if (!ids.api_id && e->kind == MP_SK_VMM_CREATE && (ids.api_id = name_id(v, e->name, 1)) < 0)
		return (int)ids.api_id;
	b.process_id = v->in->process_id;
	b.device = e->device >= 0 ? e->device : who->e->device;
	b.address = e->address;
	b.size_bytes = e->bytes > INT64_MAX ? INT64_MAX : (int64_t)e->bytes;
	b.alloc_ts_ns = e->ts_ns;
	b.api_id = ids.api_id;
	b.stack_id = ids.stack_id;
	b.thread = ids.thread;
	return mp_spool_host_open(&v->host, &b, e->correlation, handle) < 0 ? nomem(v) : 0;
}

/* Unpinned: a buffer not seen pinned is a host record skipped. */
static int host_close(struct conv *v, const struct mp_spool_event *e)
{
	if (!mp_spool_host_close(&v->host, e->address, e->ts_ns) && e->address)
		v->c->st->n_warnings[MP_WARN_SKIPPED_HOST]++;
	return 0;
}

static int host_numa(struct conv *v, const struct mp_spool_event *e)
{
	return mp_spool_host_numa(&v->host, e) < 0 ? nomem(v) : 0;
}

/* Close block bi (free or release) at ts by who. */
static int close_block(struct conv *v, uint64_t address, size_t bi, int64_t ts,
                       const struct who *who)
{
	struct block *b = &v->blocks[bi];
	struct memprof_event ev =
	        event_at(ts, b->segment ? MEMPROF_OP_RELEASE : MEMPROF_OP_FREE, b->device);
	int rc;

	ev.alloc_id = b->id;
	ev.size_bytes = ev.requested_bytes = b->size;
	ev.address = address;
	ev.stream = who->e->stream;
	b->free_thread = who->e->thread;
	b->f0 = who->t0;
	b->f1 = who->t1;
	mp_intmap_del(&v->live, address);
	if (mp_intmap_put(&v->freed, address, bi + 1) < 0)
		return nomem(v);
	if ((rc = context(v, who, &ev)) < 0)
		return rc;
	if (b->api_id)
		ev.api_id = b->api_id;
	return emit(v, &ev);
}

/*
 * A new allocation (op alloc, preexisting or, for a segment, reserve) of
 * size bytes at address, made by who.  One still live there was not seen
 * freed: it is closed first, unless it is this very allocation reported
 * again by a nested call.
 */
static int open_block(struct conv *v, const struct mp_spool_event *e, enum mp_spool_class cls,
                      int op, int64_t requested, int32_t device, const struct who *who)
{
	struct memprof_event ev = event_at(e->ts_ns, op, device);
	int64_t api_id = 0;
	uint64_t live;
	size_t bi;
	int rc;

	if (mp_intmap_get(&v->live, e->address, &live)) {
		struct block *b = &v->blocks[live - 1];

		if (op == MEMPROF_OP_PREEXISTING || same_call(b->thread, b->t0, b->t1, who))
			return 0; /* already known */
		v->c->st->n_warnings[b->segment ? MP_WARN_DUPLICATE_RESERVE
		                                : MP_WARN_DUPLICATE_ALLOC]++;
		if ((rc = close_block(v, e->address, live - 1, e->ts_ns, who)) < 0)
			return rc;
	}
	if ((rc = new_block(v, &bi)) < 0)
		return rc;
	if (cls == MP_SPOOL_SEGMENT && v->in->merge &&
	    (rc = mp_torch_merge_outside(v->in, who->e, e->address, ev.device, (int64_t)e->bytes,
	                                 &api_id)) != 0) {
		if (rc < 0)
			return rc;
		cls = MP_SPOOL_BLOCK; /* memory PyTorch cannot see: a block of its own */
	}
	if (cls == MP_SPOOL_SEGMENT)
		ev.op = MEMPROF_OP_RESERVE;
	v->blocks[bi] = (struct block){
	        .id = cls == MP_SPOOL_SEGMENT ? ++v->next_segment_id : ++v->next_alloc_id,
	        .size = (int64_t)e->bytes,
	        .device = ev.device,
	        .segment = cls == MP_SPOOL_SEGMENT,
	        .thread = who->e->thread,
	        .t0 = who->t0,
	        .t1 = who->t1,
	        .api_id = api_id,
	};
	if (mp_intmap_put(&v->live, e->address, bi + 1) < 0)
		return nomem(v);
	ev.alloc_id = v->blocks[bi].id;
	ev.size_bytes = (int64_t)e->bytes;
	ev.requested_bytes = requested > 0 ? requested : (int64_t)e->bytes;
	ev.address = e->address;
	ev.stream = e->stream;
	if ((rc = context(v, who, &ev)) < 0)
		return rc;
	if (api_id)
		ev.api_id = api_id;
	return emit(v, &ev);
}

/* A free of address by who: its allocation's free, or an unmatched free. */
static int free_address(struct conv *v, const struct mp_spool_event *e, int host,
                        const struct who *who)
{
	struct memprof_event ev;
	uint64_t bi;
	int rc;

	if (mp_intmap_get(&v->live, e->address, &bi) &&
	    (e->device < 0 || e->device == v->blocks[bi - 1].device))
		return close_block(v, e->address, bi - 1, e->ts_ns, who);
	if (host)
		return host_close(v, e);
	if (e->address == 0)
		return 0; /* cudaFree(0) and the like: nothing freed */
	if (mp_intmap_get(&v->freed, e->address, &bi) &&
	    same_call(v->blocks[bi - 1].free_thread, v->blocks[bi - 1].f0, v->blocks[bi - 1].f1,
	              who))
		return 0; /* the same free, reported by a nested call */
	ev = event_at(e->ts_ns, MEMPROF_OP_FREE, e->device);
	ev.alloc_id = ++v->next_alloc_id; /* its allocation is not in the trace */
	ev.size_bytes = ev.requested_bytes = (int64_t)e->bytes;
	ev.address = e->address;
	ev.stream = e->stream;
	v->c->st->n_warnings[MP_WARN_UNMATCHED_FREE]++;
	return (rc = context(v, who, &ev)) < 0 ? rc : emit(v, &ev);
}

/* The API event of e's correlation id, as who (else e itself). */
static struct who who_of(const struct conv *v, const struct mp_spool_event *e)
{
	struct who w = {e, e->ts_ns, e->ts_ns};
	uint64_t i;

	if (e->correlation && e->kind != MP_SK_API && mp_intmap_get(&v->api_of, e->correlation, &i))
		w.e = &v->in->events[i - 1];
	if (w.e->kind == MP_SK_API) {
		int64_t d = w.e->duration_ns > 0 ? w.e->duration_ns : 0;

		w.t0 = w.e->ts_ns;
		w.t1 = w.e->ts_ns > INT64_MAX - d ? INT64_MAX : w.e->ts_ns + d; /* saturated: a crafted spool */
	}
	return w;
}

static int mem_record(struct conv *v, const struct mp_spool_event *e)
{
	struct who who = who_of(v, e);
	enum mp_spool_class cls = classify(v, e);
	int32_t device = e->device >= 0 ? e->device : who.e->device;

	if (cls == MP_SPOOL_HOST && mp_spool_is_pinned(e))
		return e->kind == MP_SK_MEM_FREE ? host_close(v, e) : host_open(v, e, &who, 0);
	if (cls == MP_SPOOL_HOST || cls == MP_SPOOL_UNKNOWN) {
		v->c->st->n_warnings[cls == MP_SPOOL_HOST ? MP_WARN_SKIPPED_HOST
		                                          : MP_WARN_SKIPPED_UNKNOWN]++;
		return 0;
	}
	if (e->kind == MP_SK_MEM_FREE)
		return free_address(v, e, 0, &who);
	return open_block(v, e, cls, MEMPROF_OP_ALLOC,
	                  who.e->kind == MP_SK_API ? (int64_t)who.e->bytes : 0, device, &who);
}

/* An allocation or free call: it makes the event itself when no memory record did. */
static int api_call(struct conv *v, const struct mp_spool_event *e)
{
	int is_free = (e->flags & MP_SE_FREE_CALL) != 0;
	struct who who = who_of(v, e);
	uint64_t covered = 0;
	enum mp_spool_class cls;

	if (e->correlation)
		mp_intmap_get(&v->covered, e->correlation, &covered);
	if (mp_spool_call_failed(e) || (covered & (is_free ? COVER_FREE : COVER_ALLOC)))
		return 0; /* failed, or a memory record stands for it */
	if (is_free)
		return free_address(v, e, (e->flags & MP_SE_HOST_MEMORY) != 0, &who);
	if (e->address == 0)
		return 0;
	cls = classify(v, e);
	if (cls == MP_SPOOL_HOST && mp_spool_is_pinned(e))
		return host_open(v, e, &who, 0);
	if (cls == MP_SPOOL_HOST || cls == MP_SPOOL_UNKNOWN) {
		v->c->st->n_warnings[cls == MP_SPOOL_HOST ? MP_WARN_SKIPPED_HOST
		                                          : MP_WARN_SKIPPED_UNKNOWN]++;
		return 0;
	}
	return open_block(v, e, cls, MEMPROF_OP_ALLOC, (int64_t)e->bytes, e->device, &who);
}

static int vmm_map(struct conv *v, const struct mp_spool_event *e);

/* Live when a window opened: a block, or a mapping whose unmap may follow. */
static int preexisting(struct conv *v, const struct mp_spool_event *e)
{
	struct who who = who_of(v, e);
	enum mp_spool_class cls = classify(v, e);

	if (e->flags & MP_SE_MAPPING)
		return vmm_map(v, e);

	if (cls == MP_SPOOL_HOST && mp_spool_is_pinned(e))
		return host_open(v, e, &who, 0);
	if (cls == MP_SPOOL_HOST || cls == MP_SPOOL_UNKNOWN) {
		v->c->st->n_warnings[cls == MP_SPOOL_HOST ? MP_WARN_SKIPPED_HOST
		                                          : MP_WARN_SKIPPED_UNKNOWN]++;
		return 0;
	}
	return open_block(v, e, cls, MEMPROF_OP_PREEXISTING, 0, e->device, &who);
}

/* --- VMM ------------------------------------------------------------------------------ */

static int vmm_map(struct conv *v, const struct mp_spool_event *e)
{
	struct who who = who_of(v, e);
	uint64_t h = 0;
	int32_t device = e->device;
	struct memprof_event ev;
	size_t bi;
	int rc;

	if (mp_intmap_get(&v->handles, e->extra, &h)) {
		if (mp_spool_handle_kind(h) == MP_MK_PINNED &&
		    mp_spool_host_mapped(&v->host, e->extra, e->address))
			return 0; /* a host buffer's mapping: the buffer is kept */
		if (mp_spool_handle_host(h)) {
			v->c->st->n_warnings[MP_WARN_SKIPPED_HOST]++;
			return 0;
		}
		if (device < 0)
			device = mp_spool_handle_device(h);
	}
	if ((rc = new_block(v, &bi)) < 0)
		return rc;
	ev = event_at(e->ts_ns, MEMPROF_OP_MAP, device);
	v->blocks[bi].id = ev.alloc_id = ++v->next_segment_id;
	v->blocks[bi].size = ev.size_bytes = ev.requested_bytes = (int64_t)e->bytes;
	v->blocks[bi].device = ev.device;
	ev.address = e->address;
	if (mp_intmap_put(&v->mapped, e->address, bi + 1) < 0)
		return nomem(v);
	if ((rc = context(v, &who, &ev)) < 0)
		return rc;
	if (v->in->merge && (rc = mp_torch_merge_map_outside(v->in, e, (int64_t)e->bytes,
	                                                     &v->blocks[bi].api_id)) != 0) {
		if (rc < 0)
			return rc;
		ev.api_id = v->blocks[bi].api_id; /* its unmap carries the same label */
	}
	return emit(v, &ev);
}

static int vmm_unmap(struct conv *v, const struct mp_spool_event *e)
{
	struct who who = who_of(v, e);
	struct memprof_event ev;
	struct block *b;
	uint64_t bi;
	int rc;

	if (!mp_intmap_get(&v->mapped, e->address, &bi))
		return 0; /* its map is not in the trace (host memory, or before recording) */
	b = &v->blocks[bi - 1];
	mp_intmap_del(&v->mapped, e->address);
	ev = event_at(e->ts_ns, MEMPROF_OP_UNMAP, b->device);
	ev.alloc_id = b->id;
	ev.size_bytes = ev.requested_bytes = b->size;
	ev.address = e->address;
	if ((rc = context(v, &who, &ev)) < 0)
		return rc;
	if (b->api_id)
		ev.api_id = b->api_id;
	return emit(v, &ev);
}

static int vmm(struct conv *v, const struct mp_spool_event *e)
{
	switch (e->kind) {
	case MP_SK_VMM_RESERVE:
		v->in->n_vmm_reserve++;
		return 0;
	case MP_SK_VMM_FREE:
		v->in->n_vmm_address_free++;
		return 0;
	case MP_SK_VMM_CREATE:
		v->in->n_vmm_create++;
		if (mp_intmap_put(&v->handles, e->extra, mp_spool_handle_pack(e)) < 0)
			return nomem(v);
		if (e->mem_kind == MP_MK_PINNED) {
			struct who who = who_of(v, e);
			return host_open(v, e, &who, e->extra);
		}
		return 0;
	case MP_SK_VMM_RELEASE:
		v->in->n_vmm_release++;
		mp_intmap_del(&v->handles, e->extra);
		mp_spool_host_release(&v->host, e->extra, e->ts_ns);
		return 0;
	case MP_SK_VMM_MAP:
		return vmm_map(v, e);
	default:
		return vmm_unmap(v, e);
	}
}

/* --- phases ----------------------------------------------------------------------------- */

static struct phase_stack *phases_of(struct conv *v, uint32_t thread)
{
	uint64_t i;

	if (mp_intmap_get(&v->thread_phases, thread, &i))
		return &v->stacks[i - 1];
	if (mp_array_reserve((void **)&v->stacks, &v->cap_stacks, v->n_stacks + 1,
	                     sizeof(*v->stacks)) < 0)
		return NULL;
	if (mp_intmap_put(&v->thread_phases, thread, v->n_stacks + 1) < 0)
		return NULL;
	memset(&v->stacks[v->n_stacks], 0, sizeof(v->stacks[0]));
	return &v->stacks[v->n_stacks++];
}

static int phase(struct conv *v, const struct mp_spool_event *e)
{
	struct phase_stack *s = phases_of(v, e->thread);
	struct memprof_event ev = event_at(e->ts_ns, MEMPROF_OP_PHASE_BEGIN, e->device);

	if (!s)
		return nomem(v);
	ev.thread = e->thread;
	if (e->kind == MP_SK_PHASE_POP) {
		if (s->n == 0)
			return 0; /* its push was before recording began */
		ev.op = MEMPROF_OP_PHASE_END;
		ev.phase_id = s->ids[--s->n];
		return emit(v, &ev);
	}
	if ((ev.phase_id = name_id(v, e->name, 0)) < 0)
		return (int)ev.phase_id;
	if (ev.phase_id == 0 && (ev.phase_id = mp_writer_phase(v->c->w, "(unnamed)", 9)) < 0)
		return writer_failed(v);
	if (mp_array_reserve((void **)&s->ids, &s->cap, s->n + 1, sizeof(*s->ids)) < 0)
		return nomem(v);
	s->ids[s->n++] = ev.phase_id;
	return emit(v, &ev);
}

/* 'memprof attach PID mark LABEL': a phase of no length named "mark: LABEL". */
static int mark(struct conv *v, const struct mp_spool_event *e)
{
	struct memprof_event ev = event_at(e->ts_ns, MEMPROF_OP_PHASE_BEGIN, e->device);
	char label[512 + 8];
	size_t len = 0;
	const char *text = mp_spool_reader_string(v->in->r, e->name, &len);
	int rc;

	if (!text)
		len = 0;
	if (len > 512)
		len = 512;
	memcpy(label, "mark: ", 6);
	memcpy(label + 6, text ? text : "", len);
	ev.thread = e->thread;
	if ((ev.phase_id = mp_writer_phase(v->c->w, label, len + 6)) < 0)
		return writer_failed(v);
	if ((rc = emit(v, &ev)) < 0)
		return rc;
	ev.op = MEMPROF_OP_PHASE_END;
	return emit(v, &ev);
}

static int oom(struct conv *v, const struct mp_spool_event *e)
{
	struct who who = {e, e->ts_ns, e->ts_ns};
	struct memprof_event ev = event_at(e->ts_ns, MEMPROF_OP_OOM, e->device);
	int rc;

	ev.requested_bytes = (int64_t)e->bytes;
	ev.stream = e->stream;
	return (rc = context(v, &who, &ev)) < 0 ? rc : emit(v, &ev);
}

/* --- the conversion ------------------------------------------------------------------- */

static int one_event(struct conv *v, const struct mp_spool_event *e)
{
	switch (e->kind) {
	case MP_SK_MEM_ALLOC:
	case MP_SK_MEM_FREE:
		return mem_record(v, e);
	case MP_SK_API:
		return api_call(v, e);
	case MP_SK_VMM_RESERVE:
	case MP_SK_VMM_FREE:
	case MP_SK_VMM_CREATE:
	case MP_SK_VMM_RELEASE:
	case MP_SK_VMM_MAP:
	case MP_SK_VMM_UNMAP:
		return vmm(v, e);
	case MP_SK_OOM:
		return oom(v, e);
	case MP_SK_PHASE_PUSH:
	case MP_SK_PHASE_POP:
		return phase(v, e);
	case MP_SK_MARK:
		return mark(v, e);
	case MP_SK_PREEXISTING:
		return preexisting(v, e);
	case MP_SK_HOST_NUMA:
		return host_numa(v, e);
	case MP_SK_DROPPED:
		v->in->n_dropped_events += (int64_t)e->extra;
		return 0;
	case MP_SK_DISABLED:
		if (!v->in->disabled_why)
			v->in->disabled_why = e->name ? e->name : 0;
		return 0;
	case MP_SK_POOL_CREATED:
	case MP_SK_POOL_DESTROYED:
	case MP_SK_POOL_TRIMMED:
		return 0; /* the allocations inside pools carry the memory */
	case MP_SK_WINDOW_START:
	case MP_SK_WINDOW_STOP:
		v->in->windowed = 1; /* recorded between attach start and stop */
		return 0;
	default:
		v->c->st->n_warnings[MP_WARN_SKIPPED_UNKNOWN]++;
		return 0;
	}
}

/* Index the API events by correlation id, and which correlations a memory record covers. */
static int index_events(struct conv *v)
{
	size_t i;

	for (i = 0; i < v->in->n_events; i++) {
		const struct mp_spool_event *e = &v->in->events[i];
		uint64_t had = 0;

		if (!e->correlation)
			continue;
		if (e->kind == MP_SK_API && mp_intmap_put(&v->api_of, e->correlation, i + 1) < 0)
			return nomem(v);
		if (e->kind != MP_SK_MEM_ALLOC && e->kind != MP_SK_MEM_FREE)
			continue;
		mp_intmap_get(&v->covered, e->correlation, &had);
		had |= e->kind == MP_SK_MEM_ALLOC ? COVER_ALLOC : COVER_FREE;
		if (mp_intmap_put(&v->covered, e->correlation, had) < 0)
			return nomem(v);
	}
	return 0;
}

struct order {
	int64_t ts;
	size_t i;
};

static int by_time(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i; /* stable: the spool's order among equals */
}

static void conv_free(struct conv *v)
{
	size_t i;

	mp_intmap_free(&v->api_of);
	mp_intmap_free(&v->covered);
	mp_intmap_free(&v->live);
	mp_intmap_free(&v->freed);
	mp_intmap_free(&v->mapped);
	mp_intmap_free(&v->handles);
	mp_intmap_free(&v->phase_of);
	mp_intmap_free(&v->api_id_of);
	mp_intmap_free(&v->stack_of);
	mp_intmap_free(&v->thread_phases);
	for (i = 0; i < v->n_stacks; i++)
		free(v->stacks[i].ids);
	free(v->stacks);
	free(v->blocks);
	mp_spool_host_free(&v->host);
}

/*
 * CUPTI hands activity records over per thread and late, so a spool is not
 * in time order: every event is held (96 bytes each, in mp_spool_in) and
 * sorted through an index of 16 bytes per event before any is written; the
 * block table adds about 64 bytes per allocation.  A spool of 10 million
 * events thus takes about 1.1 GiB plus its allocations.
 */
/* Every event's bytes below the limit every reader relies on: refused here,
 * naming the event, rather than written into a trace nothing can read. */
static int check_sizes(const struct mp_spool_in *in)
{
	size_t i;

	for (i = 0; i < in->n_events; i++)
		if (in->events[i].bytes >= (uint64_t)MP_MAX_SIZE_BYTES)
			return mp_err(in->c->err, MP_EFORMAT,
			              "invalid size '%s': event %zu of the spool (kind %u, at %lld "
			              "ns) has %llu bytes, 2^56 or more",
			              in->c->path, i + 1, (unsigned)in->events[i].kind,
			              (long long)in->events[i].ts_ns,
			              (unsigned long long)in->events[i].bytes);
	return 0;
}

int mp_spool_convert(struct mp_spool_in *in)
{
	struct conv *v = calloc(1, sizeof(*v));
	struct order *order = NULL;
	size_t i;
	int rc;

	if (!v)
		return mp_err(in->c->err, MP_ENOMEM, "out of memory");
	if ((rc = check_sizes(in)) < 0) {
		free(v);
		return rc;
	}
	v->in = in;
	v->c = in->c;
	mp_spool_host_init(&v->host);
	if (in->n_events && !(order = malloc(in->n_events * sizeof(*order)))) {
		rc = nomem(v);
		goto out;
	}
	for (i = 0; i < in->n_events; i++)
		order[i] = (struct order){in->events[i].ts_ns, i};
	if (in->n_events)
		qsort(order, in->n_events, sizeof(*order), by_time);
	rc = index_events(v);
	for (i = 0; rc == 0 && i < in->n_events; i++)
		rc = one_event(v, &in->events[order[i].i]);
	if (rc == 0) {
		int64_t n = mp_spool_host_write(&v->host, v->c->store);
		if (n < 0)
			rc = mp_err_copy(v->c->err, mp_store_error(v->c->store));
		else
			in->n_host_buffers += n;
	}
	in->next_alloc_id = v->next_alloc_id;
out:
	free(order);
	conv_free(v);
	free(v);
	return rc < 0 ? rc : 0;
}
