/*
 * store/writer.c - appending events, names, stacks, processes and devices to
 * a trace being created, through prepared statements in large transactions.
 * Interning happens in memory (util/strmap) so each name is inserted once.
 */
#include "store/writer.h"
#include "store/store_internal.h"
#include "util/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENTS_PER_TRANSACTION (1 << 20)
#define PROGRESS_MASK          ((1 << 18) - 1) /* progress every 2^18 events */
#define BATCH_ROWS             64              /* events per multi-row INSERT */
#define EVENT_COLUMNS          15

enum { ST_EVENT, ST_PHASE, ST_API, ST_FRAME, ST_STACK, ST_PROCESS, ST_DEVICE, N_ST };

static const char *const sql[N_ST] = {
        [ST_EVENT] =
                "INSERT INTO events VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15);",
        [ST_PHASE] = "INSERT INTO phases(id, name) VALUES(?1, ?2);",
        [ST_API] = "INSERT INTO apis(id, name) VALUES(?1, ?2);",
        [ST_FRAME] = "INSERT INTO frames(id, name, file, line) VALUES(?1, ?2, ?3, ?4);",
        [ST_STACK] = "INSERT INTO stacks(id, parent, frame) VALUES(?1, ?2, ?3);",
        [ST_PROCESS] = "INSERT INTO processes(pid, ppid, host, rank, local_rank, world_size, "
                       "command) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7);",
        [ST_DEVICE] = "INSERT INTO devices VALUES(?1, ?2, ?3, ?4, ?5);",
};

struct mp_writer {
	struct mp_store *s;
	sqlite3_stmt *st[N_ST];
	sqlite3_stmt *batch; /* INSERT of BATCH_ROWS events at once */
	struct memprof_event pending[BATCH_ROWS];
	int n_pending;
	struct mp_strmap phases, apis, frames, stacks;
	int64_t n_events, in_transaction;
	int failed;
	mp_writer_progress_fn *progress;
	void *progress_ctx;
};

static int fail(struct mp_writer *w)
{
	w->failed = 1;
	return mp_store_sqlerr(w->s, "cannot write trace");
}

static int prepare_batch(struct mp_writer *w)
{
	static const char row[] = ",(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	char text[32 + BATCH_ROWS * sizeof(row)];
	size_t len = 0;
	int i;

	len += (size_t)snprintf(text, sizeof(text), "INSERT INTO events VALUES");
	for (i = 0; i < BATCH_ROWS; i++) {
		memcpy(text + len, row + (i == 0), sizeof(row) - 1 - (i == 0));
		len += sizeof(row) - 1 - (i == 0);
	}
	text[len] = 0;
	return sqlite3_prepare_v3(w->s->db, text, (int)len, SQLITE_PREPARE_PERSISTENT, &w->batch,
	                          NULL) == SQLITE_OK
	               ? 0
	               : -1;
}

int mp_writer_open(struct mp_store *s, struct mp_writer **out)
{
	struct mp_writer *w = calloc(1, sizeof(*w));
	int i;

	*out = NULL;
	if (!w)
		return mp_err(&s->err, MP_ENOMEM, "out of memory");
	w->s = s;
	mp_strmap_init(&w->phases);
	mp_strmap_init(&w->apis);
	mp_strmap_init(&w->frames);
	mp_strmap_init(&w->stacks);
	for (i = 0; i < N_ST; i++) {
		if (sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
		                       NULL) != SQLITE_OK) {
			fail(w);
			mp_writer_close(w);
			return s->err.code;
		}
	}
	if (prepare_batch(w) < 0) {
		fail(w);
		mp_writer_close(w);
		return s->err.code;
	}
	if (mp_store_exec(s, "BEGIN;") < 0) {
		mp_writer_close(w);
		return s->err.code;
	}
	*out = w;
	return 0;
}

static int step(struct mp_writer *w, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(w);
}

