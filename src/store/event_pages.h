/*
 * store/event_pages.h - the events table read straight from its b-tree
 * pages (event_pages.c), for the reader's push pass.  Internal to src/store/.
 *
 * Contract: the rows come in rowid (seq) order, each as n integers (column
 * 0 is the rowid) and a bit per column that is NULL, exactly the values
 * SQLite's sqlite3_value_int64 would give for them; a row the page decoder
 * cannot decode as SQLite would (payload on overflow pages, a value that is
 * not an integer, a short record whose missing column has a default) is
 * read through SQLite by its seq.  Not thread-safe; uses the store's
 * connection and holds a read lock on the trace for the whole scan.
 */
#ifndef MP_STORE_EVENT_PAGES_H
#define MP_STORE_EVENT_PAGES_H

#include <stdint.h>

#include "store/store_internal.h"

/* The most columns a scan reads (a NULL bit each in a uint32_t). */
#define MP_EVENT_PAGES_MAX_COLUMNS 32

/* Called for every row; a negative return stops the scan and is returned. */
typedef int (*mp_event_row_fn)(void *ctx, const int64_t *v, uint32_t nulls);

/*
 * Scan the events table: columns names[0..n-1] (names[0] the INTEGER
 * PRIMARY KEY, the others in the table's order), fn called for each row.
 * Returns 0 when every row was read, 1 when the pages cannot be read
 * directly here and nothing was read (the caller reads through
 * SQL: a WAL trace, a write transaction open on the connection, another
 * table layout, MEMPROF_READ_PAGES=0), fn's negative return, or another
 * negative error recorded on s->err (a corrupt page, named with its number).
 * *n_by_sql counts the rows handed over that were read through SQL.
 */
int mp_event_pages_scan(struct mp_store *s, const char *const *names, int n, mp_event_row_fn fn,
                        void *ctx, int64_t *n_by_sql);

#endif
