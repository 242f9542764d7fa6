/*
 * import/csv.c - the memprof CSV reader: an RFC 4180 record scanner over a
 * buffered stream, a header that maps named columns, and per-field value
 * checks.  Every error names file, line and column.  No store access.
 */
#include "import/csv_reader.h"
#include "util/limits.h"
#include "util/op_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const mp_csv_column_names[MP_CSV_N_COLUMNS] = {
        "ts_ns", "op",    "id",  "size",        "requested", "address", "device",      "stream",
        "pid",   "phase", "api", "device_free", "thread",    "stack",   "duration_ns",
};

static int fill(struct mp_csv_reader *r, struct mp_error *err)
{
	const unsigned char *nl;
	size_t n;

	if (r->eof)
		return 0;
	n = fread(r->buf, 1, READ_CHUNK, r->f);
	if (n == 0) {
		if (ferror(r->f))
			return mp_err(err, MP_EIO, "cannot read '%s': %s", r->name,
			              strerror(errno));
		r->eof = 1;
		return 0;
	}
	r->buf_len = n;
	r->buf_pos = 0;
	memset(r->buf + n, 0, READ_PAD);
	nl = memrchr(r->buf, '\n', n);
	r->fast_end = nl ? (size_t)(nl - r->buf) + 1 : 0;
	return 1;
}

/* Next byte (advancing line and column), -1 at the end, or -2 on a read error. */
static inline int next_byte(struct mp_csv_reader *r, struct mp_error *err)
{
	int c, rc;

	if (r->buf_pos == r->buf_len) {
		rc = fill(r, err);
		if (rc <= 0)
			return rc < 0 ? -2 : -1;
	}
	c = r->buf[r->buf_pos++];
	if (c == '\n') {
		r->line++;
		r->col = 1;
	} else {
		r->col++;
	}
	return c;
}

static int scratch_put(struct mp_csv_reader *r, int c, struct mp_error *err)
{
	if (r->scratch_len == r->scratch_cap) {
		size_t cap = r->scratch_cap * 2;
		char *p;

		if (cap > MAX_RECORD_BYTES)
			return mp_err(err, MP_EFORMAT, "record too long '%s:%lld': over %d MiB",
			              r->name, (long long)r->record_line, MAX_RECORD_BYTES >> 20);
		p = realloc(r->scratch, cap);
		if (!p)
			return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", r->name);
		r->scratch = p;
		r->scratch_cap = cap;
	}
	r->scratch[r->scratch_len++] = (char)c;
	return 0;
}

static void field_begin(struct mp_csv_reader *r, int64_t line, int64_t col)
{
	if (r->n_fields < MAX_FIELDS) {
		struct field *f = &r->fields[r->n_fields];

		f->off = r->scratch_len;
		f->line = line;
		f->col = col;
	}
}

static void field_end(struct mp_csv_reader *r, int strip_cr)
{
	if (r->n_fields < MAX_FIELDS) {
		struct field *f = &r->fields[r->n_fields];

		f->len = r->scratch_len - f->off;
		if (strip_cr && f->len && r->scratch[f->off + f->len - 1] == '\r')
			f->len--;
		r->n_fields++;
	} else {
		r->too_many = 1;
	}
}

enum { FIELD_START, UNQUOTED, QUOTED, AFTER_QUOTE };
enum { FAST_NO, FAST_RECORD, FAST_SKIPPED };

/* The first ',' in [q, end), or end: a word at a time (an exact zero-byte
 * test of the word xor ','), then byte by byte. */
static inline const char *next_comma(const char *q, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t commas = 0x2c2c2c2c2c2c2c2cULL, low7 = 0x7f7f7f7f7f7f7f7fULL;

	for (; end - q >= 8; q += 8) {
		uint64_t w, x, m;

		memcpy(&w, q, 8);
		x = w ^ commas;
		m = ~(((x & low7) + low7) | x | low7); /* 0x80 in each byte that was ',' */
		if (m)
			return q + (__builtin_ctzll(m) >> 3);
	}
#endif
	while (q < end && *q != ',')
		q++;
	return q;
}

/*
 * The fast path: a whole line in the buffer with no quote in it is split in
 * place, fields pointing into the buffer (valid until the next record).
 * Anything else (quotes, a line across the buffer's end) takes the slow path.
 */
