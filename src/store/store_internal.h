/*
 * store/store_internal.h - the store handle and SQL helpers shared by the
 * store's own files (store.c, schema.c, writer.c, reader.c).  Never included
 * outside src/store/.
 */
#ifndef MP_STORE_INTERNAL_H
#define MP_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store/store.h"

struct mp_store {
	sqlite3 *db;
	char *path;      /* the trace's final path */
	char *temp_path; /* created traces: where it is written until commit */
	int opened_version;
	int overwrite;    /* created traces: commit may replace an existing file */
	int cleanup_slot; /* created traces: temp_path is deleted if a signal kills us */
	struct mp_error err;
};

/* Record a SQLite failure on s: "<what> '<path>': <sqlite message>[ (<errno text>)]". */
int mp_store_sqlerr(struct mp_store *s, const char *what);

/* Run SQL without results; returns 0 or an error recorded on s. */
int mp_store_exec(struct mp_store *s, const char *sql);

/* Schema (schema.c). */
int mp_schema_create(struct mp_store *s);
int mp_schema_migrate(struct mp_store *s, int from_version);

#endif
