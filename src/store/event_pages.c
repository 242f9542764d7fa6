/*
 * store/event_pages.c - the events table's rows decoded straight from its
 * table b-tree pages (SQLite's documented file format), read through
 * SQLite's own open file under its read lock: SQLite's virtual machine costs
 * several times what the analyses do per row.  Only integers and NULLs are
 * decoded here; any row SQLite might read differently is read through SQL.
 * Owns no SQL beyond that fallback and the checks that the pages may be read.
 */
#include "store/event_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH     40 /* SQLite's own cursors stop at 20 */
#define PAGE_LEAF     0x0d
#define PAGE_INTERIOR 0x05
/* Zeroed bytes after each page buffer: the most a record's values may
 * overrun its end before decode_small_record finds it out. */
#define PAGE_SLACK (64 + 8 * MP_EVENT_PAGES_MAX_COLUMNS)

struct level {
	uint8_t *page;
	uint32_t pgno;
	uint32_t n_cells;
	uint32_t next; /* the next child (interior) to descend into */
};

struct scan {
	struct mp_store *s;
	sqlite3_file *file;
	uint32_t page_size, usable, n_pages;
	uint8_t *visited; /* a bit per page */
	struct level lv[MAX_DEPTH];
	int depth;
	int n_cols;
	uint32_t null_if_missing; /* columns a short record may leave out (no default) */
	sqlite3_stmt *by_seq;     /* the fallback for a row decoded here not exactly */
	mp_event_row_fn fn;
	void *ctx;
	int64_t n_by_sql;
	int64_t v[MP_EVENT_PAGES_MAX_COLUMNS];
};

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint at *p (before end): 1 and *p past it, or 0 when it runs past end. */
static inline int varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++) {
		if (q >= end)
			return 0;
		v = v << 7 | (*q & 0x7f);
		if (!(*q++ & 0x80)) {
			*out = v;
			*p = q;
			return 1;
		}
	}
	if (q >= end)
		return 0;
	*out = v << 8 | *q++;
	*p = q;
	return 1;
}

static int corrupt(struct scan *sc, uint32_t pgno, const char *what)
{
	return mp_err(&sc->s->err, MP_ENOTTRACE, "corrupt trace '%s': events page %u: %s",
	              sc->s->path, pgno, what);
}

/* Read page pgno into buf, once per scan. */
static int read_page(struct scan *sc, uint32_t pgno, uint32_t from, uint8_t *buf)
{
	int rc;

	if (pgno < 2 || pgno > sc->n_pages)
		return mp_err(&sc->s->err, MP_ENOTTRACE,
		              "corrupt trace '%s': events page %u refers to page %u, outside the "
		              "file's %u pages",
		              sc->s->path, from, pgno, sc->n_pages);
	if (sc->visited[pgno >> 3] & (1u << (pgno & 7)))
		return mp_err(&sc->s->err, MP_ENOTTRACE,
		              "corrupt trace '%s': events page %u refers to page %u a second time",
		              sc->s->path, from, pgno);
	sc->visited[pgno >> 3] |= (uint8_t)(1u << (pgno & 7));
	rc = sc->file->pMethods->xRead(sc->file, buf, (int)sc->page_size,
	                               (sqlite3_int64)(pgno - 1) * sc->page_size);
	if (rc == SQLITE_IOERR_SHORT_READ)
		return corrupt(sc, pgno, "the page lies past the end of the file");
	if (rc != SQLITE_OK)
		return mp_err(&sc->s->err, MP_EIO, "cannot read trace '%s': page %u: %s",
		              sc->s->path, pgno, sqlite3_errstr(rc));
	return 0;
}

