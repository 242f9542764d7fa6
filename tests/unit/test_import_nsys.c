/*
 * tests/unit/test_import_nsys.c - the Nsight Systems importer end to end:
 * SQL fixtures (tests/cli/data/nsys/) made into exports, imported into real
 * traces, and the exact events read back; errors and detection; and the
 * read-only foreign database API under it (store/foreign.h).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "import/import.h"
#include "store/foreign.h"
#include "store/reader.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(nsys, .init = setup, .fini = teardown);
TestSuite(foreign, .init = setup, .fini = teardown);

/* dir/NAME.sqlite from schema.sql and NAME.sql; the caller frees the path. */
static char *export_of(const char *name)
{
	char *db, *sql, *file;

	cr_assert(asprintf(&file, "%s.sqlite", name) > 0);
	db = th_path(dir, file);
	free(file);
	th_sqlite_script(db, NSYS_FIXTURES "/schema.sql");
	cr_assert(asprintf(&sql, NSYS_FIXTURES "/%s.sql", name) > 0);
	th_sqlite_script(db, sql);
	free(sql);
	return db;
}

/* Import path (format NULL: detected) into dir/out.db. */
static int import(const char *path, const char *format, struct mp_import_stats *st,
                  struct mp_error *err)
{
	char *out = th_path(dir, "out.db");
	struct mp_import_opts o = {.format = format, .overwrite = 1, .tool_version = "test"};
	int rc;

	memset(err, 0, sizeof(*err));
	rc = mp_import_files((const char *const[]){path}, 1, out, &o, st, err);
	free(out);
	return rc;
}

struct want {
	int64_t ts;
	int op;
	int64_t id, size;
	uint64_t address;
	int32_t device;
	uint64_t stream;
	int64_t pid, thread;
	const char *api; /* NULL: none */
};

/* The events of dir/out.db are exactly want[0..n). */
static void expect_events(const struct want *want, int n)
{
	char *out = th_path(dir, "out.db");
	const struct memprof_record *rec;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	int i;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	for (i = 0; i < n; i++) {
		const struct want *w = &want[i];

		cr_assert_eq(mp_reader_next(r, &rec), 1, "event %d missing", i + 1);
		cr_expect_eq(rec->ev.ts_ns, w->ts, "event %d ts", i + 1);
		cr_expect_eq(rec->ev.op, w->op, "event %d op %d", i + 1, rec->ev.op);
		cr_expect_eq(rec->ev.alloc_id, w->id, "event %d id %lld", i + 1,
		             (long long)rec->ev.alloc_id);
		cr_expect_eq(rec->ev.size_bytes, w->size, "event %d size", i + 1);
		cr_expect_eq(rec->ev.address, w->address, "event %d address", i + 1);
		cr_expect_eq(rec->ev.device, w->device, "event %d device", i + 1);
		cr_expect_eq(rec->ev.stream, w->stream, "event %d stream", i + 1);
		cr_expect_eq(rec->pid, w->pid, "event %d pid", i + 1);
		cr_expect_eq(rec->ev.thread, w->thread, "event %d thread", i + 1);
		if (w->api)
			cr_expect(rec->api && strcmp(rec->api, w->api) == 0,
			          "event %d api '%s', want '%s'", i + 1, rec->api ? rec->api : "",
			          w->api);
		else
			cr_expect_null(rec->api, "event %d api '%s'", i + 1, rec->api);
	}
	cr_expect_eq(mp_reader_next(r, &rec), 0, "more events than %d", n);
	mp_reader_close(r);
	mp_store_close(s);
	free(out);
}

static char *meta(const char *key)
{
	char *out = th_path(dir, "out.db"), *v;
	struct mp_store *s;
	struct mp_error err;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	v = mp_store_get_meta(s, key);
	mp_store_close(s);
	free(out);
	return v;
}

static void expect_meta(const char *key, const char *value)
{
	char *v = meta(key);

	cr_expect(v && strcmp(v, value) == 0, "meta %s is '%s', want '%s'", key, v ? v : "(none)",
	          value);
	free(v);
}

enum { A = MEMPROF_OP_ALLOC, F = MEMPROF_OP_FREE, M = MEMPROF_OP_MAP, U = MEMPROF_OP_UNMAP };

