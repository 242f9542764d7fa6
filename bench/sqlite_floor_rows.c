/*
 * bench/sqlite_floor_rows.c - sqlite_floor -f: SQLite alone storing the
 * rows of an existing trace's events table, the same rows an import wrote,
 * with the statement shapes of src/store/writer.c (128 rows per INSERT, NULL
 * seq, optional columns no row of a batch uses as literal NULLs, requested
 * reusing size's parameter when equal in every row, a device or process
 * common to the batch bound once), each shape prepared once.  The rows are
 * read into memory first; only the storing is timed, and printed as
 * "rows=N cpu_s=X wall_s=Y".  Links nothing of memprof.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS       128 /* per INSERT, as in src/store/writer.c */
#define N_COLS     15  /* events' columns after seq */
#define N_OPTIONAL 6   /* phase, stack, api, device_free, thread, duration_ns */
#define FIRST_OPT  9   /* the first optional column */

enum {
	SHAPE_OPTIONAL = (1 << N_OPTIONAL) - 1,
	SHAPE_REQ_IS_SIZE = 1 << N_OPTIONAL,
	SHAPE_ONE_DEVICE = 2 << N_OPTIONAL,
	SHAPE_ONE_PROCESS = 4 << N_OPTIONAL,
	N_SHAPES = 8 << N_OPTIONAL
};
enum { C_TS, C_OP, C_ID, C_SIZE, C_REQ, C_ADDR, C_DEVICE, C_STREAM, C_PROCESS };

extern const char mp_floor_pragmas[], mp_floor_schema[]; /* sqlite_floor.c */
int mp_floor_copy_rows(const char *from, const char *to);

struct row {
	int64_t v[N_COLS];
	unsigned used; /* bit c: optional column FIRST_OPT + c is not NULL */
};

static int fail(sqlite3 *db, const char *what)
{
	fprintf(stderr, "sqlite_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
	return 1;
}

static struct row *read_rows(const char *path, size_t *n)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	struct row *rows = NULL, *r;
	size_t cap = 0;
	int c;

	*n = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "SELECT ts_ns, op, alloc_id, size, requested, address, device,"
	                       " stream, process, phase, stack, api, device_free, thread,"
	                       " duration_ns FROM events ORDER BY seq",
	                       -1, &st, NULL) != SQLITE_OK) {
		fail(db, path);
		return NULL;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			if (!(r = realloc(rows, cap * sizeof(*rows)))) {
				free(rows);
				return NULL;
			}
			rows = r;
		}
		r = &rows[(*n)++];
		r->used = 0;
		for (c = 0; c < N_COLS; c++) {
			r->v[c] = sqlite3_column_int64(st, c);
			if (c >= FIRST_OPT && sqlite3_column_type(st, c) != SQLITE_NULL)
				r->used |= 1u << (c - FIRST_OPT);
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rows ? rows : calloc(1, sizeof(*rows));
}

/* The writer's shape of rows[0..ROWS). */
static unsigned shape_of(const struct row *b)
{
	unsigned used = 0, req = 1, device = 1, process = 1;

	for (int i = 0; i < ROWS; i++) {
		used |= b[i].used;
		req &= b[i].v[C_REQ] == b[i].v[C_SIZE];
		device &= b[i].v[C_DEVICE] == b[0].v[C_DEVICE];
		process &= b[i].v[C_PROCESS] == b[0].v[C_PROCESS];
	}
	return used | (req ? SHAPE_REQ_IS_SIZE : 0) | (device ? SHAPE_ONE_DEVICE : 0) |
	       (process ? SHAPE_ONE_PROCESS : 0);
}

/* As the writer writes them (src/store/writer.c, param): ",?N" for a
 * parameter bound again or any in the first row, ",?" after it. */
static char *param(char *t, int *k, int same, int numbered)
{
	int v = same > 0 ? same : ++*k;

	*t++ = ',';
	*t++ = '?';
	if (same > 0 || numbered)
		t += sprintf(t, "%d", v);
	return t;
}

