/*
 * tests/unit/test_event_pages.c - store/event_pages.c: the events decoded
 * from the trace's b-tree pages equal what SQLite itself reads, record for
 * record, at every page size, with reserved bytes per page, with values only
 * SQLite decodes (text, real, blob, overflow pages), short records of a
 * migrated trace and of a column with a default; WAL files, write
 * transactions and other layouts read through SQL; corrupt pages (a cycle, a
 * page past the end, a cell outside its page) are errors naming the page.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "store/event_pages.h"
#include "store/reader.h"
#include "store/writer.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	unsetenv("MEMPROF_READ_PAGES");
	th_rmdir(dir);
}

TestSuite(event_pages, .init = setup, .fini = teardown);

#define N_EVENTS 3000

static const struct memprof_frame frames[] = {{"inner", "lib.py", 7}, {"outer", "main.py", 1}};

/* A value of every integer width SQLite stores, both signs, and the limits. */
static int64_t spread(uint64_t i, uint64_t salt)
{
	static const int64_t v[] = {0,
	                            1,
	                            -1,
	                            127,
	                            -128,
	                            32767,
	                            -32768,
	                            8388607,
	                            -8388608,
	                            2147483647,
	                            -2147483648LL,
	                            140737488355327LL,
	                            -140737488355328LL,
	                            INT64_MAX,
	                            INT64_MIN,
	                            4096,
	                            1LL << 40,
	                            -(1LL << 47)};
	uint64_t k = (i * 2654435761u + salt) % (sizeof(v) / sizeof(v[0]));

	return v[k];
}

/* A trace of N_EVENTS events whose every column takes values of every width. */
static void write_trace(const char *path)
{
	struct memprof_process p1 = {0, 100, 1, "node0", 0, 0, 2, "python train.py"};
	struct memprof_process p2 = {0, 200, 1, NULL, -1, -1, -1, NULL};
	struct memprof_stack st = {2, frames};
	struct memprof_event ev;
	struct mp_store *s;
	struct mp_writer *w;
	struct mp_error err;
	int64_t stack, phase, api;
	uint64_t i;

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p1), 0);
	cr_assert_gt(mp_writer_process(w, &p2), 0);
	stack = mp_writer_stack(w, &st);
	phase = mp_writer_phase(w, "forward", 7);
	api = mp_writer_api(w, "cudaMalloc", 10);
	for (i = 0; i < N_EVENTS; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = spread(i, 1);
		ev.op = (int)(i % MEMPROF_OP_MAX) + 1;
		ev.alloc_id = spread(i, 2);
		ev.size_bytes = spread(i, 3);
		ev.requested_bytes = i % 3 ? ev.size_bytes : spread(i, 4);
		ev.address = (uint64_t)spread(i, 5);
		ev.device = (int32_t)(i % 4);
		ev.stream = (uint64_t)spread(i, 6);
		ev.process_id = i % 2 ? p1.id : p2.id;
		ev.phase_id = i % 5 ? phase : 0;
		ev.stack_id = i % 7 ? stack : 0;
		ev.api_id = i % 3 ? api : 0;
		ev.device_free_bytes = i % 11 ? -1 : spread(i, 7);
		ev.thread = i % 13 ? spread(i, 8) : 0;
		ev.duration_ns = i % 17 ? spread(i, 9) : 0;
		cr_assert_eq(mp_writer_event(w, &ev), 0);
	}
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
}

struct seen {
	struct memprof_record *recs;
	size_t n, cap;
};

static int collect(void *ctx, const struct memprof_record *rec)
{
	struct seen *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->recs = realloc(s->recs, s->cap * sizeof(*s->recs));
		cr_assert(s->recs);
	}
	s->recs[s->n++] = *rec; /* names and stacks outlive the run: the reader keeps them */
	return 0;
}

/* Read every record of path with mp_reader_run, through the pages or (pages
 * 0) through SQL; rc the run's return, counts from mp_reader_read_counts. */
