/*
 * import/minimalloc.c - the importer of MiniMalloc CSV (google/minimalloc's
 * benchmark and solution files): each buffer, live on [lower, upper) of
 * logical time less its gaps, becomes allocs and frees.  The rows come in no
 * order, so every buffer is held until the end of the file; the events are
 * then sorted by time and written.  Memory grows with the number of buffers.
 */
#include "import/import.h"
#include "import/num_scan.h"
#include "util/id_set.h"
#include "util/limits.h"
#include "util/strmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_LINE_BYTES (1 << 20)
#define MAX_COLUMNS    256
#define READ_CHUNK     65536
#define LINE_PAD       16 /* bytes before and after a line: mp_scan_dec reads them */

enum col {
	COL_ID,
	COL_LOWER,
	COL_UPPER,
	COL_SIZE,
	COL_ALIGNMENT,
	COL_HINT,
	COL_GAPS,
	COL_OFFSET,
	COL_N,
	COL_OTHER = COL_N, /* a column MiniMalloc does not read: ignored */
};

static const char *const col_names[COL_N] = {"id",        "lower", "upper", "size",
                                             "alignment", "hint",  "gaps",  "offset"};

struct mm_buffer {
	int64_t lower, upper, size;
	int64_t offset;   /* -1 when the file gives none */
	int64_t alloc_id; /* the id when it is a plain integer, else -1 */
	size_t first_gap, n_gaps;
};

struct mm_gap {
	int64_t lo, hi;   /* half-open, inside the buffer's lifespan */
	int64_t wlo, whi; /* the part of the buffer kept during the gap; wlo == whi: none */
};

struct mm_piece {
	int64_t start, end, size, alloc_id;
	uint64_t address;
};

struct mm_key {
	int64_t t;
	uint64_t ord; /* 0 for a free, 1 for an alloc, in the top bit; then the piece */
};

struct mm {
	struct mp_import_ctx *c;
	/* input */
	char *chunk_mem, *chunk; /* LINE_PAD bytes, READ_CHUNK, LINE_PAD more */
	size_t chunk_len, chunk_pos;
	int eof;
	char *line;          /* the current line: in chunk, or own */
	char *own_mem, *own; /* a line across chunks, with LINE_PAD bytes around */
	size_t len, cap;
	int64_t line_no, blank_line;
	int64_t first_row_line; /* the line of bufs[0]: the rows follow it, one a line */
	/* header */
	int n_cols;
	unsigned char col_of[MAX_COLUMNS]; /* field index -> enum col */
	char names[COL_N][12];             /* each column as the header names it */
	int end_inclusive;                 /* 'end' instead of 'upper' */
	/* rows */
	struct mm_buffer *bufs;
	size_t n_bufs, cap_bufs;
	struct mm_gap *gaps;
	size_t n_gaps, cap_gaps;
	struct mp_id_set int_ids; /* the ids that are plain integers */
	struct mp_strmap ids;     /* id text -> line, for the others */
	int all_int;
	int64_t n_partial, n_hints, n_offsets, max_alignment;
};

