/*
 * tests/unit/test_csv_fast.c - src/import/csv_fast.c against the general
 * path of src/import/csv.c: every line at the edges of the fast path (number
 * widths, hex, ranges, quotes, text lengths around 16-byte loads, CRLF) must
 * be taken or declined as expected and give the same row or the same error
 * as the general path, which reads a last line without its line end.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/csv_reader.h"

#define HEADER                                                                                     \
	"ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,"       \
	"stack,duration_ns"

struct result {
	int rc, fast;
	struct mp_csv_row row;
	char text[3][512];
	int null[3];
	char msg[sizeof(((struct mp_error *)0)->msg)];
};

/* Read the one row of HEADER "\n" line end (len bytes); with fast, through mp_csv_fast_row first.
 */
static void read_row_after(const char *header, const char *line, size_t len, const char *end,
                           int fast, struct result *out)
{
	char *text = malloc(strlen(header) + len + 4);
	size_t n = strlen(header) + 1;
	struct mp_csv_reader *r;
	struct mp_error err = {0};
	const char *t[3];
	size_t tl[3];
	FILE *f;

	memset(out, 0, sizeof(*out));
	memcpy(text, header, n - 1);
	text[n - 1] = '\n';
	memcpy(text + n, line, len);
	n += len;
	memcpy(text + n, end, strlen(end));
	n += strlen(end);
	f = fmemopen(text, n, "r");
	cr_assert_not_null(f);
	cr_assert_eq(mp_csv_open(&r, f, "t.csv", &err), 0, "%s", err.msg);
	out->fast = fast && mp_csv_fast_row(r, &out->row);
	out->rc = out->fast ? 1 : mp_csv_next(r, &out->row, &err);
	strcpy(out->msg, err.msg);
	t[0] = out->row.phase, tl[0] = out->row.phase_len;
	t[1] = out->row.api, tl[1] = out->row.api_len;
	t[2] = out->row.stack, tl[2] = out->row.stack_len;
	for (int i = 0; i < 3 && out->rc == 1; i++) {
		out->null[i] = t[i] == NULL;
		cr_assert_lt(tl[i], sizeof(out->text[i]));
		memcpy(out->text[i], t[i] ? t[i] : "", t[i] ? tl[i] : 0);
	}
	mp_csv_close(r);
	fclose(f);
	free(text);
}

static void read_row(const char *line, size_t len, const char *end, int fast, struct result *out)
{
	read_row_after(HEADER, line, len, end, fast, out);
}

static void same_row(const struct mp_csv_row *a, const struct mp_csv_row *b, const char *what)
{
	const struct memprof_event *x = &a->ev, *y = &b->ev;

	cr_assert(x->ts_ns == y->ts_ns && x->op == y->op && x->alloc_id == y->alloc_id &&
	                  x->size_bytes == y->size_bytes &&
	                  x->requested_bytes == y->requested_bytes && x->address == y->address &&
	                  x->device_free_bytes == y->device_free_bytes && x->device == y->device &&
	                  x->stream == y->stream && x->thread == y->thread &&
	                  x->duration_ns == y->duration_ns && x->seq == y->seq &&
	                  x->process_id == y->process_id && x->phase_id == y->phase_id &&
	                  x->stack_id == y->stack_id && x->api_id == y->api_id,
	          "%s: the events differ", what);
	cr_assert(a->line == b->line && a->pid == b->pid && a->phase_len == b->phase_len &&
	                  a->api_len == b->api_len && a->stack_len == b->stack_len &&
	                  a->stack_col == b->stack_col,
	          "%s: the rows differ", what);
}

/* The headers checked: any order (the general layout), and the two the fast
 * path parses in a straight line. */
static const struct {
	const char *header;
	int layout, n;
	int cols[MP_CSV_N_COLUMNS];
} headers[] = {
        {HEADER,
         MP_CSV_LAYOUT_ANY,
         MP_CSV_N_COLUMNS,
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}},
        {"ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,stack",
         MP_CSV_LAYOUT_STD,
         13,
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13}},
        {"ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,stack",
         MP_CSV_LAYOUT_STD_THREAD,
         14,
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}},
};

/* The line of header h with field c replaced by value (len bytes; -1: strlen);
 * 0 when h has no column c. */