Test(nsys, device_allocations_with_runtime_names_and_threads)
{
	static const struct want want[] = {
	        {100, A, 1, 1024, 0x7f0000000000, 0, 7, 4242, 4250, "cudaMalloc_v3020"},
	        {200, A, 2, 4096, 0x7f0000100000, 0, 7, 4242, 4251, "cudaMalloc_v3020"},
	        /* recorded with 0 bytes: the allocation's size */
	        {300, F, 1, 1024, 0x7f0000000000, 0, 7, 4242, 4250, "cudaFree_v3020"},
	        {500, A, 3, 512, 0x7f0000200000, 0, 0, 4242, 4251, "cudaMallocManaged_v6000"},
	        {600, A, 4, 256, 0x7f0000300000, 0, 0, 4242, 0, "nsys:device_static"},
	        {700, F, 2, 4096, 0x7f0000100000, 0, 7, 4242, 4251, "cudaFree_v3020"},
	};
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("basic"), *source;

	cr_assert_eq(import(db, NULL, &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.n_events, 6);
	cr_expect_eq(st.n_allocs, 4);
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_HOST], 2, "pinned alloc and free");
	cr_expect_eq(st.n_warnings[MP_WARN_UNMATCHED_FREE], 0);
	expect_events(want, 6);
	source = meta("source");
	cr_expect_str_eq(source, "nsys", "detected as nsys");
	free(source);
	expect_meta("clock", "nsys session ns");
	expect_meta("clock_epoch_ns", "1761000000123456789");
	expect_meta("nsys_schema_version", "3.16.1");
	expect_meta("lossy", "0");
	free(db);
}

Test(nsys, processes_devices_and_per_process_correlation)
{
	static const struct want want[] = {
	        {10, A, 1, 100, 0x1000, 0, 0, 100, 101, "cudaMalloc_v3020"},
	        {20, A, 2, 200, 0x1000, 0, 0, 200, 201, "cuMemAlloc_v2"},
	        {30, A, 3, 300, 0x2000, 1, 0, 100, 102, "cudaMalloc_v3020"},
	        {40, F, 2, 200, 0x1000, 0, 0, 200, 201, "cuMemFree_v2"},
	        {50, F, 3, 300, 0x2000, 1, 0, 100, 102, "cudaFree_v3020"},
	        {60, F, 1, 100, 0x1000, 0, 0, 100, 101, "cudaFree_v3020"},
	};
	struct memprof_process *p;
	struct memprof_device *d;
	struct mp_import_stats st;
	struct mp_store *s;
	struct mp_error err;
	size_t np, nd;
	char *db = export_of("multi"), *out = th_path(dir, "out.db");

	cr_assert_eq(import(db, NULL, &st, &err), 0, "%s", err.msg);
	expect_events(want, 6);
	cr_expect_eq(st.n_warnings[MP_WARN_UNMATCHED_FREE], 0);
	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_processes(s, &p, &np), 0);
	cr_assert_eq(np, 2);
	cr_expect_eq(p[0].pid, 100);
	cr_expect_eq(p[1].pid, 200, "pid from bits 24..47, hardware id ignored");
	cr_assert_eq(mp_store_devices(s, &d, &nd), 0);
	cr_assert_eq(nd, 3);
	cr_expect(d[0].process_id == p[0].id && d[0].ordinal == 0);
	cr_expect(d[1].process_id == p[0].id && d[1].ordinal == 1);
	cr_expect(d[2].process_id == p[1].id && d[2].ordinal == 0);
	mp_store_free_processes(p, np);
	mp_store_free_devices(d, nd);
	mp_store_close(s);
	free(out);
	free(db);
}