/* A message "problem 'file:line[:col]': cause" (col 0: none). */
static int bad(struct mm *m, int64_t col, const char *problem, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int bad(struct mm *m, int64_t col, const char *problem, const char *fmt, ...)
{
	char cause[640];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	if (col > 0)
		return mp_err(m->c->err, MP_EFORMAT, "%s '%s:%lld:%lld': %s", problem, m->c->path,
		              (long long)m->line_no, (long long)col, cause);
	return mp_err(m->c->err, MP_EFORMAT, "%s '%s:%lld': %s", problem, m->c->path,
	              (long long)m->line_no, cause);
}

/* At most 40 bytes of s, non-printable bytes as '?', for messages. */
static const char *shown(const char *s, size_t n, char out[48])
{
	size_t i, k = n < 40 ? n : 40;

	for (i = 0; i < k; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(out + k, n > 40 ? "..." : "");
	return out;
}

/* --- lines ---------------------------------------------------------------- */

static int line_put(struct mm *m, const char *p, size_t n)
{
	if (m->len + n + 1 > m->cap) {
		size_t cap = m->cap ? m->cap : 256;
		char *q;

		while (cap < m->len + n + 1)
			cap *= 2;
		if (m->len + n > MAX_LINE_BYTES)
			return bad(m, 0, "line too long", "over %d MiB", MAX_LINE_BYTES >> 20);
		q = realloc(m->own_mem, LINE_PAD + cap + LINE_PAD);
		if (!q)
			return mp_err(m->c->err, MP_ENOMEM, "out of memory reading '%s'",
			              m->c->path);
		m->own_mem = q;
		m->own = q + LINE_PAD;
		m->cap = cap;
		memset(q, 0, LINE_PAD);
	}
	memcpy(m->own + m->len, p, n);
	m->len += n;
	memset(m->own + m->len, 0, LINE_PAD); /* the '\0' and bytes a 16-byte load may read */
	return 0;
}

/*
 * The first c in [p, end), or NULL: memchr inline, 16 bytes a step, for the
 * short lines and fields of these files (a call of memchr each cost more
 * than the scan).  Reads up to 15 bytes past end: the chunk and the own line
 * have LINE_PAD bytes after their data.
 */
static inline char *find_byte(const char *p, const char *end, char c)
{
#ifdef __SSE2__
	const __m128i cv = _mm_set1_epi8(c);

	for (; p < end; p += 16) {
		unsigned hit = (unsigned)_mm_movemask_epi8(
		        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), cv));

		if (hit)
			return p + __builtin_ctz(hit) < end ? (char *)(p + __builtin_ctz(hit))
			                                    : NULL;
	}
	return NULL;
#else
	return p < end ? memchr(p, c, (size_t)(end - p)) : NULL;
#endif
}

/* The next line in m->line (no '\n', no final '\r'): 1, 0 at the end, or an error. */
static int next_line(struct mm *m)
{
	char *p = m->chunk + m->chunk_pos, *nl;
	int got = 0, rc;

	if (m->chunk_pos < m->chunk_len &&
	    (nl = find_byte(p, m->chunk + m->chunk_len, '\n')) != NULL) {
		m->line_no++; /* the whole line is in the chunk: taken in place */
		m->line = p;
		m->len = (size_t)(nl - p);
		*nl = '\0';
		m->chunk_pos += m->len + 1;
		if (m->len && p[m->len - 1] == '\r')
			p[--m->len] = '\0';
		return 1;
	}
	m->len = 0;
	m->line_no++;
	for (;;) {
		size_t k;

		if (m->chunk_pos == m->chunk_len) {
			if (m->eof)
				break;
			m->chunk_len = fread(m->chunk, 1, READ_CHUNK, m->c->in);
			m->chunk_pos = 0;
			if (m->chunk_len == 0) {
				if (ferror(m->c->in))
					return mp_err(m->c->err, MP_EIO, "cannot read '%s': %s",
					              m->c->path, strerror(errno));
				m->eof = 1;
				break;
			}
		}
		got = 1;
		nl = memchr(m->chunk + m->chunk_pos, '\n', m->chunk_len - m->chunk_pos);
		k = (size_t)((nl ? nl : m->chunk + m->chunk_len) - (m->chunk + m->chunk_pos));
		if ((rc = line_put(m, m->chunk + m->chunk_pos, k)) < 0)
			return rc;
		m->chunk_pos += k + (nl != NULL);
		if (nl)
			break;
	}
	if (!got)
		return 0;
	if (!m->own && line_put(m, "", 0) < 0)
		return MP_ENOMEM;
	m->line = m->own;
	if (m->len && m->line[m->len - 1] == '\r')
		m->line[--m->len] = '\0';
	return 1;
}

/* --- header --------------------------------------------------------------- */

/* The column a header name stands for; *end set for 'end' (inclusive). */
static int column_of(const char *name, size_t n, int *end)
{
	static const struct {
		const char *name;
		int col;
	} aliases[] = {{"buffer", COL_ID},
	               {"buffer_id", COL_ID},
	               {"start", COL_LOWER},
	               {"begin", COL_LOWER},
	               {"end", COL_UPPER}};
	size_t i;

	*end = n == 3 && memcmp(name, "end", 3) == 0;
	for (i = 0; i < COL_N; i++)
		if (strlen(col_names[i]) == n && memcmp(name, col_names[i], n) == 0)
			return (int)i;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strlen(aliases[i].name) == n && memcmp(name, aliases[i].name, n) == 0)
			return aliases[i].col;
	return COL_OTHER;
}

