/*
 * tests/fuzz/fuzz_trace.c - fuzz target for the trace database itself: a
 * trace is untrusted input (issue 23).  An input that starts with the SQLite
 * header is a trace file, bytes as they are; any other input is SQL run on a
 * copy of a small valid trace (mutated schemas: views, triggers, dropped or
 * changed tables and columns, user_version; mutated rows: any value in any
 * column).  The result goes through what every reading command does:
 * opening (schema check, migration), info's queries and summary, the
 * reader with stacks through every analysis and rendering (analyze, report),
 * the CSV export, pinned host buffers, replay results, and the trace
 * importer (import --format=trace, merge).  Each must give its result or an
 * error that says what was wrong: never a crash, a hang or a leak.  The
 * events decoded from the file's pages must equal SQLite's reading of them
 * whenever both read the trace whole.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/attribution.h"
#include "analysis/frag.h"
#include "analysis/lifetime.h"
#include "analysis/memstate.h"
#include "analysis/timeline.h"
#include "import/import.h"
#include "record_hash.h"
#include "report/analyze_out.h"
#include "report/csv_writer.h"
#include "report/info.h"
#include "store/host_buffers.h"
#include "store/reader.h"
#include "store/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The base trace's events: stacks, phases, APIs, two processes, segments. */
static const char base_csv[] =
        "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,"
        "stack\n"
        "1000,phase_begin,0,0,0,0x0,0,0,4242,forward,,,,\n"
        "1100,preexisting,1,4096,4096,0x7f0000000000,0,0,4242,forward,,,,\n"
        "1200,reserve,10,2097152,2097152,0x7f1000000000,0,0,4242,forward,,,,\n"
        "1300,alloc,2,1536,1500,0x7f1000000000,0,7,4242,forward,cudaMalloc,,11,"
        "main@train.py:10;fwd@model.py:42\n"
        "1400,alloc,3,256,200,0x7f2000000000,1,0,4243,,cudaMalloc,,12,main@train.py:10\n"
        "1500,oom,0,0,8589934592,0x0,1,0,4243,,cudaMalloc,1024,12,main@train.py:10\n"
        "1600,free,2,1536,1536,0x7f1000000000,0,7,4242,forward,cudaFree,,11,\n"
        "1700,map,20,2097152,2097152,0x7f3000000000,0,0,4242,,,,,\n"
        "1800,unmap,20,2097152,2097152,0x7f3000000000,0,0,4242,,,,,\n"
        "1900,release,10,2097152,2097152,0x7f1000000000,0,0,4242,,,,,\n"
        "2000,phase_end,0,0,0,0x0,0,0,4242,forward,,,,\n"
        "2100,free_requested,3,256,200,0x7f2000000000,1,0,4243,,,,,\n";

static char dir[64], base_path[96], in_path[96], out_path[96], journal_path[112];
static uint8_t *base;
static size_t base_len;

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long len;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		abort();
	p = malloc((size_t)len + 1);
	if (!p || fread(p, 1, (size_t)len, f) != (size_t)len)
		abort();
	fclose(f);
	*n = (size_t)len;
	return p;
}

