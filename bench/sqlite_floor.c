/*
 * bench/sqlite_floor.c - the least SQLite itself does to store N events:
 * a new database with the pragmas and the events table of a memprof trace
 * (copied from src/store/store.c and schema.c: keep them in step), N rows
 * like an RMM import's inserted with the statement shape memprof's writer
 * uses (128 rows per INSERT, 7 values bound per row, NULL seq; the last
 * rows one at a time), no parsing.  With -f TRACE.db the rows are instead
 * those of TRACE.db's events table (read into memory first, not timed),
 * stored with the writer's shapes (sqlite_floor_rows.c), and the storing's
 * CPU and wall time are printed: the floor for importing any format.
 * A floor for the import benchmarks; links nothing of memprof.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 128 /* per INSERT, as in src/store/writer.c */

int mp_floor_copy_rows(const char *from, const char *to); /* sqlite_floor_rows.c */

const char mp_floor_pragmas[] = "PRAGMA page_size=65536;"
                                "PRAGMA journal_mode=OFF;"
                                "PRAGMA synchronous=OFF;"
                                "PRAGMA locking_mode=EXCLUSIVE;"
                                "PRAGMA cache_size=-8192;";

const char mp_floor_schema[] =
        "CREATE TABLE events(seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,"
        " op INTEGER NOT NULL, alloc_id INTEGER NOT NULL, size INTEGER NOT NULL,"
        " requested INTEGER NOT NULL, address INTEGER NOT NULL, device INTEGER NOT NULL,"
        " stream INTEGER NOT NULL, process INTEGER NOT NULL, phase INTEGER, stack INTEGER,"
        " api INTEGER, device_free INTEGER, thread INTEGER, duration_ns INTEGER);";

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "sqlite_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
	exit(1);
}

/* Bind the 7 values of row i from parameter k + 1 on; returns the last. */
static int bind_row(sqlite3_stmt *st, int k, long long i)
{
	sqlite3_bind_int64(st, ++k, 86399000000000LL + i * 2000);
	sqlite3_bind_int(st, ++k, 1 + (i & 1));
	sqlite3_bind_int64(st, ++k, i / 2 + 1);
	sqlite3_bind_int64(st, ++k, 256 * (1 + i % 4096));
	sqlite3_bind_int64(st, ++k, 0x7f4a00000000LL + (i % 4000) * 0x100000);
	sqlite3_bind_int64(st, ++k, i % 4 ? 0x55d0c0a01a40LL : 0);
	sqlite3_bind_int64(st, ++k, 2342727 + i % 4 * 13);
	return k;
}

/* INSERT of ROWS rows: per row ts, op, id, size (also requested), address,
 * stream, thread; device and process once, after the rows. */
static char *insert_sql(void)
{
	/* a row is at most 24 bytes of text and 10 numbers of up to 11 characters */
	size_t cap = 64 + ROWS * (24 + 10 * 12 + 48), len;
	char *sql = malloc(cap);
	int r, k = 0;

	if (!sql)
		die(NULL, "out of memory");
	len = (size_t)snprintf(sql, cap, "INSERT INTO events VALUES");
	for (r = 0; r < ROWS && len < cap; r++, k += 7)
		len += (size_t)snprintf(
		        sql + len, cap - len,
		        "%s(NULL,?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d,?%d,NULL,NULL,NULL,"
		        "NULL,?%d,NULL)",
		        r ? "," : "", k + 1, k + 2, k + 3, k + 4, k + 4, k + 5, 7 * ROWS + 1, k + 6,
		        7 * ROWS + 2, k + 7);
	if (len >= cap)
		die(NULL, "statement too long");
	return sql;
}

int main(int argc, char **argv)
{
	long long n = 1000000, i = 0;
	const char *path = NULL, *from = NULL;
	sqlite3_stmt *st, *one;
	sqlite3 *db;
	char *sql;
	int ch, r, k;

	while ((ch = getopt(argc, argv, "f:n:o:")) != -1) {
		if (ch == 'f')
			from = optarg;
		else if (ch == 'n')
			n = atoll(optarg);
		else if (ch == 'o')
			path = optarg;
		else
			return 2;
	}
	if (!path || n < 0) {
		fprintf(stderr, "usage: sqlite_floor -n EVENTS -o NEW.db\n"
		                "       sqlite_floor -f TRACE.db -o NEW.db\n");
		return 2;
	}
	if (from)
		return mp_floor_copy_rows(from, path);
	if (sqlite3_open_v2(path, &db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK ||
	    sqlite3_exec(db, mp_floor_pragmas, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, mp_floor_schema, NULL, NULL, NULL) != SQLITE_OK)
		die(db, path);
	sql = insert_sql();
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
	            db,
	            "INSERT INTO events VALUES(NULL,?1,?2,?3,?4,?4,?5,?8,?6,?9,NULL,NULL,"
	            "NULL,NULL,?7,NULL);",
	            -1, &one, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "BEGIN;", NULL, NULL, NULL) != SQLITE_OK)
		die(db, "prepare");
	for (; i + ROWS <= n; sqlite3_reset(st)) {
		for (r = 0, k = 0; r < ROWS; r++, i++)
			k = bind_row(st, k, i);
		sqlite3_bind_int(st, ++k, 0);
		sqlite3_bind_int64(st, ++k, 1);
		if (sqlite3_step(st) != SQLITE_DONE)
			die(db, "insert");
		if (i % (1 << 20) == 0 && sqlite3_exec(db, "COMMIT; BEGIN;", NULL, NULL, NULL))
			die(db, "commit");
	}
	for (; i < n; i++, sqlite3_reset(one)) {
		bind_row(one, 0, i);
		sqlite3_bind_int(one, 8, 0);
		sqlite3_bind_int64(one, 9, 1);
		if (sqlite3_step(one) != SQLITE_DONE)
			die(db, "insert");
	}
	sqlite3_finalize(st);
	sqlite3_finalize(one);
	if (sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK)
		die(db, "commit");
	free(sql);
	return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}