/* Split a header into names: calls fn for each (name, len, byte column). */
static int each_field(const char *s, size_t n, int (*fn)(void *, const char *, size_t, size_t),
                      void *ctx)
{
	size_t start = 0, i;
	int rc;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != ',')
			continue;
		if ((rc = fn(ctx, s + start, i - start, start + 1)) != 0)
			return rc;
		start = i + 1;
	}
	return 0;
}

struct header_scan {
	struct mm *m;
	struct mp_strmap seen; /* names, aliases resolved */
	int has[COL_N];
	int bad;
};

static int header_field(void *ctx, const char *name, size_t n, size_t col)
{
	struct header_scan *h = ctx;
	struct mm *m = h->m;
	int end, c = column_of(name, n, &end);
	const char *key = c == COL_OTHER ? name : col_names[c];
	size_t key_len = c == COL_OTHER ? n : strlen(col_names[c]);
	char buf[48];

	if (m->n_cols == MAX_COLUMNS)
		return bad(m, 0, "bad header", "more than %d columns", MAX_COLUMNS);
	if (mp_strmap_get(&h->seen, key, key_len, NULL)) {
		shown(name, n, buf);
		if (c == COL_OTHER || strcmp(buf, key) == 0)
			return bad(m, (int64_t)col, "duplicate column", "'%s'", buf);
		return bad(m, (int64_t)col, "duplicate column",
		           "'%s' stands for '%s', named before", buf, key);
	}
	if (mp_strmap_put(&h->seen, key, key_len, 0, NULL) < 0)
		return mp_err(m->c->err, MP_ENOMEM, "out of memory");
	m->col_of[m->n_cols++] = (unsigned char)c;
	if (c != COL_OTHER) {
		h->has[c] = 1;
		memcpy(m->names[c], name, n); /* names of columns are at most 9 bytes */
		m->names[c][n] = '\0';
		m->end_inclusive |= end;
	}
	return 0;
}

static int read_header(struct mm *m)
{
	static const char *const also[] = {"'buffer' or 'buffer_id'", "'start' or 'begin'", "'end'",
	                                   NULL};
	struct header_scan h = {.m = m};
	char *p;
	int rc, i;

	rc = next_line(m);
	if (rc <= 0)
		return rc < 0 ? rc
		              : mp_err(m->c->err, MP_EFORMAT, "empty trace '%s': no header line",
		                       m->c->path);
	p = m->line;
	if (m->len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	if (!*p)
		return bad(m, 0, "missing header",
		           "the first line is empty (MiniMalloc CSV "
		           "starts with a header such as id,lower,upper,size)");
	mp_strmap_init(&h.seen);
	rc = each_field(p, strlen(p), header_field, &h);
	mp_strmap_free(&h.seen);
	for (i = COL_ID; rc == 0 && i <= COL_SIZE; i++)
		if (!h.has[i])
			rc = bad(m, 0, "missing column",
			         "'%s'%s%s (the header must name id, lower, "
			         "upper and size)",
			         col_names[i], also[i] ? " or " : "", also[i] ? also[i] : "");
	return rc < 0 ? rc : 1;
}

/* --- values --------------------------------------------------------------- */

/* A decimal integer with optional sign and blanks around: 0, -1 malformed, -2 out of range. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
	uint64_t v = 0, limit;
	int neg = 0;
	size_t i = 0;

	if (n && n <= 16 && mp_scan_dec(s, &v) == (int)n) {
		*out = (int64_t)v; /* the usual case: plain digits, read 16 bytes at a time */
		return 0;
	}
	if (n && n <= 18) { /* plain digits; 18 cannot overflow */
		unsigned d;

		while (i < n && (d = (unsigned)(unsigned char)s[i] - '0') < 10) {
			v = v * 10 + d;
			i++;
		}
		if (i == n) {
			*out = (int64_t)v;
			return 0;
		}
		v = 0;
		i = 0;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (limit - (uint64_t)(s[i] - '0')) / 10)
			return -2;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

struct field {
	const char *s;
	size_t n;
	int64_t col;
};