/* Descend into page pgno (a child of page from): a new level. */
static int push_page(struct scan *sc, uint32_t pgno, uint32_t from)
{
	struct level *l;
	uint32_t hdr;
	int rc;

	if (sc->depth == MAX_DEPTH)
		return corrupt(sc, from, "the tree is deeper than any SQLite writes");
	l = &sc->lv[sc->depth];
	if (!l->page && !(l->page = calloc(1, sc->page_size + PAGE_SLACK)))
		return mp_err(&sc->s->err, MP_ENOMEM, "out of memory");
	if ((rc = read_page(sc, pgno, from, l->page)) < 0)
		return rc;
	if (l->page[0] != PAGE_LEAF && l->page[0] != PAGE_INTERIOR)
		return corrupt(sc, pgno, "not a table b-tree page");
	hdr = l->page[0] == PAGE_LEAF ? 8 : 12;
	l->pgno = pgno;
	l->n_cells = be16(l->page + 3);
	l->next = 0;
	if (hdr + 2 * l->n_cells > sc->usable)
		return corrupt(sc, pgno, "more cells than the page holds");
	sc->depth++;
	return 0;
}

/* The row of rowid seq through SQL: what SQLite itself makes of it. */
static int row_by_sql(struct scan *sc, int64_t seq, uint32_t *nulls)
{
	int i, rc;

	sqlite3_bind_int64(sc->by_seq, 1, seq);
	rc = sqlite3_step(sc->by_seq);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(sc->by_seq);
		return rc == SQLITE_DONE ? mp_err(&sc->s->err, MP_ENOTTRACE,
		                                  "corrupt trace '%s': event %lld is on a page "
		                                  "but SQLite does not find it",
		                                  sc->s->path, (long long)seq)
		                         : mp_store_sqlerr(sc->s, "cannot read trace");
	}
	*nulls = 0;
	for (i = 0; i < sc->n_cols; i++) {
		if (sqlite3_column_type(sc->by_seq, i) == SQLITE_NULL)
			*nulls |= 1u << i;
		sc->v[i] = sqlite3_column_int64(sc->by_seq, i);
	}
	sc->v[0] = seq;
	sqlite3_reset(sc->by_seq);
	sc->n_by_sql++;
	return 0;
}

/* The integer of serial type t (1 to 6) at p: big-endian two's complement. */
static inline int64_t int_value(const uint8_t *p, uint64_t t)
{
	switch (t) {
	case 1:
		return (int8_t)p[0];
	case 2:
		return (int16_t)(p[0] << 8 | p[1]);
	case 3:
		return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		                 (uint32_t)p[2] << 8) >>
		       8;
	case 4:
		return (int32_t)be32(p);
	case 5:
		return (int64_t)((uint64_t)(int16_t)(p[0] << 8 | p[1]) << 32 | be32(p + 2));
	default:
		return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
	}
}

/* The bytes a value of serial type t takes in a record's body. */
static uint64_t serial_bytes(uint64_t t)
{
	static const uint8_t fixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};

	return t >= 12 ? (t - 12) / 2 : fixed[t];
}

/* One value of serial type t at body into sc->v[col]: 1 when only SQLite
 * decodes it (a float, text, a blob, a reserved type). */
static int take_value(struct scan *sc, int col, uint64_t t, const uint8_t *body, uint32_t *nulls)
{
	if (t == 0) {
		*nulls |= 1u << col;
		sc->v[col] = 0;
	} else if (t < 7) {
		sc->v[col] = int_value(body, t);
	} else if (t == 8 || t == 9) {
		sc->v[col] = (int64_t)(t - 8);
	} else {
		return 1;
	}
	return 0;
}

/* A short record's missing columns (col on): NULL where the column has no
 * default, else 1 (SQLite supplies the default). */
static int take_missing(struct scan *sc, int col, uint32_t *nulls)
{
	uint32_t all = sc->n_cols == 32 ? ~0u : (1u << sc->n_cols) - 1;
	uint32_t missing = all & ~((1u << col) - 1);

	if ((missing & sc->null_if_missing) != missing)
		return 1;
	*nulls |= missing;
	for (; col < sc->n_cols; col++)
		sc->v[col] = 0;
	return 0;
}

