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
#define BATCH_ROWS             128             /* events per multi-row INSERT */
#define N_OPTIONAL             6  /* phase, stack, api, device_free, thread, duration_ns */
#define MAX_PREPARED           3  /* batch shapes prepared before the widest is used */
#define QUEUE_ROWS             64 /* stack nodes or frames per multi-row INSERT */
#define QUEUE_COLS             4  /* the most columns a queued row has */

/*
 * What a batch's INSERT binds (see prepare_batch): bit i of SHAPE_OPTIONAL
 * for optional column i, and columns whose value repeats one bound once.
 */
enum {
	SHAPE_OPTIONAL = (1 << N_OPTIONAL) - 1,
	SHAPE_REQ_IS_SIZE = 1 << N_OPTIONAL, /* requested = size in every row */
	SHAPE_ONE_DEVICE = 2 << N_OPTIONAL,  /* the same device in every row */
	SHAPE_ONE_PROCESS = 4 << N_OPTIONAL, /* the same process in every row */
	N_SHAPES = 8 << N_OPTIONAL
};

enum { ST_EVENT, ST_PHASE, ST_API, ST_FRAME, ST_STACK, ST_PROCESS, ST_DEVICE, N_ST };

static const char *const sql[N_ST] = {
        [ST_EVENT] = "INSERT INTO events VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);",
        [ST_PHASE] = "INSERT INTO phases(id, name) VALUES(?1, ?2);",
        [ST_API] = "INSERT INTO apis(id, name) VALUES(?1, ?2);",
        [ST_FRAME] = "INSERT INTO frames(id, name, file, line) VALUES(?1, ?2, ?3, ?4);",
        [ST_STACK] = "INSERT INTO stacks(id, parent, frame) VALUES(?1, ?2, ?3);",
        [ST_PROCESS] = "INSERT INTO processes(pid, ppid, host, rank, local_rank, world_size, "
                       "command) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7);",
        [ST_DEVICE] = "INSERT INTO devices(process, ordinal, name, uuid, total_bytes) "
                      "VALUES(?1, ?2, ?3, ?4, ?5);",
};

/* A value of a queued row: text when s is not NULL (the map's copy of it), else i. */
struct cell {
	const char *s;
	int64_t i;
	int len;
};

/*
 * Rows of a small table (stacks, frames) waiting to be inserted together:
 * a single-row INSERT costs SQLite about 6,000 instructions, three times a
 * row of a batch (most of it is the statement's own start and halt), and
 * PyTorch's snapshots make a stack node every few events.
 */
struct row_queue {
	int kind;         /* the single-row statement, ST_STACK or ST_FRAME */
	const char *head; /* "INSERT INTO t(columns) VALUES" */
	int n_cols, n;
	struct cell cells[QUEUE_ROWS * QUEUE_COLS];
	sqlite3_stmt *batch; /* the INSERT of QUEUE_ROWS rows; lazily */
};

struct mp_writer {
	struct mp_store *s;
	sqlite3_stmt *st[N_ST];
	sqlite3_stmt *batch[N_SHAPES]; /* INSERTs of BATCH_ROWS events, by shape; lazily */
	int n_prepared;                /* of batch */
	unsigned wide;                 /* the widest shape so far (see shape_for) */
	struct memprof_event pending[BATCH_ROWS];
	int n_pending;
	struct mp_strmap phases, apis, frames, stacks;
	struct row_queue stack_rows, frame_rows; /* new nodes and frames, not yet inserted */
	int64_t n_events, in_transaction;
	int failed;
	mp_writer_progress_fn *progress;
	void *progress_ctx;
	struct memprof_process labels; /* mp_writer_label_processes; host owned */
	int labelled;
};

static int fail(struct mp_writer *w)
{
	w->failed = 1;
	return mp_store_sqlerr(w->s, "cannot write trace");
}

/* Room for one row of a batch's INSERT: "(NULL" and 15 values of ",?N". */
#define ROW_TEXT_MAX (8 + 15 * 8)