/* The size column of a buffer below the limit every reader relies on. */
static int check_size(struct mm *m, const struct field *f, int64_t size)
{
	char buf[48], problem[32];

	if (mp_size_ok(size))
		return 0;
	snprintf(problem, sizeof(problem), "invalid %s", m->names[COL_SIZE]);
	return bad(m, f->col, problem, "2^56 bytes or more, found '%s'", shown(f->s, f->n, buf));
}

/* A number of column c, at least min: 0 or an error naming the field. */
static int number_error(struct mm *m, const struct field *f, int c, int64_t min, int rc,
                        const int64_t *out);

/* Field f of column c, an integer of at least min, into *out. */
static inline int number(struct mm *m, const struct field *f, int c, int64_t min, int64_t *out)
{
	int rc = parse_i64(f->s, f->n, out);

	if (rc == 0 && *out >= min)
		return 0; /* the message is built only for a bad field */
	return number_error(m, f, c, min, rc, out);
}

/* Why field f is not a number of at least min (rc: parse_i64's). */
static int number_error(struct mm *m, const struct field *f, int c, int64_t min, int rc,
                        const int64_t *out)
{
	char buf[48], problem[32];

	snprintf(problem, sizeof(problem), "invalid %s", m->names[c]);
	shown(f->s, f->n, buf);
	if (rc == -1)
		return bad(m, f->col, problem, "expected a whole number, found '%s'", buf);
	if (rc == -2)
		return bad(m, f->col, problem, "out of range, found '%s'", buf);
	if (*out < min)
		return bad(m, f->col, problem, "%s, found '%s'",
		           min == 0 ? "negative (must be 0 or more)" : "must be 1 or more", buf);
	return 0;
}

/* Is s a plain non-negative decimal integer (no sign, blank or leading 0)? */
static int plain_int(const char *s, size_t n, int64_t *v)
{
	size_t i;

	if (n == 0 || n > 19 || (s[0] == '0' && n > 1))
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return parse_i64(s, n, v) == 0;
}

/* --- gaps ----------------------------------------------------------------- */

/* Digits at *p (advanced): 0, -1 none, -2 out of range. */
static int scan_u(const char **p, const char *end, int64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;

	if (q == end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*q - '0')) / 10)
			return -2;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	*p = q;
	*out = (int64_t)v;
	return 0;
}

/* "lo-hi" or "lo-hi@wlo:whi" into g: 0, -1 malformed, -2 out of range. */
static int scan_gap(const char *s, size_t n, struct mm_gap *g)
{
	const char *p = s, *end = s + n;
	int rc;

	g->wlo = g->whi = 0;
	if ((rc = scan_u(&p, end, &g->lo)) < 0 || p == end || *p++ != '-' ||
	    (rc = scan_u(&p, end, &g->hi)) < 0)
		return rc < 0 ? rc : -1;
	if (p == end)
		return 0;
	if (*p++ != '@' || (rc = scan_u(&p, end, &g->wlo)) < 0 || p == end || *p++ != ':' ||
	    (rc = scan_u(&p, end, &g->whi)) < 0)
		return rc < 0 ? rc : -1;
	return p == end ? 0 : -1;
}

static int check_gap(struct mm *m, const struct mm_buffer *b, struct mm_gap *g, int64_t prev_hi,
                     const char *tok, size_t n, int64_t col)
{
	char buf[48];

	if (m->end_inclusive) {
		if (g->hi == INT64_MAX)
			return bad(m, col, "bad gap", "'%s': out of range", shown(tok, n, buf));
		g->hi++; /* with 'end', a gap's end is inclusive too */
	}
	if (g->lo >= g->hi)
		return bad(m, col, "bad gap", "'%s' is empty", shown(tok, n, buf));
	if (g->lo < b->lower || g->hi > b->upper)
		return bad(m, col, "bad gap", "'%s' is outside the buffer's lifespan [%lld, %lld)",
		           shown(tok, n, buf), (long long)b->lower, (long long)b->upper);
	if (g->lo < prev_hi)
		return bad(m, col, "bad gap",
		           "'%s' overlaps or comes before the gap before it (gaps go in "
		           "increasing order)",
		           shown(tok, n, buf));
	if (g->wlo > g->whi || g->whi > b->size)
		return bad(m, col, "bad gap",
		           "'%s': the window must lie within the buffer's %lld "
		           "bytes (@low:high, low <= high)",
		           shown(tok, n, buf), (long long)b->size);
	return 0;
}