/* The bytes of a value of each one-byte serial type. */
static const uint8_t small_type_bytes[128] = {
        0,  1,  2,  3,  4,  6,  8,  8,  0,  0,  0,  0,  0,  0,  1,  1,  2,  2,  3,  3,  4,  4,
        5,  5,  6,  6,  7,  7,  8,  8,  9,  9,  10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15,
        16, 16, 17, 17, 18, 18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 25, 25, 26, 26,
        27, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32, 32, 33, 33, 34, 34, 35, 35, 36, 36, 37, 37,
        38, 38, 39, 39, 40, 40, 41, 41, 42, 42, 43, 43, 44, 44, 45, 45, 46, 46, 47, 47, 48, 48,
        49, 49, 50, 50, 51, 51, 52, 52, 53, 53, 54, 54, 55, 55, 56, 56, 57, 57,
};

/*
 * The common record: a header under 128 bytes of one-byte serial types.
 * Each value is read as its type comes, and the body's end checked once
 * after (the page buffer's slack keeps an overrun inside the buffer).
 * 2 when the record is not of that kind, else as decode_record.
 */
static int decode_small_record(struct scan *sc, uint32_t pgno, const uint8_t *rec, uint32_t len,
                               uint32_t *nulls)
{
	uint32_t hdr_len = rec[0], n_fields;
	const uint8_t *types = rec + 1, *body;
	int col, n;

	if (hdr_len >= 0x80 || hdr_len < 2 || hdr_len > len || types[0] >= 0x80)
		return 2;
	n_fields = hdr_len - 1;
	*nulls = 0;
	body = rec + hdr_len + small_type_bytes[types[0]]; /* the rowid alias: NULL */
	n = (int)n_fields < sc->n_cols ? (int)n_fields : sc->n_cols;
	for (col = 1; col < n; col++) {
		uint32_t t = types[col];

		if (t < 7) {
			if (t == 0)
				*nulls |= 1u << col;
			sc->v[col] = t == 0 ? 0 : int_value(body, t);
			body += small_type_bytes[t];
		} else if (t == 8 || t == 9) {
			sc->v[col] = (int64_t)(t - 8);
		} else {
			return t >= 0x80 ? 2 : 1;
		}
	}
	if (body > rec + len)
		return corrupt(sc, pgno, "a record runs past its cell");
	return n < sc->n_cols ? take_missing(sc, n, nulls) : 0;
}

/*
 * Decode the record rec[0..len) into sc->v (column 0 is the rowid, set by
 * the caller) and *nulls: 1 when a value is one only SQLite decodes (a
 * float, text, a blob, a reserved type, a short record's default), 0 when
 * done, or a negative error (the record runs past its payload).
 */
static int decode_record(struct scan *sc, uint32_t pgno, const uint8_t *rec, uint32_t len,
                         uint32_t *nulls)
{
	const uint8_t *h = rec, *hend, *body, *end = rec + len;
	uint64_t hdr_len, t, size;
	int col, rc;

	if (len > 0 && (rc = decode_small_record(sc, pgno, rec, len, nulls)) != 2)
		return rc;
	if (!varint(&h, end, &hdr_len) || hdr_len > len || rec + hdr_len < h)
		return corrupt(sc, pgno, "a record header runs past its cell");
	hend = rec + hdr_len;
	body = hend;
	*nulls = 0;
	for (col = 0; h < hend; col++) {
		if (!varint(&h, hend, &t))
			return corrupt(sc, pgno, "a record header runs past its cell");
		size = serial_bytes(t);
		if (size > (uint64_t)(end - body))
			return corrupt(sc, pgno, "a record runs past its cell");
		if (col > 0 && col < sc->n_cols && take_value(sc, col, t, body, nulls))
			return 1;
		body += size;
	}
	return col < sc->n_cols ? take_missing(sc, col < 1 ? 1 : col, nulls) : 0;
}