/* Intern a name in map m, inserting it with statement kind on first sight. */
static int64_t intern_name(struct mp_writer *w, struct mp_strmap *m, int kind, const char *name,
                           size_t len)
{
	sqlite3_stmt *st = w->st[kind];
	int64_t id;

	if (mp_strmap_get(m, name, len, &id))
		return id;
	id = (int64_t)m->n + 1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, (int)len, SQLITE_STATIC);
	if (step(w, st) < 0)
		return w->s->err.code;
	if (mp_strmap_put(m, name, len, id, NULL) < 0)
		return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
	return id;
}

int64_t mp_writer_phase(struct mp_writer *w, const char *name, size_t len)
{
	return intern_name(w, &w->phases, ST_PHASE, name, len);
}

int64_t mp_writer_api(struct mp_writer *w, const char *name, size_t len)
{
	return intern_name(w, &w->apis, ST_API, name, len);
}

static int64_t intern_frame(struct mp_writer *w, const struct memprof_frame *f)
{
	const char *file = f->file ? f->file : "";
	size_t ln = strlen(f->name), lf = strlen(file), len = ln + lf + 2 + sizeof(int64_t);
	sqlite3_stmt *st = w->st[ST_FRAME];
	char stackbuf[512], *key = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
	int64_t id;

	if (!key)
		return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
	memcpy(key, f->name, ln + 1);
	memcpy(key + ln + 1, file, lf + 1);
	memcpy(key + ln + lf + 2, &f->line, sizeof(int64_t));
	if (!mp_strmap_get(&w->frames, key, len, &id)) {
		id = (int64_t)w->frames.n + 1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, f->name, (int)ln, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, file, (int)lf, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, f->line);
		if (step(w, st) < 0)
			id = w->s->err.code;
		else if (mp_strmap_put(&w->frames, key, len, id, NULL) < 0)
			id = mp_err(&w->s->err, MP_ENOMEM, "out of memory");
	}
	if (key != stackbuf)
		free(key);
	return id;
}

int64_t mp_writer_stack(struct mp_writer *w, const struct memprof_stack *stack)
{
	int64_t parent = 0, pair[2];
	uint32_t i;

	/* Walk from the outermost frame in; each node is (parent node, frame). */
	for (i = stack ? stack->n_frames : 0; i-- > 0;) {
		sqlite3_stmt *st = w->st[ST_STACK];
		int64_t id, frame = intern_frame(w, &stack->frames[i]);

		if (frame < 0)
			return frame;
		pair[0] = parent;
		pair[1] = frame;
		if (!mp_strmap_get(&w->stacks, (const char *)pair, sizeof(pair), &id)) {
			id = (int64_t)w->stacks.n + 1;
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, parent);
			sqlite3_bind_int64(st, 3, frame);
			if (step(w, st) < 0)
				return w->s->err.code;
			if (mp_strmap_put(&w->stacks, (const char *)pair, sizeof(pair), id, NULL) <
			    0)
				return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
		}
		parent = id;
	}
	return parent;
}

static void bind_opt_text(sqlite3_stmt *st, int col, const char *s)
{
	if (s)
		sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, col);
}

