/*
 * import/nsys_events.c - checked rows of an Nsight Systems export become
 * events: one process per globalPid, devices as seen, allocations paired
 * with deallocations by (process, device, address), and each cudaMallocAsync
 * pool's size changes turned into map/unmap of one segment per pool.
 */
#include "import/nsys.h"

#include <stdlib.h>
#include <string.h>

void mp_nsys_events_init(struct mp_nsys_events *e, struct mp_import_ctx *c)
{
	memset(e, 0, sizeof(*e));
	e->c = c;
	mp_intmap_init(&e->processes);
	mp_intmap_init(&e->slot_of);
}

/* A failed writer call: its message (on the store) becomes the import's. */
static int writer_failed(struct mp_nsys_events *e)
{
	int rc = mp_err_copy(e->c->err, mp_writer_error(e->c->w));

	return rc < 0 ? rc : MP_EIO;
}

static void slot_free(struct mp_nsys_slot *s)
{
	mp_intmap_free(&s->block_ids);
	mp_intmap_free(&s->block_sizes);
	mp_intmap_free(&s->pool_ids);
	mp_intmap_free(&s->pool_sizes);
}

void mp_nsys_events_free(struct mp_nsys_events *e)
{
	size_t i;

	for (i = 0; i < e->n_slots; i++)
		slot_free(&e->slots[i]);
	free(e->slots);
	mp_intmap_free(&e->processes);
	mp_intmap_free(&e->slot_of);
}

/* The process of a globalPid, added on first sight with its pid (bits 24..47). */
static int64_t process_id(struct mp_nsys_events *e, uint64_t global_pid)
{
	struct memprof_process p = {0, 0, 0, NULL, -1, -1, -1, NULL};
	uint64_t id;

	if (mp_intmap_get(&e->processes, global_pid, &id))
		return (int64_t)id;
	p.pid = (int64_t)((global_pid >> 24) & 0xffffff);
	if (mp_writer_process(e->c->w, &p) < 0)
		return writer_failed(e);
	if (mp_intmap_put(&e->processes, global_pid, (uint64_t)p.id) < 0)
		return mp_err(e->c->err, MP_ENOMEM, "out of memory");
	return p.id;
}

/* The live state of (process, device), made (with its devices row) on first use. */
static int slot_of(struct mp_nsys_events *e, int64_t process, int32_t device,
                   struct mp_nsys_slot **out)
{
	uint64_t key = ((uint64_t)process << 32) | (uint32_t)device, index;
	struct memprof_device d = {process, device, NULL, NULL, 0};
	struct mp_nsys_slot *slots;

	if (mp_intmap_get(&e->slot_of, key, &index)) {
		*out = &e->slots[index - 1];
		return 0;
	}
	if (e->n_slots == e->cap_slots) {
		size_t cap = e->cap_slots ? 2 * e->cap_slots : 4;

		slots = realloc(e->slots, cap * sizeof(*slots));
		if (!slots)
			return mp_err(e->c->err, MP_ENOMEM, "out of memory");
		e->slots = slots;
		e->cap_slots = cap;
	}
	if (mp_intmap_put(&e->slot_of, key, e->n_slots + 1) < 0)
		return mp_err(e->c->err, MP_ENOMEM, "out of memory");
	memset(&e->slots[e->n_slots], 0, sizeof(e->slots[0]));
	*out = &e->slots[e->n_slots++];
	return mp_writer_device(e->c->w, &d) < 0 ? writer_failed(e) : 0;
}

/* An event of row's process, device, time, stream, thread and API. */
static int emit(struct mp_nsys_events *e, const struct mp_nsys_row *row, struct memprof_event *ev)
{
	ev->ts_ns = row->start;
	ev->device = row->device;
	ev->device_free_bytes = -1;
	if (mp_writer_event(e->c->w, ev) < 0)
		return writer_failed(e);
	e->c->st->n_events++;
	return 0;
}

