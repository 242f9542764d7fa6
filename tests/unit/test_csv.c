/*
 * tests/unit/test_csv.c - src/import/csv.c: header mapping, values, quoting,
 * and the position and wording of every kind of error.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "import/csv.h"

struct parsed {
	struct mp_csv_row rows[16];
	char texts[16][3][128]; /* phase, api, stack copies */
	int n;
	int rc;
	struct mp_error err;
};

static void copy_text(char *dst, const char *s, size_t n)
{
	if (!s)
		n = 0;
	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

static void parse(const char *text, struct parsed *p)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct mp_csv_reader *r;

	memset(p, 0, sizeof(*p));
	cr_assert_not_null(f);
	p->rc = mp_csv_open(&r, f, "t.csv", &p->err);
	if (p->rc == 0) {
		while (p->n < 16 && (p->rc = mp_csv_next(r, &p->rows[p->n], &p->err)) == 1) {
			struct mp_csv_row *row = &p->rows[p->n];

			copy_text(p->texts[p->n][0], row->phase, row->phase_len);
			copy_text(p->texts[p->n][1], row->api, row->api_len);
			copy_text(p->texts[p->n][2], row->stack, row->stack_len);
			p->n++;
		}
		mp_csv_close(r);
	}
	fclose(f);
}

static void expect_error(const char *text, const char *fragment)
{
	struct parsed p;

	parse(text, &p);
	cr_assert_eq(p.rc, MP_EFORMAT, "expected an error containing '%s', got rc %d", fragment,
	             p.rc);
	cr_assert(strstr(p.err.msg, fragment), "message '%s' lacks '%s'", p.err.msg, fragment);
}

Test(csv, minimal_columns_and_defaults)
{
	struct parsed p;

	parse("ts_ns,op,id,size\n5,alloc,1,4096\n9,free,1,\n", &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 2);
	cr_assert_eq(p.rows[0].ev.ts_ns, 5);
	cr_assert_eq(p.rows[0].ev.op, MEMPROF_OP_ALLOC);
	cr_assert_eq(p.rows[0].ev.size_bytes, 4096);
	cr_assert_eq(p.rows[0].ev.requested_bytes, 4096); /* defaults to size */
	cr_assert_eq(p.rows[0].ev.device_free_bytes, -1);
	cr_assert_eq(p.rows[0].line, 2);
	cr_assert_eq(p.rows[1].ev.op, MEMPROF_OP_FREE);
	cr_assert_eq(p.rows[1].ev.size_bytes, 0);
}

Test(csv, columns_in_any_order_hex_and_spaces)
{
	struct parsed p;

	parse("# comment\n\nop , size,ts_ns,id,address,stream,device\r\n"
	      " alloc ,512, 7 ,3,0xFFFFFFFFFFFFFFFF,0x10,2\r\n",
	      &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 1);
	cr_assert_eq(p.rows[0].ev.ts_ns, 7);
	cr_assert_eq(p.rows[0].ev.address, UINT64_MAX);
	cr_assert_eq(p.rows[0].ev.stream, 16);
	cr_assert_eq(p.rows[0].ev.device, 2);
	cr_assert_eq(p.rows[0].line, 4);
}

Test(csv, quoted_fields)
{
	struct parsed p;

	parse("ts_ns,op,id,size,phase,api,stack\n"
	      "1,phase_begin,,,\"a, \"\"b\"\"\nc\",,\n"
	      "2,alloc,1,8,x,\"cudaMalloc\",\"f@a,b.py:1\"\n",
	      &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 2);
	cr_assert_str_eq(p.texts[0][0], "a, \"b\"\nc");
	cr_assert_eq(p.rows[1].line, 4); /* the quoted newline counts */
	cr_assert_str_eq(p.texts[1][1], "cudaMalloc");
	cr_assert_str_eq(p.texts[1][2], "f@a,b.py:1");
}

Test(csv, header_errors)
{
	expect_error("", "empty trace 't.csv'");
	expect_error("# only a comment\n", "no header line");
	expect_error("ts_ns,op,id,size,colour\n", "unknown column 't.csv:1:18': 'colour'");
	expect_error("ts_ns,op,id,size,op\n", "duplicate column 't.csv:1:18': 'op'");
	expect_error("ts_ns,op,id\n", "missing column 't.csv:1': the header must name 'size'");
}

Test(csv, value_errors_name_line_and_column)
{
	expect_error("ts_ns,op,id,size\n1,alloc,1,abc\n",
	             "invalid size 't.csv:2:11': expected a size in bytes (decimal, below 2^56), "
	             "found 'abc'");
	expect_error("ts_ns,op,id,size\n1,alloc,1,-5\n", "invalid size 't.csv:2:11'");
	expect_error("ts_ns,op,id,size\n1,alloc,1,99999999999999999999\n", "invalid size");
	expect_error("ts_ns,op,id,size\n1,alloc,1,9223372036854775808\n", "invalid size");
	expect_error("ts_ns,op,id,size,address\n1,alloc,1,8,0xzz\n",
	             "invalid address 't.csv:2:13'");
	expect_error("ts_ns,op,id,size\n1,allocate,1,8\n", "invalid op 't.csv:2:3'");
	expect_error("ts_ns,op,id,size\n1,allocate,1,8\n", "one of alloc, free");
	expect_error("ts_ns,op,id,size,device\n1,alloc,1,8,4294967296\n", "invalid device");
	expect_error("ts_ns,op,id,size\n1,alloc,,8\n", "missing id 't.csv:2:9'");
	expect_error("ts_ns,op,id,size\n1,alloc,1,\n", "missing size");
	expect_error("ts_ns,op,id,size,requested\n1,alloc,1,8,9\n",
	             "invalid requested 't.csv:2:13': 9 bytes requested but only 8 granted");
	expect_error("ts_ns,op,id,size\n1,phase_begin,,\n", "need a phase column");
	expect_error("ts_ns,op,id,size,phase\n1,phase_end,,,\n", "missing phase 't.csv:2:15'");
}

