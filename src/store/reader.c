/*
 * store/reader.c - streaming the events of a trace in sequence order, with
 * phase, API and process names resolved from small in-memory tables and call
 * stacks resolved on first use and cached by id (store/stack_cache.c: memory
 * and time linear in the stack nodes read, however the stacks are chained).
 */
#include "store/reader.h"
#include "store/event_pages.h"
#include "store/stack_cache.h"
#include "store/store_internal.h"
#include "util/densemap.h"
#include "util/intmap.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CONSUMERS 32

/* The columns of an event, in the order decode() reads them. */
#define EVENT_COLUMNS                                                                              \
	"seq, ts_ns, op, alloc_id, size, requested, address, device, stream, process, phase, "     \
	"stack, api, device_free, thread, duration_ns"
#define N_EVENT_COLUMNS 16

struct mp_reader {
	struct mp_store *s;
	unsigned flags;
	sqlite3_stmt *events, *stack_node, *frame_row;
	struct mp_intmap phase_names, api_names, pids; /* id -> char* / pid */
	struct mp_densemap pid_index;                  /* id -> index in pid_list */
	int64_t *pid_list;
	struct mp_stack_cache stacks;  /* id -> stack */
	struct mp_intmap frame_cache;  /* id -> struct memprof_frame* */
	int64_t *node_ids, *frame_ids; /* scratch: the uncached nodes of a stack */
	uint32_t walk_cap;
	int64_t walk_top; /* where the walk stopped: 0 or a cached node */
	struct memprof_record rec;
	struct mp_consumer consumers[MAX_CONSUMERS];
	int n_consumers;
	int push_rc;          /* what stopped mp_reader_run's push, 0 if nothing */
	int64_t n_read;       /* records decoded */
	int64_t n_by_sql;     /* of them, read through SQL (the rest from the pages) */
	int64_t last_process; /* the previous record's process and its pid */
	int64_t last_pid;
	int64_t last_phase_id, last_api_id; /* the last ids looked up and their names */
	const char *last_phase, *last_api;
};

static int load_names(struct mp_reader *r, const char *sql, struct mp_intmap *m)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(r->s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 1);
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 0), old = 0;
		char *copy = strdup(t ? t : "");
		/* a corrupt table may repeat an id: the last name is kept, as before */
		int had = mp_intmap_get(m, id, &old);

		if (!copy || mp_intmap_put(m, id, (uint64_t)(uintptr_t)copy) < 0) {
			free(copy);
			sqlite3_finalize(st);
			return mp_err(&r->s->err, MP_ENOMEM, "out of memory");
		}
		if (had)
			free((void *)(uintptr_t)old);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(r->s, "cannot read trace");
}

/* The pids again, in a list found through a dense-key map: process ids
 * are table row ids, and events alternate between processes. */
static int index_pids(struct mp_reader *r)
{
	size_t i, n = 0;

	if (r->pids.n >= MP_DENSEMAP_NONE ||
	    !(r->pid_list = malloc((r->pids.n ? r->pids.n : 1) * sizeof(*r->pid_list))))
		return MP_ENOMEM;
	for (i = 0; i < r->pids.cap; i++) {
		if (!r->pids.used[i])
			continue;
		r->pid_list[n] = (int64_t)r->pids.vals[i];
		if (mp_densemap_put(&r->pid_index, r->pids.keys[i], (uint32_t)n++) < 0)
			return MP_ENOMEM;
	}
	return 0;
}

static int load_pids(struct mp_reader *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(r->s->db, "SELECT id, pid FROM processes;", -1, &st, NULL) !=
	    SQLITE_OK)
		return mp_store_sqlerr(r->s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (mp_intmap_put(&r->pids, (uint64_t)sqlite3_column_int64(st, 0),
		                  (uint64_t)sqlite3_column_int64(st, 1)) < 0) {
			sqlite3_finalize(st);
			return mp_err(&r->s->err, MP_ENOMEM, "out of memory");
		}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && index_pids(r) < 0)
		return mp_err(&r->s->err, MP_ENOMEM, "out of memory");
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(r->s, "cannot read trace");
}

