/*
 * store/host_buffers.c - the SQL of store/host_buffers.h: pinned host
 * buffers with their pages per NUMA node, and devices.numa_node.  Writes
 * join the writer's open transaction; reads stream one buffer at a time, so
 * memory stays with the largest stack, never with the number of buffers.
 */
#include "store/host_buffers.h"
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

static void bind_opt(sqlite3_stmt *st, int col, int64_t v, int64_t absent)
{
	if (v == absent)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

static int64_t column_or(sqlite3_stmt *st, int col, int64_t absent)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? absent : sqlite3_column_int64(st, col);
}

/* Run a prepared one-shot statement to its end and finalize it. */
static int run(struct mp_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		rc = mp_store_sqlerr(s, what);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

static int add_nodes(struct mp_store *s, const struct mp_host_buffer *b)
{
	sqlite3_stmt *st;
	size_t i;
	if (b->n_nodes == 0)
		return 0;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO host_buffer_nodes VALUES(?1, ?2, ?3, ?4);", -1,
	                       &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot write trace");
	for (i = 0; i < b->n_nodes; i++) {
		sqlite3_bind_int64(st, 1, b->id);
		sqlite3_bind_int64(st, 2, b->nodes[i].node);
		sqlite3_bind_int64(st, 3, b->nodes[i].bytes);
		sqlite3_bind_int64(st, 4, b->nodes[i].pages);
		if (sqlite3_step(st) != SQLITE_DONE) {
			int rc = mp_store_sqlerr(s, "cannot write trace");
			sqlite3_finalize(st);
			return rc;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return 0;
}

int mp_store_add_host_buffer(struct mp_store *s, struct mp_host_buffer *b)
{
	sqlite3_stmt *st;
	int rc;
	if (sqlite3_prepare_v2(
	            s->db,
	            "INSERT INTO host_buffers(process, device, address, size, alloc_ts_ns,"
	            " free_ts_ns, api, stack, thread)"
	            " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9);",
	            -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot write trace");
	sqlite3_bind_int64(st, 1, b->process_id);
	bind_opt(st, 2, b->device, -1);
	sqlite3_bind_int64(st, 3, (int64_t)b->address);
	sqlite3_bind_int64(st, 4, b->size_bytes);
	sqlite3_bind_int64(st, 5, b->alloc_ts_ns);
	bind_opt(st, 6, b->free_ts_ns, -1);
	bind_opt(st, 7, b->api_id, 0);
	bind_opt(st, 8, b->stack_id, 0);
	bind_opt(st, 9, b->thread, 0);
	if ((rc = run(s, st, "cannot write trace")) < 0)
		return rc;
	b->id = sqlite3_last_insert_rowid(s->db);
	return add_nodes(s, b);
}

int mp_store_set_device_node(struct mp_store *s, int64_t process_id, int32_t ordinal, int32_t node)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(
	            s->db, "UPDATE devices SET numa_node = ?3 WHERE process = ?1 AND ordinal = ?2;",
	            -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot write trace");
	sqlite3_bind_int64(st, 1, process_id);
	sqlite3_bind_int64(st, 2, ordinal);
	bind_opt(st, 3, node, -1);
	return run(s, st, "cannot write trace");
}

/* --- reading ------------------------------------------------------------------------ */

struct each {
	struct mp_store *s;
	sqlite3_stmt *rows, *nodes, *frames;
	struct mp_host_buffer_node *node_buf;
	size_t cap_nodes;
	struct memprof_frame *frame_buf;
	size_t n_frames, cap_frames;
	struct memprof_stack stack;
};

static void free_frames(struct each *e)
{
	size_t i;
	for (i = 0; i < e->n_frames; i++) {
		free((char *)e->frame_buf[i].name);
		free((char *)e->frame_buf[i].file);
	}
	e->n_frames = 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;
	size_t n;
	if (need <= *cap)
		return 0;
	n = *cap ? *cap * 2 : 16;
	if (n < need)
		n = need;
	if (!(q = realloc(*p, n * size)))
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static char *dup_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return strdup(t ? (const char *)t : "");
}

/* The frames of stack id, innermost first, into e->stack. */
static int load_stack(struct each *e, int64_t id)
{
	int rc;
	free_frames(e);
	sqlite3_bind_int64(e->frames, 1, id);
	while ((rc = sqlite3_step(e->frames)) == SQLITE_ROW) {
		struct memprof_frame *f;
		if (grow((void **)&e->frame_buf, &e->cap_frames, e->n_frames + 1,
		         sizeof(*e->frame_buf)) < 0)
			break;
		f = &e->frame_buf[e->n_frames++];
		f->name = dup_text(e->frames, 0);
		f->file = dup_text(e->frames, 1);
		f->line = sqlite3_column_int64(e->frames, 2);
		if (!f->name || !f->file)
			break;
	}
	sqlite3_reset(e->frames);
	if (rc != SQLITE_DONE)
		return rc == SQLITE_ROW ? mp_err(&e->s->err, MP_ENOMEM, "out of memory")
		                        : mp_store_sqlerr(e->s, "cannot read trace");
	e->stack.n_frames = (uint32_t)e->n_frames;
	e->stack.frames = e->frame_buf;
	return 0;
}

static int load_nodes(struct each *e, struct mp_host_buffer *b)
{
	int rc;
	b->n_nodes = 0;
	sqlite3_bind_int64(e->nodes, 1, b->id);
	while ((rc = sqlite3_step(e->nodes)) == SQLITE_ROW) {
		if (grow((void **)&e->node_buf, &e->cap_nodes, b->n_nodes + 1,
		         sizeof(*e->node_buf)) < 0)
			break;
		e->node_buf[b->n_nodes++] = (struct mp_host_buffer_node){
		        (int32_t)sqlite3_column_int64(e->nodes, 0),
		        sqlite3_column_int64(e->nodes, 1), sqlite3_column_int64(e->nodes, 2)};
	}
	sqlite3_reset(e->nodes);
	b->nodes = e->node_buf;
	if (rc != SQLITE_DONE)
		return rc == SQLITE_ROW ? mp_err(&e->s->err, MP_ENOMEM, "out of memory")
		                        : mp_store_sqlerr(e->s, "cannot read trace");
	return 0;
}

static int row(struct each *e, struct mp_host_buffer *b)
{
	sqlite3_stmt *st = e->rows;
	int rc;
	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(st, 0);
	b->process_id = sqlite3_column_int64(st, 1);
	b->device = (int32_t)column_or(st, 2, -1);
	b->address = (uint64_t)sqlite3_column_int64(st, 3);
	b->size_bytes = sqlite3_column_int64(st, 4);
	b->alloc_ts_ns = sqlite3_column_int64(st, 5);
	b->free_ts_ns = column_or(st, 6, -1);
	b->api_id = column_or(st, 7, 0);
	b->stack_id = column_or(st, 8, 0);
	b->thread = (uint32_t)column_or(st, 9, 0);
	b->api = (const char *)sqlite3_column_text(st, 10);
	if ((rc = load_nodes(e, b)) < 0)
		return rc;
	if (b->stack_id) {
		if ((rc = load_stack(e, b->stack_id)) < 0)
			return rc;
		b->stack = e->n_frames ? &e->stack : NULL;
	}
	return 0;
}

static const char sql_rows[] =
        "SELECT b.id, b.process, b.device, b.address, b.size, b.alloc_ts_ns, b.free_ts_ns,"
        " b.api, b.stack, b.thread, a.name FROM host_buffers b LEFT JOIN apis a ON a.id = b.api"
        " ORDER BY b.id;";
static const char sql_nodes[] =
        "SELECT node, bytes, pages FROM host_buffer_nodes WHERE buffer = ?1 ORDER BY node;";
static const char sql_frames[] =
        "WITH RECURSIVE chain(node, frame, depth) AS ("
        " SELECT parent, frame, 0 FROM stacks WHERE id = ?1"
        " UNION ALL SELECT s.parent, s.frame, c.depth + 1 FROM stacks s, chain c"
        " WHERE s.id = c.node AND c.node != 0 AND c.depth < 4096)"
        " SELECT f.name, f.file, f.line FROM chain c JOIN frames f ON f.id = c.frame"
        " ORDER BY c.depth;";

int mp_store_each_host_buffer(struct mp_store *s,
                              int (*fn)(void *ctx, const struct mp_host_buffer *b), void *ctx)
{
	struct each e = {.s = s};
	struct mp_host_buffer b;
	int rc = 0, step;

	if (sqlite3_prepare_v2(s->db, sql_rows, -1, &e.rows, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, sql_nodes, -1, &e.nodes, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, sql_frames, -1, &e.frames, NULL) != SQLITE_OK) {
		rc = mp_store_sqlerr(s, "cannot read trace");
		goto out;
	}
	while ((step = sqlite3_step(e.rows)) == SQLITE_ROW) {
		if ((rc = row(&e, &b)) < 0 || (rc = fn(ctx, &b)) != 0)
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = mp_store_sqlerr(s, "cannot read trace");
out:
	free_frames(&e);
	free(e.frame_buf);
	free(e.node_buf);
	sqlite3_finalize(e.rows);
	sqlite3_finalize(e.nodes);
	sqlite3_finalize(e.frames);
	return rc;
}

int mp_store_device_nodes(struct mp_store *s, struct mp_device_node **out, size_t *n)
{
	sqlite3_stmt *st;
	struct mp_device_node *d = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT process, ordinal, numa_node FROM devices"
	                       " ORDER BY process, ordinal;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&d, &cap, *n + 1, sizeof(*d)) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		d[(*n)++] = (struct mp_device_node){sqlite3_column_int64(st, 0),
		                                    (int32_t)sqlite3_column_int64(st, 1),
		                                    (int32_t)column_or(st, 2, -1)};
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(d);
		*n = 0;
		return rc == SQLITE_NOMEM ? mp_err(&s->err, MP_ENOMEM, "out of memory")
		                          : mp_store_sqlerr(s, "cannot read trace");
	}
	*out = d;
	return 0;
}