static char *put_int(char *t, int v)
{
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*t++ = digits[--n];
	return t;
}

/*
 * Append a parameter: ",?N" for parameter same > 0 bound again, else the
 * next one, *k + 1: ",?N" in the first row, which numbers the parameters
 * bound once a batch (?1, ?2) below the rows', and ",?" after it.  SQLite
 * gives a plain ? the number after the highest seen and keeps no list of
 * them; each ?N it looks up in its list of the numbers written so, a cost
 * in the square of their count if every parameter were one.
 */
static char *param(char *t, int *k, int same, int numbered)
{
	*t++ = ',';
	*t++ = '?';
	if (same > 0)
		return put_int(t, same);
	++*k;
	return numbered ? put_int(t, *k) : t;
}

static char *put_text(char *t, const char *text)
{
	size_t n = strlen(text);

	memcpy(t, text, n);
	return t + n;
}

/*
 * The multi-row INSERT for batches of this shape.  Binding costs SQLite
 * about as much per value as storing it, so it binds as few as it can:
 * optional columns no event of the batch uses are literal NULLs, a
 * requested equal to size reuses size's parameter, and a device or process
 * common to the batch is one parameter before the rows' (?1, ?2; see
 * param for how the rows' are written).  seq is NULL: the events table only grows, in order, so
 * SQLite's next rowid is the writer's next seq, and it finds it without the lookup that an explicit
 * rowid costs.
 */
static int prepare_batch(struct mp_writer *w, unsigned shape)
{
	static const char head[] = "INSERT INTO events VALUES";
	int device = 1;
	int process = device + !!(shape & SHAPE_ONE_DEVICE);
	char *text = malloc(sizeof(head) + (size_t)BATCH_ROWS * ROW_TEXT_MAX), *t;
	int i, c, k = process - !(shape & SHAPE_ONE_PROCESS), size, rc;

	if (!text)
		return -1;
	t = put_text(text, head);
	for (i = 0; i < BATCH_ROWS; i++) {
		int first = i == 0;

		t = put_text(t, first ? "(NULL" : ",(NULL");
		t = param(t, &k, 0, first); /* ts_ns */
		t = param(t, &k, 0, first); /* op */
		t = param(t, &k, 0, first); /* alloc_id */
		t = param(t, &k, 0, first); /* size */
		size = k;
		t = param(t, &k, shape & SHAPE_REQ_IS_SIZE ? size : 0, first);
		t = param(t, &k, 0, first); /* address */
		t = param(t, &k, shape & SHAPE_ONE_DEVICE ? device : 0, first);
		t = param(t, &k, 0, first); /* stream */
		t = param(t, &k, shape & SHAPE_ONE_PROCESS ? process : 0, first);
		for (c = 0; c < N_OPTIONAL; c++)
			t = shape & (1u << c) ? param(t, &k, 0, first) : put_text(t, ",NULL");
		*t++ = ')';
	}
	rc = sqlite3_prepare_v3(w->s->db, text, (int)(t - text), SQLITE_PREPARE_PERSISTENT,
	                        &w->batch[shape], NULL);
	free(text);
	w->n_prepared += rc == SQLITE_OK;
	return rc == SQLITE_OK ? 0 : -1;
}