int mp_reader_open(struct mp_store *s, unsigned flags, struct mp_reader **out)
{
	struct mp_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return mp_err(&s->err, MP_ENOMEM, "out of memory");
	r->s = s;
	r->flags = flags;
	mp_intmap_init(&r->phase_names);
	mp_intmap_init(&r->api_names);
	mp_intmap_init(&r->pids);
	mp_densemap_init(&r->pid_index);
	mp_stack_cache_init(&r->stacks);
	mp_intmap_init(&r->frame_cache);
	r->last_process = -1;
	if (sqlite3_prepare_v2(s->db, "SELECT " EVENT_COLUMNS " FROM events ORDER BY seq;", -1,
	                       &r->events, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT parent, frame FROM stacks WHERE id = ?1;", -1,
	                       &r->stack_node, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT name, file, line FROM frames WHERE id = ?1;", -1,
	                       &r->frame_row, NULL) != SQLITE_OK) {
		mp_store_sqlerr(s, "cannot read trace");
		mp_reader_close(r);
		return s->err.code;
	}
	if (load_names(r, "SELECT id, name FROM phases;", &r->phase_names) < 0 ||
	    load_names(r, "SELECT id, name FROM apis;", &r->api_names) < 0 || load_pids(r) < 0) {
		mp_reader_close(r);
		return s->err.code;
	}
	*out = r;
	return 0;
}

static const char *name_of(const struct mp_intmap *m, int64_t id)
{
	uint64_t v;

	if (id == 0 || !mp_intmap_get(m, (uint64_t)id, &v))
		return NULL;
	return (const char *)(uintptr_t)v;
}

static const struct memprof_frame *load_frame(struct mp_reader *r, int64_t id)
{
	struct memprof_frame *f;
	const char *name, *file;
	uint64_t v;

	if (mp_intmap_get(&r->frame_cache, (uint64_t)id, &v))
		return (const struct memprof_frame *)(uintptr_t)v;
	sqlite3_bind_int64(r->frame_row, 1, id);
	if (sqlite3_step(r->frame_row) != SQLITE_ROW) {
		sqlite3_reset(r->frame_row);
		return NULL;
	}
	name = (const char *)sqlite3_column_text(r->frame_row, 0);
	file = (const char *)sqlite3_column_text(r->frame_row, 1);
	f = malloc(sizeof(*f));
	if (f) {
		f->name = strdup(name ? name : "");
		f->file = strdup(file ? file : "");
		f->line = sqlite3_column_int64(r->frame_row, 2);
	}
	sqlite3_reset(r->frame_row);
	if (!f || !f->name || !f->file ||
	    mp_intmap_put(&r->frame_cache, (uint64_t)id, (uint64_t)(uintptr_t)f) < 0) {
		if (f) {
			free((char *)f->name);
			free((char *)f->file);
		}
		free(f);
		return NULL;
	}
	return f;
}

/* Grow the walk's scratch arrays to hold more than n nodes. */
static int grow_walk(struct mp_reader *r, uint32_t n)
{
	size_t cap;
	int64_t *a, *b;

	if (n < r->walk_cap)
		return 0;
	cap = r->walk_cap ? (size_t)r->walk_cap * 2 : 64;
	if (cap > UINT32_MAX)
		return mp_err(&r->s->err, MP_ENOMEM, "out of memory");
	a = realloc(r->node_ids, cap * sizeof(*a));
	if (a)
		r->node_ids = a;
	b = realloc(r->frame_ids, cap * sizeof(*b));
	if (b)
		r->frame_ids = b;
	if (!a || !b)
		return mp_err(&r->s->err, MP_ENOMEM, "out of memory");
	r->walk_cap = (uint32_t)cap;
	return 0;
}

/* The nodes of the stack ending at node id that are not cached yet,
 * innermost first, into r->node_ids and r->frame_ids; r->walk_top is the
 * node the walk stopped at (0, or a cached one).  Each node is read from
 * the trace once: later walks stop at it. */
static int walk_stack(struct mp_reader *r, int64_t id, uint32_t *n_out)
{
	int64_t node = id, prev = INT64_MAX;
	uint32_t n = 0;

	while (node != 0) {
		if (node >= prev) /* parents are written before children: ids fall */
			return mp_err(&r->s->err, MP_ENOTTRACE,
			              "corrupt trace '%s': stack %lld loops at node %lld",
			              r->s->path, (long long)id, (long long)node);
		if (mp_stack_cache_get(&r->stacks, node))
			break;
		if (grow_walk(r, n) < 0)
			return r->s->err.code;
		prev = node;
		sqlite3_bind_int64(r->stack_node, 1, node);
		if (sqlite3_step(r->stack_node) != SQLITE_ROW) {
			sqlite3_reset(r->stack_node);
			return mp_err(&r->s->err, MP_ENOTTRACE,
			              "corrupt trace '%s': stack %lld refers to missing node %lld",
			              r->s->path, (long long)id, (long long)node);
		}
		r->node_ids[n] = node;
		r->frame_ids[n++] = sqlite3_column_int64(r->stack_node, 1);
		node = sqlite3_column_int64(r->stack_node, 0);
		sqlite3_reset(r->stack_node);
	}
	r->walk_top = node;
	*n_out = n;
	return 0;
}