static void bind_opt_int(sqlite3_stmt *st, int col, int64_t v, int64_t absent)
{
	if (v == absent)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

int64_t mp_writer_process(struct mp_writer *w, struct memprof_process *p)
{
	sqlite3_stmt *st = w->st[ST_PROCESS];

	sqlite3_bind_int64(st, 1, p->pid);
	bind_opt_int(st, 2, p->ppid, 0);
	bind_opt_text(st, 3, p->host);
	bind_opt_int(st, 4, p->rank, -1);
	bind_opt_int(st, 5, p->local_rank, -1);
	bind_opt_int(st, 6, p->world_size, -1);
	bind_opt_text(st, 7, p->command);
	if (step(w, st) < 0)
		return w->s->err.code;
	p->id = sqlite3_last_insert_rowid(w->s->db);
	return p->id;
}

int mp_writer_device(struct mp_writer *w, const struct memprof_device *d)
{
	sqlite3_stmt *st = w->st[ST_DEVICE];

	sqlite3_bind_int64(st, 1, d->process_id);
	sqlite3_bind_int64(st, 2, d->ordinal);
	bind_opt_text(st, 3, d->name);
	bind_opt_text(st, 4, d->uuid);
	bind_opt_int(st, 5, d->total_bytes, 0);
	return step(w, st);
}

/* Bind ev to the 15 parameters of one row, starting at parameter base + 1. */
static void bind_event(sqlite3_stmt *st, int base, const struct memprof_event *ev)
{
	sqlite3_bind_int64(st, base + 1, ev->seq);
	sqlite3_bind_int64(st, base + 2, ev->ts_ns);
	sqlite3_bind_int(st, base + 3, ev->op);
	sqlite3_bind_int64(st, base + 4, ev->alloc_id);
	sqlite3_bind_int64(st, base + 5, ev->size_bytes);
	sqlite3_bind_int64(st, base + 6, ev->requested_bytes);
	sqlite3_bind_int64(st, base + 7, (int64_t)ev->address);
	sqlite3_bind_int(st, base + 8, ev->device);
	sqlite3_bind_int64(st, base + 9, (int64_t)ev->stream);
	sqlite3_bind_int64(st, base + 10, ev->process_id);
	bind_opt_int(st, base + 11, ev->phase_id, 0);
	bind_opt_int(st, base + 12, ev->stack_id, 0);
	bind_opt_int(st, base + 13, ev->api_id, 0);
	bind_opt_int(st, base + 14, ev->device_free_bytes, -1);
	bind_opt_int(st, base + 15, ev->thread, 0);
}

/* Insert the pending events: one multi-row INSERT when the batch is full,
 * one row at a time for the remainder at the end. */
static int flush_pending(struct mp_writer *w)
{
	int i;

	if (w->n_pending == BATCH_ROWS) {
		for (i = 0; i < BATCH_ROWS; i++)
			bind_event(w->batch, i * EVENT_COLUMNS, &w->pending[i]);
		if (step(w, w->batch) < 0)
			return w->s->err.code;
	} else {
		for (i = 0; i < w->n_pending; i++) {
			bind_event(w->st[ST_EVENT], 0, &w->pending[i]);
			if (step(w, w->st[ST_EVENT]) < 0)
				return w->s->err.code;
		}
	}
	w->n_pending = 0;
	return 0;
}

int mp_writer_event(struct mp_writer *w, struct memprof_event *ev)
{
	if (w->failed)
		return w->s->err.code;
	ev->seq = ++w->n_events;
	w->pending[w->n_pending++] = *ev;
	if (w->n_pending == BATCH_ROWS && flush_pending(w) < 0)
		return w->s->err.code;
	if (++w->in_transaction == EVENTS_PER_TRANSACTION) {
		w->in_transaction = 0;
		if ((w->n_pending && flush_pending(w) < 0) ||
		    mp_store_exec(w->s, "COMMIT; BEGIN;") < 0) {
			w->failed = 1;
			return w->s->err.code;
		}
	}
	if (w->progress && (w->n_events & PROGRESS_MASK) == 0)
		w->progress(w->progress_ctx, w->n_events);
	return 0;
}

void mp_writer_on_progress(struct mp_writer *w, mp_writer_progress_fn *fn, void *ctx)
{
	w->progress = fn;
	w->progress_ctx = ctx;
}

int64_t mp_writer_n_events(const struct mp_writer *w)
{
	return w->n_events;
}

const struct mp_error *mp_writer_error(const struct mp_writer *w)
{
	return mp_store_error(w->s);
}

int mp_writer_close(struct mp_writer *w)
{
	int i, rc;

	if (!w->failed && w->n_pending)
		flush_pending(w);
	rc = w->failed ? w->s->err.code : 0;
	for (i = 0; i < N_ST; i++)
		sqlite3_finalize(w->st[i]);
	sqlite3_finalize(w->batch);
	if (sqlite3_get_autocommit(w->s->db) == 0) {
		if (rc == 0)
			rc = mp_store_exec(w->s, "COMMIT;");
		else
			sqlite3_exec(w->s->db, "ROLLBACK;", NULL, NULL, NULL);
	}
	mp_strmap_free(&w->phases);
	mp_strmap_free(&w->apis);
	mp_strmap_free(&w->frames);
	mp_strmap_free(&w->stacks);
	free(w);
	return rc;
}
