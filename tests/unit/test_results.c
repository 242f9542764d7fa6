/*
 * tests/unit/test_results.c - src/store/results.c: replay runs saved in a
 * trace and loaded back exactly, saves appending, all-or-nothing writes
 * (a failing insert halfway leaves nothing), migration of an old trace,
 * and the refusal of read-only files and of files that are not traces.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "helpers.h"
#include "store/results.h"
#include "store/store.h"
#include "store/writer.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	chmod(dir, 0700);
	th_rmdir(dir);
}

TestSuite(results, .init = setup, .fini = teardown);

/* An empty but complete trace at dir/name. */
static char *make_trace(const char *name)
{
	char *path = th_path(dir, name);
	struct mp_store *s;
	struct mp_writer *w;
	struct mp_error err;

	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	return path;
}

static const struct mp_result_metric metrics_a[] = {
        {"peak_reserved_bytes", 9007199254740993.0 /* rounds to 2^53 */, "bytes", 0},
        {"alloc_ns_p99", 1234.5, "ns", 1},
        {"external_fragmentation_at_peak", 0.125, "ratio", 0},
        {"time_saved_ns", -250.0, "ns", 1},
        {"pool.segments", 17, "count", 0},
};
static const struct mp_result_metric metrics_b[] = {
        {"peak_reserved_bytes", 4096, "bytes", 0},
};

static const struct mp_result_run runs_ab[] = {
        {"caching", "sim", NULL, "--pool=all --capacity=80GiB", 0, metrics_a, 5, 0},
        {"planned", "cuda", "caching", NULL, 3, metrics_b, 1, 0},
};

static const struct mp_result_metric *find_metric(const struct mp_result_run *r, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}

static void expect_str(const char *got, const char *want)
{
	if (!want)
		cr_assert_null(got, "expected NULL, got '%s'", got);
	else
		cr_assert_str_eq(got, want);
}

static void expect_run(const struct mp_result_run *got, const struct mp_result_run *want)
{
	expect_str(got->pool, want->pool);
	expect_str(got->backend, want->backend);
	expect_str(got->baseline, want->baseline);
	expect_str(got->options, want->options);
	cr_assert_eq(got->device, want->device);
	cr_assert_eq(got->n_metrics, want->n_metrics);
	for (size_t i = 0; i < want->n_metrics; i++) {
		const struct mp_result_metric *m = find_metric(got, want->metrics[i].name);

		cr_assert_not_null(m, "metric '%s' missing", want->metrics[i].name);
		cr_assert(m->value == want->metrics[i].value, "%s: %.17g != %.17g", m->name,
		          m->value, want->metrics[i].value);
		cr_assert_str_eq(m->unit, want->metrics[i].unit);
		cr_assert_eq(m->measured, want->metrics[i].measured, "%s", m->name);
	}
}

static size_t count_runs(const char *path)
{
	struct mp_result_set set;
	struct mp_error err;
	size_t n;

	cr_assert_eq(mp_results_load(path, &set, &err), 0, "%s", err.msg);
	n = set.n_runs;
	mp_results_free(&set);
	return n;
}

