/*
 * import/rmm.c - the importer of RAPIDS RMM logging_resource_adaptor logs:
 * rows from import/rmm_scan.c become events of one process and one device
 * per file.  Owns the time-of-day clock (midnight wraps, out-of-order rows)
 * and the pairing of frees with allocations by address.  Scanning and
 * pairing run on a thread of their own (import/event_pipe.c), the writer on
 * the caller's: they touch nothing in common but the queued events.
 */
#include "import/event_pipe.h"
#include "import/import.h"
#include "util/pair_map.h"
#include "import/rmm_scan.h"

#include <stdlib.h>
#include <string.h>

#define HOUR_NS  (3600 * INT64_C(1000000000))
#define DAY_NS   (24 * HOUR_NS)
#define MAX_DAYS 100000 /* midnights a log may pass: keeps ts_ns far from overflow */

/* A live allocation. */
struct block {
	int64_t id, size;
};

struct rmm_import {
	struct mp_import_ctx *c; /* on the reading thread: c->st only */
	struct mp_rmm_scanner *s;
	struct mp_event_pipe *pipe;
	struct mp_error err;     /* the reading thread's error */
	struct memprof_event ev; /* the next event; process and device stay */
	struct mp_pair_map live; /* (address, 0) -> index in blocks */
	struct block *blocks;    /* live allocations, and free slots */
	int64_t *free_slots;     /* indices in blocks not in use */
	size_t n_blocks, n_free, cap_blocks;
	int64_t next_id;         /* the last allocation id given */
	int64_t day_ns, last_ts; /* the current day's midnight, the last timestamp */
	int64_t n_rows;
};

/*
 * "log.dev3.csv" -> 3: Python's rmm.reinitialize(logging=True) names each
 * device's log so.  The last ".devN" followed by '.' or the end of the base
 * name counts; 0 when there is none.
 */
static int32_t device_from_name(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL, *p;
	int32_t device = 0;

	base = base ? base + 1 : path;
	for (p = base; p && (p = strstr(p, ".dev")) != NULL; p++) {
		const char *q = p + 4;
		int64_t v = 0;

		while (*q >= '0' && *q <= '9' && v <= INT32_MAX)
			v = v * 10 + (*q++ - '0');
		if (q > p + 4 && v <= INT32_MAX && (*q == '.' || *q == '\0'))
			device = (int32_t)v;
	}
	return device;
}

/*
 * The timestamp of a row: nanoseconds since midnight of the log's first
 * day.  A time of day more than an hour before the last one is the next
 * day.  A smaller step back (threads whose lines reached the log out of
 * order) is held at the last timestamp, so timestamps never go back; so is
 * a time in the last hour of a day seen in the first hour after a midnight
 * (such a line from before that midnight).
 */
static int timestamp(struct rmm_import *ri, const struct mp_rmm_row *row, struct mp_error *err)
{
	int64_t t = ri->day_ns + row->time_ns;

	if (ri->n_rows++ == 0) {
		ri->last_ts = t;
	} else if (t < ri->last_ts - HOUR_NS) {
		if (ri->day_ns >= (MAX_DAYS - 1) * DAY_NS)
			return mp_err(
			        err, MP_EFORMAT,
			        "time out of range '%s:%lld:%d': the time of day went back past "
			        "midnight %d times",
			        ri->c->path, (long long)row->line, row->time_col, MAX_DAYS);
		ri->day_ns += DAY_NS;
		ri->c->st->n_warnings[MP_WARN_CLOCK_WRAP]++;
		t += DAY_NS;
		if (t > ri->last_ts)
			ri->last_ts = t;
	} else if (t > ri->last_ts) {
		if (!(ri->day_ns > 0 && ri->last_ts - ri->day_ns < HOUR_NS &&
		      row->time_ns >= DAY_NS - HOUR_NS))
			ri->last_ts = t;
	}
	ri->ev.ts_ns = ri->last_ts;
	return 0;
}