/* A pool whose size changed since its last row: map or unmap the difference. */
static int pool_change(struct mp_nsys_events *e, struct mp_nsys_slot *s,
                       const struct mp_nsys_row *row, struct memprof_event base)
{
	uint64_t id, last = 0;

	if (!mp_intmap_get(&s->pool_ids, row->pool_address, &id)) {
		id = (uint64_t)++e->next_segment_id;
		if (mp_intmap_put(&s->pool_ids, row->pool_address, id) < 0)
			return mp_err(e->c->err, MP_ENOMEM, "out of memory");
	}
	mp_intmap_get(&s->pool_sizes, row->pool_address, &last);
	if ((int64_t)last == row->pool_size)
		return 0;
	if (mp_intmap_put(&s->pool_sizes, row->pool_address, (uint64_t)row->pool_size) < 0)
		return mp_err(e->c->err, MP_ENOMEM, "out of memory");
	base.op = row->pool_size > (int64_t)last ? MEMPROF_OP_MAP : MEMPROF_OP_UNMAP;
	base.alloc_id = (int64_t)id;
	base.size_bytes = base.requested_bytes = row->pool_size > (int64_t)last
	                                                 ? row->pool_size - (int64_t)last
	                                                 : (int64_t)last - row->pool_size;
	/* the pool grows or shrinks at its end: map [base + old, base + new),
	 * unmap [base + new, base + old) */
	base.address = row->pool_address +
	               (uint64_t)(row->pool_size > (int64_t)last ? (int64_t)last : row->pool_size);
	return emit(e, row, &base);
}

static int alloc(struct mp_nsys_events *e, struct mp_nsys_slot *s, const struct mp_nsys_row *row,
                 struct memprof_event ev)
{
	uint64_t id, size;
	int rc;

	if (mp_intmap_get(&s->block_ids, row->address, &id)) {
		struct memprof_event implied = {0};

		/* the earlier allocation's free was not recorded: close it here */
		mp_intmap_get(&s->block_sizes, row->address, &size);
		implied.op = MEMPROF_OP_FREE;
		implied.process_id = ev.process_id;
		implied.alloc_id = (int64_t)id;
		implied.size_bytes = implied.requested_bytes = (int64_t)size;
		implied.address = row->address;
		if ((rc = emit(e, row, &implied)) < 0)
			return rc;
		e->c->st->n_warnings[MP_WARN_DUPLICATE_ALLOC]++;
	}
	ev.op = MEMPROF_OP_ALLOC;
	ev.alloc_id = ++e->next_alloc_id;
	if (mp_intmap_put(&s->block_ids, row->address, (uint64_t)ev.alloc_id) < 0 ||
	    mp_intmap_put(&s->block_sizes, row->address, (uint64_t)row->bytes) < 0)
		return mp_err(e->c->err, MP_ENOMEM, "out of memory");
	e->c->st->n_allocs++;
	return emit(e, row, &ev);
}

static int dealloc(struct mp_nsys_events *e, struct mp_nsys_slot *s, const struct mp_nsys_row *row,
                   struct memprof_event ev)
{
	uint64_t id, size;

	ev.op = MEMPROF_OP_FREE;
	if (mp_intmap_get(&s->block_ids, row->address, &id)) {
		/* nsys may record 0 bytes for a deallocation: the allocation's size counts */
		mp_intmap_get(&s->block_sizes, row->address, &size);
		mp_intmap_del(&s->block_ids, row->address);
		mp_intmap_del(&s->block_sizes, row->address);
		ev.alloc_id = (int64_t)id;
		ev.size_bytes = ev.requested_bytes = (int64_t)size;
	} else {
		ev.alloc_id = ++e->next_alloc_id; /* a fresh id: its allocation is not here */
		e->c->st->n_warnings[MP_WARN_UNMATCHED_FREE]++;
	}
	return emit(e, row, &ev);
}

int mp_nsys_events_row(struct mp_nsys_events *e, const struct mp_nsys_row *row)
{
	struct memprof_event ev = {0};
	struct mp_nsys_slot *s = NULL;
	int rc;

	ev.process_id = process_id(e, row->global_pid);
	if (ev.process_id < 0)
		return (int)ev.process_id;
	if ((rc = slot_of(e, ev.process_id, row->device, &s)) < 0)
		return rc;
	ev.api_id = mp_writer_api(e->c->w, row->api, row->api_len);
	if (ev.api_id < 0)
		return writer_failed(e);
	ev.stream = row->stream;
	ev.thread = row->thread;
	ev.address = row->address;
	ev.size_bytes = ev.requested_bytes = row->bytes;
	if (row->has_pool && (rc = pool_change(e, s, row, ev)) < 0)
		return rc;
	ev.duration_ns = row->duration_ns; /* the call's, on its allocation or free only */
	return row->is_alloc ? alloc(e, s, row, ev) : dealloc(e, s, row, ev);
}