/* Every row of the leaf page at level l. */
static int read_leaf(struct scan *sc, const struct level *l)
{
	const uint8_t *page = l->page, *end = page + sc->usable;
	uint32_t i, nulls = 0, off;
	int rc;

	for (i = 0; i < l->n_cells; i++) {
		const uint8_t *c;
		uint64_t payload, rowid;

		off = be16(page + 8 + 2 * i);
		if (off < 8 + 2 * l->n_cells || off >= sc->usable)
			return corrupt(sc, l->pgno, "a cell lies outside the page");
		c = page + off;
		if (!varint(&c, end, &payload) || !varint(&c, end, &rowid))
			return corrupt(sc, l->pgno, "a cell runs past the page");
		sc->v[0] = (int64_t)rowid;
		if (payload > sc->usable - 35) /* on overflow pages */
			rc = 1;
		else if (payload > (uint64_t)(end - c))
			return corrupt(sc, l->pgno, "a cell runs past the page");
		else
			rc = decode_record(sc, l->pgno, c, (uint32_t)payload, &nulls);
		if (rc == 1)
			rc = row_by_sql(sc, (int64_t)rowid, &nulls);
		if (rc < 0 || (rc = sc->fn(sc->ctx, sc->v, nulls)) < 0)
			return rc;
	}
	return 0;
}

/* The child of interior level l to descend into next, or 0 when none is left. */
static int next_child(struct scan *sc, struct level *l, uint32_t *child)
{
	uint32_t off;

	if (l->next > l->n_cells)
		return 0;
	if (l->next == l->n_cells) {
		*child = be32(l->page + 8);
	} else {
		off = be16(l->page + 12 + 2 * l->next);
		if (off < 12 + 2 * l->n_cells || off + 4 > sc->usable)
			return corrupt(sc, l->pgno, "a cell lies outside the page");
		*child = be32(l->page + off);
	}
	l->next++;
	return 1;
}

/* Every row under root; 1 (nothing read) when root is not a table b-tree
 * page this decoder reads, so that SQLite reads it and says what is wrong. */
static int walk(struct scan *sc, uint32_t root)
{
	int rc = push_page(sc, root, root);

	if (rc < 0)
		return 1;
	while (rc >= 0 && sc->depth > 0) {
		struct level *l = &sc->lv[sc->depth - 1];
		uint32_t child = 0;

		if (l->page[0] == PAGE_LEAF) {
			rc = read_leaf(sc, l);
			sc->depth--;
		} else if ((rc = next_child(sc, l, &child)) == 1) {
			rc = push_page(sc, child, l->pgno);
		} else if (rc == 0) {
			sc->depth--;
		}
	}
	return rc < 0 ? rc : 0;
}

static int query_u32(struct mp_store *s, const char *sql, uint32_t *out)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) >= 0 &&
	    sqlite3_column_int64(st, 0) <= UINT32_MAX) {
		*out = (uint32_t)sqlite3_column_int64(st, 0);
		ok = 1;
	}
	sqlite3_finalize(st);
	return ok;
}

/* Whether names are the table's first columns in order (names[0] its
 * rowid alias); sc->null_if_missing set from their defaults. */
static int columns_match(struct scan *sc, const char *const *names)
{
	sqlite3_stmt *st;
	int i = 0, ok = 1;

	if (sqlite3_prepare_v2(
	            sc->s->db,
	            "SELECT name, type, pk, dflt_value IS NULL FROM pragma_table_info('events');",
	            -1, &st, NULL) != SQLITE_OK)
		return 0;
	sc->null_if_missing = 0;
	while (ok && i < sc->n_cols && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *type = (const char *)sqlite3_column_text(st, 1);

		ok = name && strcmp(name, names[i]) == 0 &&
		     (i > 0 ||
		      (type && strcmp(type, "INTEGER") == 0 && sqlite3_column_int(st, 2) == 1));
		if (i > 0 && sqlite3_column_int(st, 3))
			sc->null_if_missing |= 1u << i;
		i++;
	}
	sqlite3_finalize(st);
	return ok && i == sc->n_cols;
}

/* Whether the file holds what SQLite sees and its layout is known: fills
 * the page geometry.  The caller holds the read lock. */