/* The store's error (a write that failed), as the import's. */
static int store_failed(struct rmm_import *ri)
{
	return mp_err_copy(ri->c->err, mp_writer_error(ri->c->w));
}

/* Queue the event for the writer; MP_ESTOP when writing failed. */
static int emit(struct rmm_import *ri)
{
	ri->c->st->n_events++;
	return mp_event_pipe_push(ri->pipe, &ri->ev);
}

/* The index in blocks the next live allocation takes (not yet taken), or
 * MP_ENOMEM. */
static int64_t block_slot(struct rmm_import *ri)
{
	if (ri->n_free)
		return ri->free_slots[ri->n_free - 1];
	if (ri->n_blocks == ri->cap_blocks) {
		size_t cap = ri->cap_blocks ? 2 * ri->cap_blocks : 1024;
		struct block *b = realloc(ri->blocks, cap * sizeof(*b));
		int64_t *f = b ? realloc(ri->free_slots, cap * sizeof(*f)) : NULL;

		if (b)
			ri->blocks = b;
		if (!f)
			return MP_ENOMEM;
		ri->free_slots = f;
		ri->cap_blocks = cap;
	}
	return (int64_t)ri->n_blocks;
}

/*
 * Remember a live allocation at address unless one is live there already:
 * 1 added, 0 when one is (nothing changed), or MP_ENOMEM.  One probe of the
 * live set, where taking the earlier one and adding take two.
 */
static int block_add(struct rmm_import *ri, uint64_t address, int64_t id, int64_t size)
{
	int64_t i = block_slot(ri);
	int rc;

	if (i < 0)
		return (int)i;
	rc = mp_pair_map_add(&ri->live, address, 0, (uint64_t)i);
	if (rc <= 0)
		return rc;
	if (ri->n_free)
		ri->n_free--;
	else
		ri->n_blocks++;
	ri->blocks[i].id = id;
	ri->blocks[i].size = size;
	return 1;
}

/* Take the live allocation at address out of the live set: 1 when there was one. */
static int block_take(struct rmm_import *ri, uint64_t address, struct block *out)
{
	uint64_t i;

	if (!mp_pair_map_take(&ri->live, address, 0, &i))
		return 0;
	*out = ri->blocks[i];
	ri->free_slots[ri->n_free++] = (int64_t)i;
	return 1;
}

/* A free event for b (the earlier block at this address, or the row's own). */
static int emit_free(struct rmm_import *ri, uint64_t address, const struct block *b)
{
	ri->ev.op = MEMPROF_OP_FREE;
	ri->ev.alloc_id = b->id;
	ri->ev.size_bytes = ri->ev.requested_bytes = b->size;
	ri->ev.address = address;
	return emit(ri);
}

static int on_allocate(struct rmm_import *ri, const struct mp_rmm_row *row)
{
	struct block b = {0, 0};
	int rc = block_add(ri, row->pointer, ri->next_id + 1, row->size);

	if (rc == 0) { /* the earlier block here was never freed: close it here */
		block_take(ri, row->pointer, &b);
		ri->c->st->n_warnings[MP_WARN_DUPLICATE_ALLOC]++;
		if ((rc = emit_free(ri, row->pointer, &b)) < 0)
			return rc;
		rc = block_add(ri, row->pointer, ri->next_id + 1, row->size);
	}
	if (rc < 0)
		return mp_err(&ri->err, MP_ENOMEM, "out of memory");
	ri->ev.op = MEMPROF_OP_ALLOC;
	ri->ev.alloc_id = ++ri->next_id;
	ri->ev.size_bytes = ri->ev.requested_bytes = row->size;
	ri->ev.address = row->pointer;
	ri->c->st->n_allocs++;
	return emit(ri);
}

static int on_free(struct rmm_import *ri, const struct mp_rmm_row *row)
{
	struct block b;

	if (!block_take(ri, row->pointer, &b)) { /* kept, with an id of its own */
		ri->c->st->n_warnings[MP_WARN_UNMATCHED_FREE]++;
		b.id = ++ri->next_id;
		b.size = row->size;
	} else if (b.size != row->size) {
		ri->c->st->n_warnings[MP_WARN_SIZE_MISMATCH]++;
	}
	return emit_free(ri, row->pointer, &b);
}

