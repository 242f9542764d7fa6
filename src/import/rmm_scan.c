/*
 * import/rmm_scan.c - the RMM log scanner: complete lines are parsed in place
 * in one fixed buffer, each field by a dedicated parser that stops at the
 * first byte not its own, with a line end always ahead as a sentinel.  The
 * slow path (blank lines, errors, a cut-off last line) runs only on failure.
 */
#include "import/num_scan.h"
#include "import/rmm_scan.h"
#include "util/limits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAD       64 /* zeroed bytes after the data: fixed-size compares stay inside */
#define FRONT_PAD 16 /* and before it: mp_scan_dec reads the 16 bytes before a field */

enum field { F_THREAD, F_TIME, F_ACTION, F_POINTER, F_SIZE, F_STREAM, N_FIELDS };

static const char *const field_names[N_FIELDS] = {"thread",  "time", "action",
                                                  "pointer", "size", "stream"};
static const char *const field_expected[N_FIELDS] = {
        "a thread id (decimal, below 2^63)",
        "a time of day HH:MM:SS.ffffff (up to 9 fraction digits)",
        "'allocate', 'free' or 'allocate failure'",
        "an address (0x and 1 to 16 hex digits, or (nil))",
        "a size in bytes (decimal, below 2^56)",
        "a stream (0x and 1 to 16 hex digits, decimal, or (nil))",
};

struct mp_rmm_scanner {
	FILE *f;
	char *name;
	char *mem;         /* FRONT_PAD zeroed bytes, then buf */
	char *buf;         /* cap bytes, then PAD zeroed ones */
	size_t cap;        /* the longest line taken */
	size_t len;        /* bytes in buf */
	size_t end;        /* just past the last complete line in buf */
	size_t pos;        /* start of the next line */
	size_t partial;    /* at EOF, offset of the line end added to a cut-off line, or 0 */
	int eof;           /* everything has been read into buf */
	int64_t line;      /* number of the line at pos */
	int64_t dropped;   /* line number of a dropped partial last line */
	enum field bad;    /* the field scan_row stopped in */
	const char *bad_p; /* and where that field starts */
};

static int is_eol(char ch)
{
	return ch == '\n' || ch == '\r';
}

/* Decimal digits (at least one), value at most max, past 16 digits. */
static const char *scan_dec_long(const char *p, uint64_t max, uint64_t *out)
{
	const char *start = p;
	uint64_t v = 0;

	while ((unsigned)(unsigned char)*p - '0' < 10)
		p++;
	for (; start < p; start++)
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (unsigned)(*start - '0'), &v))
			return NULL;
	if (v > max)
		return NULL;
	*out = v;
	return p;
}

/* Decimal digits (at least one), value at most max. */
static inline const char *scan_dec(const char *p, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int n = mp_scan_dec(p, &v);

	if (n > 16)
		return scan_dec_long(p, max, out);
	if (n == 0 || v > max)
		return NULL;
	*out = v;
	return p + n;
}

/* 0x and 1 to 16 hex digits, or "(nil)" (glibc's %p of a null pointer). */
static inline const char *scan_hex(const char *p, uint64_t *out)
{
	int n;

	if (p[0] == '(' && memcmp(p, "(nil)", 5) == 0) {
		*out = 0;
		return p + 5;
	}
	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return NULL;
	n = mp_scan_hex(p + 2, out);
	return n == 0 || n > 16 ? NULL : p + 2 + n;
}

#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
static int digit2(const char *p, unsigned *v)
{
	unsigned a = (unsigned)(unsigned char)p[0] - '0', b;

	if (a > 9 || (b = (unsigned)(unsigned char)p[1] - '0') > 9)
		return 0;
	*v = a * 10 + b;
	return 1;
}
#endif

/*
 * "HH:MM:SS" at p (the 8 bytes are inside the buffer: PAD): 1 and the three
 * numbers, else 0.  On one 64-bit word: each digit byte 0x30 to 0x39 (its
 * high nibble 3, also after adding 6), the colons, then the pairs by one
 * multiply.
 */