/* An INSERT of n_rows rows of n_cols parameters each, after head (... VALUES). */
static int prepare_rows(struct mp_writer *w, const char *head, int n_rows, int n_cols,
                        sqlite3_stmt **out)
{
	char *text = malloc(strlen(head) + (size_t)n_rows * (3 + 2 * (size_t)n_cols) + 1), *t;
	int i, c, rc;

	if (!text)
		return -1;
	t = put_text(text, head);
	for (i = 0; i < n_rows; i++) {
		t = put_text(t, i ? ",(?" : "(?");
		for (c = 1; c < n_cols; c++)
			t = put_text(t, ",?");
		*t++ = ')';
	}
	rc = sqlite3_prepare_v3(w->s->db, text, (int)(t - text), SQLITE_PREPARE_PERSISTENT, out,
	                        NULL);
	free(text);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The events already in the table (0 for a new trace): seq goes on from there. */
static int count_events(struct mp_writer *w)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(w->s->db, "SELECT coalesce(max(seq), 0) FROM events;", -1, &st,
	                       NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		w->n_events = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
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
	w->stack_rows = (struct row_queue){.kind = ST_STACK,
	                                   .head = "INSERT INTO stacks(id, parent, frame) VALUES",
	                                   .n_cols = 3};
	w->frame_rows =
	        (struct row_queue){.kind = ST_FRAME,
	                           .head = "INSERT INTO frames(id, name, file, line) VALUES",
	                           .n_cols = 4};
	for (i = 0; i < N_ST; i++) {
		if (sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
		                       NULL) != SQLITE_OK) {
			fail(w);
			mp_writer_close(w);
			return s->err.code;
		}
	}
	if (count_events(w) < 0) {
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

static void bind_cell(sqlite3_stmt *st, int k, const struct cell *c)
{
	if (c->s)
		sqlite3_bind_text(st, k, c->s, c->len, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, k, c->i);
}

/* Insert q's rows: one multi-row INSERT when it is full, one at a time
 * otherwise (at a commit or the end). */
static int flush_rows(struct mp_writer *w, struct row_queue *q)
{
	sqlite3_stmt *st = w->st[q->kind];
	int i, c, full = q->n == QUEUE_ROWS, k = 0;

	if (full) {
		if (!q->batch && prepare_rows(w, q->head, QUEUE_ROWS, q->n_cols, &q->batch) < 0)
			return fail(w);
		st = q->batch;
	}
	for (i = 0; i < q->n; i++) {
		k = full ? k : 0;
		for (c = 0; c < q->n_cols; c++)
			bind_cell(st, ++k, &q->cells[i * q->n_cols + c]);
		if (!full && step(w, st) < 0)
			return w->s->err.code;
	}
	if (full && step(w, st) < 0)
		return w->s->err.code;
	q->n = 0;
	return 0;
}

/* The next row of q to fill in (q has room: it is flushed when full). */
static struct cell *queue_row(struct row_queue *q)
{
	struct cell *row = &q->cells[q->n * q->n_cols];

	memset(row, 0, (size_t)q->n_cols * sizeof(*row));
	return row;
}

/* Row queue_row gave is filled in: flush q when that made it full. */
static int queued(struct mp_writer *w, struct row_queue *q)
{
	return ++q->n == QUEUE_ROWS ? flush_rows(w, q) : 0;
}

static int flush_queues(struct mp_writer *w)
{
	if (w->frame_rows.n && flush_rows(w, &w->frame_rows) < 0)
		return -1;
	return w->stack_rows.n ? flush_rows(w, &w->stack_rows) : 0;
}

static int64_t intern_frame(struct mp_writer *w, const struct memprof_frame *f)
{
	const char *file = f->file ? f->file : "";
	size_t ln = strlen(f->name), lf = strlen(file), len = ln + lf + 2 + sizeof(int64_t);
	char stackbuf[512], *key = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
	int64_t id;

	if (!key)
		return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
	memcpy(key, f->name, ln + 1);
	memcpy(key + ln + 1, file, lf + 1);
	memcpy(key + ln + lf + 2, &f->line, sizeof(int64_t));
	if (!mp_strmap_get(&w->frames, key, len, &id)) {
		const char *stored;
		struct cell *row = queue_row(&w->frame_rows);

		id = (int64_t)w->frames.n + 1;
		if (mp_strmap_put(&w->frames, key, len, id, &stored) < 0) {
			id = mp_err(&w->s->err, MP_ENOMEM, "out of memory");
		} else {
			row[0].i = id;
			row[1] = (struct cell){.s = stored, .len = (int)ln};
			row[2] = (struct cell){.s = stored + ln + 1, .len = (int)lf};
			row[3].i = f->line;
			if (queued(w, &w->frame_rows) < 0)
				id = w->s->err.code;
		}
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
		int64_t id, frame = intern_frame(w, &stack->frames[i]);

		if (frame < 0)
			return frame;
		pair[0] = parent;
		pair[1] = frame;
		if (!mp_strmap_get(&w->stacks, (const char *)pair, sizeof(pair), &id)) {
			id = (int64_t)w->stacks.n + 1;
			if (mp_strmap_put(&w->stacks, (const char *)pair, sizeof(pair), id, NULL) <
			    0)
				return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
			struct cell *row = queue_row(&w->stack_rows);

			row[0].i = id;
			row[1].i = parent;
			row[2].i = frame;
			if (queued(w, &w->stack_rows) < 0)
				return w->s->err.code;
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

int mp_writer_label_processes(struct mp_writer *w, const struct memprof_process *labels)
{
	char *host = labels && labels->host ? strdup(labels->host) : NULL;

	if (labels && labels->host && !host)
		return mp_err(&w->s->err, MP_ENOMEM, "out of memory");
	free((char *)w->labels.host);
	w->labelled = labels != NULL;
	if (labels)
		w->labels = *labels;
	w->labels.host = host;
	return 0;
}

/* p with the labels of mp_writer_label_processes applied. */
static struct memprof_process labelled(const struct mp_writer *w, const struct memprof_process *p)
{
	struct memprof_process q = *p;

	if (!w->labelled)
		return q;
	if (w->labels.host)
		q.host = w->labels.host;
	if (w->labels.rank >= 0)
		q.rank = w->labels.rank;
	if (w->labels.local_rank >= 0)
		q.local_rank = w->labels.local_rank;
	if (w->labels.world_size >= 0)
		q.world_size = w->labels.world_size;
	return q;
}

int64_t mp_writer_process(struct mp_writer *w, struct memprof_process *process)
{
	sqlite3_stmt *st = w->st[ST_PROCESS];
	struct memprof_process q = labelled(w, process), *p = &q;

	sqlite3_bind_int64(st, 1, p->pid);
	bind_opt_int(st, 2, p->ppid, 0);
	bind_opt_text(st, 3, p->host);
	bind_opt_int(st, 4, p->rank, -1);
	bind_opt_int(st, 5, p->local_rank, -1);
	bind_opt_int(st, 6, p->world_size, -1);
	bind_opt_text(st, 7, p->command);
	if (step(w, st) < 0)
		return w->s->err.code;
	process->id = sqlite3_last_insert_rowid(w->s->db);
	return process->id;
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

/* Which optional columns ev uses (see prepare_batch). */
static unsigned optional_columns(const struct memprof_event *ev)
{
	return (ev->phase_id != 0) | (ev->stack_id != 0) << 1 | (ev->api_id != 0) << 2 |
	       (ev->device_free_bytes != -1) << 3 | (ev->thread != 0) << 4 |
	       (ev->duration_ns != 0) << 5;
}

static unsigned batch_shape(const struct mp_writer *w)
{
	const struct memprof_event *e = w->pending;
	unsigned optional = 0, req = 1, device = 1, process = 1;
	int i;

	for (i = 0; i < w->n_pending; i++) {
		optional |= optional_columns(&e[i]);
		req &= e[i].requested_bytes == e[i].size_bytes;
		device &= e[i].device == e[0].device;
		process &= e[i].process_id == e[0].process_id;
	}
	return optional | (req ? SHAPE_REQ_IS_SIZE : 0) | (device ? SHAPE_ONE_DEVICE : 0) |
	       (process ? SHAPE_ONE_PROCESS : 0);
}

/*
 * Bind ev to st from parameter k + 1 on, in the order of prepare_batch,
 * leaving out what shape says is shared.  Returns the last parameter bound.
 */
static int bind_event(sqlite3_stmt *st, int k, const struct memprof_event *ev, unsigned shape)
{
	const int64_t opt[N_OPTIONAL] = {ev->phase_id,          ev->stack_id, ev->api_id,
	                                 ev->device_free_bytes, ev->thread,   ev->duration_ns};
	const int64_t absent[N_OPTIONAL] = {0, 0, 0, -1, 0, 0};
	int i;

	sqlite3_bind_int64(st, ++k, ev->ts_ns);
	sqlite3_bind_int(st, ++k, ev->op);
	sqlite3_bind_int64(st, ++k, ev->alloc_id);
	sqlite3_bind_int64(st, ++k, ev->size_bytes);
	if (!(shape & SHAPE_REQ_IS_SIZE))
		sqlite3_bind_int64(st, ++k, ev->requested_bytes);
	sqlite3_bind_int64(st, ++k, (int64_t)ev->address);
	if (!(shape & SHAPE_ONE_DEVICE))
		sqlite3_bind_int(st, ++k, ev->device);
	sqlite3_bind_int64(st, ++k, (int64_t)ev->stream);
	if (!(shape & SHAPE_ONE_PROCESS))
		sqlite3_bind_int64(st, ++k, ev->process_id);
	for (i = 0; i < N_OPTIONAL; i++)
		if (shape & (1u << i))
			bind_opt_int(st, ++k, opt[i], absent[i]);
	return k;
}

/* A shape that binds what both a and b bind. */
static unsigned widen(unsigned a, unsigned b)
{
	return ((a | b) & SHAPE_OPTIONAL) | (a & b & ~(unsigned)SHAPE_OPTIONAL);
}

/*
 * The statement for a batch of this shape: its own when prepared, else,
 * past MAX_PREPARED shapes, the widest shape seen so far (it binds a NULL
 * where the batch has nothing): preparing a 128-row INSERT costs as much
 * as storing a few thousand rows, and a mixed trace has many shapes.
 */
static unsigned shape_for(struct mp_writer *w, unsigned shape)
{
	w->wide = w->n_prepared ? widen(w->wide, shape) : shape;
	return w->batch[shape] || w->n_prepared < MAX_PREPARED ? shape : w->wide;
}

/* Insert the pending events: one multi-row INSERT when the batch is full,
 * one row at a time for the remainder at the end. */
static int flush_pending(struct mp_writer *w)
{
	unsigned shape;
	sqlite3_stmt *st;
	int i, k = 0;

	if (w->n_pending == BATCH_ROWS) {
		shape = shape_for(w, batch_shape(w));
		if (!w->batch[shape] && prepare_batch(w, shape) < 0)
			return fail(w);
		st = w->batch[shape];
		if (shape & SHAPE_ONE_DEVICE)
			sqlite3_bind_int(st, ++k, w->pending[0].device);
		if (shape & SHAPE_ONE_PROCESS)
			sqlite3_bind_int64(st, ++k, w->pending[0].process_id);
		for (i = 0; i < BATCH_ROWS; i++)
			k = bind_event(st, k, &w->pending[i], shape);
		if (step(w, st) < 0)
			return w->s->err.code;
	} else {
		for (i = 0; i < w->n_pending; i++) {
			bind_event(w->st[ST_EVENT], 0, &w->pending[i], SHAPE_OPTIONAL);
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
		if ((w->n_pending && flush_pending(w) < 0) || flush_queues(w) < 0 ||
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
	if (!w->failed)
		flush_queues(w);
	rc = w->failed ? w->s->err.code : 0;
	for (i = 0; i < N_ST; i++)
		sqlite3_finalize(w->st[i]);
	for (i = 0; i < (int)(sizeof(w->batch) / sizeof(w->batch[0])); i++)
		sqlite3_finalize(w->batch[i]);
	sqlite3_finalize(w->stack_rows.batch);
	sqlite3_finalize(w->frame_rows.batch);
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
	free((char *)w->labels.host);
	free(w);
	return rc;
}