Test(nsys, pool_size_changes_become_map_and_unmap)
{
	static const struct want want[] = {
	        {100, M, 1, 2097152, 0x7f1000000000, 0, 13, 7, 8, "cudaMallocAsync_v11020"},
	        {100, A, 1, 1048576, 0x7f1000000000, 0, 13, 7, 8, "cudaMallocAsync_v11020"},
	        {200, A, 2, 1048576, 0x7f1000100000, 0, 13, 7, 8, "cudaMallocAsync_v11020"},
	        {300, M, 1, 2097152, 0x7f1000200000, 0, 13, 7, 8, "cudaMallocAsync_v11020"},
	        {300, A, 3, 2097152, 0x7f1000200000, 0, 13, 7, 8, "cudaMallocAsync_v11020"},
	        {400, F, 1, 1048576, 0x7f1000000000, 0, 13, 7, 8, "cudaFreeAsync_v11020"},
	        {500, F, 2, 1048576, 0x7f1000100000, 0, 13, 7, 8, "cudaFreeAsync_v11020"},
	        {600, U, 1, 3145728, 0x7f1000100000, 0, 13, 7, 8, "cudaFreeAsync_v11020"},
	        {600, F, 3, 2097152, 0x7f1000200000, 0, 13, 7, 8, "cudaFreeAsync_v11020"},
	        {650, A, 4, 65536, 0x7e0000000000, 0, 0, 7, 8, "cudaMalloc_v3020"},
	        {660, A, 5, 65536, 0x7e0000100000, 0, 0, 7, 0, "nsys:device"},
	};
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("pool");

	cr_assert_eq(import(db, "nsys", &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.n_events, 11);
	cr_expect_eq(st.n_allocs, 5, "map and unmap are not allocations");
	expect_events(want, 11);
	free(db);
}

Test(nsys, unmatched_free_duplicate_alloc_unknown_kinds_repeated_correlation)
{
	static const struct want want[] = {
	        {10, F, 1, 64, 0x5000, 0, 0, 9, 9, "cudaFree_v3020"},
	        {20, A, 2, 128, 0x6000, 0, 0, 9, 9, "cudaMalloc_v3020"},
	        {30, F, 2, 128, 0x6000, 0, 0, 9, 0, NULL}, /* implied */
	        {30, A, 3, 256, 0x6000, 0, 0, 9, 0, "nsys:array"},
	        {40, F, 3, 256, 0x6000, 0, 0, 9, 0, "nsys:array"},
	};
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("pairing");

	cr_assert_eq(import(db, NULL, &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.n_events, 5);
	cr_expect_eq(st.n_allocs, 2);
	cr_expect_eq(st.n_warnings[MP_WARN_UNMATCHED_FREE], 1);
	cr_expect_eq(st.n_warnings[MP_WARN_DUPLICATE_ALLOC], 1);
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_UNKNOWN], 2);
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_HOST], 0);
	expect_events(want, 5);
	expect_meta("lossy", "1");
	free(db);
}

Test(nsys, old_schema_without_enums_uses_nsight_numbering)
{
	static const struct want want[] = {
	        {10, A, 1, 1000, 0xa000, 2, 0, 3, 0, "nsys:device"},
	        {20, A, 2, 3000, 0xb000, 2, 0, 3, 0, "nsys:array"},
	        {40, F, 1, 1000, 0xa000, 2, 0, 3, 0, "nsys:device"},
	        {50, A, 3, 16, 0xd000, 2, 0, 3, 0, "nsys:managed_static"},
	};
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("old-schema");

	cr_assert_eq(import(db, NULL, &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_HOST], 1);
	expect_events(want, 4);
	free(db);
}

Test(nsys, enum_tables_override_the_usual_numbering)
{
	static const struct want want[] = {
	        {10, A, 1, 100, 0x1000, 0, 0, 5, 0, "nsys:device"},
	        {20, A, 2, 200, 0x2000, 0, 0, 5, 0, "nsys:managed"},
	        {40, F, 1, 100, 0x1000, 0, 0, 5, 0, "nsys:device"},
	};
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("renumbered");

	cr_assert_eq(import(db, NULL, &st, &err), 0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_HOST], 1, "11 is Pinned here");
	cr_expect_eq(st.n_warnings[MP_WARN_SKIPPED_UNKNOWN], 0);
	expect_events(want, 3);
	free(db);
}

