/*
 * import/csv_fast.c - the CSV reader's fast path: a plain row parsed
 * straight into its event in one pass over its bytes, each field by the
 * parser of its column, without splitting the line first (for the header
 * memprof writes, in one straight line of code).  Any row that is not plain
 * is declined, nothing consumed, and import/csv.c's general path
 * parses or reports it: for a plain row both store the same values.
 */
#include "import/csv_reader.h"
#include "import/num_scan.h"
#include "util/limits.h"
#include "util/op_names.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Decimal digits at p, past 16 of them: past them, or NULL past 19, which
 * could overflow (the general path parses those). */
static const char *dec_long(const char *p, uint64_t *out)
{
	const char *s = p;
	uint64_t v = 0;
	unsigned d;

	while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
		v = v * 10 + d;
		p++;
	}
	*out = v;
	return p - s > 19 ? NULL : p;
}

/* Decimal digits at p (none: 0): past them, or NULL past 19 digits. */
static inline const char *dec(const char *p, uint64_t *out)
{
	int n = mp_scan_dec(p, out);

	return n <= 16 ? p + n : dec_long(p, out);
}

/* 0x and 1 to 16 hex digits, or decimal digits as dec(). */
static inline __attribute__((always_inline)) const char *hex_or_dec(const char *p, uint64_t *out)
{
	int n;

	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return dec(p, out);
	n = mp_scan_hex(p + 2, out);
	return n == 0 || n > 16 ? NULL : p + 2 + n;
}

/*
 * The first ',', '\n', '"' or NUL at or after p.  There is a '\n' ahead
 * inside the buffer, and READ_PAD bytes after it: a 16-byte load that
 * starts at or before that '\n' stays inside.  One compare finds the bytes
 * below '-' (and those from 0x80, negative as signed): the four among them,
 * and in names and stacks few others ('.', '/', digits, ':', ';', '@' and
 * letters are all above).
 */
static inline const char *text_end(const char *p)
{
	const uint64_t stop = 1ull << ',' | 1ull << '\n' | 1ull << '"' | 1ull;
#ifdef __SSE2__
	const __m128i below = _mm_set1_epi8(',' + 1);

	for (;; p += 16) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(b, below));

		for (; m; m &= m - 1) {
			const char *q = p + __builtin_ctz(m);
			unsigned c = (unsigned char)*q;

			if (c < 64 && (stop >> c & 1))
				return q;
		}
	}
#else
	unsigned c;

	while ((c = (unsigned char)*p) >= 64 || !(stop >> c & 1))
		p++;
	return p;
#endif
}

/* The first '"', '\n' or NUL at or after p, as text_end. */
static inline const char *quote_end(const char *p)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"');
	const __m128i nul = _mm_setzero_si128();

	for (;; p += 16) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i hit =
		        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, nl), _mm_cmpeq_epi8(b, nul)),
		                     _mm_cmpeq_epi8(b, quote));
		int m = _mm_movemask_epi8(hit);

		if (m)
			return p + __builtin_ctz((unsigned)m);
	}
#else
	while (*p != '\n' && *p != '"' && *p != '\0')
		p++;
	return p;
#endif
}

/*
 * A text field at s: past it (at the ',' or line end after it), its bytes
 * in *t and *n; NULL to decline.  A quoted field is taken when it holds no
 * '"' (doubled), line end or NUL and a ',' or the line end follows it.
 */
static inline const char *text(const char *s, const char **t, size_t *n)
{
	const char *p;

	if (*s == '"') {
		p = quote_end(s + 1);
		if (*p != '"' || (p[1] != ',' && p[1] != '\n' && (p[1] != '\r' || p[2] != '\n')))
			return NULL;
		*t = s + 1;
		*n = (size_t)(p - s - 1);
		return p + 1;
	}
	p = text_end(s);
	if (*p == '"' || *p == '\0')
		return NULL; /* a stray quote or a NUL */
	*t = s;
	*n = (size_t)(p - s);
	if (p[-1] == '\r' && *p == '\n' && p > s) /* p[-1]: the ',' or pad before s at worst */
		--*n;
	return p;
}

static int op_of(const char *s, size_t n)
{
	if (n == 5 && memcmp(s, "alloc", 5) == 0)
		return MEMPROF_OP_ALLOC;
	if (n == 4 && memcmp(s, "free", 4) == 0)
		return MEMPROF_OP_FREE;
	return mp_op_from_name(s, n);
}

/* "alloc" or "free" and the ',' after it at p, by one 8-byte load (the
 * line's '\n' and the buffer's padding follow): its op, else 0. */