static int pages_usable(struct scan *sc)
{
	struct mp_store *s = sc->s;
	uint8_t hdr[100];
	uint32_t page_size;
	sqlite3_int64 file_bytes;
	const char *env = getenv("MEMPROF_READ_PAGES");

	if (env && strcmp(env, "0") == 0)
		return 0;
	if (sqlite3_txn_state(s->db, "main") == SQLITE_TXN_WRITE)
		return 0; /* this connection's own changes may not be in the file yet */
	if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &sc->file) !=
	            SQLITE_OK ||
	    !sc->file || !sc->file->pMethods ||
	    sc->file->pMethods->xRead(sc->file, hdr, sizeof(hdr), 0) != SQLITE_OK)
		return 0;
	if (memcmp(hdr, "SQLite format 3", 16) != 0 || hdr[18] != 1 || hdr[19] != 1)
		return 0; /* WAL: the newest pages may be in the log */
	page_size = be16(hdr + 16) == 1 ? 65536 : be16(hdr + 16);
	if (!query_u32(s, "PRAGMA page_size;", &sc->page_size) || sc->page_size != page_size ||
	    page_size < 512 || page_size - hdr[20] < 480 ||
	    !query_u32(s, "PRAGMA page_count;", &sc->n_pages))
		return 0;
	/* The header may claim more pages than the file has: the bitmap of
	 * pages seen is sized by what is there. */
	if (sc->file->pMethods->xFileSize(sc->file, &file_bytes) != SQLITE_OK || file_bytes < 0)
		return 0;
	if ((uint64_t)file_bytes / page_size < sc->n_pages)
		sc->n_pages = (uint32_t)((uint64_t)file_bytes / page_size);
	sc->usable = page_size - hdr[20];
	return 1;
}

static int prepare_fallback(struct scan *sc, const char *const *names)
{
	char sql[1024];
	size_t len = 0;
	int i;

	len += (size_t)snprintf(sql, sizeof(sql), "SELECT ");
	for (i = 0; i < sc->n_cols && len < sizeof(sql); i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s%s", i ? ", " : "",
		                        names[i]);
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, " FROM events WHERE %s = ?1;",
		                        names[0]);
	if (len >= sizeof(sql))
		return mp_err(&sc->s->err, MP_EINVAL, "too many columns to read");
	if (sqlite3_prepare_v2(sc->s->db, sql, -1, &sc->by_seq, NULL) != SQLITE_OK)
		return mp_store_sqlerr(sc->s, "cannot read trace");
	return 0;
}

static void scan_free(struct scan *sc)
{
	int i;

	for (i = 0; i < MAX_DEPTH; i++)
		free(sc->lv[i].page);
	free(sc->visited);
	sqlite3_finalize(sc->by_seq);
}

int mp_event_pages_scan(struct mp_store *s, const char *const *names, int n, mp_event_row_fn fn,
                        void *ctx, int64_t *n_by_sql)
{
	struct scan sc;
	sqlite3_stmt *lock = NULL;
	uint32_t root = 0;
	int rc = 1;

	if (n < 1 || n > MP_EVENT_PAGES_MAX_COLUMNS)
		return 1;
	memset(&sc, 0, sizeof(sc));
	sc.s = s;
	sc.n_cols = n;
	sc.fn = fn;
	sc.ctx = ctx;
	/* The statement, left stepped, holds the read transaction: no other
	 * connection can change the file until it is finalized. */
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND "
	                       "name = 'events';",
	                       -1, &lock, NULL) != SQLITE_OK ||
	    sqlite3_step(lock) != SQLITE_ROW)
		goto out;
	if (sqlite3_column_int64(lock, 0) < 2 || sqlite3_column_int64(lock, 0) > UINT32_MAX)
		goto out;
	root = (uint32_t)sqlite3_column_int64(lock, 0);
	if (!pages_usable(&sc) || root > sc.n_pages || !columns_match(&sc, names))
		goto out;
	if (!(sc.visited = calloc((size_t)sc.n_pages / 8 + 1, 1))) {
		rc = mp_err(&s->err, MP_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = prepare_fallback(&sc, names)) < 0)
		goto out;
	rc = walk(&sc, root);
out:
	*n_by_sql = sc.n_by_sql;
	sqlite3_finalize(lock);
	scan_free(&sc);
	return rc;
}