/* The INSERT of ROWS rows of this shape, numbered as the writer numbers it. */
static sqlite3_stmt *prepare(sqlite3 *db, unsigned shape)
{
	int device = 1, process = device + !!(shape & SHAPE_ONE_DEVICE);
	int k = process - !(shape & SHAPE_ONE_PROCESS), size;
	char *text = malloc(32 + (size_t)ROWS * (8 + 15 * 8)), *t;
	sqlite3_stmt *st = NULL;

	if (!text)
		return NULL;
	t = text + sprintf(text, "INSERT INTO events VALUES");
	for (int i = 0; i < ROWS; i++) {
		int first = i == 0;

		t += sprintf(t, "%s(NULL", first ? "" : ",");
		for (int c = C_TS; c <= C_SIZE; c++)
			t = param(t, &k, 0, first);
		size = k;
		t = param(t, &k, shape & SHAPE_REQ_IS_SIZE ? size : 0, first);
		t = param(t, &k, 0, first);
		t = param(t, &k, shape & SHAPE_ONE_DEVICE ? device : 0, first);
		t = param(t, &k, 0, first);
		t = param(t, &k, shape & SHAPE_ONE_PROCESS ? process : 0, first);
		for (int c = 0; c < N_OPTIONAL; c++)
			t = shape & (1u << c) ? param(t, &k, 0, first) : t + sprintf(t, ",NULL");
		*t++ = ')';
	}
	if (sqlite3_prepare_v3(db, text, (int)(t - text), SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
	    SQLITE_OK)
		st = NULL;
	free(text);
	return st;
}

static void bind_row(sqlite3_stmt *st, int *k, const struct row *r, unsigned shape)
{
	for (int c = C_TS; c <= C_STREAM; c++)
		if (!((c == C_REQ && (shape & SHAPE_REQ_IS_SIZE)) ||
		      (c == C_DEVICE && (shape & SHAPE_ONE_DEVICE))))
			sqlite3_bind_int64(st, ++*k, r->v[c]);
	if (!(shape & SHAPE_ONE_PROCESS))
		sqlite3_bind_int64(st, ++*k, r->v[C_PROCESS]);
	for (int c = 0; c < N_OPTIONAL; c++)
		if (shape & (1u << c)) {
			if (r->used & (1u << c))
				sqlite3_bind_int64(st, ++*k, r->v[FIRST_OPT + c]);
			else
				sqlite3_bind_null(st, ++*k);
		}
}

static int store(sqlite3 *db, const struct row *rows, size_t n)
{
	static sqlite3_stmt *shapes[N_SHAPES];
	size_t i = 0;
	int rc = 0;

	for (; i + ROWS <= n && rc == 0; i += ROWS) {
		unsigned shape = shape_of(rows + i);
		sqlite3_stmt *st =
		        shapes[shape] ? shapes[shape] : (shapes[shape] = prepare(db, shape));
		int k = 0;

		if (!st)
			return fail(db, "prepare");
		if (shape & SHAPE_ONE_DEVICE)
			sqlite3_bind_int64(st, ++k, rows[i].v[C_DEVICE]);
		if (shape & SHAPE_ONE_PROCESS)
			sqlite3_bind_int64(st, ++k, rows[i].v[C_PROCESS]);
		for (int r = 0; r < ROWS; r++)
			bind_row(st, &k, &rows[i + (size_t)r], shape);
		rc = sqlite3_step(st) != SQLITE_DONE || sqlite3_reset(st) != SQLITE_OK;
		if (rc == 0 && (i / ROWS) % 8192 == 8191) /* the writer's 2^20 per transaction */
			rc = sqlite3_exec(db, "COMMIT; BEGIN;", NULL, NULL, NULL) != SQLITE_OK;
	}
	for (unsigned s = 0; s < N_SHAPES; s++)
		sqlite3_finalize(shapes[s]);
	if (rc == 0 && i < n) { /* the rest one at a time */
		sqlite3_stmt *one = NULL;

		rc = sqlite3_prepare_v2(
		             db, "INSERT INTO events VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		             -1, &one, NULL) != SQLITE_OK;
		for (; i < n && rc == 0; i++) {
			int k = 0;

			bind_row(one, &k, &rows[i], SHAPE_OPTIONAL);
			rc = sqlite3_step(one) != SQLITE_DONE || sqlite3_reset(one) != SQLITE_OK;
		}
		sqlite3_finalize(one);
	}
	return rc ? fail(db, "insert") : 0;
}

static double seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int mp_floor_copy_rows(const char *from, const char *to)
{
	size_t n;
	struct row *rows = read_rows(from, &n);
	double cpu0, wall0;
	sqlite3 *db;
	int rc;

	if (!rows)
		return 1;
	cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	wall0 = seconds(CLOCK_MONOTONIC);
	if (sqlite3_open_v2(to, &db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    NULL) != SQLITE_OK ||
	    sqlite3_exec(db, mp_floor_pragmas, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, mp_floor_schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "BEGIN;", NULL, NULL, NULL) != SQLITE_OK) {
		free(rows);
		return fail(db, to);
	}
	rc = store(db, rows, n);
	if (rc == 0 && sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK)
		rc = fail(db, "commit");
	if (sqlite3_close(db) != SQLITE_OK)
		rc = 1;
	printf("rows=%zu cpu_s=%.4f wall_s=%.4f\n", n, seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
	       seconds(CLOCK_MONOTONIC) - wall0);
	free(rows);
	return rc;
}