static inline int common_op(const char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w;

	memcpy(&w, p, 8);
	if ((w & 0xffffffffffffull) == 0x2c636f6c6c61ull) /* "alloc," */
		return MEMPROF_OP_ALLOC;
	if ((w & 0xffffffffffull) == 0x2c65657266ull) /* "free," */
		return MEMPROF_OP_FREE;
#else
	(void)p;
#endif
	return 0;
}

/* The columns whose emptiness plain() and fill_row() read: only theirs are
 * noted (an empty address, device, stream, pid or thread is 0). */
#define GIVEN_READ                                                                                 \
	(1u << MP_CSV_TS_NS | 1u << MP_CSV_ID | 1u << MP_CSV_SIZE | 1u << MP_CSV_REQUESTED |       \
	 1u << MP_CSV_DEVICE_FREE)

struct fast_row {
	uint64_t v[MP_CSV_N_COLUMNS]; /* numeric columns; 0 when empty or absent */
	unsigned given;               /* bit c: column c is not empty (of GIVEN_READ) */
	const char *text[MP_CSV_N_COLUMNS];
	size_t len[MP_CSV_N_COLUMNS];
	int op;
	int64_t stack_col;
	unsigned same; /* bit 0: the phase is the previous row's, bit 1: the api */
};

/* Columns most often empty or of one digit (and a ',' after it). */
#define SHORT_COLUMNS (1u << MP_CSV_DEVICE | 1u << MP_CSV_STREAM | 1u << MP_CSV_DEVICE_FREE)

/* An empty field or one digit at p, followed by a ',': as dec() would parse
 * them, without the vector work; NULL for anything else (nothing set). */
static inline const char *short_dec(const char *p, uint64_t *out)
{
	unsigned d = (unsigned)(unsigned char)p[0] - '0';

	if (p[0] == ',') {
		*out = 0;
		return p;
	}
	if (d < 10 && p[1] == ',') {
		*out = d;
		return p + 1;
	}
	return NULL;
}

/* One field of column c at p: past it, or NULL to decline the row. */
static inline __attribute__((always_inline)) const char *field(struct fast_row *f, int c,
                                                               const char *p, const char *line)
{
	const char *s = p;

	switch (c) {
	case MP_CSV_OP:
		if ((f->op = common_op(p)) != 0)
			return p + (f->op == MEMPROF_OP_ALLOC ? 5 : 4);
		while ((unsigned)(unsigned char)*p - 'a' < 26 || *p == '_')
			p++;
		f->op = op_of(s, (size_t)(p - s));
		return f->op ? p : NULL;
	case MP_CSV_PHASE:
	case MP_CSV_API:
	case MP_CSV_STACK:
		if (!(p = text(s, &f->text[c], &f->len[c])))
			return NULL;
		if (c == MP_CSV_STACK)
			f->stack_col = (int64_t)(s - line) + 1;
		return p;
	case MP_CSV_ADDRESS:
	case MP_CSV_STREAM:
		if (!(SHORT_COLUMNS >> c & 1) || !(p = short_dec(p, &f->v[c])))
			p = hex_or_dec(s, &f->v[c]);
		break;
	default:
		if (!(SHORT_COLUMNS >> c & 1) || !(p = short_dec(p, &f->v[c])))
			p = dec(s, &f->v[c]);
		break;
	}
	if ((GIVEN_READ >> c & 1) && p && p != s)
		f->given |= 1u << c;
	return p;
}

/*
 * The phase (k 0) or api (k 1) field of column c at p in a standard layout,
 * as field(): when its bytes and the ',' after them are the previous row's
 * (most rows), one 16-byte compare finds it and marks it the same; else
 * text(), and an unquoted name of 1 to 14 bytes is kept for the next row.
 */
static inline __attribute__((always_inline)) const char *
name_field(struct mp_csv_reader *r, struct fast_row *f, int c, int k, const char *p)
{
	unsigned len = r->prev_name[k].len;
	const char *s = p;

#ifdef __SSE2__
	if (len) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i t = _mm_loadu_si128((const __m128i *)(const void *)r->prev_name[k].text);
		unsigned need = (2u << len) - 1; /* the name and its ',' */

		if (((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, t)) & need) == need) {
			f->text[c] = p;
			f->len[c] = len;
			f->same |= 1u << k;
			return p + len;
		}
	}
