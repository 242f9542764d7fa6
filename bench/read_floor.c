/*
 * bench/read_floor.c - the least SQLite itself does to hand a trace's events
 * to an analysis, in the two ways src/store/reader.c reads them, on a
 * read-only connection without mutexes as mp_store_open opens it:
 *   push (default): mp_reader_run's aggregate function, called by SQLite
 *     with the 16 values of every events row inside one sqlite3_step;
 *   step: mp_reader_next's statement (the same columns, ORDER BY seq),
 *     stepped row by row and its columns fetched one by one.
 * Every value is read the way the reader decodes it; nothing is analysed.
 * A floor for the analyze benchmark; links nothing of memprof.  Prints the
 * rows and a checksum.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* copied from src/store/reader.c (EVENT_COLUMNS): keep them in step */
#define EVENT_COLUMNS                                                                              \
	"seq, ts_ns, op, alloc_id, size, requested, address, device, stream, process, phase, "     \
	"stack, api, device_free, thread, duration_ns"
#define N_EVENT_COLUMNS 16

struct tally {
	uint64_t rows, sum;
};

static int64_t value_or(sqlite3_value *v, int64_t absent)
{
	return sqlite3_value_type(v) == SQLITE_NULL ? absent : sqlite3_value_int64(v);
}

/* One row's values, read as the reader's decode() reads them. */
static void touch(struct tally *t, sqlite3_value **v)
{
	int i;

	for (i = 0; i < 10; i++) /* seq .. process; op and device as int */
		t->sum += i == 2 || i == 7 ? (uint64_t)sqlite3_value_int(v[i])
		                           : (uint64_t)sqlite3_value_int64(v[i]);
	/* phase, stack, api, device_free, thread, duration_ns: NULL when absent */
	t->sum += (uint64_t)value_or(v[10], 0) + (uint64_t)value_or(v[11], 0) +
	          (uint64_t)value_or(v[12], 0) + (uint64_t)value_or(v[13], -1) +
	          (uint64_t)value_or(v[14], 0) + (uint64_t)value_or(v[15], 0);
	t->rows++;
}

static void push_step(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	(void)argc;
	touch(sqlite3_user_data(ctx), v);
}

static void push_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

static int read_push(sqlite3 *db, struct tally *t)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_create_function(db, "mp_push", N_EVENT_COLUMNS, SQLITE_UTF8, t, NULL, push_step,
	                            push_final) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT mp_push(" EVENT_COLUMNS ") FROM events;", -1, &st,
	                       NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

static int read_step(sqlite3 *db, struct tally *t)
{
	sqlite3_value *v[N_EVENT_COLUMNS];
	sqlite3_stmt *st;
	int rc, i;

	if (sqlite3_prepare_v2(db, "SELECT " EVENT_COLUMNS " FROM events ORDER BY seq;", -1, &st,
	                       NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < N_EVENT_COLUMNS; i++)
			v[i] = sqlite3_column_value(st, i);
		touch(t, v);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct tally t = {0, 0};
	sqlite3 *db = NULL;
	const char *path = argv[argc - 1];
	int step = argc == 4 && strcmp(argv[1], "-m") == 0 && strcmp(argv[2], "step") == 0;
	int push = argc == 2 ||
	           (argc == 4 && strcmp(argv[1], "-m") == 0 && strcmp(argv[2], "push") == 0);

	if (!step && !push) {
		fprintf(stderr, "usage: read_floor [-m push|step] TRACE.db\n");
		return 2;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	            SQLITE_OK ||
	    (step ? read_step(db, &t) : read_push(db, &t)) < 0) {
		fprintf(stderr, "read_floor: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return 1;
	}
	sqlite3_close(db);
	printf("rows=%llu checksum=%llu\n", (unsigned long long)t.rows, (unsigned long long)t.sum);
	return 0;
}