static int hh_mm_ss(const char *p, unsigned *h, unsigned *m, unsigned *s)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t digits = 0xffff00ffff00ffffull, colons = 0x0000ff0000ff0000ull;
	uint64_t w, d;

	memcpy(&w, p, 8);
	if ((w & colons) != (0x3a00003a0000ull & colons) ||
	    (w & digits & 0xf0f0f0f0f0f0f0f0ull) != (0x3030303030303030ull & digits) ||
	    ((w + 0x0606060606060606ull) & digits & 0xf0f0f0f0f0f0f0f0ull) !=
	            (0x3030303030303030ull & digits))
		return 0;
	d = w & digits & 0x0f0f0f0f0f0f0f0full;
	d = d * 10 + (d >> 8); /* byte 0: HH, byte 3: MM, byte 6: SS */
	*h = (unsigned)(d & 0xff);
	*m = (unsigned)(d >> 24 & 0xff);
	*s = (unsigned)(d >> 48 & 0xff);
	return 1;
#else
	return digit2(p, h) && p[2] == ':' && digit2(p + 3, m) && p[5] == ':' && digit2(p + 6, s);
#endif
}

/* HH:MM:SS with an optional fraction of 1 to 9 digits. */
static const char *scan_time(const char *p, int64_t *ns)
{
	static const int64_t scale[10] = {0,     100000000, 10000000, 1000000, 100000,
	                                  10000, 1000,      100,      10,      1};
	unsigned h, m, s;
	uint64_t frac_digits;
	int64_t frac = 0;
	int n;

	if (!hh_mm_ss(p, &h, &m, &s) || h > 23 || m > 59 || s > 60)
		return NULL;
	p += 8;
	if (*p == '.') {
		n = mp_scan_dec(++p, &frac_digits);
		if (n == 0 || n > 9)
			return NULL;
		p += n;
		frac = (int64_t)frac_digits * scale[n];
	}
	*ns = ((int64_t)h * 3600 + m * 60 + s) * 1000000000 + frac;
	return p;
}

/* The action and the comma after it. */
static const char *scan_action(const char *p, int *action)
{
	if (memcmp(p, "allocate,", 9) == 0) {
		*action = MP_RMM_ALLOCATE;
		return p + 9;
	}
	if (memcmp(p, "free,", 5) == 0) {
		*action = MP_RMM_FREE;
		return p + 5;
	}
	if (memcmp(p, "allocate failure,", 17) == 0) {
		*action = MP_RMM_FAILURE;
		return p + 17;
	}
	return NULL;
}

/* Field f starts at p: where scan_row says a row went bad. */
#define AT(f) (bad = (f), bad_p = p)

/* One row and its line end; NULL when it is not a valid row (s->bad says
 * where; set only then, the row's fields kept in registers on the way). */
static const char *scan_row(struct mp_rmm_scanner *s, const char *p, struct mp_rmm_row *row)
{
	const char *line = p, *bad_p;
	uint64_t v;
	enum field bad;

	AT(F_THREAD);
	if (!(p = scan_dec(p, INT64_MAX, &v)) || *p++ != ',')
		goto fail;
	row->thread = (int64_t)v;
	row->time_col = (int)(p - line) + 1;
	AT(F_TIME);
	if (!(p = scan_time(p, &row->time_ns)) || *p++ != ',')
		goto fail;
	AT(F_ACTION);
	if (!(p = scan_action(p, &row->action)))
		goto fail;
	AT(F_POINTER);
	if (!(p = scan_hex(p, &row->pointer)) || *p++ != ',')
		goto fail;
	AT(F_SIZE);
	if (!(p = scan_dec(p, MP_MAX_SIZE_BYTES - 1, &v)) || *p++ != ',')
		goto fail;
	row->size = (int64_t)v;
	AT(F_STREAM);
	if ((*p == '0' && (p[1] == 'x' || p[1] == 'X')) || *p == '(')
		p = scan_hex(p, &row->stream);
	else
		p = scan_dec(p, UINT64_MAX, &row->stream);
	if (!p)
		goto fail;
	if (*p == '\n')
		return p + 1;
	if (*p == '\r')
		return p + 1 + (p[1] == '\n');
fail:
	s->bad = bad;
	s->bad_p = bad_p;
	return NULL;
}