static int scan_fast(struct mp_csv_reader *r)
{
	const char *start = (const char *)r->buf + r->buf_pos;
	const char *end = (const char *)r->buf + r->buf_len, *nl, *line_end, *p, *q;

	nl = memchr(start, '\n', (size_t)(end - start));
	if (!nl)
		return FAST_NO;
	line_end = nl > start && nl[-1] == '\r' ? nl - 1 : nl;
	if (line_end == start || *start == '#') { /* blank or comment line */
		r->buf_pos += (size_t)(nl - start) + 1;
		r->line++;
		return FAST_SKIPPED;
	}
	if (memchr(start, '"', (size_t)(line_end - start)))
		return FAST_NO; /* quoted fields: the slow path */
	r->n_fields = 0;
	r->too_many = 0;
	for (p = start;; p = q + 1) {
		q = next_comma(p, line_end);
		if (r->n_fields < MAX_FIELDS) {
			struct field *f = &r->fields[r->n_fields++];

			f->ptr = p;
			f->len = (size_t)(q - p);
			f->line = r->line;
			f->col = (int64_t)(p - start) + 1;
		} else {
			r->too_many = 1;
		}
		if (q == line_end)
			break;
	}
	r->record_line = r->line;
	r->buf_pos += (size_t)(nl - start) + 1;
	r->line++;
	r->col = 1;
	return FAST_RECORD;
}

/* Point the fields of a record scanned by the slow path into scratch. */
static int fields_done(struct mp_csv_reader *r)
{
	int i;

	for (i = 0; i < r->n_fields; i++)
		r->fields[i].ptr = r->scratch + r->fields[i].off;
	return 1;
}

/* Scan one record into fields.  1 record, 0 end of input, < 0 error. */
static int scan_record(struct mp_csv_reader *r, struct mp_error *err)
{
	int state = FIELD_START, c, started = 0, fast;
	int64_t qline = 0, qcol = 0;

	for (;;) {
		if (r->buf_pos == r->buf_len) {
			int rc = fill(r, err);

			if (rc < 0)
				return rc;
			if (rc == 0)
				break; /* the slow path sees the end */
		}
		fast = scan_fast(r);
		if (fast == FAST_RECORD)
			return 1;
		if (fast == FAST_NO)
			break;
	}
	r->scratch_len = 0;
	r->n_fields = 0;
	r->too_many = 0;
	r->record_line = r->line;
	for (;;) {
		int64_t line = r->line, col = r->col;

		c = next_byte(r, err);
		if (c == -2)
			return err ? err->code : MP_EIO;
		if (c == -1) {
			if (state == QUOTED)
				return mp_err(
				        err, MP_EFORMAT,
				        "unterminated quoted field '%s:%lld:%lld': no closing "
				        "'\"' before the end of the file",
				        r->name, (long long)qline, (long long)qcol);
			if (!started)
				return 0;
			if (state == FIELD_START) /* the file ends right after a ',' */
				field_begin(r, line, col);
			field_end(r, state != AFTER_QUOTE);
			return fields_done(r);
		}
		if (!started && c == '#') { /* comment line */
			while ((c = next_byte(r, err)) >= 0 && c != '\n')
				;
			if (c == -2)
				return err ? err->code : MP_EIO;
			r->record_line = r->line;
			continue;
		}
		if (!started && c == '\n') { /* blank line */
			r->record_line = r->line;
			continue;
		}
		started = 1;
		switch (state) {
		case FIELD_START:
			field_begin(r, line, col);
			if (c == '"') {
				state = QUOTED;
				qline = line;
				qcol = col;
				break;
			}
			state = UNQUOTED;
			/* fall through */
		case UNQUOTED:
			if (c == ',') {
				field_end(r, 0);
				state = FIELD_START;
			} else if (c == '\n') {
				field_end(r, 1);
				return fields_done(r);
			} else if (c == '"') {
				return mp_err(err, MP_EFORMAT,
				              "stray quote '%s:%lld:%lld': a field with '\"' in it "
				              "must be quoted, with the quote doubled",
				              r->name, (long long)line, (long long)col);
			} else if (scratch_put(r, c, err) < 0) {
				return err ? err->code : MP_EFORMAT;
			}
			break;
		case QUOTED:
			if (c == '"')
				state = AFTER_QUOTE;
			else if (scratch_put(r, c, err) < 0)
				return err ? err->code : MP_EFORMAT;
			break;
		case AFTER_QUOTE:
			if (c == '"') {
				state = QUOTED;
				if (scratch_put(r, c, err) < 0)
					return err ? err->code : MP_EFORMAT;
			} else if (c == ',') {
				field_end(r, 0);
				state = FIELD_START;
			} else if (c == '\n') {
				field_end(r, 0);
				return fields_done(r);
			} else if (c != '\r') {
				return mp_err(
				        err, MP_EFORMAT,
				        "text after closing quote '%s:%lld:%lld': expected ',' "
				        "or the end of the line",
				        r->name, (long long)line, (long long)col);
			}
			break;
		}
	}
}