static size_t make_line(char *out, int h, int c, const char *value, int len)
{
	static const char *const base[MP_CSV_N_COLUMNS] = {
	        "1000",  "alloc", "7",   "4096", "4000", "0x7f0000001000", "1", "0x10",
	        "31400", "fwd",   "api", "",     "99",   "main@t.py:1",    "12"};
	size_t n = 0;
	int found = 0;

	for (int i = 0; i < headers[h].n; i++) {
		int col = headers[h].cols[i];
		const char *v = col == c ? value : base[col];
		size_t k = col == c && len >= 0 ? (size_t)len : strlen(v);

		found |= col == c;
		if (i)
			out[n++] = ',';
		memcpy(out + n, v, k);
		n += k;
	}
	out[n] = '\0';
	return found ? n : 0;
}

/* Field c as value: taken by the fast path or not as fast says, and alike on
 * both paths, under each header that has column c. */
static void check(int c, const char *value, int len, int fast)
{
	static const char *const ends[][2] = {{"\n", ""}, {"\r\n", "\r"}};
	char line[1024], what[1200];

	for (int h = 0; h < (int)(sizeof(headers) / sizeof(*headers)); h++) {
		size_t n = make_line(line, h, c, value, len);

		for (int e = 0; e < 2 && n; e++) {
			struct result a, b;

			snprintf(what, sizeof(what), "header %d, column %s = '%.*s'%s", h,
			         mp_csv_column_names[c],
			         (int)(len >= 0 ? (size_t)len : strlen(value)), value,
			         e ? " CRLF" : "");
			read_row_after(headers[h].header, line, n, ends[e][0], 1, &a);
			read_row_after(headers[h].header, line, n, ends[e][1], 0, &b);
			/* The declined stacks are declined for the field after them:
			 * last on the line (headers 1 and 2) some end the line well,
			 * and either path may take them (the rows still agree). */
			if (fast || h == 0 || c != MP_CSV_STACK)
				cr_assert_eq(a.fast, fast, "%s: fast path %s", what,
				             a.fast ? "taken" : "declined");
			cr_assert_eq(b.fast, 0);
			cr_assert_eq(a.rc, b.rc, "%s: rc %d, general path %d (%s)", what, a.rc,
			             b.rc, b.msg);
			cr_assert_str_eq(a.msg, b.msg, "%s", what);
			if (a.rc != 1)
				continue;
			same_row(&a.row, &b.row, what);
			for (int i = 0; i < 3; i++) {
				cr_assert_eq(a.null[i], b.null[i], "%s: text %d", what, i);
				cr_assert_str_eq(a.text[i], b.text[i], "%s: text %d", what, i);
			}
		}
	}
}

Test(csv_fast, layouts_of_headers)
{
	for (size_t h = 0; h < sizeof(headers) / sizeof(*headers); h++) {
		struct mp_csv_reader *r;
		struct mp_error err = {0};
		char text[256];
		FILE *f;

		snprintf(text, sizeof(text), "%s\n", headers[h].header);
		f = fmemopen(text, strlen(text), "r");
		cr_assert_eq(mp_csv_open(&r, f, "t.csv", &err), 0, "%s", err.msg);
		cr_assert_eq(mp_csv_fast_layout(r), headers[h].layout, "header %zu", h);
		mp_csv_close(r);
		fclose(f);
	}
}

Test(csv_fast, numbers_around_19_digits)
{
	static const char *const taken[] = {"0",
	                                    "1",
	                                    "1234567",
	                                    "12345678",
	                                    "123456789",
	                                    "123456781234567",
	                                    "1234567812345678",
	                                    "12345678123456789",
	                                    "9223372036854775807",
	                                    "0000000000000000001"};
	static const char *const declined[] = {"9223372036854775808",
	                                       "00000000000000000001",
	                                       "18446744073709551615",
	                                       "99999999999999999999",
	                                       "",
	                                       " 5",
	                                       "5 ",
	                                       "-1",
	                                       "+1",
	                                       "1a",
	                                       "1.5",
	                                       "0x10",
	                                       "\"5\""};

	for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++) {
		check(MP_CSV_TS_NS, taken[i], -1, 1);
		check(MP_CSV_THREAD, taken[i], -1, 1);
		check(MP_CSV_DURATION_NS, taken[i], -1, 1);
	}
	for (size_t i = 0; i < sizeof(declined) / sizeof(*declined); i++) {
		check(MP_CSV_TS_NS, declined[i], -1, 0);
		check(MP_CSV_ID, declined[i], -1, 0);
	}
	check(MP_CSV_THREAD, "", -1, 1);
	check(MP_CSV_DURATION_NS, "", -1, 1);
	check(MP_CSV_PID, "", -1, 1);
	check(MP_CSV_DEVICE_FREE, "", -1, 1);
	check(MP_CSV_DEVICE_FREE, "0", -1, 1);
	check(MP_CSV_DEVICE_FREE, "9223372036854775807", -1, 1);
	check(MP_CSV_DEVICE_FREE, "9223372036854775808", -1, 0);
}