static int on_row(struct rmm_import *ri, const struct mp_rmm_row *row)
{
	int rc = timestamp(ri, row, &ri->err);

	if (rc < 0)
		return rc;
	ri->ev.thread = row->thread;
	ri->ev.stream = row->stream;
	switch (row->action) {
	case MP_RMM_ALLOCATE:
		return on_allocate(ri, row);
	case MP_RMM_FREE:
		return on_free(ri, row);
	default: /* allocate failure: the pointer is (nil) */
		ri->ev.op = MEMPROF_OP_OOM;
		ri->ev.alloc_id = 0;
		ri->ev.size_bytes = ri->ev.requested_bytes = row->size;
		ri->ev.address = 0;
		ri->ev.device_free_bytes = -1;
		return emit(ri);
	}
}

/* The process and device of this file, and the event fields they fix. */
static int start(struct rmm_import *ri)
{
	struct memprof_process p = {0, 0, 0, NULL, -1, -1, -1, NULL};
	struct memprof_device d = {0, 0, NULL, NULL, 0};

	if (mp_writer_process(ri->c->w, &p) < 0)
		return store_failed(ri);
	d.process_id = p.id;
	d.ordinal = device_from_name(ri->c->file_path);
	if (mp_writer_device(ri->c->w, &d) < 0)
		return store_failed(ri);
	ri->ev.process_id = p.id;
	ri->ev.device = d.ordinal;
	ri->ev.device_free_bytes = -1;
	return 0;
}

static int finish(struct rmm_import *ri, const struct mp_rmm_scanner *s)
{
	struct mp_store *store = ri->c->store;

	if (mp_rmm_scan_dropped_partial(s)) {
		ri->c->st->n_warnings[MP_WARN_PARTIAL_LINE]++;
		if (mp_store_set_meta(store, "truncated", "1") < 0)
			return store_failed(ri);
	}
	if (mp_store_set_meta(store, "clock",
	                      "time_of_day_ns (RMM log: wall clock without a date; midnight "
	                      "of the log's first day is 0)") < 0)
		return store_failed(ri);
	return 0;
}

/* The reading thread: every row, as events into the pipe. */
static int produce(void *ctx, struct mp_event_pipe *pipe)
{
	struct rmm_import *ri = ctx;
	struct mp_rmm_row row;
	int rc;

	ri->pipe = pipe;
	while ((rc = mp_rmm_scan_next(ri->s, &row, &ri->err)) == 1)
		if ((rc = on_row(ri, &row)) < 0)
			return rc;
	return rc;
}

static int run(struct mp_import_ctx *c)
{
	struct rmm_import ri = {.c = c};
	struct mp_error werr = {0};
	int rc;

	rc = mp_rmm_scan_open(&ri.s, c->in, c->path, 0, c->err);
	if (rc < 0)
		return rc;
	mp_pair_map_init(&ri.live);
	rc = start(&ri);
	if (rc == 0) {
		rc = mp_event_pipe_run(c->w, produce, &ri, &werr);
		if (rc < 0)
			mp_err_copy(c->err, werr.code ? &werr : &ri.err);
	}
	if (rc == 0)
		rc = finish(&ri, ri.s);
	mp_rmm_scan_close(ri.s);
	mp_pair_map_free(&ri.live);
	free(ri.blocks);
	free(ri.free_slots);
	return rc < 0 ? rc : 0;
}

static int probe(const char *path, const char *head, size_t n)
{
	(void)path; /* by content only */
	return mp_rmm_probe(head, n);
}

const struct mp_importer mp_importer_rmm = {
        .name = "rmm",
        .description = "RAPIDS RMM logging_resource_adaptor log (CSV)",
        .probe = probe,
        .run = run,
};