static int read_all(const char *path, int pages, struct seen *out, int64_t *from_pages,
                    int64_t *by_sql, struct mp_store **sp, struct mp_reader **rp)
{
	struct mp_consumer c = {"collect", out, MP_READ_STACKS, collect, NULL};
	struct mp_error err;
	int rc;

	if (pages)
		unsetenv("MEMPROF_READ_PAGES");
	else
		setenv("MEMPROF_READ_PAGES", "0", 1);
	memset(out, 0, sizeof(*out));
	cr_assert_eq(mp_store_open(sp, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(*sp, MP_READ_STACKS, rp), 0);
	cr_assert_eq(mp_reader_add(*rp, &c), 0);
	rc = mp_reader_run(*rp);
	mp_reader_read_counts(*rp, from_pages, by_sql);
	return rc;
}

static void same_name(const char *a, const char *b, int64_t seq)
{
	cr_assert_eq(!a, !b, "event %lld: a name on one side only", (long long)seq);
	if (a)
		cr_assert_str_eq(a, b, "event %lld", (long long)seq);
}

static void same_records(const struct seen *a, const struct seen *b)
{
	size_t i;

	cr_assert_eq(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		const struct memprof_record *x = &a->recs[i], *y = &b->recs[i];
		const struct memprof_event *e = &x->ev, *f = &y->ev;

		cr_assert(e->seq == f->seq && e->ts_ns == f->ts_ns && e->op == f->op &&
		                  e->alloc_id == f->alloc_id && e->size_bytes == f->size_bytes &&
		                  e->requested_bytes == f->requested_bytes &&
		                  e->address == f->address &&
		                  e->device_free_bytes == f->device_free_bytes &&
		                  e->device == f->device && e->process_id == f->process_id &&
		                  e->stream == f->stream && e->phase_id == f->phase_id &&
		                  e->stack_id == f->stack_id && e->api_id == f->api_id &&
		                  e->thread == f->thread && e->duration_ns == f->duration_ns &&
		                  x->pid == y->pid,
		          "event %lld differs between the pages and SQL", (long long)e->seq);
		same_name(x->phase, y->phase, e->seq);
		same_name(x->api, y->api, e->seq);
		cr_assert_eq(!x->stack, !y->stack, "event %lld", (long long)e->seq);
		if (x->stack)
			cr_assert_eq(x->stack->n_frames, y->stack->n_frames);
	}
}

/* path read both ways gives the same records; returns the page side's
 * counts.  The records are checked against SQL's, not against each other. */
static void both_ways(const char *path, int64_t *from_pages, int64_t *by_sql)
{
	struct mp_store *s1, *s2;
	struct mp_reader *r1, *r2;
	struct seen a, b;
	int64_t p2, q2;

	cr_assert_eq(read_all(path, 1, &a, from_pages, by_sql, &s1, &r1), 0, "%s",
	             mp_store_error(s1)->msg);
	cr_assert_eq(read_all(path, 0, &b, &p2, &q2, &s2, &r2), 0, "%s", mp_store_error(s2)->msg);
	cr_assert_eq(p2, 0, "MEMPROF_READ_PAGES=0 still read pages");
	cr_assert_eq(q2, (int64_t)b.n);
	cr_assert_eq(*from_pages + *by_sql, (int64_t)a.n);
	same_records(&a, &b);
	mp_reader_close(r1);
	mp_reader_close(r2);
	mp_store_close(s1);
	mp_store_close(s2);
	free(a.recs);
	free(b.recs);
}

Test(event_pages, every_page_size_reads_what_sqlite_reads)
{
	static const int sizes[] = {512, 1024, 4096, 65536};
	char *path = th_path(dir, "t.db"), sql[96];
	int64_t from_pages, by_sql;
	size_t i;

	write_trace(path);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; VACUUM;", sizes[i]);
		th_sqlite_exec(path, sql);
		both_ways(path, &from_pages, &by_sql);
		cr_assert_eq(from_pages, N_EVENTS, "page size %d: %lld from the pages", sizes[i],
		             (long long)from_pages);
		cr_assert_eq(by_sql, 0);
	}
	free(path);
}

Test(event_pages, reserved_bytes_at_the_end_of_each_page)
{
	char *path = th_path(dir, "t.db");
	int64_t from_pages, by_sql;
	sqlite3 *db;
	int reserve = 40;

	write_trace(path);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "PRAGMA page_size=1024;", NULL, NULL, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve),
	             SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "VACUUM;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	both_ways(path, &from_pages, &by_sql);
	cr_assert_eq(from_pages, N_EVENTS);
	free(path);
}