Test(csv, record_errors)
{
	expect_error("ts_ns,op,id,size\n1,alloc,1\n",
	             "wrong number of fields 't.csv:2': expected 4 as in the header, found 3");
	expect_error("ts_ns,op,id,size\n1,alloc,1,8,9,9,9,9,9,9,9,9,9,9,9,9,9\n",
	             "found more than");
	expect_error("ts_ns,op,id,size\n1,al\"loc,1,8\n", "stray quote 't.csv:2:5'");
	expect_error("ts_ns,op,id,size,phase\n1,alloc,1,8,\"abc\n",
	             "unterminated quoted field 't.csv:2:13'");
	expect_error("ts_ns,op,id,size,phase\n1,alloc,1,8,\"a\"b\n",
	             "text after closing quote 't.csv:2:16'");
	expect_error("# c\n\nts_ns,op,id,size\n\n# c\n5,alloc,1,8\n4,alloc,2,8\n",
	             "timestamp goes back 't.csv:7': 4 is before 5 on line 6");
}

Test(csv, end_of_file_without_newline)
{
	struct parsed p;

	parse("ts_ns,op,id,size\n1,alloc,1,\"8\"", &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 1);
	cr_assert_eq(p.rows[0].ev.size_bytes, 8);
	/* found by the fuzzer: a record that is a lone ',' at the end of the file */
	expect_error("ts_ns,op,id,size\n1,alloc,1,8\n,",
	             "wrong number of fields 't.csv:3': expected 4 as in the header, found 2");
}

Test(csv, carriage_return_lines_alike_on_both_paths)
{
	struct parsed p;

	/* a line that is only "\r" is blank on the fast and the slow path */
	parse("ts_ns,op,id,size,phase\n\r\n1,alloc,1,8,\"q\"\n\r\n2,alloc,2,8,x\n", &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 2);
	/* a "\r" that starts a line belongs to its first field on both paths */
	expect_error("ts_ns,op,id,size\n\r1,alloc,1,10\n", "invalid ts_ns 't.csv:2:1'");
	expect_error("ts_ns,op,id,size\n\r1,alloc,1,\"10\"\n", "invalid ts_ns 't.csv:2:1'");
}

Test(csv, probe)
{
	const char *good = "# x\nts_ns,op,id,size\n";
	const char *bad = "Thread,Time,Action,Pointer,Size,Stream\n";

	cr_assert(mp_csv_probe(good, strlen(good)));
	cr_assert_not(mp_csv_probe(bad, strlen(bad)));
	cr_assert_not(mp_csv_probe("\x89PNG\r\n", 6));
}

/* Numbers at the edges of the unchecked fast parse (19 digits) and of the
 * checked one (20), leading zeros, and fields split a word at a time: long
 * and short fields, commas at every offset of an 8-byte word. */
Test(csv, number_widths_and_field_offsets)
{
	struct parsed p;

	parse("ts_ns,op,id,size,thread,stream\n"
	      "9223372036854775807,alloc,0000000000000000000000001,72057594037927935,"
	      "18446744073709551,0x0\n"
	      "9223372036854775807,free,1,0,1,12345678901234567890\n",
	      &p);
	cr_assert_eq(p.rc, 0, "%s", p.err.msg);
	cr_assert_eq(p.n, 2);
	cr_assert_eq(p.rows[0].ev.ts_ns, INT64_MAX);
	cr_assert_eq(p.rows[0].ev.alloc_id, 1);
	cr_assert_eq(p.rows[0].ev.size_bytes, 72057594037927935);
	cr_assert_eq(p.rows[0].ev.thread, 18446744073709551);
	cr_assert_eq(p.rows[1].ev.stream, 12345678901234567890ULL);
	expect_error("ts_ns,op,id,size\n9223372036854775808,alloc,1,8\n", "invalid ts_ns");
	expect_error("ts_ns,op,id,size,stream\n1,alloc,1,8,18446744073709551616\n",
	             "invalid stream");
	expect_error("ts_ns,op,id,size\n1,alloc,1,1234567890123456789\n", "invalid size");
	expect_error("ts_ns,op,id,size\n1,alloc,1,12345678:9\n", "found '12345678:9'");
	for (int pad = 0; pad < 17; pad++) {
		char text[256];

		snprintf(text, sizeof(text), "ts_ns,op,id,size,phase\n%.*s1,alloc,%d,%d,p%.*s\n",
		         pad, "00000000000000000", pad + 1, 8 * pad + 8, pad, "xxxxxxxxxxxxxxxxx");
		parse(text, &p);
		cr_assert_eq(p.rc, 0, "pad %d: %s", pad, p.err.msg);
		cr_assert_eq(p.rows[0].ev.ts_ns, 1, "pad %d", pad);
		cr_assert_eq(p.rows[0].ev.alloc_id, pad + 1, "pad %d", pad);
		cr_assert_eq(p.rows[0].ev.size_bytes, 8 * pad + 8, "pad %d", pad);
		cr_assert_eq(strlen(p.texts[0][0]), (size_t)pad + 1, "pad %d", pad);
	}
}