#endif
	if (!(p = text(s, &f->text[c], &f->len[c])))
		return NULL;
	len = (unsigned)f->len[c];
	if (*s != '"' && *p == ',' && len >= 1 && len <= 14) {
		memcpy(r->prev_name[k].text, s, 16);
		r->prev_name[k].len = len;
	} else {
		r->prev_name[k].len = 0;
	}
	return p;
}

/* The checks of the general path's parse_values, on a row of well-formed values. */
static int plain(const struct fast_row *f)
{
	const unsigned need_id =
	        ~(1u << MEMPROF_OP_OOM | 1u << MEMPROF_OP_PHASE_BEGIN | 1u << MEMPROF_OP_PHASE_END);
	const unsigned need_size = 1u << MEMPROF_OP_ALLOC | 1u << MEMPROF_OP_PREEXISTING |
	                           1u << MEMPROF_OP_RESERVE | 1u << MEMPROF_OP_MAP |
	                           1u << MEMPROF_OP_OOM;
	const uint64_t *v = f->v;
	uint64_t size = v[MP_CSV_SIZE], req = v[MP_CSV_REQUESTED];
	uint64_t i64 = v[MP_CSV_TS_NS] | v[MP_CSV_ID] | v[MP_CSV_PID] | v[MP_CSV_DEVICE_FREE] |
	               v[MP_CSV_THREAD] | v[MP_CSV_DURATION_NS];
	int op = f->op;

	if (!(f->given & 1u << MP_CSV_TS_NS) ||
	    (!(f->given & 1u << MP_CSV_ID) && (need_id >> op & 1)) ||
	    (!(f->given & 1u << MP_CSV_SIZE) && (need_size >> op & 1)))
		return 0; /* a required value missing */
	if (i64 > INT64_MAX || size >= (uint64_t)MP_MAX_SIZE_BYTES ||
	    req >= (uint64_t)MP_MAX_SIZE_BYTES || v[MP_CSV_DEVICE] > INT32_MAX)
		return 0;
	if (!(f->given & 1u << MP_CSV_REQUESTED))
		req = size;
	if ((op == MEMPROF_OP_ALLOC || op == MEMPROF_OP_PREEXISTING) && req > size)
		return 0;
	if ((op == MEMPROF_OP_PHASE_BEGIN || op == MEMPROF_OP_PHASE_END) && !f->len[MP_CSV_PHASE])
		return 0;
	return 1;
}

static void fill_row(const struct fast_row *f, struct mp_csv_row *row, int64_t line)
{
	struct memprof_event *ev = &row->ev;
	const uint64_t *v = f->v;

	ev->seq = 0;
	ev->ts_ns = (int64_t)v[MP_CSV_TS_NS];
	ev->op = f->op;
	ev->alloc_id = (int64_t)v[MP_CSV_ID];
	ev->size_bytes = (int64_t)v[MP_CSV_SIZE];
	ev->requested_bytes =
	        f->given & 1u << MP_CSV_REQUESTED ? (int64_t)v[MP_CSV_REQUESTED] : ev->size_bytes;
	ev->address = v[MP_CSV_ADDRESS];
	ev->device_free_bytes =
	        f->given & 1u << MP_CSV_DEVICE_FREE ? (int64_t)v[MP_CSV_DEVICE_FREE] : -1;
	ev->device = (int32_t)v[MP_CSV_DEVICE];
	ev->process_id = 0;
	ev->stream = v[MP_CSV_STREAM];
	ev->phase_id = ev->stack_id = ev->api_id = 0;
	ev->thread = (int64_t)v[MP_CSV_THREAD];
	ev->duration_ns = (int64_t)v[MP_CSV_DURATION_NS];
	row->line = line;
	row->pid = (int64_t)v[MP_CSV_PID];
	row->phase_len = f->len[MP_CSV_PHASE];
	row->api_len = f->len[MP_CSV_API];
	row->stack_len = f->len[MP_CSV_STACK];
	row->phase = row->phase_len ? f->text[MP_CSV_PHASE] : NULL;
	row->api = row->api_len ? f->text[MP_CSV_API] : NULL;
	row->stack = row->stack_len ? f->text[MP_CSV_STACK] : NULL;
	row->stack_col = f->stack_col;
	row->same_phase = f->same & 1;
	row->same_api = f->same >> 1 & 1;
}

/* The first twelve columns of the header memprof writes, in its order. */
static const unsigned char std_columns[] = {
        MP_CSV_TS_NS,     MP_CSV_OP,      MP_CSV_ID,     MP_CSV_SIZE,
        MP_CSV_REQUESTED, MP_CSV_ADDRESS, MP_CSV_DEVICE, MP_CSV_STREAM,
        MP_CSV_PID,       MP_CSV_PHASE,   MP_CSV_API,    MP_CSV_DEVICE_FREE,
};