static const struct memprof_stack *load_stack(struct mp_reader *r, int64_t id)
{
	const struct memprof_stack *st = mp_stack_cache_get(&r->stacks, id);
	uint32_t n = 0, i;

	if (st)
		return st;
	if (walk_stack(r, id, &n) < 0)
		return NULL;
	for (i = n; i-- > 0;) { /* outermost first: each node's parent is cached */
		const struct memprof_frame *f = load_frame(r, r->frame_ids[i]);
		int64_t parent = i + 1 < n ? r->node_ids[i + 1] : r->walk_top;

		if (!f) {
			mp_err(&r->s->err, MP_ENOTTRACE,
			       "corrupt trace '%s': stack %lld refers to missing frame %lld",
			       r->s->path, (long long)id, (long long)r->frame_ids[i]);
			return NULL;
		}
		st = mp_stack_cache_add(&r->stacks, r->node_ids[i], parent, f);
		if (!st) {
			mp_err(&r->s->err, MP_ENOMEM, "out of memory");
			return NULL;
		}
	}
	return st;
}

/* The columns from phase on may be NULL (the bits of nulls that decode reads). */
#define FIRST_NULLABLE 10

/* Fill r->rec from the 16 values of one events row (the order of
 * EVENT_COLUMNS), a bit of nulls set for each NULL one.  Returns 0 or a
 * negative error. */
static int decode(struct mp_reader *r, const int64_t *v, uint32_t nulls)
{
	struct memprof_record *o = &r->rec;
	struct memprof_event *ev = &o->ev;
	int64_t seq = v[0];

	if (seq <= ev->seq && r->n_read > 0) /* the rowid scan is in seq order */
		return mp_err(&r->s->err, MP_ENOTTRACE,
		              "corrupt trace '%s': event %lld comes after event %lld", r->s->path,
		              (long long)seq, (long long)ev->seq);
	ev->seq = seq;
	ev->ts_ns = v[1];
	ev->op = (int)v[2];
	if (ev->op < MEMPROF_OP_MIN || ev->op > MEMPROF_OP_MAX)
		return mp_err(&r->s->err, MP_ENOTTRACE,
		              "corrupt trace '%s': event %lld has unknown operation %d", r->s->path,
		              (long long)seq, ev->op);
	ev->alloc_id = v[3];
	ev->size_bytes = v[4];
	ev->requested_bytes = v[5];
	ev->address = (uint64_t)v[6];
	ev->device = (int)v[7];
	ev->stream = (uint64_t)v[8];
	ev->process_id = v[9];
	ev->phase_id = nulls & 1u << 10 ? 0 : v[10];
	ev->stack_id = nulls & 1u << 11 ? 0 : v[11];
	ev->api_id = nulls & 1u << 12 ? 0 : v[12];
	ev->device_free_bytes = nulls & 1u << 13 ? -1 : v[13];
	ev->thread = nulls & 1u << 14 ? 0 : v[14];
	ev->duration_ns = nulls & 1u << 15 ? 0 : v[15];
	r->n_read++;
	if (ev->phase_id != r->last_phase_id) {
		r->last_phase_id = ev->phase_id;
		r->last_phase = name_of(&r->phase_names, ev->phase_id);
	}
	o->phase = r->last_phase;
	if (ev->api_id != r->last_api_id) {
		r->last_api_id = ev->api_id;
		r->last_api = name_of(&r->api_names, ev->api_id);
	}
	o->api = r->last_api;
	if (ev->process_id != r->last_process) {
		uint32_t i = mp_densemap_get(&r->pid_index, (uint64_t)ev->process_id);

		r->last_process = ev->process_id;
		r->last_pid = i == MP_DENSEMAP_NONE ? 0 : r->pid_list[i];
	}
	o->pid = r->last_pid;
	o->stack = NULL;
	if ((r->flags & MP_READ_STACKS) && ev->stack_id != 0) {
		o->stack = load_stack(r, ev->stack_id);
		if (!o->stack)
			return r->s->err.code;
	}
	return 0;
}

/* decode() of a row as SQLite hands it over. */
static int decode_values(struct mp_reader *r, sqlite3_value **sv)
{
	int64_t v[N_EVENT_COLUMNS];
	uint32_t nulls = 0;
	int i;

	for (i = 0; i < N_EVENT_COLUMNS; i++) {
		if (i >= FIRST_NULLABLE && sqlite3_value_type(sv[i]) == SQLITE_NULL)
			nulls |= 1u << i;
		v[i] = sqlite3_value_int64(sv[i]);
	}
	return decode(r, v, nulls);
}

int mp_reader_next(struct mp_reader *r, const struct memprof_record **rec)
{
	sqlite3_value *v[N_EVENT_COLUMNS];
	sqlite3_stmt *st = r->events;
	int rc = sqlite3_step(st), i;

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return mp_store_sqlerr(r->s, "cannot read trace");
	for (i = 0; i < N_EVENT_COLUMNS; i++)
		v[i] = sqlite3_column_value(st, i);
	if ((rc = decode_values(r, v)) < 0)
		return rc;
	r->n_by_sql++;
	*rec = &r->rec;
	return 1;
}