static inline void trim(const char **s, size_t *n)
{
	if (*n && **s != ' ' && **s != '\t' && (*s)[*n - 1] != ' ' && (*s)[*n - 1] != '\t')
		return; /* the common case: nothing to trim */
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* The next record that is not a blank line: a line holding only "\r" scans
 * as one empty field on the slow path; the fast path skips it itself. */
static int next_record(struct mp_csv_reader *r, struct mp_error *err)
{
	int rc;

	do
		rc = scan_record(r, err);
	while (rc == 1 && r->n_fields == 1 && r->fields[0].len == 0);
	return rc;
}

static int read_header(struct mp_csv_reader *r, struct mp_error *err)
{
	static const int required[] = {MP_CSV_TS_NS, MP_CSV_OP, MP_CSV_ID, MP_CSV_SIZE};
	int rc, i, c;

	rc = next_record(r, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return mp_err(err, MP_EFORMAT,
		              "empty trace '%s': no header line (expected 'ts_ns,op,id,size,...')",
		              r->name);
	if (r->too_many)
		return mp_err(err, MP_EFORMAT, "bad header '%s:%lld': more than %d columns",
		              r->name, (long long)r->record_line, MP_CSV_N_COLUMNS);
	for (c = 0; c < MP_CSV_N_COLUMNS; c++)
		r->column_field[c] = -1;
	for (i = 0; i < r->n_fields; i++) {
		const char *s = r->fields[i].ptr;
		size_t n = r->fields[i].len;

		trim(&s, &n);
		for (c = 0; c < MP_CSV_N_COLUMNS; c++)
			if (strlen(mp_csv_column_names[c]) == n &&
			    memcmp(mp_csv_column_names[c], s, n) == 0)
				break;
		if (c == MP_CSV_N_COLUMNS)
			return mp_err(
			        err, MP_EFORMAT,
			        "unknown column '%s:%lld:%lld': '%.*s' (columns are ts_ns, op, "
			        "id, size, requested, address, device, stream, pid, phase, api, "
			        "device_free, thread, stack, duration_ns)",
			        r->name, (long long)r->fields[i].line, (long long)r->fields[i].col,
			        (int)(n > 40 ? 40 : n), s);
		if (r->column_field[c] >= 0)
			return mp_err(err, MP_EFORMAT, "duplicate column '%s:%lld:%lld': '%s'",
			              r->name, (long long)r->fields[i].line,
			              (long long)r->fields[i].col, mp_csv_column_names[c]);
		r->column_field[c] = i;
		r->field_column[i] = (unsigned char)c;
	}
	for (i = 0; i < (int)(sizeof(required) / sizeof(required[0])); i++)
		if (r->column_field[required[i]] < 0)
			return mp_err(err, MP_EFORMAT,
			              "missing column '%s:%lld': the header must name '%s'",
			              r->name, (long long)r->record_line,
			              mp_csv_column_names[required[i]]);
	r->n_header_fields = r->n_fields;
	for (c = 0; c < MP_CSV_N_COLUMNS; c++)
		if (r->column_field[c] < 0)
			r->absent[r->n_absent++] = (unsigned char)c;
	return 0;
}

int mp_csv_open(struct mp_csv_reader **out, FILE *f, const char *name, struct mp_error *err)
{
	struct mp_csv_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->name = strdup(name)) ||
	    !(r->mem = calloc(1, READ_PAD + READ_CHUNK + READ_PAD)) ||
	    !(r->scratch = malloc(4096))) {
		mp_csv_close(r);
		return mp_err(err, MP_ENOMEM, "out of memory reading '%s'", name);
	}
	r->buf = r->mem + READ_PAD;
	r->f = f;
	r->scratch_cap = 4096;
	r->line = 1;
	r->col = 1;
	r->prev_ts = INT64_MIN;
	if (fill(r, err) < 0) {
		mp_csv_close(r);
		return err ? err->code : MP_EIO;
	}
	if (r->buf_len >= 3 && memcmp(r->buf, "\xef\xbb\xbf", 3) == 0)
		r->buf_pos = 3; /* a UTF-8 byte-order mark, as spreadsheets write */
	if (read_header(r, err) < 0) {
		mp_csv_close(r);
		return err ? err->code : MP_EFORMAT;
	}
	r->layout = mp_csv_fast_layout(r);
	*out = r;
	return 0;
}