static int add_gap(struct mm *m, const struct mm_gap *g)
{
	if (m->n_gaps == m->cap_gaps) {
		size_t cap = m->cap_gaps ? m->cap_gaps * 2 : 64;
		struct mm_gap *p = realloc(m->gaps, cap * sizeof(*p));

		if (!p)
			return mp_err(m->c->err, MP_ENOMEM, "out of memory");
		m->gaps = p;
		m->cap_gaps = cap;
	}
	m->gaps[m->n_gaps++] = *g;
	return 0;
}

/* The gaps field of b: space-separated tokens. */
static int read_gaps(struct mm *m, struct mm_buffer *b, const struct field *f)
{
	const char *p = f->s, *end = f->s + f->n;
	int64_t prev_hi = b->lower;
	char buf[48];
	int rc;

	b->first_gap = m->n_gaps;
	while (p < end) {
		const char *tok;
		struct mm_gap g;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		for (tok = p; p < end && *p != ' ' && *p != '\t'; p++)
			;
		if (p == tok)
			break;
		rc = scan_gap(tok, (size_t)(p - tok), &g);
		if (rc < 0)
			return bad(m, f->col + (tok - f->s), "bad gap",
			           rc == -2 ? "'%s': out of range"
			                    : "expected lo-hi or lo-hi@low:high, found '%s'",
			           shown(tok, (size_t)(p - tok), buf));
		rc = check_gap(m, b, &g, prev_hi, tok, (size_t)(p - tok), f->col + (tok - f->s));
		if (rc < 0 || (rc = add_gap(m, &g)) < 0)
			return rc;
		m->n_partial += g.wlo < g.whi;
		prev_hi = g.hi;
	}
	b->n_gaps = m->n_gaps - b->first_gap;
	return 0;
}

/* --- rows ----------------------------------------------------------------- */

/* The line of the first buffer before the last one with plain id id (one
 * there is: only for the message of a duplicate). */
static int64_t first_line_of(const struct mm *m, int64_t id)
{
	size_t i = 0;

	while (i + 1 < m->n_bufs && m->bufs[i].alloc_id != id)
		i++;
	return m->first_row_line + (int64_t)i;
}

/* A plain integer's text is the only text of its value: those ids are
 * checked by value (no copy of the text), the others by text. */
static int check_id(struct mm *m, struct mm_buffer *b, const struct field *f)
{
	int64_t first = 0;
	char buf[48];
	int found, plain;

	b->alloc_id = -1;
	plain = plain_int(f->s, f->n, &b->alloc_id);
	if (plain) { /* one probe: added, or found */
		found = mp_id_set_add(&m->int_ids, (uint64_t)b->alloc_id);
		if (found < 0)
			return mp_err(m->c->err, MP_ENOMEM, "out of memory");
		found = !found;
		if (found)
			first = first_line_of(m, b->alloc_id);
	} else {
		found = mp_strmap_get(&m->ids, f->s, f->n, &first);
		m->all_int = 0;
	}
	if (found)
		return bad(m, f->col, "duplicate id", "'%s' was already used on line %lld",
		           shown(f->s, f->n, buf), (long long)first);
	if (!plain && mp_strmap_put(&m->ids, f->s, f->n, m->line_no, NULL) < 0)
		return mp_err(m->c->err, MP_ENOMEM, "out of memory");
	return 0;
}

static int check_lifespan(struct mm *m, struct mm_buffer *b, const struct field *f)
{
	if (m->end_inclusive) {
		if (b->upper == INT64_MAX)
			return bad(m, f->col, "invalid end", "out of range, found '%lld'",
			           (long long)b->upper);
		if (b->upper < b->lower)
			return bad(m, f->col, "bad lifespan",
			           "end %lld is before %s %lld (end is inclusive)",
			           (long long)b->upper, m->names[COL_LOWER], (long long)b->lower);
		b->upper++;
		return 0;
	}
	if (b->upper <= b->lower)
		return bad(m, f->col, "bad lifespan",
		           "%s %lld is not after %s %lld (lifespans are half-open: [lower, upper))",
		           m->names[COL_UPPER], (long long)b->upper, m->names[COL_LOWER],
		           (long long)b->lower);
	return 0;
}