/* Importing NAME fails with MP_EFORMAT, every text in the message, nothing written. */
static void expect_refused(const char *path, const char *format, const char *const *texts)
{
	struct mp_import_stats st;
	struct mp_error err;
	int before = th_count_entries(dir);

	cr_assert_eq(import(path, format, &st, &err), MP_EFORMAT, "%s", err.msg);
	cr_expect(strstr(err.msg, path), "names the file: %s", err.msg);
	for (; *texts; texts++)
		cr_expect(strstr(err.msg, *texts), "'%s' not in: %s", *texts, err.msg);
	cr_expect_eq(th_count_entries(dir), before, "nothing written");
}

#define REFUSED(name, ...)                                                                         \
	do {                                                                                       \
		char *db_ = export_of(name);                                                       \
		expect_refused(db_, NULL, (const char *const[]){__VA_ARGS__, NULL});               \
		free(db_);                                                                         \
	} while (0)

Test(nsys, report_without_memory_events_says_how_to_record_one)
{
	REFUSED("no-memory", "no CUDA memory events", "--cuda-memory-usage=true", "\nhint: ");
}

Test(nsys, bad_rows_name_the_table_and_row)
{
	REFUSED("negative-bytes", "CUDA_GPU_MEMORY_USAGE_EVENTS row 2: negative bytes -5");
	REFUSED("null-device", "CUDA_GPU_MEMORY_USAGE_EVENTS row 3: deviceId is NULL");
	REFUSED("text-bytes", "row 1: bytes is text, not an integer");
	REFUSED("bad-oper", "row 2: memoryOperationType 5 is neither");
	REFUSED("missing-column", "missing column", "has no column bytes");
}

Test(nsys, memprof_trace_is_not_taken_for_an_export)
{
	struct mp_import_stats st;
	struct mp_error err;
	char *db = export_of("basic"), *trace = th_path(dir, "trace.db");
	struct mp_import_opts o = {.tool_version = "test"};

	cr_assert_eq(mp_import_files((const char *const[]){db}, 1, trace, &o, &st, &err), 0, "%s",
	             err.msg);
	expect_refused(
	        trace, "nsys",
	        (const char *const[]){"not an Nsight Systems export", "memprof trace", NULL});
	expect_refused(trace, NULL, (const char *const[]){"unknown trace format", NULL});
	free(trace);
	free(db);
}

