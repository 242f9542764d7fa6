/*
 * tests/unit/test_store.c - src/store: create and commit, writer and reader
 * round trip (names, stacks, processes, devices), consumers, metadata,
 * migration from v0, the refusal of files that are not current traces, and
 * the stack cache's memory on chained and combed stacks (issue 23 item 4).
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "store/reader.h"
#include "store/stack_cache.h"
#include "store/writer.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(store, .init = setup, .fini = teardown);

static const struct memprof_frame frames_ab[] = {
        {"inner", "lib.py", 7},
        {"outer", "main.py", 1},
};

/* Write a small trace at path: 2 processes, stacks, phases, an OOM. */
static void write_sample(const char *path)
{
	struct memprof_process p1 = {0, 100, 1, "node0", 0, 0, 2, "python train.py"};
	struct memprof_process p2 = {0, 200, 1, NULL, -1, -1, -1, NULL};
	struct memprof_stack st = {2, frames_ab};
	struct memprof_device d = {0, 0, "H100", "GPU-1", 80LL << 30};
	struct memprof_event ev;
	struct mp_store *s;
	struct mp_writer *w;
	struct mp_error err;
	int64_t stack, phase, api;

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p1), 0);
	cr_assert_gt(mp_writer_process(w, &p2), 0);
	d.process_id = p1.id;
	cr_assert_eq(mp_writer_device(w, &d), 0);
	stack = mp_writer_stack(w, &st);
	cr_assert_gt(stack, 0);
	cr_assert_eq(mp_writer_stack(w, &st), stack); /* deduplicated */
	phase = mp_writer_phase(w, "forward", 7);
	cr_assert_eq(mp_writer_phase(w, "forward", 7), phase);
	api = mp_writer_api(w, "cudaMalloc", 10);
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 10;
	ev.op = MEMPROF_OP_ALLOC;
	ev.alloc_id = 1;
	ev.size_bytes = 1024;
	ev.requested_bytes = 1000;
	ev.address = UINT64_MAX - 4095; /* above INT64_MAX: stored as two's complement */
	ev.process_id = p1.id;
	ev.stream = 7;
	ev.phase_id = phase;
	ev.stack_id = stack;
	ev.api_id = api;
	ev.device_free_bytes = -1;
	cr_assert_eq(mp_writer_event(w, &ev), 0);
	cr_assert_eq(ev.seq, 1);
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 20;
	ev.op = MEMPROF_OP_OOM;
	ev.size_bytes = ev.requested_bytes = 1LL << 40;
	ev.device_free_bytes = 12345;
	ev.process_id = p2.id;
	ev.device = 1;
	cr_assert_eq(mp_writer_event(w, &ev), 0);
	cr_assert_eq(mp_writer_n_events(w), 2);
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_set_meta(s, "source", "unit-test"), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
}