void mp_csv_close(struct mp_csv_reader *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->mem);
	free(r->scratch);
	free(r);
}

/* The text of column c in the current record (empty when the column is absent). */
static void column_text(const struct mp_csv_reader *r, int c, const char **s, size_t *n)
{
	int i = r->column_field[c];

	if (i < 0) {
		*s = "";
		*n = 0;
		return;
	}
	*s = r->fields[i].ptr;
	*n = r->fields[i].len;
}

static int value_error(const struct mp_csv_reader *r, int c, const char *expected,
                       struct mp_error *err)
{
	const struct field *f = &r->fields[r->column_field[c]];
	char shown[44];
	size_t i, n = f->len < 40 ? f->len : 40;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)f->ptr[i];

		shown[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	shown[n] = '\0';
	if (f->len > 40)
		strcpy(shown + 40, "...");
	return mp_err(err, MP_EFORMAT, "invalid %s '%s:%lld:%lld': expected %s, found '%s'",
	              mp_csv_column_names[c], r->name, (long long)f->line, (long long)f->col,
	              expected, shown);
}

/* Parse an unsigned decimal, or hex with 0x when hex_ok.  0 ok, -1 bad, -2 overflow. */
static int parse_u64(const char *s, size_t n, int hex_ok, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (n == 0)
		return -1;
	if (n <= 19 && s[0] != '0') { /* the usual case: 19 digits cannot overflow */
		for (; i < n; i++) {
			unsigned d = (unsigned)(unsigned char)s[i] - '0';

			if (d > 9)
				return -1;
			v = v * 10 + d;
		}
		*out = v;
		return 0;
	}
	if (hex_ok && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < n; i++) {
			int d;
			char ch = s[i];

			if (ch >= '0' && ch <= '9')
				d = ch - '0';
			else if (ch >= 'a' && ch <= 'f')
				d = ch - 'a' + 10;
			else if (ch >= 'A' && ch <= 'F')
				d = ch - 'A' + 10;
			else
				return -1;
			if (v >> 60)
				return -2;
			v = (v << 4) | (uint64_t)d;
		}
		*out = v;
		return 0;
	}
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return -2;
	}
	*out = v;
	return 0;
}

/* Read column c as an unsigned integer no larger than max; dflt when empty.
 * Inlined: parse_values reads eleven columns a row this way. */
static inline __attribute__((always_inline)) int column_u64(const struct mp_csv_reader *r, int c,
                                                            int hex_ok, uint64_t max, uint64_t dflt,
                                                            const char *expected, uint64_t *out,
                                                            struct mp_error *err)
{
	const char *s;
	size_t n;
	int rc;

	column_text(r, c, &s, &n);
	trim(&s, &n);
	if (n == 0) {
		*out = dflt;
		return 0;
	}
	rc = parse_u64(s, n, hex_ok, out);
	if (rc == 0 && *out <= max)
		return 0;
	return value_error(r, c, expected, err);
}

