/*
 * store/foreign.c - read-only access to SQLite databases memprof did not
 * write, for importers (contract in foreign.h).  Opens them immutable and
 * defensive, so reading a hostile file runs no SQL of its own and writes
 * nothing; knows no foreign schema.
 */
#include "store/foreign.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* The longest text or blob a value may have: bounds the memory one row takes. */
#define MAX_VALUE_BYTES (16 << 20)

struct mp_foreign {
	sqlite3 *db;
	char *path;
	struct mp_error err;
};

struct mp_foreign_rows {
	struct mp_foreign *f;
	sqlite3_stmt *st;
};

static int code_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return MP_ENOMEM;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return MP_EIO;
	default: /* NOTADB, CORRUPT, ERROR (no such table/column), TOOBIG, ... */
		return MP_EFORMAT;
	}
}

static int sqlerr(struct mp_foreign *f, int rc)
{
	const char *why = f->db ? sqlite3_errmsg(f->db) : sqlite3_errstr(rc);

	if ((rc & 0xff) == SQLITE_NOTADB)
		why = "not a SQLite database";
	return mp_err(&f->err, code_of(rc), "cannot read SQLite database '%s': %s", f->path, why);
}

/* "file:" URI for path with every byte but [A-Za-z0-9/._~-] %-escaped, so
 * that '?', '#' and '%' in names stay part of the name. */
static char *uri_of(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	static const char tail[] = "?immutable=1";
	size_t n = strlen(path), k = 0;
	char *uri = malloc(7 + 3 * n + sizeof(tail));
	const unsigned char *p;

	if (!uri)
		return NULL;
	k += (size_t)sprintf(uri, path[0] == '/' ? "file://" : "file:");
	for (p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._~-", *p)) {
			uri[k++] = (char)*p;
		} else {
			uri[k++] = '%';
			uri[k++] = hex[*p >> 4];
			uri[k++] = hex[*p & 15];
		}
	}
	memcpy(uri + k, tail, sizeof(tail));
	return uri;
}

/* No triggers, no views, no functions from the file's schema; bounded values. */
static void harden(sqlite3 *db)
{
#ifdef SQLITE_DBCONFIG_DEFENSIVE
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
#endif
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
#endif
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
#endif
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES);
}

static int open_db(struct mp_foreign *f)
{
	char *uri = uri_of(f->path);
	sqlite3_stmt *st;
	int rc;

	if (!uri)
		return mp_err(&f->err, MP_ENOMEM, "out of memory opening '%s'", f->path);
	rc = sqlite3_open_v2(uri, &f->db,
	                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return sqlerr(f, rc);
	harden(f->db);
	/* reading the schema is when SQLite finds a file that is not a database */
	rc = sqlite3_prepare_v2(f->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
	}
	return rc == SQLITE_ROW || rc == SQLITE_OK ? 0 : sqlerr(f, rc);
}

int mp_foreign_open(struct mp_foreign **out, const char *path, struct mp_error *err)
{
	struct mp_foreign *f;
	struct stat sb;

	*out = NULL;
	if (stat(path, &sb) < 0)
		return mp_err(err, MP_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (S_ISDIR(sb.st_mode))
		return mp_err(err, MP_EIO, "cannot open '%s': is a directory", path);
	if (!S_ISREG(sb.st_mode))
		return mp_err(err, MP_EIO,
		              "cannot open '%s': not a regular file (SQLite reads databases from "
		              "files, not from pipes or devices)",
		              path);
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return mp_err(err, MP_ENOMEM, "out of memory opening '%s'", path);
	}
	if (open_db(f) < 0) {
		int rc = mp_err_copy(err, &f->err);

		mp_foreign_close(f);
		return rc ? rc : MP_EIO;
	}
	*out = f;
	return 0;
}

void mp_foreign_close(struct mp_foreign *f)
{
	if (!f)
		return;
	if (f->db)
		sqlite3_close(f->db);
	free(f->path);
	free(f);
}

const struct mp_error *mp_foreign_error(const struct mp_foreign *f)
{
	return &f->err;
}

/* Run sql with up to two text parameters; 1 when it gives a row, 0 when not. */
static int exists(struct mp_foreign *f, const char *sql, const char *a, const char *b,
                  int reject_virtual)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(f->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(f, rc);
	sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 0);

		/* a virtual table's module would run code: such a table is not seen */
		if (reject_virtual && text && strncasecmp(text, "CREATE VIRTUAL", 14) == 0)
			rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : sqlerr(f, rc);
}

int mp_foreign_has_table(struct mp_foreign *f, const char *table)
{
	return exists(f,
	              "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 "
	              "COLLATE NOCASE",
	              table, NULL, 1);
}

int mp_foreign_has_column(struct mp_foreign *f, const char *table, const char *column)
{
	int rc = mp_foreign_has_table(f, table);

	if (rc <= 0)
		return rc;
	return exists(f, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE",
	              table, column, 0);
}

int mp_foreign_query(struct mp_foreign *f, const char *sql, struct mp_foreign_rows **out)
{
	struct mp_foreign_rows *r;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return mp_err(&f->err, MP_ENOMEM, "out of memory reading '%s'", f->path);
	r->f = f;
	rc = sqlite3_prepare_v2(f->db, sql, -1, &r->st, NULL);
	if (rc != SQLITE_OK) {
		free(r);
		return sqlerr(f, rc);
	}
	*out = r;
	return 0;
}

int mp_foreign_next(struct mp_foreign_rows *r)
{
	int rc = sqlite3_step(r->st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return sqlerr(r->f, rc);
}

enum mp_foreign_type mp_foreign_type(const struct mp_foreign_rows *r, int col)
{
	switch (sqlite3_column_type(r->st, col)) {
	case SQLITE_INTEGER:
		return MP_FOREIGN_INT;
	case SQLITE_FLOAT:
		return MP_FOREIGN_REAL;
	case SQLITE_TEXT:
		return MP_FOREIGN_TEXT;
	case SQLITE_BLOB:
		return MP_FOREIGN_BLOB;
	default:
		return MP_FOREIGN_NULL;
	}
}

int mp_foreign_is_null(const struct mp_foreign_rows *r, int col)
{
	return sqlite3_column_type(r->st, col) == SQLITE_NULL;
}

int64_t mp_foreign_int(const struct mp_foreign_rows *r, int col)
{
	return sqlite3_column_int64(r->st, col);
}

const char *mp_foreign_text(struct mp_foreign_rows *r, int col, size_t *len)
{
	const char *text;

	if (len)
		*len = 0;
	if (sqlite3_column_type(r->st, col) == SQLITE_NULL)
		return NULL;
	text = (const char *)sqlite3_column_text(r->st, col);
	if (!text) {
		mp_err(&r->f->err, MP_ENOMEM, "out of memory reading '%s'", r->f->path);
		return NULL;
	}
	if (len)
		*len = (size_t)sqlite3_column_bytes(r->st, col);
	return text;
}

void mp_foreign_finish(struct mp_foreign_rows *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->st);
	free(r);
}