/* Optional numeric columns: empty means absent. */
static int read_options(struct mm *m, struct mm_buffer *b, const struct field *fields)
{
	const struct field *f;
	int64_t v;
	int rc;

	f = &fields[COL_ALIGNMENT];
	if (f->s && f->n) {
		if ((rc = number(m, f, COL_ALIGNMENT, 1, &v)) < 0)
			return rc;
		if (v > m->max_alignment)
			m->max_alignment = v;
	}
	f = &fields[COL_HINT];
	if (f->s && f->n) {
		if ((rc = number(m, f, COL_HINT, INT64_MIN, &v)) < 0)
			return rc;
		m->n_hints += v >= 0; /* -1 (any negative) is no hint */
	}
	f = &fields[COL_OFFSET];
	b->offset = -1;
	if (f->s && f->n) {
		if ((rc = number(m, f, COL_OFFSET, 0, &b->offset)) < 0)
			return rc;
		if (b->offset > INT64_MAX - b->size)
			return bad(m, f->col, "invalid offset",
			           "offset + size is out of range, found '%lld'",
			           (long long)b->offset);
		m->n_offsets++;
	}
	return 0;
}

/* Split m->line into fields by column, in one pass. */
static int split_row(struct mm *m, struct field fields[COL_N])
{
	const char *line = m->line, *end = line + m->len, *p = line, *q;
	size_t k = 0;

	memset(fields, 0, COL_N * sizeof(fields[0]));
	for (;; p = q + 1, k++) {
		q = find_byte(p, end, ',');
		if (!q)
			q = end;
		if (k < (size_t)m->n_cols && m->col_of[k] != COL_OTHER) {
			struct field *f = &fields[m->col_of[k]];

			f->s = p;
			f->n = (size_t)(q - p);
			f->col = (int64_t)(p - line) + 1;
		}
		if (q == end)
			break;
	}
	if (k + 1 != (size_t)m->n_cols)
		return bad(m, 0, "wrong number of fields", "expected %d, found %zu", m->n_cols,
		           k + 1);
	return 0;
}