/* The value of one SQL query on path, as text (malloc'd, "" for NULL). */
static char *sql_text(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char *v;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	v = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

Test(results, round_trip)
{
	char *path = make_trace("t.db"), *created, *version;
	struct mp_result_set set;
	struct mp_error err;
	struct tm tm;
	time_t before = time(NULL), at;

	cr_assert_eq(mp_results_save(path, runs_ab, 2, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_results_load(path, &set, &err), 0, "%s", err.msg);
	cr_assert_eq(set.n_runs, 2);
	expect_run(&set.runs[0], &runs_ab[0]);
	expect_run(&set.runs[1], &runs_ab[1]);
	cr_assert_lt(set.runs[0].id, set.runs[1].id);
	/* the double survives exactly, whatever the 2^53 rounding made of it */
	cr_assert(find_metric(&set.runs[0], "peak_reserved_bytes")->value == 9007199254740992.0);
	mp_results_free(&set);

	created = sql_text(path, "SELECT created FROM replay_runs ORDER BY id LIMIT 1;");
	memset(&tm, 0, sizeof(tm));
	cr_assert_not_null(strptime(created, "%Y-%m-%dT%H:%M:%SZ", &tm), "created '%s'", created);
	cr_assert_eq(strlen(created), 20, "created '%s'", created);
	at = timegm(&tm);
	cr_assert(at >= before - 1 && at <= time(NULL) + 1, "created '%s' is not now (UTC)",
	          created);
	version = sql_text(path, "SELECT group_concat(DISTINCT tool_version) FROM replay_runs;");
	cr_assert_str_eq(version, PACKAGE_VERSION);
	free(created);
	free(version);
	free(path);
}

Test(results, two_saves_append_oldest_first)
{
	char *path = make_trace("t.db");
	struct mp_result_set set;
	struct mp_error err;

	cr_assert_eq(mp_results_save(path, &runs_ab[1], 1, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_results_save(path, runs_ab, 2, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_results_load(path, &set, &err), 0, "%s", err.msg);
	cr_assert_eq(set.n_runs, 3);
	expect_run(&set.runs[0], &runs_ab[1]);
	expect_run(&set.runs[1], &runs_ab[0]);
	expect_run(&set.runs[2], &runs_ab[1]);
	cr_assert(set.runs[0].id < set.runs[1].id && set.runs[1].id < set.runs[2].id);
	mp_results_free(&set);
	free(path);
}

Test(results, no_runs_yet)
{
	char *path = make_trace("t.db");

	cr_assert_eq(count_runs(path), 0);
	free(path);
}

/* An insert that fails after the first run was written leaves nothing. */
Test(results, all_or_nothing)
{
	char *path = make_trace("t.db");
	static const struct mp_result_metric boom[] = {{"boom", 1, "count", 0}};
	const struct mp_result_run runs[] = {runs_ab[0],
	                                     {"direct", "sim", NULL, NULL, 0, boom, 1, 0}};
	struct mp_error err;

	/* a metric row already there for run 2 makes the second run's insert fail
	 * (triggers, which this test used before, are refused in traces now) */
	th_sqlite_exec(path, "INSERT INTO replay_metrics VALUES(2, 'boom', 0, 'count', 0);");
	cr_assert_lt(mp_results_save(path, runs, 2, &err), 0);
	cr_assert(strstr(err.msg, "cannot save results in trace") &&
	                  strstr(err.msg, "UNIQUE constraint failed"),
	          "%s", err.msg);
	cr_assert_eq(count_runs(path), 0);
	{
		char *n = sql_text(path, "SELECT count(*) FROM replay_metrics;");

		cr_assert_str_eq(n, "1");
		free(n);
	}
	free(path);
}

Test(results, read_only_file_refused_and_unchanged)
{
	char *path = make_trace("t.db"), *before, *after;
	size_t len_before, len_after;
	struct mp_error err;

	chmod(path, 0444);
	before = th_read(path, &len_before);
	cr_assert_eq(mp_results_save(path, runs_ab, 2, &err), MP_EIO);
	cr_assert(strstr(err.msg, "cannot save results in trace") && strstr(err.msg, path) &&
	                  strstr(err.msg, "read-only"),
	          "%s", err.msg);
	after = th_read(path, &len_after);
	cr_assert(len_before == len_after && memcmp(before, after, len_before) == 0,
	          "a refused save changed the file");
	cr_assert_eq(count_runs(path), 0);
	free(before);
	free(after);
	free(path);
}

Test(results, non_trace_files_refused)
{
	char *text = th_path(dir, "notes.txt"), *db = th_path(dir, "other.db"), *content;
	struct mp_error err;

	th_write(text, "not a database at all\n");
	cr_assert_eq(mp_results_save(text, runs_ab, 2, &err), MP_ENOTTRACE);
	cr_assert(strstr(err.msg, "not a memprof trace"), "%s", err.msg);
	content = th_read(text, NULL);
	cr_assert_str_eq(content, "not a database at all\n");
	free(content);

	th_sqlite_exec(db, "CREATE TABLE t(x);");
	cr_assert_eq(mp_results_save(db, runs_ab, 2, &err), MP_ENOTTRACE);
	cr_assert(strstr(err.msg, "without memprof's meta table"), "%s", err.msg);
	content = sql_text(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'replay%';");
	cr_assert_str_eq(content, "0");
	free(content);

	cr_assert_lt(mp_results_load(text, &(struct mp_result_set){0}, &err), 0);
	cr_assert(strstr(err.msg, "not a memprof trace"), "%s", err.msg);
	free(text);
	free(db);
}

Test(results, missing_file_not_created)
{
	char *path = th_path(dir, "absent.db");
	struct mp_error err;
	struct stat st;

	cr_assert_eq(mp_results_save(path, runs_ab, 1, &err), MP_EIO);
	cr_assert(strstr(err.msg, "absent.db"), "%s", err.msg);
	cr_assert_lt(stat(path, &st), 0);
	free(path);
}

Test(results, old_schema_migrated_then_saved)
{
	char *path = th_path(dir, "v0.db"), *v;
	struct mp_result_set set;
	struct mp_error err;

	th_sqlite_script(path, TEST_FIXTURES "/trace-v0.sql");
	cr_assert_eq(mp_results_save(path, runs_ab, 2, &err), 0, "%s", err.msg);
	v = sql_text(path, "PRAGMA user_version;");
	cr_assert_eq(atoi(v), MP_SCHEMA_VERSION);
	free(v);
	cr_assert_eq(mp_results_load(path, &set, &err), 0, "%s", err.msg);
	cr_assert_eq(set.n_runs, 2);
	expect_run(&set.runs[1], &runs_ab[1]);
	mp_results_free(&set);
	free(path);
}

Test(results, bad_runs_refused_before_writing)
{
	char *path = make_trace("t.db");
	const struct mp_result_metric nan_m[] = {{"external_fragmentation_at_peak", NAN, "ratio", 0}};
	const struct mp_result_metric dup_m[] = {{"ooms", 1, "count", 0}, {"ooms", 2, "count", 0}};
	const struct mp_result_run nan_run = {"caching", "sim", NULL, NULL, 0, nan_m, 1, 0};
	const struct mp_result_run dup_run = {"caching", "sim", NULL, NULL, 0, dup_m, 2, 0};
	const struct mp_result_run no_pool = {NULL, "sim", NULL, NULL, 0, NULL, 0, 0};
	struct mp_error err;

	cr_assert_eq(mp_results_save(path, &nan_run, 1, &err), MP_EINVAL);
	cr_assert(strstr(err.msg, "'external_fragmentation_at_peak'") && strstr(err.msg, "not a finite number"), "%s",
	          err.msg);
	cr_assert_eq(mp_results_save(path, &dup_run, 1, &err), MP_EINVAL);
	cr_assert(strstr(err.msg, "'ooms' twice"), "%s", err.msg);
	cr_assert_eq(mp_results_save(path, &no_pool, 1, &err), MP_EINVAL);
	cr_assert_eq(count_runs(path), 0);
	free(path);
}