Test(nsys, other_files_are_refused_cleanly)
{
	char *text = th_path(dir, "text.sqlite"), *cut = th_path(dir, "cut.sqlite");
	char *other = th_path(dir, "other.sqlite"), *db = export_of("basic"), *bytes;
	size_t len;
	FILE *f;

	th_write(text, "ts_ns,op,id,size\n1,alloc,1,8\n");
	expect_refused(text, "nsys", (const char *const[]){"not a SQLite database", NULL});
	/* the first 2 KiB of an export: a header, then nothing SQLite can read */
	bytes = th_read(db, &len);
	cr_assert(len > 4096);
	f = fopen(cut, "wb");
	cr_assert(f && fwrite(bytes, 1, 2048, f) == 2048 && fclose(f) == 0);
	expect_refused(cut, NULL, (const char *const[]){"cannot read SQLite database", NULL});
	expect_refused(cut, "nsys", (const char *const[]){"cannot read SQLite database", NULL});
	th_sqlite_exec(other, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
	expect_refused(other, NULL, (const char *const[]){"unknown trace format", NULL});
	expect_refused(other, "nsys", (const char *const[]){"without the tables", NULL});
	free(bytes);
	free(text);
	free(cut);
	free(other);
	free(db);
}

Test(nsys, probe_needs_the_sqlite_header_and_nsys_tables)
{
	const struct mp_importer *imp = mp_importer_find("nsys");
	char *db = export_of("basic"), *bytes;
	size_t len;

	cr_assert_not_null(imp);
	bytes = th_read(db, &len);
	cr_expect(imp->probe(db, bytes, len));
	cr_expect(!imp->probe(db, bytes, 15), "16 bytes of header needed");
	cr_expect(!imp->probe(db, "ts_ns,op,id,size\n", 17));
	bytes[0] = 's';
	cr_expect(!imp->probe(db, bytes, len));
	free(bytes);
	free(db);
	{
		int i, nsys_at = -1, csv_at = -1;

		for (i = 0; mp_importers[i]; i++) {
			if (mp_importers[i] == imp)
				nsys_at = i;
			if (mp_importers[i] == &mp_importer_csv)
				csv_at = i;
		}
		cr_expect(nsys_at >= 0 && nsys_at < csv_at, "binary formats are probed before csv");
	}
}

/* --- store/foreign.h ------------------------------------------------------------------ */

Test(foreign, tables_columns_and_rows)
{
	char *db = th_path(dir, "f.sqlite");
	struct mp_foreign_rows *r;
	struct mp_foreign *f;
	struct mp_error err;
	size_t len;

	th_sqlite_exec(db, "CREATE TABLE Things(id INTEGER, label TEXT, w REAL);"
	                   "INSERT INTO Things VALUES (1, 'one', 0.5), (NULL, NULL, NULL);"
	                   "CREATE VIEW v AS SELECT * FROM Things;");
	cr_assert_eq(mp_foreign_open(&f, db, &err), 0, "%s", err.msg);
	cr_expect_eq(mp_foreign_has_table(f, "things"), 1, "any letter case");
	cr_expect_eq(mp_foreign_has_table(f, "v"), 0, "views are not seen");
	cr_expect_eq(mp_foreign_has_table(f, "nope"), 0);
	cr_expect_eq(mp_foreign_has_column(f, "Things", "LABEL"), 1);
	cr_expect_eq(mp_foreign_has_column(f, "Things", "nope"), 0);
	cr_expect_eq(mp_foreign_has_column(f, "nope", "id"), 0);
	cr_assert_eq(mp_foreign_query(f, "SELECT id, label, w FROM Things ORDER BY rowid", &r), 0);
	cr_assert_eq(mp_foreign_next(r), 1);
	cr_expect_eq(mp_foreign_type(r, 0), MP_FOREIGN_INT);
	cr_expect_eq(mp_foreign_int(r, 0), 1);
	cr_expect_str_eq(mp_foreign_text(r, 1, &len), "one");
	cr_expect_eq(len, 3);
	cr_expect_eq(mp_foreign_type(r, 2), MP_FOREIGN_REAL);
	cr_assert_eq(mp_foreign_next(r), 1);
	cr_expect(mp_foreign_is_null(r, 0));
	cr_expect_null(mp_foreign_text(r, 1, &len));
	cr_expect_eq(mp_foreign_next(r), 0);
	mp_foreign_finish(r);
	cr_expect_eq(mp_foreign_query(f, "SELECT * FROM v", &r), MP_EFORMAT, "views are off");
	cr_expect(strstr(mp_foreign_error(f)->msg, db), "%s", mp_foreign_error(f)->msg);
	cr_expect_eq(mp_foreign_query(f, "SELECT nope FROM Things", &r), MP_EFORMAT);
	cr_expect_eq(mp_foreign_query(f, "INSERT INTO Things VALUES (2, 'two', 1)", &r), 0);
	cr_expect_lt(mp_foreign_next(r), 0, "read-only");
	mp_foreign_finish(r);
	mp_foreign_close(f);
	free(db);
}

Test(foreign, files_it_cannot_read)
{
	char *text = th_path(dir, "t.txt"), *none = th_path(dir, "none.db");
	struct mp_foreign *f;
	struct mp_error err;

	th_write(text, "this is not a database, whatever its name says; it is long enough "
	               "that SQLite looks at its header and finds no database there at all.");
	cr_expect_eq(mp_foreign_open(&f, text, &err), MP_EFORMAT);
	cr_expect_null(f);
	cr_expect(strstr(err.msg, "not a SQLite database") && strstr(err.msg, text), "%s", err.msg);
	cr_expect_eq(mp_foreign_open(&f, none, &err), MP_EIO);
	cr_expect(strstr(err.msg, "No such file"), "%s", err.msg);
	cr_expect_eq(mp_foreign_open(&f, dir, &err), MP_EIO);
	cr_expect(strstr(err.msg, "directory"), "%s", err.msg);
	cr_expect_eq(mp_foreign_open(&f, "/dev/null", &err), MP_EIO);
	cr_expect(strstr(err.msg, "not a regular file"), "%s", err.msg);
	cr_expect_eq(th_count_entries(dir), 1, "nothing made beside the file");
	free(text);
	free(none);
}