static int add_buffer(struct mm *m, struct mm_buffer **out)
{
	if (m->n_bufs == m->cap_bufs) {
		size_t cap = m->cap_bufs ? m->cap_bufs * 2 : 256;
		struct mm_buffer *p = realloc(m->bufs, cap * sizeof(*p));

		if (!p)
			return mp_err(m->c->err, MP_ENOMEM, "out of memory");
		m->bufs = p;
		m->cap_bufs = cap;
	}
	if (m->n_bufs == 0)
		m->first_row_line = m->line_no;
	*out = &m->bufs[m->n_bufs++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

static int read_row(struct mm *m)
{
	struct field fields[COL_N];
	struct mm_buffer *b = NULL;
	int rc;

	if ((rc = split_row(m, fields)) < 0 || (rc = add_buffer(m, &b)) < 0 ||
	    (rc = check_id(m, b, &fields[COL_ID])) < 0 ||
	    (rc = number(m, &fields[COL_LOWER], COL_LOWER, 0, &b->lower)) < 0 ||
	    (rc = number(m, &fields[COL_UPPER], COL_UPPER, 0, &b->upper)) < 0 ||
	    (rc = number(m, &fields[COL_SIZE], COL_SIZE, 1, &b->size)) < 0 ||
	    (rc = check_size(m, &fields[COL_SIZE], b->size)) < 0 ||
	    (rc = check_lifespan(m, b, &fields[COL_UPPER])) < 0 ||
	    (rc = read_options(m, b, fields)) < 0)
		return rc;
	if (fields[COL_GAPS].s)
		return read_gaps(m, b, &fields[COL_GAPS]);
	b->first_gap = m->n_gaps;
	return 0;
}

static int read_rows(struct mm *m)
{
	int rc;

	while ((rc = next_line(m)) == 1) {
		if (m->len == 0) {
			if (!m->blank_line)
				m->blank_line = m->line_no;
			continue;
		}
		if (m->blank_line)
			return bad(
			        m, 0, "rows after an empty line",
			        "line %lld is empty (MiniMalloc stops reading at the first empty "
			        "line; remove it)",
			        (long long)m->blank_line);
		if ((rc = read_row(m)) < 0)
			return rc;
	}
	return rc;
}

/* --- events --------------------------------------------------------------- */

/* The pieces of b: its lifespan less its gaps, with the windows of partial gaps. */
static size_t add_pieces(const struct mm *m, const struct mm_buffer *b, int64_t alloc_id,
                         struct mm_piece *out)
{
	uint64_t base = b->offset < 0 ? 0 : (uint64_t)b->offset;
	int64_t t = b->lower;
	size_t i, n = 0;

	for (i = 0; i < b->n_gaps; i++) {
		const struct mm_gap *g = &m->gaps[b->first_gap + i];

		if (g->lo > t)
			out[n++] = (struct mm_piece){t, g->lo, b->size, alloc_id, base};
		if (g->wlo < g->whi)
			out[n++] = (struct mm_piece){g->lo, g->hi, g->whi - g->wlo, alloc_id,
			                             b->offset < 0 ? 0 : base + (uint64_t)g->wlo};
		t = g->hi;
	}
	if (b->upper > t)
		out[n++] = (struct mm_piece){t, b->upper, b->size, alloc_id, base};
	return n;
}

#define RADIX_BITS 11

/*
 * Sort keys[0..n) by t, keeping the order of equal ones: a radix sort, 11
 * bits of t a pass, as many passes as the largest t needs (times are not
 * negative), through tmp[0..n).
 */
static void sort_by_time(struct mm_key *keys, size_t n, struct mm_key *tmp)
{
	struct mm_key *from = keys, *to = tmp, *swap;
	uint64_t max = 0;
	size_t i, count[1 << RADIX_BITS];
	int shift;

	for (i = 0; i < n; i++)
		max |= (uint64_t)keys[i].t;
	for (shift = 0; shift < 64 && (max >> shift) != 0; shift += RADIX_BITS) {
		size_t sum = 0, c;

		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[((uint64_t)from[i].t >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (i = 0; i < (1u << RADIX_BITS); i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[((uint64_t)from[i].t >> shift) & ((1u << RADIX_BITS) - 1)]++] =
			        from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != keys)
		memcpy(keys, from, n * sizeof(*keys));
}

/* The events of the n pieces, sorted in keys[0..4n) (the sort's two arrays). */
static int write_events(struct mm *m, const struct mm_piece *pieces, size_t n, int64_t process,
                        struct mm_key *keys)
{
	struct memprof_event ev = {0};
	size_t i;

	/* in (t, ord) order once sorted by t keeping the order of equal times:
	 * the frees (ord: the piece), then the allocs (ord: the top bit and the piece) */
	for (i = 0; i < n; i++) {
		keys[i] = (struct mm_key){pieces[i].end, i};
		keys[n + i] = (struct mm_key){pieces[i].start, (1ULL << 63) | i};
	}
	sort_by_time(keys, 2 * n, keys + 2 * n); /* frees first at equal times */
	ev.device_free_bytes = -1;
	ev.process_id = process;
	for (i = 0; i < 2 * n; i++) { /* each sets every field that varies */
		const struct mm_piece *p = &pieces[keys[i].ord & ~(1ULL << 63)];
		int alloc = (keys[i].ord >> 63) != 0;

		ev.ts_ns = keys[i].t;
		ev.op = alloc ? MEMPROF_OP_ALLOC : MEMPROF_OP_FREE;
		ev.alloc_id = p->alloc_id;
		ev.size_bytes = ev.requested_bytes = p->size;
		ev.address = p->address;
		if (mp_writer_event(m->c->w, &ev) < 0)
			return MP_EIO;
		m->c->st->n_events++;
		m->c->st->n_allocs += alloc;
	}
	return 0;
}

static int write_trace(struct mm *m)
{
	struct memprof_process proc = {0, 0, 0, NULL, -1, -1, -1, NULL};
	struct memprof_device dev = {0, 0, NULL, NULL, 0};
	struct mm_piece *pieces;
	struct mm_key *keys;
	size_t i, n = 0;
	int rc;

	if (mp_writer_process(m->c->w, &proc) < 0)
		return MP_EIO;
	dev.process_id = proc.id;
	if (mp_writer_device(m->c->w, &dev) < 0)
		return MP_EIO;
	/* at most one piece per buffer and two per gap */
	pieces = malloc((m->n_bufs + 2 * m->n_gaps) * sizeof(*pieces) + 1);
	if (!pieces)
		return mp_err(m->c->err, MP_ENOMEM, "out of memory");
	for (i = 0; i < m->n_bufs; i++)
		n += add_pieces(m, &m->bufs[i], m->all_int ? m->bufs[i].alloc_id : (int64_t)i + 1,
		                pieces + n);
	free(m->gaps); /* no longer needed: give the memory to the sort */
	m->gaps = NULL;
	/* the sort's arrays in the buffers' memory, its pages already mapped */
	keys = realloc(m->bufs, 4 * n * sizeof(*keys) + 1);
	if (!keys)
		free(m->bufs);
	m->bufs = NULL;
	rc = keys ? write_events(m, pieces, n, proc.id, keys)
	          : mp_err(m->c->err, MP_ENOMEM, "out of memory");
	free(keys);
	free(pieces);
	return rc;
}

/* meta 'minimalloc': what the file held that events do not show, per file. */
static int write_summary(struct mm *m)
{
	char *had = mp_store_get_meta(m->c->store, "minimalloc"), *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f) {
		free(had);
		return MP_ENOMEM;
	}
	fprintf(f, "%s%s%s: %zu buffers, ids %s, %zu gaps (%lld partial), ", had ? had : "",
	        had ? "; " : "", m->c->path, m->n_bufs,
	        m->all_int ? "kept" : "replaced by row numbers", m->n_gaps,
	        (long long)m->n_partial);
	fprintf(f, "largest alignment %lld, %lld hints ignored, %lld offsets kept as addresses",
	        (long long)(m->max_alignment ? m->max_alignment : 1), (long long)m->n_hints,
	        (long long)m->n_offsets);
	free(had);
	if (fclose(f) != 0) {
		free(text);
		return MP_ENOMEM;
	}
	rc = mp_store_set_meta(m->c->store, "minimalloc", text) < 0 ||
	     mp_store_set_meta(m->c->store, "clock", "logical (MiniMalloc time units)") < 0;
	free(text);
	return rc ? MP_EIO : 0;
}

static int run(struct mp_import_ctx *c)
{
	struct mm m = {.c = c, .all_int = 1};
	int rc;

	m.chunk_mem = calloc(1, LINE_PAD + READ_CHUNK + LINE_PAD);
	if (!m.chunk_mem)
		return mp_err(c->err, MP_ENOMEM, "out of memory");
	m.chunk = m.chunk_mem + LINE_PAD;
	mp_id_set_init(&m.int_ids);
	mp_strmap_init(&m.ids);
	rc = read_header(&m);
	if (rc > 0)
		rc = read_rows(&m);
	mp_id_set_free(&m.int_ids); /* ids are checked: free them before the sort */
	mp_strmap_free(&m.ids);
	free(m.chunk_mem);
	free(m.own_mem);
	if (rc == 0)
		rc = write_trace(&m);
	if (rc == 0)
		rc = write_summary(&m);
	if ((rc == MP_EIO || rc == MP_ENOMEM) && !c->err->msg[0])
		mp_err_copy(c->err, mp_writer_error(c->w));
	free(m.bufs);
	free(m.gaps);
	return rc;
}

/* A first line naming id, lower, upper and size (or their aliases), not ts_ns or op. */
static int probe(const char *path, const char *head, size_t n)
{
	const char *p = head, *end, *q;
	int has[COL_N + 1] = {0}, e;

	(void)path;
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	end = memchr(p, '\n', (size_t)(head + n - p));
	if (!end)
		end = head + n;
	if (end > p && end[-1] == '\r')
		end--;
	for (q = p; p <= end; p++) {
		if (p < end && *p != ',')
			continue;
		if ((p - q == 5 && memcmp(q, "ts_ns", 5) == 0) ||
		    (p - q == 2 && memcmp(q, "op", 2) == 0))
			return 0;
		has[column_of(q, (size_t)(p - q), &e)] = 1;
		q = p + 1;
	}
	return has[COL_ID] && has[COL_LOWER] && has[COL_UPPER] && has[COL_SIZE];
}

const struct mp_importer mp_importer_minimalloc = {
        .name = "minimalloc",
        .description = "MiniMalloc CSV: buffers on logical time (id,lower,upper,size)",
        .probe = probe,
        .run = run,
};