Test(csv_fast, ranges_of_sizes_and_devices)
{
	check(MP_CSV_SIZE, "72057594037927935", -1, 1); /* 2^56 - 1 */
	check(MP_CSV_SIZE, "72057594037927936", -1, 0);
	check(MP_CSV_SIZE, "", -1, 0);      /* an alloc needs one */
	check(MP_CSV_REQUESTED, "", -1, 1); /* defaults to size */
	check(MP_CSV_REQUESTED, "4096", -1, 1);
	check(MP_CSV_REQUESTED, "4097", -1, 0);
	check(MP_CSV_REQUESTED, "72057594037927936", -1, 0);
	check(MP_CSV_DEVICE, "2147483647", -1, 1);
	check(MP_CSV_DEVICE, "2147483648", -1, 0);
	check(MP_CSV_DEVICE, "", -1, 1);
	check(MP_CSV_ID, "", -1, 0);
}

Test(csv_fast, hex_and_decimal_addresses)
{
	static const char *const taken[] = {"0x0",
	                                    "0x1",
	                                    "0XaBcDeF",
	                                    "0x123456789abcdef",
	                                    "0xffffffffffffffff",
	                                    "0x0000000000000001",
	                                    "1844674407370955161",
	                                    "0",
	                                    ""};
	static const char *const declined[] = {"0x00000000000000001",  "0x",   "0x1g", "0xg",
	                                       "18446744073709551615", "0x 1", " 0x1", "x1"};

	for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++) {
		check(MP_CSV_ADDRESS, taken[i], -1, 1);
		check(MP_CSV_STREAM, taken[i], -1, 1);
	}
	for (size_t i = 0; i < sizeof(declined) / sizeof(*declined); i++) {
		check(MP_CSV_ADDRESS, declined[i], -1, 0);
		check(MP_CSV_STREAM, declined[i], -1, 0);
	}
}

Test(csv_fast, ops)
{
	static const char *const ops[] = {"alloc",       "free",      "preexisting",   "reserve",
	                                  "release",     "map",       "unmap",         "oom",
	                                  "phase_begin", "phase_end", "free_requested"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		check(MP_CSV_OP, ops[i], -1, 1);
	check(MP_CSV_OP, "allocx", -1, 0);
	check(MP_CSV_OP, "Alloc", -1, 0);
	check(MP_CSV_OP, "", -1, 0);
	check(MP_CSV_OP, " alloc", -1, 0);
	check(MP_CSV_OP, "fre", -1, 0);
}

/* Text fields of every length around the 16-byte loads, quoted and not. */
Test(csv_fast, text_lengths_and_quotes)
{
	char text[80], quoted[2 * sizeof(text) + 4];

	for (int n = 0; n <= 66; n++) {
		memset(text, 'a' + n % 26, (size_t)n);
		text[n] = '\0';
		snprintf(quoted, sizeof(quoted), "\"%s,%s\"", text, text);
		for (int c = MP_CSV_PHASE; c <= MP_CSV_STACK; c++) {
			if (c != MP_CSV_PHASE && c != MP_CSV_API && c != MP_CSV_STACK)
				continue;
			check(c, text, -1, 1);
			check(c, quoted, -1, 1);
		}
	}
	check(MP_CSV_STACK, "\"\"", -1, 1);
	check(MP_CSV_STACK, "a\rb", -1, 1);
	check(MP_CSV_STACK, "ab\r", -1, 1);
	check(MP_CSV_STACK, "\"a\"\"b\"", -1, 0); /* a doubled quote */
	check(MP_CSV_STACK, "\"a\"x", -1, 0);
	check(MP_CSV_STACK, "\"a\" ", -1, 0);
	check(MP_CSV_STACK, "\"a\"\r", -1, 0);
	check(MP_CSV_STACK, "a\"b", -1, 0);
	check(MP_CSV_STACK, "\"a\nb\"", -1, 0);
	check(MP_CSV_STACK, "\"abc", -1, 0);
	check(MP_CSV_STACK, "a\0b", 3, 0);
	check(MP_CSV_STACK, "\"a\0b\"", 5, 0);
	check(MP_CSV_PHASE, "", -1, 1);
	check(MP_CSV_API, "", -1, 1);
}

Test(csv_fast, field_counts_and_phases)
{
	check(MP_CSV_DURATION_NS, "1,2", -1, 0);
	check(MP_CSV_STACK, "s\n", -1, 0);
	check(MP_CSV_STACK, "a,b", -1, 0); /* one field too many */
	check(MP_CSV_DEVICE_FREE, "1,2", -1, 0);
	check(MP_CSV_OP, "phase_begin", -1, 1);
	check(MP_CSV_PHASE, "", -1, 1);
	{
		struct result a, b;
		char line[512];
		size_t n = make_line(line, 0, MP_CSV_OP, "phase_end", -1);
		char *phase = strstr(line, ",fwd,");

		memmove(phase + 1, phase + 4,
		        strlen(phase + 4) + 1); /* phase_end without a phase */
		n -= 3;
		read_row(line, n, "\n", 1, &a);
		read_row(line, n, "", 0, &b);
		cr_assert_eq(a.fast, 0);
		cr_assert_eq(a.rc, MP_EFORMAT);
		cr_assert_str_eq(a.msg, b.msg);
	}
}

/* A text field last on its line: a '\r' before the '\n' is not part of it. */
Test(csv_fast, text_last_on_crlf_lines)
{
	static const char *const lines[] = {"1,alloc,1,8,abc", "1,alloc,1,8,",
	                                    "1,alloc,1,8,\"a,b\"", "1,alloc,1,8,ab\rc"};

	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		struct result a, b;

		read_row_after("ts_ns,op,id,size,stack", lines[i], strlen(lines[i]), "\r\n", 1, &a);
		read_row_after("ts_ns,op,id,size,stack", lines[i], strlen(lines[i]), "\r", 0, &b);
		cr_assert_eq(a.fast, 1, "'%s'", lines[i]);
		cr_assert_eq(a.rc, 1);
		cr_assert_eq(b.rc, 1, "%s", b.msg);
		same_row(&a.row, &b.row, lines[i]);
		cr_assert_str_eq(a.text[2], b.text[2], "'%s'", lines[i]);
		cr_assert_eq(a.null[2], b.null[2], "'%s'", lines[i]);
	}
}