#undef AT

/* The line end at or after p (there always is one before s->end). */
static const char *line_end(const char *p)
{
	while (!is_eol(*p))
		p++;
	return p;
}

/* Past the line end e ("\r\n" is one). */
static const char *after_eol(const char *e)
{
	return e + 1 + (e[0] == '\r' && e[1] == '\n');
}

/* Past a line of nothing but spaces and tabs; NULL when p's line is not blank. */
static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return is_eol(*p) ? after_eol(p) : NULL;
}

/* Is [p, e) the header, each name perhaps surrounded by spaces or tabs? */
static int is_header(const char *p, const char *e)
{
	static const char *const names[N_FIELDS] = {"Thread",  "Time", "Action",
	                                            "Pointer", "Size", "Stream"};
	const char *q, *r;
	int i;

	for (i = 0; i < N_FIELDS; i++) {
		for (q = p; p < e && *p != ','; p++)
			;
		for (r = p; q < r && (*q == ' ' || *q == '\t'); q++)
			;
		while (r > q && (r[-1] == ' ' || r[-1] == '\t'))
			r--;
		if ((size_t)(r - q) != strlen(names[i]) ||
		    memcmp(q, names[i], (size_t)(r - q)) != 0)
			return 0;
		if (i < N_FIELDS - 1 && p++ == e)
			return 0;
	}
	return p == e;
}