static int check_columns(const struct mp_csv_reader *r, struct mp_error *err)
{
	if (r->too_many || r->n_fields != r->n_header_fields)
		return mp_err(err, MP_EFORMAT,
		              "wrong number of fields '%s:%lld': expected %d as in the header, "
		              "found %s%d",
		              r->name, (long long)r->record_line, r->n_header_fields,
		              r->too_many ? "more than " : "",
		              r->too_many ? MAX_FIELDS : r->n_fields);
	return 0;
}

/* Column c as text (NULL when empty).  A NUL byte is refused: names are
 * C strings once read back, and one would cut the name short on export. */
static int text_column(const struct mp_csv_reader *r, int c, const char **s, size_t *n,
                       struct mp_error *err)
{
	const char *nul;

	column_text(r, c, s, n);
	if (*n == 0)
		*s = NULL;
	if (*n == 0 || !(nul = memchr(*s, '\0', *n)))
		return 0;
	return mp_err(err, MP_EFORMAT,
	              "invalid %s '%s:%lld:%lld': a NUL byte at byte %zu of the field (names "
	              "are text without NUL)",
	              mp_csv_column_names[c], r->name,
	              (long long)r->fields[r->column_field[c]].line,
	              (long long)r->fields[r->column_field[c]].col, (size_t)(nul - *s) + 1);
}

static int required(const struct mp_csv_reader *r, int c, int op, struct mp_error *err)
{
	const char *s;
	size_t n;

	column_text(r, c, &s, &n);
	trim(&s, &n);
	if (n)
		return 0;
	return mp_err(err, MP_EFORMAT, "missing %s '%s:%lld:%lld': '%s' events need one",
	              mp_csv_column_names[c], r->name,
	              (long long)r->fields[r->column_field[c]].line,
	              (long long)r->fields[r->column_field[c]].col, mp_op_name(op));
}