/* Lines across the 1 MiB read chunk at every offset: the fast path stops at
 * the last whole line, the general path takes the one cut in two. */
Test(csv_fast, lines_across_the_read_chunk)
{
	size_t cap = READ_CHUNK + (1 << 16), n = 0;
	char *text = malloc(cap);
	struct mp_csv_reader *r;
	struct mp_error err = {0};
	struct mp_csv_row row;
	FILE *f;
	int i, rc;

	n = (size_t)sprintf(text, "ts_ns,op,id,size,stack\n");
	for (i = 0; n < READ_CHUNK + 4096; i++)
		n += (size_t)sprintf(text + n, "%d,alloc,%d,%d,\"%.*s\"\n", i, i, i % 977 + 1,
		                     i % 23, "ffffffffffffffffffffffffff");
	f = fmemopen(text, n, "r");
	cr_assert_eq(mp_csv_open(&r, f, "t.csv", &err), 0, "%s", err.msg);
	for (int k = 0; (rc = mp_csv_next(r, &row, &err)) == 1; k++) {
		cr_assert_eq(row.ev.ts_ns, k);
		cr_assert_eq(row.ev.alloc_id, k);
		cr_assert_eq(row.ev.size_bytes, k % 977 + 1);
		cr_assert_eq(row.stack_len, (size_t)(k % 23), "row %d", k);
		cr_assert_eq(row.line, k + 2);
		cr_assert_lt(k, i);
	}
	cr_assert_eq(rc, 0, "%s", err.msg);
	mp_csv_close(r);
	fclose(f);
	free(text);
}

/* The columns most often empty or of one digit, at the edges of that
 * shortcut: the fast path takes or declines them as before, alike. */
Test(csv_fast, short_device_stream_and_device_free)
{
	static const char *const plain[] = {"", "0", "1", "9", "10", "42", "1234567890"};
	static const char *const bad[] = {"x", "-1", " 1", "1 ", "0x", "1x"};

	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		check(MP_CSV_DEVICE, plain[i], -1, 1);
		check(MP_CSV_STREAM, plain[i], -1, 1);
		check(MP_CSV_DEVICE_FREE, plain[i], -1, 1);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		check(MP_CSV_DEVICE, bad[i], -1, 0);
		check(MP_CSV_STREAM, bad[i], -1, 0);
		check(MP_CSV_DEVICE_FREE, bad[i], -1, 0);
	}
	check(MP_CSV_STREAM, "0x0", -1, 1);
	check(MP_CSV_STREAM, "0x1f", -1, 1);
	check(MP_CSV_STREAM, "0X1F", -1, 1);
	check(MP_CSV_DEVICE, "2147483648", -1, 0); /* past INT32_MAX */
	check(MP_CSV_OP, "free_requested", -1, 1);
	check(MP_CSV_OP, "freed", -1, 0);
	check(MP_CSV_OP, "alloc_", -1, 0);
}