int mp_reader_add(struct mp_reader *r, const struct mp_consumer *c)
{
	if (r->n_consumers == MAX_CONSUMERS)
		return mp_err(&r->s->err, MP_EINVAL, "too many consumers on one reader");
	r->consumers[r->n_consumers++] = *c;
	r->flags |= c->flags;
	return 0;
}

/* The record just decoded to every consumer. */
static int push_record(struct mp_reader *r)
{
	int i, rc;

	for (i = 0; i < r->n_consumers; i++) {
		const struct mp_consumer *c = &r->consumers[i];

		if (c->on_record && (rc = c->on_record(c->ctx, &r->rec)) < 0)
			return rc;
	}
	return 0;
}

/* A row straight from the events table's pages (event_pages.c). */
static int push_row(void *ctx, const int64_t *v, uint32_t nulls)
{
	struct mp_reader *r = ctx;
	int rc = decode(r, v, nulls);

	return rc < 0 ? rc : push_record(r);
}

static const char *const event_column_names[N_EVENT_COLUMNS] = {
        "seq",    "ts_ns",   "op",    "alloc_id", "size", "requested",   "address", "device",
        "stream", "process", "phase", "stack",    "api",  "device_free", "thread",  "duration_ns"};

/* The aggregate function behind mp_reader_run: SQLite hands it every
 * events row inside one sqlite3_step, which saves the per-row cost of
 * stepping a statement and fetching its columns one by one. */
static void push_step(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	struct mp_reader *r = sqlite3_user_data(ctx);
	int rc;

	(void)argc;
	if ((rc = decode_values(r, v)) < 0 || (rc = push_record(r)) < 0)
		goto stop;
	return;
stop:
	r->push_rc = rc;
	sqlite3_result_error(ctx, "stopped by a consumer", -1);
}

static void push_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

/* Every row through SQL: SQLite hands each to push_step inside one step. */
static int run_sql(struct mp_reader *r)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_create_function(r->s->db, "mp_push", N_EVENT_COLUMNS, SQLITE_UTF8, r, NULL,
	                            push_step, push_final) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->s->db, "SELECT mp_push(" EVENT_COLUMNS ") FROM events;", -1, &st,
	                       NULL) != SQLITE_OK)
		return mp_store_sqlerr(r->s, "cannot read trace");
	r->push_rc = 0;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	sqlite3_create_function(r->s->db, "mp_push", N_EVENT_COLUMNS, SQLITE_UTF8, NULL, NULL, NULL,
	                        NULL);
	if (r->push_rc < 0)
		return r->push_rc;
	if (rc != SQLITE_ROW)
		return mp_store_sqlerr(r->s, "cannot read trace");
	return 0;
}

int mp_reader_run(struct mp_reader *r)
{
	int rc = 1, i;

	if (r->n_read == 0) /* straight from the pages where they hold what SQLite sees */
		rc = mp_event_pages_scan(r->s, event_column_names, N_EVENT_COLUMNS, push_row, r,
		                         &r->n_by_sql);
	if (rc == 1) {
		int64_t before = r->n_read;

		rc = run_sql(r);
		r->n_by_sql += r->n_read - before;
	}
	if (rc < 0)
		return rc;
	for (i = 0; i < r->n_consumers; i++) {
		const struct mp_consumer *c = &r->consumers[i];

		if (c->on_end && (rc = c->on_end(c->ctx)) < 0)
			return rc;
	}
	return 0;
}

static void free_values(struct mp_intmap *m, int frames)
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		if (frames) {
			struct memprof_frame *f = (struct memprof_frame *)(uintptr_t)m->vals[i];

			free((char *)f->name);
			free((char *)f->file);
		}
		free((void *)(uintptr_t)m->vals[i]);
	}
	mp_intmap_free(m);
}

void mp_reader_read_counts(const struct mp_reader *r, int64_t *from_pages, int64_t *by_sql)
{
	*by_sql = r->n_by_sql;
	*from_pages = r->n_read - r->n_by_sql;
}

void mp_reader_close(struct mp_reader *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->events);
	sqlite3_finalize(r->stack_node);
	sqlite3_finalize(r->frame_row);
	free_values(&r->phase_names, 0);
	free_values(&r->api_names, 0);
	mp_intmap_free(&r->pids);
	mp_densemap_free(&r->pid_index);
	free(r->pid_list);
	mp_stack_cache_free(&r->stacks);
	free_values(&r->frame_cache, 1);
	free(r->node_ids);
	free(r->frame_ids);
	free(r);
}
