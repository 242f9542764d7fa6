/*
 * store/foreign.h - reading SQLite databases that memprof did not write
 * (an Nsight Systems export, say), for importers that may not speak SQL.
 *
 * Generic: knows nothing of any foreign schema.  The file is opened
 * read-only and immutable: it is never written, and nothing is created
 * beside it.  Only ordinary tables are seen (not views or virtual tables),
 * so a query on a table the caller checked cannot run someone else's SQL.
 * Handles are not thread-safe.
 *
 * Errors: functions return a negative MP_E* code and keep the message on
 * the handle (mp_foreign_error), always naming the file:
 *   MP_EIO      the file cannot be opened or read, or is not a regular file
 *   MP_EFORMAT  not a SQLite database, a corrupt one, or a query that does
 *               not fit it (a missing table or column)
 *   MP_ENOMEM   out of memory
 */
#ifndef MP_STORE_FOREIGN_H
#define MP_STORE_FOREIGN_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct mp_foreign;      /* an open database */
struct mp_foreign_rows; /* a query being stepped through */

/* The type of a value in a row (SQLite's storage classes). */
enum mp_foreign_type {
	MP_FOREIGN_NULL,
	MP_FOREIGN_INT,
	MP_FOREIGN_REAL,
	MP_FOREIGN_TEXT,
	MP_FOREIGN_BLOB,
};

/*
 * Open the database at path and check that SQLite can read its schema.  On
 * failure *out is NULL and err (which may be NULL) says why, with the path.
 * Close with mp_foreign_close.
 */
int mp_foreign_open(struct mp_foreign **out, const char *path, struct mp_error *err);

/* Close f and free it (f may be NULL).  Rows still open must be finished first. */
void mp_foreign_close(struct mp_foreign *f);

/* The error of the last failed call on f or on its rows. */
const struct mp_error *mp_foreign_error(const struct mp_foreign *f);

/* Does f hold an ordinary table of this name (any letter case)?  1, 0, or < 0. */
int mp_foreign_has_table(struct mp_foreign *f, const char *table);

/* Does that table have this column (any letter case)?  1, 0 (also when there is
 * no such table), or < 0. */
int mp_foreign_has_column(struct mp_foreign *f, const char *table, const char *column);

/*
 * Prepare one SQL statement for reading.  The caller builds the SQL, naming
 * only tables it checked with mp_foreign_has_table.  *out belongs to the
 * caller until mp_foreign_finish.
 */
int mp_foreign_query(struct mp_foreign *f, const char *sql, struct mp_foreign_rows **out);

/* Step to the next row: 1 a row, 0 no more rows, < 0 error (on the handle). */
int mp_foreign_next(struct mp_foreign_rows *r);

/* Values of the current row, columns counted from 0. */
enum mp_foreign_type mp_foreign_type(const struct mp_foreign_rows *r, int col);
int mp_foreign_is_null(const struct mp_foreign_rows *r, int col);
/* The value as an integer (SQLite's conversion for other types; 0 for NULL). */
int64_t mp_foreign_int(const struct mp_foreign_rows *r, int col);
/*
 * The value as text, NUL-terminated, its length in *len (may be NULL); NULL
 * for a NULL value, or when out of memory (then the handle's error is set).
 * The text belongs to r and is valid until the next mp_foreign_next or
 * mp_foreign_finish.
 */
const char *mp_foreign_text(struct mp_foreign_rows *r, int col, size_t *len);

/* Free r (may be NULL). */
void mp_foreign_finish(struct mp_foreign_rows *r);

#endif