/* Up to 40 bytes of the text from p to the next comma or line end, printable. */
static void show(char *out, const char *p, const char *e)
{
	size_t i;

	for (i = 0; p + i < e && p[i] != ',' && i < 40; i++)
		out[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
	strcpy(out + i, p + i < e && p[i] != ',' ? "..." : "");
}

/*
 * Keep the unread bytes, read more, and set end past the last complete
 * line.  A '\r' at the very end of what was read is not known to be a whole
 * line end yet (a '\n' may follow).  At EOF a last line without a line end
 * gets one, and partial remembers where.  1: lines to scan, 0: the end.
 */
static int refill(struct mp_rmm_scanner *s, struct mp_error *err)
{
	size_t n, i;

	if (s->eof)
		return 0;
	memmove(s->buf, s->buf + s->pos, s->len - s->pos);
	s->len -= s->pos;
	s->pos = s->end = 0;
	for (;;) {
		n = fread(s->buf + s->len, 1, s->cap - s->len, s->f);
		s->len += n;
		if (n == 0) {
			if (ferror(s->f))
				return mp_err(err, MP_EIO, "cannot read '%s': %s", s->name,
				              strerror(errno));
			s->eof = 1;
			if (s->len && !is_eol(s->buf[s->len - 1])) {
				s->partial = s->len;
				s->buf[s->len++] = '\n'; /* into the padding */
			}
			s->buf[s->len] = '\0'; /* a last '\r' must not see an old '\n' after it */
			s->end = s->len;
			return s->len > 0;
		}
		for (i = s->len; i > 0; i--)
			if (s->buf[i - 1] == '\n' || (s->buf[i - 1] == '\r' && i < s->len))
				break;
		if (i > 0) {
			s->end = i;
			return 1;
		}
		if (s->len == s->cap)
			return mp_err(err, MP_EFORMAT,
			              "line too long '%s:%lld': more than %zu bytes without a line "
			              "end (an RMM log row is under 200)",
			              s->name, (long long)s->line, s->cap);
	}
}

/* Up to the header line, which must be the first line that is not blank. */
static int read_header(struct mp_rmm_scanner *s, struct mp_error *err)
{
	const char *p, *e;
	char shown[48];
	int rc, first = 1;

	for (;;) {
		if (s->pos >= s->end && (rc = refill(s, err)) <= 0)
			return rc < 0 ? rc
			              : mp_err(err, MP_EFORMAT,
			                       "empty trace '%s': no RMM log header "
			                       "('" MP_RMM_HEADER "')",
			                       s->name);
		p = s->buf + s->pos;
		if (first && memcmp(p, "\xef\xbb\xbf", 3) == 0)
			p += 3; /* a UTF-8 byte-order mark */
		first = 0;
		e = line_end(p);
		s->pos = (size_t)(after_eol(e) - s->buf);
		if (is_header(p, e)) {
			s->line++;
			return 0;
		}
		if (!skip_blank(p)) {
			show(shown, p, e);
			return mp_err(
			        err, MP_EFORMAT,
			        "not an RMM log '%s:%lld': expected the header '" MP_RMM_HEADER
			        "', found '%s'",
			        s->name, (long long)s->line, shown);
		}
		s->line++;
	}
}

int mp_rmm_scan_open(struct mp_rmm_scanner **out, FILE *in, const char *name, size_t max_line,
                     struct mp_error *err)
{
	struct mp_rmm_scanner *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (s)
		s->cap = max_line ? max_line : MP_RMM_MAX_LINE;
	if (!s || !(s->name = strdup(name)) || !(s->mem = calloc(FRONT_PAD + s->cap + PAD, 1))) {
		mp_rmm_scan_close(s);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	s->buf = s->mem + FRONT_PAD;
	s->f = in;
	s->line = 1;
	rc = read_header(s, err);
	if (rc < 0) {
		mp_rmm_scan_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Why the line at p is not a row; or, for a cut-off last line, drop it (0). */
static int row_error(struct mp_rmm_scanner *s, const char *p, struct mp_error *err)
{
	const char *e = line_end(p), *q, *extra = NULL;
	long long line = (long long)s->line;
	int n_fields = 1;
	char shown[48];

	if (s->partial && e == s->buf + s->partial) {
		s->dropped = s->line;
		s->pos = s->end;
		return 0;
	}
	for (q = p; q < e; q++)
		if (*q == ',' && ++n_fields == N_FIELDS + 1)
			extra = q + 1;
	if (is_header(p, e))
		return mp_err(err, MP_EFORMAT,
		              "repeated header '%s:%lld': a second log starts here (were logs "
		              "joined? import each one as its own file)",
		              s->name, line);
	if (n_fields != N_FIELDS)
		return mp_err(err, MP_EFORMAT,
		              "wrong number of fields '%s:%lld:%lld': expected %d (" MP_RMM_HEADER
		              "), found %d",
		              s->name, line, (long long)((extra ? extra : e) - p + 1), N_FIELDS,
		              n_fields);
	show(shown, s->bad_p, e);
	return mp_err(err, MP_EFORMAT, "invalid %s '%s:%lld:%lld': expected %s, found '%s'",
	              field_names[s->bad], s->name, line, (long long)(s->bad_p - p + 1),
	              field_expected[s->bad], shown);
}

int mp_rmm_scan_next(struct mp_rmm_scanner *s, struct mp_rmm_row *row, struct mp_error *err)
{
	const char *p, *next;
	int rc;

	for (;;) {
		if (s->pos >= s->end && (rc = refill(s, err)) <= 0)
			return rc;
		p = s->buf + s->pos;
		next = scan_row(s, p, row);
		if (next) {
			row->line = s->line++;
			s->pos = (size_t)(next - s->buf);
			return 1;
		}
		next = skip_blank(p);
		if (!next)
			return row_error(s, p, err);
		s->line++;
		s->pos = (size_t)(next - s->buf);
	}
}

int64_t mp_rmm_scan_dropped_partial(const struct mp_rmm_scanner *s)
{
	return s->dropped;
}

void mp_rmm_scan_close(struct mp_rmm_scanner *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->mem);
	free(s);
}

int mp_rmm_probe(const char *head, size_t n)
{
	const char *p = head, *end = head + n, *e;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) { /* the first line that is not blank */
		for (e = p; e < end && !is_eol(*e); e++)
			;
		if (is_header(p, e))
			return 1;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p < e)
			return 0;
		p = e + 1;
	}
	return 0;
}