/* The base trace: base_csv imported, two replay runs saved, pages shrunk. */
static void make_base(void)
{
	static const struct mp_result_metric m[] = {{"peak_reserved_bytes", 4096, "bytes", 1},
	                                            {"total_ns", 1500, "ns", 0}};
	const struct mp_result_run runs[] = {{"caching", "sim", NULL, NULL, 0, m, 2, 0},
	                                     {"direct", "sim", "caching", "x=1", 1, m, 1, 0}};
	struct mp_import_opts o = {.format = "csv", .overwrite = 1, .tool_version = "fuzz"};
	const char *in = in_path;
	struct mp_import_stats st;
	struct mp_error err = {0};
	sqlite3 *db;

	write_file(in_path, base_csv, sizeof(base_csv) - 1);
	if (mp_import_files(&in, 1, base_path, &o, &st, &err) < 0 ||
	    mp_results_save(base_path, runs, 2, &err) < 0 ||
	    sqlite3_open(base_path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA page_size=512; VACUUM;", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	sqlite3_close(db);
	base = read_file(base_path, &base_len);
}

static void cleanup(void)
{
	unlink(base_path);
	unlink(in_path);
	unlink(out_path);
	unlink(journal_path);
	rmdir(dir);
	free(base);
}

static void setup(void)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(dir, sizeof(dir), "%s/fuzz-trace-XXXXXX", tmp);
	if (!mkdtemp(dir))
		abort();
	snprintf(base_path, sizeof(base_path), "%s/base.db", dir);
	snprintf(in_path, sizeof(in_path), "%s/in.db", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.db", dir);
	snprintf(journal_path, sizeof(journal_path), "%s-journal", in_path);
	make_base();
	atexit(cleanup);
}

/* The fuzzer's SQL touches this file only: no ATTACH; of the pragmas, the
 * version and the schema's writability (to corrupt it by hand). */
static int authorize(void *ctx, int action, const char *a, const char *b, const char *c,
                     const char *d)
{
	(void)ctx;
	(void)b;
	(void)c;
	(void)d;
	if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
		return SQLITE_DENY;
	if (action == SQLITE_PRAGMA)
		return a && (strcmp(a, "user_version") == 0 || strcmp(a, "writable_schema") == 0)
		               ? SQLITE_OK
		               : SQLITE_DENY;
	return SQLITE_OK;
}

static int progress(void *ctx)
{
	return ++*(int *)ctx > 2000; /* a few million steps at most */
}

/* in_path: the base trace changed by the input as SQL; its errors do not matter. */
static void from_sql(const uint8_t *data, size_t size)
{
	char *sql = malloc(size + 1);
	sqlite3 *db;
	int steps = 0;

	if (!sql)
		abort();
	memcpy(sql, data, size);
	sql[size] = '\0';
	write_file(in_path, base, base_len);
	if (sqlite3_open(in_path, &db) != SQLITE_OK)
		abort();
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_exec(db, "PRAGMA max_page_count=4096;", NULL, NULL, NULL);
	sqlite3_set_authorizer(db, authorize, NULL);
	sqlite3_progress_handler(db, 1000, progress, &steps);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	free(sql);
}

/* A failure must say what was wrong. */
static void check_at(int rc, const char *msg, int line)
{
	if (rc < 0 && (!msg || msg[0] == '\0')) {
		fprintf(stderr, "fuzz_trace.c:%d: error %d without a message\n", line, rc);
		abort();
	}
}
#define check(rc, msg) check_at((rc), (msg), __LINE__)

static int count_buffer(void *ctx, const struct mp_host_buffer *b)
{
	(void)b;
	++*(int64_t *)ctx;
	return 0;
}

/* info: the metadata queries, the summary and both renderings. */
static void info(struct mp_store *s, const struct mp_memstate *sum, FILE *null)
{
	struct mp_info in = {0};
	struct memprof_process *p = NULL;
	struct memprof_device *d = NULL;
	int64_t n = 0, a, b;
	int yes;

	check(mp_store_count_events(s, &n), mp_store_errmsg(s));
	check(mp_store_ts_range(s, &a, &b), mp_store_errmsg(s));
	check(mp_store_has_durations(s, &yes), mp_store_errmsg(s));
	check(mp_store_count_replay_runs(s, &n), mp_store_errmsg(s));
	n = 0;
	check(mp_store_each_host_buffer(s, count_buffer, &n), mp_store_errmsg(s));
	if (mp_store_processes(s, &p, &in.n_processes) < 0 ||
	    mp_store_devices(s, &d, &in.n_devices) < 0) {
		check(-1, mp_store_errmsg(s));
	} else {
		in.path = "fuzz.db";
		in.summary = sum;
		in.processes = p;
		in.devices = d;
		in.source = "fuzz";
		mp_info_print_text(null, &in);
		mp_info_print_json(null, &in);
	}
	mp_store_free_processes(p, in.n_processes);
	mp_store_free_devices(d, in.n_devices);
}

/* analyze and report: the reader with stacks through every analysis. */
static void analyze(struct mp_store *s, FILE *null)
{
	static struct mp_memstate ms;
	static struct mp_frag frag;
	static struct mp_attribution attr;
	static struct mp_lifetime life;
	static struct mp_timeline tl;
	struct mp_mem_listener ls[4];
	struct mp_consumer c;
	struct mp_analysis a;
	struct mp_reader *r = NULL;
	int i, rc;

	mp_memstate_init(&ms);
	mp_frag_init(&frag, &ms, 1 << 20);
	mp_attribution_init(&attr, &ms, (1u << MP_ATTR_KINDS) - 1, 0, 0);
	mp_lifetime_init(&life, NULL, &ms);
	mp_timeline_init(&tl, MP_TIMELINE_MIN_POINTS);
	ls[0] = mp_frag_listener(&frag);
	ls[1] = mp_attribution_listener(&attr);
	ls[2] = mp_lifetime_listener(&life);
	ls[3] = mp_timeline_listener(&tl);
	for (i = 0; i < 4; i++)
		mp_memstate_listen(&ms, &ls[i]);
	c = mp_memstate_consumer(&ms);
	rc = mp_reader_open(s, MP_READ_STACKS, &r); /* its stacks live until it closes */
	if (rc == 0) {
		mp_reader_add(r, &c);
		rc = mp_reader_run(r);
	}
	if (rc == MP_EFORMAT) /* sizes beyond what memstate takes: its own message */
		rc = 0;
	check(rc, mp_store_errmsg(s));
	if (rc == 0) {
		memset(&a, 0, sizeof(a));
		a.path = "fuzz.db";
		a.device = -1;
		a.top = 4;
		a.opts.kinds = (1u << MP_ATTR_KINDS) - 1;
		a.opts.at = attr.at;
		a.opts.granularity = frag.granularity;
		a.ms = &ms;
		a.frag = &frag;
		a.attr = &attr;
		a.life = &life;
		mp_analyze_print_text(null, &a);
		mp_analyze_print_json(null, &a);
		info(s, &ms, null);
	}
	mp_reader_close(r);
	mp_timeline_free(&tl);
	mp_lifetime_free(&life);
	mp_attribution_free(&attr);
	mp_frag_free(&frag);
	mp_memstate_free(&ms);
}

/* export: every record, with its stack, as CSV. */
static void export(struct mp_store *s, FILE *null)
{
	const struct memprof_record *rec;
	struct mp_csv_writer *w;
	struct mp_reader *r;
	int rc;

	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		check(-1, mp_store_errmsg(s));
		return;
	}
	w = mp_csv_writer_open(null, 1);
	if (!w)
		abort();
	while ((rc = mp_reader_next(r, &rec)) == 1)
		mp_csv_writer_record(w, rec);
	check(rc, mp_store_errmsg(s));
	mp_csv_writer_close(w);
	mp_reader_close(r);
}

/* The push pass (the events decoded from the file's pages where it may be
 * read directly) and the pull pass (through SQL) read the same records
 * whenever both read the trace whole. */
static void pages_equal_sql(struct mp_store *s)
{
	uint64_t push[2] = {FUZZ_HASH_START, 0}, pull[2] = {FUZZ_HASH_START, 0};
	struct mp_consumer c = {"hash", push, MP_READ_STACKS, fuzz_hash_record, NULL};
	const struct memprof_record *rec;
	struct mp_reader *r;
	int rc_push, rc_pull = 0;

	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0)
		return;
	mp_reader_add(r, &c);
	rc_push = mp_reader_run(r);
	mp_reader_close(r);
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0)
		return;
	while ((rc_pull = mp_reader_next(r, &rec)) == 1)
		fuzz_hash_record(pull, rec);
	mp_reader_close(r);
	if (rc_push == 0 && rc_pull == 0 && (push[0] != pull[0] || push[1] != pull[1])) {
		fprintf(stderr,
		        "fuzz_trace.c: the pages gave %llu records, SQL %llu, not the same\n",
		        (unsigned long long)push[1], (unsigned long long)pull[1]);
		abort();
	}
}

static void read_trace(FILE *null)
{
	struct mp_import_opts o = {.format = "trace", .overwrite = 1, .tool_version = "fuzz"};
	const char *in = in_path;
	struct mp_import_stats st;
	struct mp_result_set set;
	struct mp_error err = {0};
	struct mp_store *s;

	if (mp_store_open(&s, in_path, &err) < 0) {
		check(-1, err.msg);
		return; /* refused: every command stops here */
	}
	analyze(s, null);
	export(s, null);
	pages_equal_sql(s);
	mp_store_close(s);
	check(mp_results_load(in_path, &set, &err), err.msg);
	mp_results_free(&set);
	mp_err_clear(&err); /* each command starts with a clear error */
	check(mp_import_files(&in, 1, out_path, &o, &st, &err), err.msg);
	unlink(out_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[16] = "SQLite format 3";
	FILE *null;

	if (!dir[0])
		setup();
	if (size >= sizeof(magic) && memcmp(data, magic, sizeof(magic)) == 0)
		write_file(in_path, data, size);
	else
		from_sql(data, size);
	null = fopen("/dev/null", "w");
	if (!null)
		abort();
	read_trace(null);
	fclose(null);
	unlink(in_path);
	unlink(journal_path);
	return 0;
}
