/*
 * store/schema_check.c - is an opened trace's schema exactly memprof's?
 * A trace is untrusted input: views, triggers and virtual tables would run
 * SQL of the file's own, and tables or columns of another shape would be
 * read as something they are not.  Compares sqlite_master and every
 * table's columns with the reference schema of the trace's version
 * (mp_schema_reference); reads only, never changes the file.
 */
#include "store/store_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* SQLite's own tables that ANALYZE may add to any database: statistics only. */
static int is_stat_table(const char *name)
{
	return strcasecmp(name, "sqlite_stat1") == 0 || strcasecmp(name, "sqlite_stat4") == 0;
}

static int refuse(struct mp_store *s, const char *what, const char *name, const char *why)
{
	return mp_err(&s->err, MP_ENOTTRACE, "not a memprof trace '%s': it holds %s '%s' (%s)",
	              s->path, what, name, why);
}

int mp_schema_check_objects(struct mp_store *s)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT type, name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master"
	                       " WHERE type IN ('view', 'trigger') OR"
	                       " (type = 'table' AND sql LIKE 'CREATE VIRTUAL%') ORDER BY rowid;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		char what[32];

		snprintf(what, sizeof(what), "%s %s", sqlite3_column_int(st, 2) ? "a virtual" : "a",
		         type ? type : "?");
		rc = refuse(s, what, name ? name : "", "memprof traces hold only tables");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : mp_store_sqlerr(s, "cannot read trace");
}

/* Is there a table called name in db?  1, 0, or -1 on a SQLite error. */
static int has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db,
	                       "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 "
	                       "COLLATE NOCASE;",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Every entry of the trace's sqlite_master is a table of ref or an index
 * SQLite made for one (UNIQUE, PRIMARY KEY). */
static int check_entries(struct mp_store *s, sqlite3 *ref)
{
	sqlite3_stmt *st;
	int rc, known = 0;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT type, name, tbl_name, sql IS NULL FROM sqlite_master"
	                       " ORDER BY rowid;",
	                       -1, &st, NULL) != SQLITE_OK)
		return mp_store_sqlerr(s, "cannot read trace");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *tbl = (const char *)sqlite3_column_text(st, 2);

		type = type ? type : "";
		name = name ? name : "";
		known = has_table(ref, strcmp(type, "index") == 0 && tbl ? tbl : name);
		if (known < 0)
			break;
		if (strcmp(type, "table") == 0 && (known || is_stat_table(name)))
			continue;
		if (strcmp(type, "index") == 0 && known && sqlite3_column_int(st, 3))
			continue;
		rc = strcmp(type, "table") == 0 ? refuse(s, "a table", name, "not one of memprof's")
		     : strcmp(type, "index") == 0
		             ? refuse(s, "an index", name, "memprof makes none of its own")
		             : refuse(s, "an object", name, "memprof traces hold only tables");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (known < 0)
		return mp_err(&s->err, MP_ENOMEM, "out of memory checking trace '%s'", s->path);
	return mp_store_sqlerr(s, "cannot read trace");
}

/* "name TYPE [NOT NULL] [DEFAULT x] [PK n] [HIDDEN n]" of the current row of a
 * pragma_table_xinfo statement. */
static void describe_column(sqlite3_stmt *st, char *buf, size_t n)
{
	const char *name = (const char *)sqlite3_column_text(st, 1);
	const char *type = (const char *)sqlite3_column_text(st, 2);
	const char *dflt = (const char *)sqlite3_column_text(st, 4);

	snprintf(buf, n, "%s %s%s%s%s pk %d hidden %d", name ? name : "", type ? type : "",
	         sqlite3_column_int(st, 3) ? " NOT NULL" : "", dflt ? " DEFAULT " : "",
	         dflt ? dflt : "", sqlite3_column_int(st, 5), sqlite3_column_int(st, 6));
}

#define XINFO_SQL                                                                                  \
	"SELECT cid, name, upper(type), \"notnull\", dflt_value, pk, hidden"                       \
	" FROM pragma_table_xinfo(?1) ORDER BY cid;"

/* The columns of table in the trace are those of ref, in order. */
static int check_columns(struct mp_store *s, sqlite3 *ref, const char *table)
{
	sqlite3_stmt *mine = NULL, *theirs = NULL;
	char want[160], got[160];
	int a, b, col = 0, rc = 0;

	if (sqlite3_prepare_v2(ref, XINFO_SQL, -1, &mine, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, XINFO_SQL, -1, &theirs, NULL) != SQLITE_OK) {
		sqlite3_finalize(mine);
		return mp_store_sqlerr(s, "cannot read trace");
	}
	sqlite3_bind_text(mine, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(theirs, 1, table, -1, SQLITE_STATIC);
	for (;; col++) {
		a = sqlite3_step(mine);
		b = sqlite3_step(theirs);
		if (a != SQLITE_ROW || b != SQLITE_ROW)
			break;
		describe_column(mine, want, sizeof(want));
		describe_column(theirs, got, sizeof(got));
		if (strcmp(want, got) != 0)
			break;
	}
	if (b != SQLITE_ROW && b != SQLITE_DONE)
		rc = mp_store_sqlerr(s, "cannot read trace");
	else if (a == SQLITE_ROW && b == SQLITE_ROW)
		rc = mp_err(&s->err, MP_ENOTTRACE,
		            "not a memprof trace '%s': column %d of table '%s' is '%s', memprof's "
		            "is '%s'",
		            s->path, col + 1, table, got, want);
	else if (a == SQLITE_ROW)
		rc = mp_err(&s->err, MP_ENOTTRACE,
		            "not a memprof trace '%s': table '%s' has no column '%s'", s->path,
		            table, (const char *)sqlite3_column_text(mine, 1));
	else if (b == SQLITE_ROW)
		rc = mp_err(&s->err, MP_ENOTTRACE,
		            "not a memprof trace '%s': table '%s' has a column '%s' memprof's has "
		            "not",
		            s->path, table, (const char *)sqlite3_column_text(theirs, 1));
	else if (a != SQLITE_DONE)
		rc = mp_err(&s->err, MP_ENOMEM, "out of memory checking trace '%s'", s->path);
	sqlite3_finalize(mine);
	sqlite3_finalize(theirs);
	return rc;
}

/* Every table of ref is in the trace with the same columns. */
static int check_tables(struct mp_store *s, sqlite3 *ref)
{
	sqlite3_stmt *st;
	int rc, there;

	if (sqlite3_prepare_v2(ref, "SELECT name FROM sqlite_master WHERE type = 'table';", -1, &st,
	                       NULL) != SQLITE_OK)
		return mp_err(&s->err, MP_ENOMEM, "out of memory checking trace '%s'", s->path);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		there = has_table(s->db, name);
		if (there < 0) {
			rc = mp_store_sqlerr(s, "cannot read trace");
			break;
		}
		if (!there) {
			rc = mp_err(&s->err, MP_ENOTTRACE,
			            "not a memprof trace '%s': table '%s' is missing", s->path,
			            name);
			break;
		}
		if ((rc = check_columns(s, ref, name)) < 0)
			break;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rc < 0 ? rc : mp_store_sqlerr(s, "cannot read trace");
}

int mp_schema_check(struct mp_store *s, int version)
{
	sqlite3 *ref;
	int rc = mp_schema_reference(version, &ref);

	if (rc < 0)
		return mp_err(&s->err, rc, "cannot check trace '%s': no reference schema v%d",
		              s->path, version);
	rc = check_entries(s, ref);
	if (rc == 0)
		rc = check_tables(s, ref);
	sqlite3_close(ref);
	return rc;
}
