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
	int rolled_back;  /* opened traces: an interrupted write was rolled back */
	struct mp_error err;
};

/* How long opening or writing a trace waits while another process writes it. */
#define MP_STORE_BUSY_MS 5000
/* The longest text or blob a trace's value may have: bounds one row's memory. */
#define MP_STORE_MAX_VALUE_BYTES (64 << 20)

/* (Re)open s->db on s->path with flags, hardened: defensive mode, no
 * triggers, no views, untrusted schema, bounded values, busy timeout. */
int mp_store_reopen(struct mp_store *s, int flags);

/* Record a SQLite failure on s: "<what> '<path>': <sqlite message>[ (<errno text>)]". */
int mp_store_sqlerr(struct mp_store *s, const char *what);

/* Run SQL without results; returns 0 or an error recorded on s. */
int mp_store_exec(struct mp_store *s, const char *sql);

/* Schema (schema.c). */
int mp_schema_create(struct mp_store *s);
int mp_schema_migrate(struct mp_store *s, int from_version);
/*
 * An in-memory database holding the empty schema a trace of version (0 to
 * MP_SCHEMA_VERSION) has: the current one, or v0's with the migrations up to
 * version.  The caller closes *out.  0, MP_EINVAL or MP_ENOMEM/MP_EIO.
 */
int mp_schema_reference(int version, sqlite3 **out);
/*
 * Refuse (MP_ENOTTRACE, by name) what no memprof trace holds: views,
 * triggers, virtual tables.  Run before any other query on the trace's tables.
 */
int mp_schema_check_objects(struct mp_store *s);
/*
 * Check that the trace's tables, their columns and types, and its indexes
 * are exactly those of schema version (see mp_schema_reference); MP_ENOTTRACE
 * naming the first difference.
 */
int mp_schema_check(struct mp_store *s, int version);

#endif