Test(event_pages, values_only_sqlite_decodes_are_read_through_sql)
{
	char *path = th_path(dir, "t.db");
	int64_t from_pages, by_sql;

	write_trace(path);
	th_sqlite_exec(path, "PRAGMA page_size=4096; VACUUM;"
	                     "UPDATE events SET size = 'abc' WHERE seq = 3;"
	                     "UPDATE events SET ts_ns = 1.5 WHERE seq = 4;"
	                     "UPDATE events SET requested = x'0102' WHERE seq = 5;"
	                     "UPDATE events SET address = '77 bytes' WHERE seq = 6;"
	                     "UPDATE events SET duration_ns = randomblob(20000) WHERE seq = 7;"
	                     "UPDATE events SET thread = 1e300 WHERE seq = 8;");
	both_ways(path, &from_pages, &by_sql);
	cr_assert_eq(by_sql, 6, "%lld rows through SQL", (long long)by_sql);
	cr_assert_eq(from_pages, N_EVENTS - 6);
	free(path);
}

Test(event_pages, short_records_of_a_migrated_trace)
{
	char *path = th_path(dir, "v0.db");
	int64_t from_pages, by_sql;

	th_sqlite_script(path, TEST_FIXTURES "/trace-v0.sql");
	both_ways(path, &from_pages, &by_sql); /* the first open migrates it */
	cr_assert_eq(from_pages, 5);
	cr_assert_eq(by_sql, 0);
	free(path);
}

/* A store handle over a database the test made itself. */
static struct mp_store *bare_store(sqlite3 *db, const char *path)
{
	struct mp_store *s = calloc(1, sizeof(*s));

	s->db = db;
	s->path = (char *)path;
	return s;
}

struct rows {
	int64_t v[3][8];
	uint32_t nulls[8];
	int n;
};

static int keep_row(void *ctx, const int64_t *v, uint32_t nulls)
{
	struct rows *r = ctx;

	cr_assert_lt(r->n, 8);
	r->v[0][r->n] = v[0];
	r->v[1][r->n] = v[1];
	r->v[2][r->n] = v[2];
	r->nulls[r->n++] = nulls;
	return 0;
}

Test(event_pages, a_short_record_takes_its_columns_default_through_sql)
{
	static const char *const names[] = {"seq", "a", "b"};
	char *path = th_path(dir, "d.db");
	struct rows rows = {0};
	struct mp_store *s;
	int64_t by_sql = -1;
	sqlite3 *db;

	th_sqlite_exec(path, "CREATE TABLE events(seq INTEGER PRIMARY KEY, a INTEGER);"
	                     "INSERT INTO events VALUES (1, 10), (2, NULL);"
	                     "ALTER TABLE events ADD COLUMN b INTEGER DEFAULT 7;"
	                     "INSERT INTO events VALUES (3, 30, 31);");
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	s = bare_store(db, path);
	cr_assert_eq(mp_event_pages_scan(s, names, 3, keep_row, &rows, &by_sql), 0, "%s",
	             s->err.msg);
	cr_assert_eq(rows.n, 3);
	cr_assert_eq(by_sql, 2); /* rows 1 and 2 lack b: SQLite gives them its default */
	cr_assert(rows.v[0][0] == 1 && rows.v[1][0] == 10 && rows.v[2][0] == 7);
	cr_assert(rows.v[0][1] == 2 && (rows.nulls[1] & 2) && rows.v[2][1] == 7);
	cr_assert(rows.v[0][2] == 3 && rows.v[1][2] == 30 && rows.v[2][2] == 31 &&
	          rows.nulls[2] == 0);
	sqlite3_close(db);
	free(s);
	free(path);
}

/* mp_event_pages_scan on the database sql makes: its return, nothing read on 1. */
static int scan_of(const char *sql, const char *before_scan)
{
	static const char *const names[] = {"seq", "a", "b"};
	char *path = th_path(dir, "x.db");
	struct rows rows = {0};
	struct mp_store *s;
	int64_t by_sql;
	sqlite3 *db;
	int rc;

	unlink(path);
	th_sqlite_exec(path, sql);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	if (before_scan)
		cr_assert_eq(sqlite3_exec(db, before_scan, NULL, NULL, NULL), SQLITE_OK);
	s = bare_store(db, path);
	rc = mp_event_pages_scan(s, names, 3, keep_row, &rows, &by_sql);
	if (rc == 1)
		cr_assert_eq(rows.n, 0, "rows were handed over before falling back");
	sqlite3_close(db);
	free(s);
	free(path);
	return rc;
}