static int parse_values(struct mp_csv_reader *r, struct mp_csv_row *row, struct mp_error *err)
{
	struct memprof_event *ev = &row->ev;
	const uint64_t i64max = INT64_MAX;
	uint64_t v;
	const char *s;
	size_t n;
	int op;

	memset(row, 0, sizeof(*row));
	row->line = r->record_line;
	column_text(r, MP_CSV_OP, &s, &n);
	trim(&s, &n);
	op = mp_op_from_name(s, n);
	if (!op) {
		char expected[256];

		snprintf(expected, sizeof(expected), "one of %s", mp_op_name_list());
		return value_error(r, MP_CSV_OP, expected, err);
	}
	ev->op = op;
	if (required(r, MP_CSV_TS_NS, op, err) < 0 ||
	    column_u64(r, MP_CSV_TS_NS, 0, i64max, 0, "a non-negative decimal integer", &v, err) <
	            0)
		return MP_EFORMAT;
	ev->ts_ns = (int64_t)v;
	if (op != MEMPROF_OP_OOM && op != MEMPROF_OP_PHASE_BEGIN && op != MEMPROF_OP_PHASE_END &&
	    required(r, MP_CSV_ID, op, err) < 0)
		return MP_EFORMAT;
	if (column_u64(r, MP_CSV_ID, 0, i64max, 0, "a non-negative decimal integer", &v, err) < 0)
		return MP_EFORMAT;
	ev->alloc_id = (int64_t)v;
	if ((op == MEMPROF_OP_ALLOC || op == MEMPROF_OP_PREEXISTING || op == MEMPROF_OP_RESERVE ||
	     op == MEMPROF_OP_MAP || op == MEMPROF_OP_OOM) &&
	    required(r, MP_CSV_SIZE, op, err) < 0)
		return MP_EFORMAT;
	if (column_u64(r, MP_CSV_SIZE, 0, MP_MAX_SIZE_BYTES - 1, 0,
	               "a size in bytes (decimal, below 2^56)", &v, err) < 0)
		return MP_EFORMAT;
	ev->size_bytes = (int64_t)v;
	if (column_u64(r, MP_CSV_REQUESTED, 0, MP_MAX_SIZE_BYTES - 1, v,
	               "a size in bytes (decimal, below 2^56)", &v, err) < 0)
		return MP_EFORMAT;
	ev->requested_bytes = (int64_t)v;
	if ((op == MEMPROF_OP_ALLOC || op == MEMPROF_OP_PREEXISTING) &&
	    ev->requested_bytes > ev->size_bytes)
		return mp_err(err, MP_EFORMAT,
		              "invalid requested '%s:%lld:%lld': %lld bytes requested but only "
		              "%lld granted (requested must not exceed size)",
		              r->name, (long long)r->fields[r->column_field[MP_CSV_REQUESTED]].line,
		              (long long)r->fields[r->column_field[MP_CSV_REQUESTED]].col,
		              (long long)ev->requested_bytes, (long long)ev->size_bytes);
	if (column_u64(r, MP_CSV_ADDRESS, 1, UINT64_MAX, 0,
	               "an address (0x-prefixed hex or decimal)", &ev->address, err) < 0 ||
	    column_u64(r, MP_CSV_DEVICE, 0, INT32_MAX, 0, "a device ordinal (0 or more)", &v, err) <
	            0)
		return MP_EFORMAT;
	ev->device = (int32_t)v;
	if (column_u64(r, MP_CSV_STREAM, 1, UINT64_MAX, 0, "a stream (decimal or 0x-prefixed hex)",
	               &ev->stream, err) < 0 ||
	    column_u64(r, MP_CSV_PID, 0, i64max, 0, "a process id (decimal)", &v, err) < 0)
		return MP_EFORMAT;
	row->pid = (int64_t)v;
	if (column_u64(r, MP_CSV_DEVICE_FREE, 0, i64max, (uint64_t)-1, "free bytes (decimal)", &v,
	               err) < 0)
		return MP_EFORMAT;
	ev->device_free_bytes = (int64_t)v;
	if (column_u64(r, MP_CSV_THREAD, 0, i64max, 0, "a thread id (decimal)", &v, err) < 0)
		return MP_EFORMAT;
	ev->thread = (int64_t)v;
	if (column_u64(r, MP_CSV_DURATION_NS, 0, i64max, 0,
	               "a call duration in ns (decimal; empty when unknown)", &v, err) < 0)
		return MP_EFORMAT;
	ev->duration_ns = (int64_t)v;
	if (text_column(r, MP_CSV_PHASE, &row->phase, &row->phase_len, err) < 0 ||
	    text_column(r, MP_CSV_API, &row->api, &row->api_len, err) < 0 ||
	    text_column(r, MP_CSV_STACK, &row->stack, &row->stack_len, err) < 0)
		return MP_EFORMAT;
	if (r->column_field[MP_CSV_STACK] >= 0)
		row->stack_col = r->fields[r->column_field[MP_CSV_STACK]].col;
	if ((op == MEMPROF_OP_PHASE_BEGIN || op == MEMPROF_OP_PHASE_END) && !row->phase) {
		if (r->column_field[MP_CSV_PHASE] < 0)
			return mp_err(err, MP_EFORMAT,
			              "missing phase '%s:%lld': '%s' events need a phase column",
			              r->name, (long long)r->record_line, mp_op_name(op));
		return required(r, MP_CSV_PHASE, op, err);
	}
	return 0;
}

int mp_csv_next(struct mp_csv_reader *r, struct mp_csv_row *row, struct mp_error *err)
{
	int rc;

	if (mp_csv_fast_row(r, row))
		return 1;                              /* in time order: it checked */
	r->prev_name[0].len = r->prev_name[1].len = 0; /* same_*: the row before */
	rc = next_record(r, err);
	if (rc <= 0)
		return rc;
	if (check_columns(r, err) < 0 || parse_values(r, row, err) < 0)
		return MP_EFORMAT;
	if (row->ev.ts_ns < r->prev_ts)
		return mp_err(err, MP_EFORMAT,
		              "timestamp goes back '%s:%lld': %lld is before %lld on line %lld "
		              "(events must be in time order)",
		              r->name, (long long)row->line, (long long)row->ev.ts_ns,
		              (long long)r->prev_ts, (long long)r->prev_ts_line);
	r->prev_ts = row->ev.ts_ns;
	r->prev_ts_line = row->line;
	return 1;
}

int mp_csv_probe(const char *head, size_t n)
{
	const char *p = head, *end = head + n;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;

	while (p < end) { /* the first line that is not a comment or blank */
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		if (len && *p != '#' && *p != '\r')
			return memmem(p, len, "ts_ns", 5) && memmem(p, len, "op", 2);
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}