Test(store, round_trip_through_reader)
{
	char *path = th_path(dir, "t.db");
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	int64_t n;

	write_sample(path);
	cr_assert_eq(th_count_entries(dir), 1); /* no temporary file left */
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_count_events(s, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	cr_assert_eq(mp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->ev.seq, 1);
	cr_assert_eq(rec->ev.op, MEMPROF_OP_ALLOC);
	cr_assert_eq(rec->ev.address, UINT64_MAX - 4095);
	cr_assert_eq(rec->ev.requested_bytes, 1000);
	cr_assert_eq(rec->ev.device_free_bytes, -1);
	cr_assert_eq(rec->pid, 100);
	cr_assert_str_eq(rec->phase, "forward");
	cr_assert_str_eq(rec->api, "cudaMalloc");
	cr_assert_not_null(rec->stack);
	cr_assert_eq(rec->stack->n_frames, 2);
	cr_assert_str_eq(rec->stack->frames[0].name, "inner");
	cr_assert_str_eq(rec->stack->frames[0].file, "lib.py");
	cr_assert_eq(rec->stack->frames[0].line, 7);
	cr_assert_str_eq(rec->stack->frames[1].name, "outer");
	cr_assert_eq(mp_reader_next(r, &rec), 1);
	cr_assert_eq(rec->ev.op, MEMPROF_OP_OOM);
	cr_assert_eq(rec->ev.device_free_bytes, 12345);
	cr_assert_eq(rec->ev.device, 1);
	cr_assert_eq(rec->pid, 200);
	cr_assert_null(rec->phase);
	cr_assert_null(rec->stack);
	cr_assert_eq(mp_reader_next(r, &rec), 0);
	mp_reader_close(r);
	mp_store_close(s);
	free(path);
}

Test(store, processes_devices_meta)
{
	char *path = th_path(dir, "t.db"), *v;
	struct memprof_process *p;
	struct memprof_device *d;
	struct mp_store *s;
	struct mp_error err;
	size_t n;

	write_sample(path);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_processes(s, &p, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(p[0].pid, 100);
	cr_assert_str_eq(p[0].host, "node0");
	cr_assert_eq(p[0].world_size, 2);
	cr_assert_str_eq(p[0].command, "python train.py");
	cr_assert_eq(p[1].rank, -1);
	cr_assert_null(p[1].command);
	mp_store_free_processes(p, n);
	cr_assert_eq(mp_store_devices(s, &d, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(d[0].name, "H100");
	cr_assert_eq(d[0].total_bytes, 80LL << 30);
	mp_store_free_devices(d, n);
	v = mp_store_get_meta(s, "source");
	cr_assert_str_eq(v, "unit-test");
	free(v);
	v = mp_store_get_meta(s, "format");
	cr_assert_str_eq(v, "memprof-trace");
	free(v);
	cr_assert_null(mp_store_get_meta(s, "no-such-key"));
	cr_assert_eq(mp_store_opened_version(s), MP_SCHEMA_VERSION);
	mp_store_close(s);
	free(path);
}

struct counter {
	int n, ended;
	int stop_after;
};

static int count_record(void *ctx, const struct memprof_record *rec)
{
	struct counter *c = ctx;

	(void)rec;
	if (++c->n == c->stop_after)
		return MP_ESTOP;
	return 0;
}

static int count_end(void *ctx)
{
	((struct counter *)ctx)->ended = 1;
	return 0;
}

Test(store, consumers_see_every_record_once)
{
	char *path = th_path(dir, "t.db");
	struct counter a = {0, 0, 0}, b = {0, 0, 0}, stopper = {0, 0, 1};
	struct mp_consumer ca = {"a", &a, 0, count_record, count_end};
	struct mp_consumer cb = {"b", &b, MP_READ_STACKS, count_record, count_end};
	struct mp_consumer cs = {"stop", &stopper, 0, count_record, count_end};
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;

	write_sample(path);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	mp_reader_add(r, &ca);
	mp_reader_add(r, &cb);
	cr_assert_eq(mp_reader_run(r), 0);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(b.n, 2);
	cr_assert(a.ended && b.ended);
	mp_reader_close(r);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	mp_reader_add(r, &cs);
	cr_assert_eq(mp_reader_run(r), MP_ESTOP);
	cr_assert_eq(stopper.n, 1);
	cr_assert_not(stopper.ended);
	mp_reader_close(r);
	mp_store_close(s);
	free(path);
}

Test(store, uncommitted_trace_leaves_nothing)
{
	char *path = th_path(dir, "t.db");
	struct mp_store *s;
	struct mp_error err;

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_not_null(mp_store_temp_path(s));
	cr_assert_eq(access(mp_store_temp_path(s), F_OK), 0);
	mp_store_close(s);
	cr_assert_eq(th_count_entries(dir), 0);
	free(path);
}

Test(store, create_refuses_existing_unless_overwrite)
{
	char *path = th_path(dir, "t.db"), *content;
	struct mp_store *s;
	struct mp_error err;

	th_write(path, "precious");
	cr_assert_eq(mp_store_create(&s, path, 0, &err), MP_EEXIST);
	cr_assert(strstr(err.msg, "output exists"), "%s", err.msg);
	content = th_read(path, NULL);
	cr_assert_str_eq(content, "precious");
	free(content);
	cr_assert_eq(mp_store_create(&s, path, 1, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	mp_store_close(s);
	free(path);
}

Test(store, commit_refuses_file_that_appeared_meanwhile)
{
	char *path = th_path(dir, "t.db"), *content;
	struct mp_store *s;
	struct mp_error err;

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	th_write(path, "someone else's");
	cr_assert_eq(mp_store_commit(s, &err), MP_EEXIST);
	content = th_read(path, NULL);
	cr_assert_str_eq(content, "someone else's");
	free(content);
	cr_assert_eq(th_count_entries(dir), 1); /* temporary file removed */
	free(path);
}

static void expect_refusal(const char *path, int code, const char *fragment)
{
	struct mp_store *s = (struct mp_store *)1;
	struct mp_error err;

	cr_assert_eq(mp_store_open(&s, path, &err), code, "'%s': %s", path, err.msg);
	cr_assert_null(s);
	cr_assert(strstr(err.msg, fragment), "message '%s' lacks '%s'", err.msg, fragment);
}

Test(store, refuses_what_is_not_a_trace)
{
	char *missing = th_path(dir, "missing.db"), *text = th_path(dir, "t.txt");
	char *empty = th_path(dir, "empty.db"), *other = th_path(dir, "other.db");

	expect_refusal(missing, MP_EIO, "No such file");
	expect_refusal(dir, MP_EIO, "is a directory");
	th_write(text, "this is not a database, just some text that is long enough\n");
	expect_refusal(text, MP_ENOTTRACE, "not a SQLite database");
	th_write(empty, "");
	expect_refusal(empty, MP_ENOTTRACE, "the file is empty");
	th_sqlite_exec(other, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
	expect_refusal(other, MP_ENOTTRACE, "without memprof's meta table");
	th_sqlite_exec(other,
	               "CREATE TABLE meta(key, value); INSERT INTO meta VALUES('format','x');");
	expect_refusal(other, MP_ENOTTRACE, "not a memprof trace");
	free(missing);
	free(text);
	free(empty);
	free(other);
}

Test(store, refuses_newer_schema_naming_both_versions)
{
	char *path = th_path(dir, "t.db");

	write_sample(path);
	th_sqlite_exec(path, "PRAGMA user_version=7;");
	expect_refusal(path, MP_ENEWER, "has schema v7, this memprof reads up to v3");
	free(path);
}

Test(store, migrates_v0_in_place)
{
	char *path = th_path(dir, "v0.db");
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	int n = 0;

	th_sqlite_script(path, TEST_FIXTURES "/trace-v0.sql");
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_opened_version(s), 0);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	while (mp_reader_next(r, &rec) == 1) {
		n++;
		cr_assert_eq(rec->ev.device_free_bytes, -1);
		if (rec->ev.seq == 2) {
			cr_assert_eq(rec->stack->n_frames, 2);
			cr_assert_str_eq(rec->stack->frames[0].name, "forward");
			cr_assert_str_eq(rec->api, "cudaMalloc");
		}
	}
	cr_assert_eq(n, 5);
	mp_reader_close(r);
	mp_store_close(s);
	/* migrated for good: a second open sees the current version */
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_opened_version(s), MP_SCHEMA_VERSION);
	mp_store_close(s);
	free(path);
}

Test(store, read_only_v0_cannot_migrate)
{
	char *path = th_path(dir, "v0.db");
	struct mp_store *s;
	struct mp_error err;

	if (geteuid() == 0)
		cr_skip_test("running as root: file permissions do not stop root");
	th_sqlite_script(path, TEST_FIXTURES "/trace-v0.sql");
	chmod(path, 0444);
	cr_assert_lt(mp_store_open(&s, path, &err), 0);
	cr_assert(strstr(err.msg, "cannot migrate trace"), "%s", err.msg);
	free(path);
}

/*
 * The writer inserts events 128 at a time with statements shaped by what
 * the batch uses (optional columns, requested = size, one device or
 * process): events whose fields vary in every way, across several batches
 * and a remainder, must all come back exactly.
 */
Test(store, writer_batches_of_every_shape_round_trip)
{
	struct memprof_process p1 = {0, 1, 0, NULL, -1, -1, -1, NULL};
	struct memprof_process p2 = {0, 2, 0, NULL, -1, -1, -1, NULL};
	char *path = th_path(dir, "shapes.db");
	const struct memprof_record *rec;
	struct memprof_event ev, want[3000];
	struct mp_reader *r;
	struct mp_writer *w;
	struct mp_store *s;
	struct mp_error err;
	int64_t phase, api, stack;
	struct memprof_stack st = {2, frames_ab};
	int i, n = 3000; /* 23 batches: past the shapes the writer prepares (it widens) */

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p1), 0);
	cr_assert_gt(mp_writer_process(w, &p2), 0);
	phase = mp_writer_phase(w, "fwd", 3);
	api = mp_writer_api(w, "cudaMalloc", 10);
	stack = mp_writer_stack(w, &st);
	for (i = 0; i < n; i++) {
		int batch = i / 128; /* each batch varies in its own ways */

		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = 1000 + i;
		ev.op = i % 3 == 2 ? MEMPROF_OP_OOM : MEMPROF_OP_ALLOC;
		ev.alloc_id = i + 1;
		ev.size_bytes = 4096 + i;
		ev.requested_bytes = batch % 2 && i % 5 == 0 ? 4000 : ev.size_bytes;
		ev.address = 0x7f0000000000 + (uint64_t)i * 4096;
		ev.device = batch % 3 == 1 && i % 7 == 0 ? 3 : 0;
		ev.stream = (uint64_t)i % 4;
		ev.process_id = batch % 4 == 2 && i % 11 == 0 ? p2.id : p1.id;
		ev.phase_id = batch & 1 && i % 2 ? phase : 0;
		ev.stack_id = batch & 2 && i % 3 ? stack : 0;
		ev.api_id = batch & 4 && i % 4 ? api : 0;
		ev.device_free_bytes = ev.op == MEMPROF_OP_OOM && batch % 2 == 0 ? 77 + i : -1;
		ev.thread = batch == 3 ? 0 : 500 + i % 9;
		cr_assert_eq(mp_writer_event(w, &ev), 0);
		cr_assert_eq(ev.seq, i + 1);
		want[i] = ev;
	}
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	for (i = 0; i < n; i++) {
		const struct memprof_event *e, *x = &want[i];

		cr_assert_eq(mp_reader_next(r, &rec), 1);
		e = &rec->ev;
		cr_assert(e->seq == x->seq && e->ts_ns == x->ts_ns && e->op == x->op &&
		                  e->alloc_id == x->alloc_id && e->size_bytes == x->size_bytes &&
		                  e->requested_bytes == x->requested_bytes &&
		                  e->address == x->address && e->device == x->device &&
		                  e->stream == x->stream && e->process_id == x->process_id &&
		                  e->phase_id == x->phase_id && e->stack_id == x->stack_id &&
		                  e->api_id == x->api_id &&
		                  e->device_free_bytes == x->device_free_bytes &&
		                  e->thread == x->thread,
		          "event %d differs", i + 1);
	}
	cr_assert_eq(mp_reader_next(r, &rec), 0);
	mp_reader_close(r);
	mp_store_close(s);
	free(path);
}

/* The rows of table in the trace at path. */
static int64_t count_rows(const char *path, const char *table)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[64];
	int64_t n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s;", table);
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/*
 * The writer queues new stack nodes and frames and inserts them 64 at a
 * time: stacks of every depth over a pool of frames, more than one batch
 * of each plus a remainder, a stack ending with an empty file name, must
 * all read back as written (and frames and nodes stay deduplicated).
 */
Test(store, queued_stacks_and_frames_round_trip)
{
	enum { N_FRAMES = 150, N_STACKS = 700, DEPTH = 9 };
	static char names[N_FRAMES][16];
	struct memprof_frame pool[N_FRAMES], fr[DEPTH];
	struct memprof_process p = {0, 1, 0, NULL, -1, -1, -1, NULL};
	char *path = th_path(dir, "stacks.db");
	const struct memprof_record *rec;
	struct memprof_event ev;
	struct mp_reader *r;
	struct mp_writer *w;
	struct mp_store *s;
	struct mp_error err;
	int64_t ids[N_STACKS];
	int i, k;

	for (i = 0; i < N_FRAMES; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		pool[i] = (struct memprof_frame){names[i], i % 10 ? "m.py" : "", i};
	}
	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p), 0);
	for (i = 0; i < N_STACKS; i++) {
		struct memprof_stack st = {(uint32_t)(1 + i % DEPTH), fr};

		for (k = 0; k < (int)st.n_frames; k++)
			fr[k] = pool[(i * 7 + k * 13) % N_FRAMES];
		ids[i] = mp_writer_stack(w, &st);
		cr_assert_gt(ids[i], 0);
		cr_assert_eq(mp_writer_stack(w, &st), ids[i], "stack %d deduplicated", i);
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = i;
		ev.op = MEMPROF_OP_ALLOC;
		ev.alloc_id = i + 1;
		ev.size_bytes = ev.requested_bytes = 512;
		ev.address = 4096 * (uint64_t)(i + 1);
		ev.process_id = p.id;
		ev.device_free_bytes = -1;
		ev.stack_id = ids[i];
		cr_assert_eq(mp_writer_event(w, &ev), 0);
	}
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	for (i = 0; i < N_STACKS; i++) {
		cr_assert_eq(mp_reader_next(r, &rec), 1);
		cr_assert_eq(rec->ev.stack_id, ids[i]);
		cr_assert_not_null(rec->stack, "stack %d", i);
		cr_assert_eq(rec->stack->n_frames, (uint32_t)(1 + i % DEPTH), "stack %d", i);
		for (k = 0; k < (int)rec->stack->n_frames; k++) {
			const struct memprof_frame *want = &pool[(i * 7 + k * 13) % N_FRAMES];

			cr_assert_str_eq(rec->stack->frames[k].name, want->name, "stack %d", i);
			cr_assert_str_eq(rec->stack->frames[k].file ? rec->stack->frames[k].file
			                                            : "",
			                 want->file, "stack %d frame %d", i, k);
			cr_assert_eq(rec->stack->frames[k].line, want->line);
		}
	}
	cr_assert_eq(mp_reader_next(r, &rec), 0);
	mp_reader_close(r);
	mp_store_close(s);
	cr_assert_eq(count_rows(path, "frames"), N_FRAMES);
	free(path);
}

/* Stack k of a chain: frames k, k - 1, ..., 1 (each frame's line is its node),
 * cut to the innermost MP_STACK_MAX_FRAMES. */
static void check_chain_stack(const struct memprof_stack *st, int64_t k)
{
	uint32_t want = k < MP_STACK_MAX_FRAMES ? (uint32_t)k : MP_STACK_MAX_FRAMES;

	cr_assert_eq(st->n_frames, want, "stack %lld has %u frames", (long long)k, st->n_frames);
	for (uint32_t i = 0; i < want; i++)
		cr_assert_eq(st->frames[i].line, k - i, "stack %lld frame %u", (long long)k, i);
}

Test(store, stack_chain_shares_frames)
{
	enum { N = 20000 };
	static struct memprof_frame f[N + 1];
	struct mp_stack_cache c;
	const struct memprof_stack *st;

	mp_stack_cache_init(&c);
	for (int64_t k = 1; k <= N; k++) {
		f[k] = (struct memprof_frame){"deep", "chain.py", k};
		st = mp_stack_cache_add(&c, k, k - 1, &f[k]);
		cr_assert_not_null(st);
	}
	for (int64_t k = 1; k <= N; k += 997)
		check_chain_stack(mp_stack_cache_get(&c, k), k);
	check_chain_stack(mp_stack_cache_get(&c, N), N);
	/* windows into shared runs: room for about N frames, not N^2 / 2 */
	cr_assert_leq(mp_stack_cache_size(&c), (size_t)4 * N, "%zu frames for a chain of %d",
	              mp_stack_cache_size(&c), N);
	mp_stack_cache_free(&c);
}

Test(store, stack_comb_is_bounded_per_stack)
{
	enum { N = 3000 };
	static struct memprof_frame f[2 * N + 1];
	struct mp_stack_cache c;
	const struct memprof_stack *st;
	int64_t chain = 0;

	mp_stack_cache_init(&c);
	for (int64_t k = 1; k <= N; k++) {
		int64_t node = 2 * k - 1;

		f[node] = (struct memprof_frame){"deep", "comb.py", node};
		f[node + 1] = (struct memprof_frame){"leaf", "comb.py", node + 1};
		cr_assert_not_null(mp_stack_cache_add(&c, node, chain, &f[node]));
		st = mp_stack_cache_add(&c, node + 1, node, &f[node + 1]);
		cr_assert_not_null(st);
		cr_assert_eq(st->n_frames,
		             k + 1 < MP_STACK_MAX_FRAMES ? k + 1 : MP_STACK_MAX_FRAMES);
		cr_assert_str_eq(st->frames[0].name, "leaf");
		cr_assert_eq(st->frames[1].line, node);
		chain = node;
	}
	/* each leaf copies at most MP_STACK_MAX_FRAMES frames */
	cr_assert_leq(mp_stack_cache_size(&c), (size_t)N * (MP_STACK_MAX_FRAMES + 16) + 4 * N);
	st = mp_stack_cache_get(&c, 2 * N - 1);
	cr_assert_eq(st->n_frames, MP_STACK_MAX_FRAMES);
	cr_assert_eq(st->frames[MP_STACK_MAX_FRAMES - 1].line, 2 * (N - MP_STACK_MAX_FRAMES) + 1);
	mp_stack_cache_free(&c);
}