Test(event_pages, what_the_file_may_not_hold_is_left_to_sql)
{
	static const char plain[] = "CREATE TABLE events(seq INTEGER PRIMARY KEY, a, b);"
	                            "INSERT INTO events VALUES (1, 2, 3);";

	cr_assert_eq(scan_of(plain, NULL), 0);
	cr_assert_eq(scan_of("PRAGMA journal_mode=WAL; CREATE TABLE events(seq INTEGER PRIMARY "
	                     "KEY, a, b); INSERT INTO events VALUES (1, 2, 3);",
	                     NULL),
	             1, "a WAL trace");
	cr_assert_eq(scan_of(plain, "BEGIN; INSERT INTO events VALUES (2, 2, 2);"), 1,
	             "a write transaction open");
	cr_assert_eq(scan_of("CREATE TABLE events(seq INTEGER PRIMARY KEY, a, b) WITHOUT ROWID;"
	                     "INSERT INTO events VALUES (1, 2, 3);",
	                     NULL),
	             1, "another layout");
	cr_assert_eq(scan_of("CREATE TABLE events(seq INTEGER PRIMARY KEY, b, a);", NULL), 1,
	             "other columns");
	setenv("MEMPROF_READ_PAGES", "0", 1);
	cr_assert_eq(scan_of(plain, NULL), 1, "MEMPROF_READ_PAGES=0");
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
	p[3] = (uint8_t)v;
}

/* A 512-byte-page copy of the trace: its root page and a leaf under it. */
static uint8_t *small_pages(const char *path, size_t *len, uint32_t *root, uint32_t *leaf)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	uint8_t *f;

	write_trace(path);
	th_sqlite_exec(path, "PRAGMA page_size=512; VACUUM;");
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db,
	                                "SELECT rootpage FROM sqlite_schema WHERE name='events'",
	                                -1, &st, NULL),
	             SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	*root = (uint32_t)sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	f = (uint8_t *)th_read(path, len);
	*leaf = *root;
	while (f[(*leaf - 1) * 512] == 0x05) /* down the right-most children */
		*leaf = get32(f + (*leaf - 1) * 512 + 8);
	cr_assert_eq(f[(*leaf - 1) * 512], 0x0d);
	cr_assert_eq(f[(*root - 1) * 512], 0x05, "3000 events fill more than one 512-byte page");
	return f;
}

/* The page reader's error on the trace at path, written from f. */
static void refused(const char *path, const uint8_t *f, size_t len, const char *what)
{
	struct mp_store *s;
	struct mp_reader *r;
	struct seen a;
	int64_t p, q;
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert(fd >= 0 && write(fd, f, len) == (ssize_t)len && close(fd) == 0);
	cr_assert_lt(read_all(path, 1, &a, &p, &q, &s, &r), 0, "%s: read", what);
	cr_assert(strstr(mp_store_error(s)->msg, "corrupt trace") &&
	                  strstr(mp_store_error(s)->msg, what),
	          "%s", mp_store_error(s)->msg);
	mp_reader_close(r);
	mp_store_close(s);
	free(a.recs);
}

Test(event_pages, corrupt_pages_are_errors_naming_the_page)
{
	char *path = th_path(dir, "t.db"), want[128];
	uint32_t root, leaf, n_pages;
	size_t len;
	uint8_t *f = small_pages(path, &len, &root, &leaf), *copy = malloc(len);

	n_pages = (uint32_t)(len / 512);
	memcpy(copy, f, len);
	put32(copy + (root - 1) * 512 + 8, root); /* the root its own child: a cycle */
	snprintf(want, sizeof(want), "events page %u refers to page %u a second time", root, root);
	refused(path, copy, len, want);

	memcpy(copy, f, len);
	put32(copy + (root - 1) * 512 + 8, n_pages + 5);
	snprintf(want, sizeof(want), "refers to page %u, outside the file's %u pages", n_pages + 5,
	         n_pages);
	refused(path, copy, len, want);

	memcpy(copy, f, len);
	copy[(leaf - 1) * 512 + 8] = 0xff; /* the first cell pointer past the page */
	copy[(leaf - 1) * 512 + 9] = 0xf0;
	snprintf(want, sizeof(want), "events page %u: a cell lies outside the page", leaf);
	refused(path, copy, len, want);
	free(copy);
	free(f);
	free(path);
}