int mp_csv_fast_layout(const struct mp_csv_reader *r)
{
	int i, n = (int)sizeof(std_columns);

	for (i = 0; i < n; i++)
		if (i >= r->n_header_fields || r->field_column[i] != std_columns[i])
			return MP_CSV_LAYOUT_ANY;
	if (r->n_header_fields == n + 1 && r->field_column[n] == MP_CSV_STACK)
		return MP_CSV_LAYOUT_STD;
	if (r->n_header_fields == n + 2 && r->field_column[n] == MP_CSV_THREAD &&
	    r->field_column[n + 1] == MP_CSV_STACK)
		return MP_CSV_LAYOUT_STD_THREAD;
	return MP_CSV_LAYOUT_ANY;
}

/* One field of the constant column c and the ',' after it, in std_fields. */
#define STD_FIELD(c)                                                                               \
	do {                                                                                       \
		if (!(p = field(f, (c), p, line)) || *p++ != ',')                                  \
			return NULL;                                                               \
	} while (0)

/* The phase (k 0) or api (k 1) field and the ',' after it, in std_fields. */
#define STD_NAME(c, k)                                                                             \
	do {                                                                                       \
		if (!(p = name_field(r, f, (c), (k), p)) || *p++ != ',')                           \
			return NULL;                                                               \
	} while (0)

/* The fields of a row in a standard layout, each column's parser in a
 * straight line: past the last, or NULL to decline the row. */
static const char *std_fields(struct mp_csv_reader *r, struct fast_row *f, const char *p,
                              const char *line, int layout)
{
	STD_FIELD(MP_CSV_TS_NS);
	STD_FIELD(MP_CSV_OP);
	STD_FIELD(MP_CSV_ID);
	STD_FIELD(MP_CSV_SIZE);
	STD_FIELD(MP_CSV_REQUESTED);
	STD_FIELD(MP_CSV_ADDRESS);
	STD_FIELD(MP_CSV_DEVICE);
	STD_FIELD(MP_CSV_STREAM);
	STD_FIELD(MP_CSV_PID);
	STD_NAME(MP_CSV_PHASE, 0);
	STD_NAME(MP_CSV_API, 1);
	STD_FIELD(MP_CSV_DEVICE_FREE);
	if (layout == MP_CSV_LAYOUT_STD_THREAD)
		STD_FIELD(MP_CSV_THREAD);
	else
		f->v[MP_CSV_THREAD] = 0;
	f->v[MP_CSV_DURATION_NS] = 0;
	return field(f, MP_CSV_STACK, p, line);
}

/* The fields of a row in any layout, by the header's column of each. */
static const char *any_fields(struct mp_csv_reader *r, struct fast_row *f, const char *p,
                              const char *line)
{
	int i, last = r->n_header_fields - 1;

	for (i = 0; i < r->n_absent; i++) /* the others are all set below */
		f->v[r->absent[i]] = f->len[r->absent[i]] = 0;
	for (i = 0;; i++) {
		if (!(p = field(f, r->field_column[i], p, line)))
			return NULL;
		if (i == last)
			return p;
		if (*p++ != ',')
			return NULL; /* fewer fields than the header's, or a bad value */
	}
}

int mp_csv_fast_row(struct mp_csv_reader *r, struct mp_csv_row *row)
{
	const char *line = (const char *)r->buf + r->buf_pos, *p = line;
	struct fast_row f;

	if (r->buf_pos >= r->fast_end || *p == '#' || *p == '\n' || *p == '\r')
		return 0; /* no whole line here, or a comment or blank line */
	f.given = 0;
	f.op = 0;
	f.stack_col = 0;
	f.same = 0;
	p = r->layout ? std_fields(r, &f, p, line, r->layout) : any_fields(r, &f, p, line);
	if (!p)
		return 0;
	if (*p == '\r' && p[1] == '\n')
		p++;
	if (*p != '\n' || !plain(&f))
		return 0; /* more fields than the header's, or a bad value */
	if ((int64_t)f.v[MP_CSV_TS_NS] < r->prev_ts)
		return 0; /* time going back: the general path says so */
	r->prev_ts = (int64_t)f.v[MP_CSV_TS_NS];
	r->prev_ts_line = r->line;
	fill_row(&f, row, r->line);
	r->record_line = r->line++;
	r->col = 1;
	r->buf_pos = (size_t)(p + 1 - (const char *)r->buf);
	return 1;
}