/*
 * same_phase and same_api: set only where the row's name is the previous
 * row's, not empty, byte for byte; set on the rows of a standard layout that
 * repeat a plain name of up to 14 bytes (the shortcut works); never after a
 * row the general path read (here: a blank before the id).
 */
Test(csv_fast, names_the_same_as_the_row_before)
{
	static const struct {
		const char *phase, *api;
		int blank, same_phase, same_api; /* -1: either */
	} rows[] = {
	        {"fwd", "torch", 0, 0, 0},
	        {"fwd", "torch", 0, 1, 1},
	        {"fw", "torch", 0, 0, 1},
	        {"fwd", "torc", 0, 0, 0},
	        {"fwdx", "torch", 0, 0, 0},
	        {"fwdx", "torch", 0, 1, 1},
	        {"", "", 0, 0, 0},
	        {"", "torch", 0, 0, 0},
	        {"fwd", "torch", 0, 0, 1},
	        {"abcdefghijklmn", "torch", 0, 0, 1},
	        {"abcdefghijklmn", "torch", 0, 1, 1},
	        {"abcdefghijklmno", "torch", 0, 0, 1},
	        {"abcdefghijklmno", "torch", 0, 0, 1},
	        {"\"fwd\"", "torch", 0, 0, 1},
	        {"fwd", "torch", 0, 0, 1},
	        {"fwd", "torch", 1, 0, 0},
	        {"fwd", "torch", 0, 0, 0},
	        {"fwd", "torch", 0, 1, 1},
	        {"fwd", "\"torch\"", 0, 1, 0},
	        {"fwd", "torch", 0, 1, 0},
	        {"fwd", "torch", 0, 1, 1},
	};
	static const char *const header = headers[1].header;
	const size_t n_rows = sizeof(rows) / sizeof(*rows);
	char text[8192], prev_phase[64] = "", prev_api[64] = "";
	size_t len = (size_t)snprintf(text, sizeof(text), "%s\n", header);
	struct mp_csv_reader *r;
	struct mp_csv_row row;
	struct mp_error err = {0};
	FILE *f;

	for (size_t i = 0; i < n_rows; i++)
		len += (size_t)snprintf(
		        text + len, sizeof(text) - len, "%zu,alloc,%s%zu,8,8,0x10,0,0,1,%s,%s,,\n",
		        100 + i, rows[i].blank ? " " : "", i + 1, rows[i].phase, rows[i].api);
	f = fmemopen(text, len, "r");
	cr_assert_not_null(f);
	cr_assert_eq(mp_csv_open(&r, f, "t.csv", &err), 0, "%s", err.msg);
	for (size_t i = 0; i < n_rows; i++) {
		char phase[64], api[64];
		const char *want_phase = rows[i].phase, *want_api = rows[i].api;
		size_t wp = strlen(want_phase), wa = strlen(want_api);

		cr_assert_eq(mp_csv_next(r, &row, &err), 1, "row %zu: %s", i, err.msg);
		if (want_phase[0] == '"')
			want_phase++, wp -= 2;
		if (want_api[0] == '"')
			want_api++, wa -= 2;
		snprintf(phase, sizeof(phase), "%.*s", (int)row.phase_len,
		         row.phase ? row.phase : "");
		snprintf(api, sizeof(api), "%.*s", (int)row.api_len, row.api ? row.api : "");
		cr_expect(row.phase_len == wp && strncmp(phase, want_phase, wp) == 0,
		          "row %zu: phase '%s'", i, phase);
		cr_expect(row.api_len == wa && strncmp(api, want_api, wa) == 0, "row %zu: api '%s'",
		          i, api);
		if (row.same_phase)
			cr_expect(phase[0] && strcmp(phase, prev_phase) == 0, "row %zu: phase", i);
		if (row.same_api)
			cr_expect(api[0] && strcmp(api, prev_api) == 0, "row %zu: api", i);
		cr_expect_eq(row.same_phase, rows[i].same_phase, "row %zu: same_phase", i);
		cr_expect_eq(row.same_api, rows[i].same_api, "row %zu: same_api", i);
		strcpy(prev_phase, phase);
		strcpy(prev_api, api);
	}
	cr_expect_eq(mp_csv_next(r, &row, &err), 0);
	mp_csv_close(r);
	fclose(f);
}
