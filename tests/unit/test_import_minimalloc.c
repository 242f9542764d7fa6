/*
 * tests/unit/test_import_minimalloc.c - src/import/minimalloc.c end to end
 * into a real trace: the exact events of small files worked out by hand
 * (half-open ties, ids, legacy aliases, gaps, offsets), detection, and every
 * error with its file:line:column, leaving nothing behind.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/memstate.h"
#include "helpers.h"
#include "import/import.h"
#include "store/reader.h"

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(minimalloc, .init = setup, .fini = teardown);

/* Import text as in.csv; format NULL: detect it. */
static int import_text(const char *text, const char *format, struct mp_import_stats *st,
                       struct mp_error *err)
{
	char *in = th_path(dir, "in.csv"), *out = th_path(dir, "out.db");
	struct mp_import_opts o = {.format = format, .overwrite = 1, .tool_version = "test"};
	int rc;

	th_write(in, text);
	memset(err, 0, sizeof(*err));
	rc = mp_import_files((const char *const[]){in}, 1, out, &o, st, err);
	free(in);
	free(out);
	return rc;
}

/*
 * The events of out.db, one word each: TS+ID:SIZE for an alloc, TS-ID:SIZE
 * for a free, with @ADDRESS when the address is not 0.  Also the peak of live
 * bytes from analysis/memstate.
 */
static char *events_text(int64_t *peak)
{
	static char text[4096];
	char *out = th_path(dir, "out.db");
	const struct memprof_record *rec;
	struct mp_memstate sum;
	struct mp_consumer sc;
	struct mp_reader *r;
	struct mp_store *s;
	struct mp_error err;
	size_t len = 0;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	mp_memstate_init(&sum);
	sc = mp_memstate_consumer(&sum);
	text[0] = '\0';
	while (mp_reader_next(r, &rec) == 1) {
		const struct memprof_event *ev = &rec->ev;

		cr_assert(ev->op == MEMPROF_OP_ALLOC || ev->op == MEMPROF_OP_FREE);
		cr_assert_eq(ev->device, 0);
		cr_assert_eq(rec->pid, 0);
		cr_assert_eq(ev->requested_bytes, ev->size_bytes);
		sc.on_record(sc.ctx, rec);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%lld%c%lld:%lld",
		                        len ? " " : "", (long long)ev->ts_ns,
		                        ev->op == MEMPROF_OP_ALLOC ? '+' : '-',
		                        (long long)ev->alloc_id, (long long)ev->size_bytes);
		if (ev->address)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "@%llu",
			                        (unsigned long long)ev->address);
	}
	if (peak)
		*peak = sum.live_peak.bytes;
	mp_memstate_free(&sum);
	mp_reader_close(r);
	mp_store_close(s);
	free(out);
	return text;
}

static char *meta(const char *key)
{
	char *out = th_path(dir, "out.db"), *v;
	struct mp_store *s;
	struct mp_error err;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	v = mp_store_get_meta(s, key);
	mp_store_close(s);
	free(out);
	return v;
}

/* Import text, which must be detected and succeed; its events as events_text shows them. */
static char *good(const char *text, int64_t *peak)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text(text, NULL, &st, &err), 0, "%s", err.msg);
	return events_text(peak);
}

/* Import text with --format=minimalloc, which must fail with exactly message
 * (after "in.csv" is replaced by the input's path) and leave nothing but the
 * input. */
static void refused(const char *text, const char *message)
{
	struct mp_import_stats st;
	struct mp_error err;
	char *in = th_path(dir, "in.csv"), want[1024];
	const char *at = strstr(message, "in.csv");

	cr_assert_not_null(at);
	snprintf(want, sizeof(want), "%.*s%s%s", (int)(at - message), message, in, at + 6);
	cr_assert_eq(import_text(text, "minimalloc", &st, &err), MP_EFORMAT, "accepted: %s", text);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(th_count_entries(dir), 1, "only the input remains");
	free(in);
}

Test(minimalloc, half_open_ties_free_before_alloc)
{
	int64_t peak;

	/* a and c end at 10 where b starts: frees first, in file order */
	cr_assert_str_eq(good("id,lower,upper,size\n"
	                      "a,0,10,4\n"
	                      "b,10,20,8\n"
	                      "c,5,10,2\n",
	                      &peak),
	                 "0+1:4 5+3:2 10-1:4 10-3:2 10+2:8 20-2:8");
	cr_assert_eq(peak, 8, "a+c = 6 before 10, b = 8 after; never a+b+c");
}

Test(minimalloc, equal_starts_keep_file_order)
{
	cr_assert_str_eq(good("id,lower,upper,size\n"
	                      "x,3,4,1\n"
	                      "y,0,9,2\n"
	                      "z,3,5,3\n",
	                      NULL),
	                 "0+2:2 3+1:1 3+3:3 4-1:1 5-3:3 9-2:2");
}

Test(minimalloc, integer_ids_are_kept)
{
	struct mp_import_stats st;
	struct mp_error err;
	char *m;

	cr_assert_str_eq(good("id,lower,upper,size\n7,0,2,1\n3,1,3,5\n0,2,4,2\n", NULL),
	                 "0+7:1 1+3:5 2-7:1 2+0:2 3-3:5 4-0:2");
	cr_assert_eq(import_text("id,lower,upper,size\n7,0,2,1\n3,1,3,5\n", NULL, &st, &err), 0);
	cr_assert_eq(st.n_events, 4);
	cr_assert_eq(st.n_allocs, 2);
	m = meta("clock");
	cr_assert_str_eq(m, "logical (MiniMalloc time units)");
	free(m);
	m = meta("minimalloc");
	cr_assert(strstr(m, ": 2 buffers, ids kept, 0 gaps (0 partial), largest alignment 1, 0 "
	                    "hints ignored, 0 offsets kept as addresses"),
	          "%s", m);
	free(m);
}

Test(minimalloc, other_ids_become_row_numbers)
{
	/* one id that is not a plain integer: every buffer gets its row number */
	cr_assert_str_eq(good("id,lower,upper,size\n7,0,2,1\n007,1,3,5\n", NULL),
	                 "0+1:1 1+2:5 2-1:1 3-2:5");
	cr_assert_str_eq(good("id,lower,upper,size\n7,0,2,1\n,1,3,5\n", NULL),
	                 "0+1:1 1+2:5 2-1:1 3-2:5");
}

Test(minimalloc, legacy_aliases_with_inclusive_end)
{
	int64_t peak;

	/* end is inclusive: [0, 9] is [0, 10); the gap 2-3 is [2, 4) */
	cr_assert_str_eq(good("buffer_id,start,end,size,gaps\n"
	                      "x,0,9,4,2-3\n"
	                      "y,10,10,8,\n",
	                      &peak),
	                 "0+1:4 2-1:4 4+1:4 10-1:4 10+2:8 11-2:8");
	cr_assert_eq(peak, 8);
	cr_assert_str_eq(good("buffer,begin,upper,size\n5,0,9,4\n", NULL), "0+5:4 9-5:4");
}

Test(minimalloc, gaps_and_windows_with_offsets)
{
	int64_t peak;
	char *m;

	/*
	 * 1 lives [0, 10) at offset 100, 8 bytes; gap [2, 4): gone; gap [6, 7)
	 * keeps bytes [2, 6) of itself: 4 bytes at 102.  2 lives [1, 3) at 0.
	 */
	cr_assert_str_eq(good("id,lower,upper,size,gaps,offset,alignment,hint\n"
	                      "1,0,10,8,2-4 6-7@2:6,100,4,-1\n"
	                      "2,1,3,16,,0,16,32\n",
	                      &peak),
	                 "0+1:8@100 1+2:16 2-1:8@100 3-2:16 4+1:8@100 6-1:8@100 6+1:4@102 "
	                 "7-1:4@102 7+1:8@100 10-1:8@100");
	cr_assert_eq(peak, 24);
	m = meta("minimalloc");
	cr_assert(strstr(m, ": 2 buffers, ids kept, 2 gaps (1 partial), largest alignment 16, "
	                    "1 hints ignored, 2 offsets kept as addresses"),
	          "%s", m);
	free(m);
}

Test(minimalloc, gaps_that_touch_and_cover)
{
	/* adjacent gaps leave no empty piece; a gap over the whole lifespan, no events;
	 * an empty window is a full gap */
	cr_assert_str_eq(good("id,lower,upper,size,gaps\n"
	                      "1,0,10,8,2-4 4-6\n"
	                      "2,0,5,1,0-5\n"
	                      "3,0,4,2,1-3@1:1\n",
	                      NULL),
	                 "0+1:8 0+3:2 1-3:2 2-1:8 3+3:2 4-3:2 6+1:8 10-1:8");
}

Test(minimalloc, crlf_bom_blanks_and_unknown_columns)
{
	cr_assert_str_eq(good("\xef\xbb\xbfid,colour,lower,upper,size\r\n"
	                      "1,red, 0 ,+2,3\r\n"
	                      "\r\n"
	                      "\n",
	                      NULL),
	                 "0+1:3 2-1:3");
}

Test(minimalloc, header_only_gives_no_events)
{
	struct mp_import_stats st;
	struct mp_error err;

	cr_assert_eq(import_text("id,lower,upper,size\n", NULL, &st, &err), 0, "%s", err.msg);
	cr_assert_eq(st.n_events, 0);
	cr_assert_str_eq(events_text(NULL), "");
}

Test(minimalloc, probe)
{
	int (*probe)(const char *, const char *, size_t) = mp_importer_minimalloc.probe;

#define P(s) probe("f", s, strlen(s))
	cr_assert(P("id,lower,upper,size\n1,0,1,1\n"));
	cr_assert(P("id,lower,upper,size"));
	cr_assert(P("\xef\xbb\xbfsize,upper,lower,id,offset\r\n"));
	cr_assert(P("buffer_id,start,end,size,gaps\n"));
	cr_assert(P("buffer,begin,end,size,colour\n"));
	cr_assert_not(P("id,lower,upper\n"));
	cr_assert_not(P("id,lower,size\nupper\n"));
	cr_assert_not(P("ts_ns,op,id,size,lower,upper\n"));
	cr_assert_not(P("id,lower,upper,size,op\n"));
	cr_assert_not(P("ts_ns,op,id,size\n"));
	cr_assert_not(P("\nid,lower,upper,size\n"));
#undef P
}

Test(minimalloc, header_errors)
{
	refused("\n", "missing header 'in.csv:1': the first line is empty (MiniMalloc CSV starts "
	              "with a header such as id,lower,upper,size)");
	refused("id,lower,size\n1,0,1\n",
	        "missing column 'in.csv:1': 'upper' or 'end' (the header must name id, lower, "
	        "upper and size)");
	refused("lower,upper,size\n",
	        "missing column 'in.csv:1': 'id' or 'buffer' or 'buffer_id' (the header must name "
	        "id, lower, upper and size)");
	refused("id,lower,upper,size,end\n",
	        "duplicate column 'in.csv:1:21': 'end' stands for 'upper', named before");
	refused("id,lower,upper,size,x,x\n", "duplicate column 'in.csv:1:23': 'x'");
}

Test(minimalloc, row_errors)
{
	const char *h = "id,lower,upper,size\n";
	char text[256];

#define ROW(row, msg)                                                                              \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s", h, row);                                      \
		refused(text, msg);                                                                \
	} while (0)
	ROW("1,0,1\n", "wrong number of fields 'in.csv:2': expected 4, found 3");
	ROW("1,0,1,1,1\n", "wrong number of fields 'in.csv:2': expected 4, found 5");
	ROW("1,x,1,1\n", "invalid lower 'in.csv:2:3': expected a whole number, found 'x'");
	ROW("1,0,1.5,1\n", "invalid upper 'in.csv:2:5': expected a whole number, found '1.5'");
	ROW("1,,1,1\n", "invalid lower 'in.csv:2:3': expected a whole number, found ''");
	ROW("1,-1,1,1\n", "invalid lower 'in.csv:2:3': negative (must be 0 or more), found '-1'");
	ROW("1,0,1,0\n", "invalid size 'in.csv:2:7': must be 1 or more, found '0'");
	ROW("1,0,1,-4\n", "invalid size 'in.csv:2:7': must be 1 or more, found '-4'");
	ROW("1,0,99999999999999999999,1\n",
	    "invalid upper 'in.csv:2:5': out of range, found '99999999999999999999'");
	ROW("1,5,5,1\n", "bad lifespan 'in.csv:2:5': upper 5 is not after lower 5 (lifespans are "
	                 "half-open: [lower, upper))");
	ROW("1,6,5,1\n", "bad lifespan 'in.csv:2:5': upper 5 is not after lower 6 (lifespans are "
	                 "half-open: [lower, upper))");
	ROW("a,0,1,1\nb,0,1,1\na,0,1,1\n",
	    "duplicate id 'in.csv:4:1': 'a' was already used on line 2");
	ROW("1,0,1,1\n\n2,0,1,1\n",
	    "rows after an empty line 'in.csv:4': line 3 is empty (MiniMalloc stops reading at "
	    "the first empty line; remove it)");
#undef ROW
	refused("id,lower,upper,size,offset\n1,0,1,8,9223372036854775800\n",
	        "invalid offset 'in.csv:2:9': offset + size is out of range, found "
	        "'9223372036854775800'");
	refused("id,lower,upper,size,alignment\n1,0,1,8,0\n",
	        "invalid alignment 'in.csv:2:9': must be 1 or more, found '0'");
	refused("id,lower,upper,size,hint\n1,0,1,8,h\n",
	        "invalid hint 'in.csv:2:9': expected a whole number, found 'h'");
	refused("id,start,end,size\n1,5,3,1\n",
	        "bad lifespan 'in.csv:2:5': end 3 is before start 5 (end is inclusive)");
	refused("id,start,end,size\n1,0,9223372036854775807,1\n",
	        "invalid end 'in.csv:2:5': out of range, found '9223372036854775807'");
}

Test(minimalloc, gap_errors)
{
	const char *h = "id,lower,upper,size,gaps\n";
	char text[256];

#define GAP(row, msg)                                                                              \
	do {                                                                                       \
		snprintf(text, sizeof(text), "%s%s", h, row);                                      \
		refused(text, msg);                                                                \
	} while (0)
	GAP("1,0,10,8,2-x\n",
	    "bad gap 'in.csv:2:10': expected lo-hi or lo-hi@low:high, found '2-x'");
	GAP("1,0,10,8,2-3 4\n", "bad gap 'in.csv:2:14': expected lo-hi or lo-hi@low:high, found "
	                        "'4'");
	GAP("1,0,10,8,2-3@1\n",
	    "bad gap 'in.csv:2:10': expected lo-hi or lo-hi@low:high, found '2-3@1'");
	GAP("1,0,10,8,-1-3\n",
	    "bad gap 'in.csv:2:10': expected lo-hi or lo-hi@low:high, found '-1-3'");
	GAP("1,0,10,8,1-99999999999999999999\n",
	    "bad gap 'in.csv:2:10': '1-99999999999999999999': out of range");
	GAP("1,0,10,8,3-3\n", "bad gap 'in.csv:2:10': '3-3' is empty");
	GAP("1,0,10,8,9-11\n",
	    "bad gap 'in.csv:2:10': '9-11' is outside the buffer's lifespan [0, 10)");
	GAP("1,2,10,8,1-3\n",
	    "bad gap 'in.csv:2:10': '1-3' is outside the buffer's lifespan [2, 10)");
	GAP("1,0,10,8,2-5 4-6\n", "bad gap 'in.csv:2:14': '4-6' overlaps or comes before the gap "
	                          "before it (gaps go in increasing order)");
	GAP("1,0,10,8,2-5@0:9\n", "bad gap 'in.csv:2:10': '2-5@0:9': the window must lie within "
	                          "the buffer's 8 bytes (@low:high, low <= high)");
	GAP("1,0,10,8,2-5@4:3\n", "bad gap 'in.csv:2:10': '2-5@4:3': the window must lie within "
	                          "the buffer's 8 bytes (@low:high, low <= high)");
#undef GAP
	/* with 'end', a gap's end is inclusive: 9-9 is [9, 10), outside [0, 9) */
	refused("id,start,end,size,gaps\n1,0,8,8,9-9\n",
	        "bad gap 'in.csv:2:9': '9-9' is outside the buffer's lifespan [0, 9)");
}

Test(minimalloc, long_line_is_refused)
{
	size_t n = (1 << 20) + 100;
	char *text = malloc(n + 64);

	cr_assert_not_null(text);
	strcpy(text, "id,lower,upper,size\n");
	memset(text + 20, 'a', n);
	strcpy(text + 20 + n, ",0,1,1\n");
	refused(text, "line too long 'in.csv:2': over 1 MiB");
	free(text);
}

/* The fast number parse (up to 18 digits, no sign or blank) against the
 * checked one: 18, 19 and 20 digits, blanks, signs and leading zeros. */
Test(minimalloc, numbers_at_the_fast_parse_edges)
{
	refused("id,lower,upper,size\n1,0,9223372036854775808,1\n",
	        "invalid upper 'in.csv:2:5': out of range, found '9223372036854775808'");
	refused("id,lower,upper,size\n1,0,12345678901234567x,1\n",
	        "invalid upper 'in.csv:2:5': expected a whole number, found '12345678901234567x'");
	refused("id,lower,upper,size\n1,0,1,1 2\n",
	        "invalid size 'in.csv:2:7': expected a whole number, found '1 2'");
	cr_assert_str_eq(good("id,lower,upper,size\n"
	                      "1,999999999999999998,999999999999999999,1\n"
	                      "2,9223372036854775806,9223372036854775807,2\n"
	                      "3, 4 ,+0005,\t3\n"
	                      "4,0000000000000000000000007,8,1\n",
	                      NULL),
	                 "4+3:3 5-3:3 7+4:1 8-4:1 999999999999999998+1:1 999999999999999999-1:1 "
	                 "9223372036854775806+2:2 9223372036854775807-2:2");
}

/* Plain integer ids are checked for duplicates by value, others by text:
 * '7' twice is a duplicate, '7' and '07' or ' 7' are not. */
Test(minimalloc, duplicate_ids_by_value_and_by_text)
{
	refused("id,lower,upper,size\n7,0,1,1\n9,0,1,1\n7,0,1,1\n",
	        "duplicate id 'in.csv:4:1': '7' was already used on line 2");
	refused("id,lower,upper,size\n9223372036854775807,0,1,1\n9223372036854775807,0,1,1\n",
	        "duplicate id 'in.csv:3:1': '9223372036854775807' was already used on line 2");
	refused("id,lower,upper,size\n07,0,1,1\n7,0,1,1\n07,0,1,1\n",
	        "duplicate id 'in.csv:4:1': '07' was already used on line 2");
	cr_assert_str_eq(good("id,lower,upper,size\n7,0,2,1\n07,1,3,5\n 7,2,4,2\n", NULL),
	                 "0+1:1 1+2:5 2-1:1 2+3:2 3-2:5 4-3:2");
}

/* A duplicate among many rows, the id not in the first column: the bitmap
 * of id_set (nearly consecutive ids) and, after an id too large for it, its
 * hash map; the message names the first row with the id, before any later
 * row's error. */
Test(minimalloc, duplicate_ids_among_many_rows)
{
	size_t cap = 4000 * 32, n = 0;
	char *text = malloc(cap), want[160];

	cr_assert_not_null(text);
	for (int big = 0; big < 2; big++) {
		n = (size_t)snprintf(text, cap, "lower,id,upper,size\n");
		if (big)
			n += (size_t)snprintf(text + n, cap - n, "0,99999999999,1,1\n");
		for (int i = 0; i < 3000; i++)
			n += (size_t)snprintf(text + n, cap - n, "%d,%d,%d,8\n", i, 3 * i + i % 2,
			                      i + 1);
		n += (size_t)snprintf(text + n, cap - n, "5,%d,6,8\n7,1,x,1\n", 3 * 1234);
		snprintf(want, sizeof(want),
		         "duplicate id 'in.csv:%d:3': '%d' was already used on line %d", 3002 + big,
		         3 * 1234, 1236 + big);
		refused(text, want);
	}
	free(text);
}

/* Times that need one, two, three and six passes of the 11-bit radix sort,
 * with ties between frees and allocs and among allocs in every pass. */
Test(minimalloc, times_sorted_in_every_radix_pass)
{
	cr_assert_str_eq(good("id,lower,upper,size\n"
	                      "1,2048,4194304,1\n"
	                      "2,0,2048,2\n"
	                      "3,4194304,8589934592,3\n"
	                      "4,2048,8589934592,4\n"
	                      "5,8589934592,4611686018427387904,5\n"
	                      "6,4194304,4611686018427387904,6\n"
	                      "7,2047,2048,7\n",
	                      NULL),
	                 "0+2:2 2047+7:7 2048-2:2 2048-7:7 2048+1:1 2048+4:4 4194304-1:1 "
	                 "4194304+3:3 4194304+6:6 8589934592-3:3 8589934592-4:4 8589934592+5:5 "
	                 "4611686018427387904-5:5 4611686018427387904-6:6");
}

/* Lines are taken in place inside the 64 KiB read chunk and copied when they
 * cross its end: CRLF rows with the chunk's end at every offset of a row, a
 * bad row past it named by its line and column, and numbers of 16 and 17
 * digits (the vector parse and the byte one) on both sides. */
Test(minimalloc, rows_across_the_read_chunk)
{
	size_t cap = 200000, n;
	char *text = malloc(cap);

	cr_assert_not_null(text);
	for (int shift = 0; shift < 24; shift++) {
		struct mp_import_stats st;
		struct mp_error err;

		n = (size_t)snprintf(text, cap, "id,lower,upper,size,pad\r\n%*s", shift, "");
		n -= (size_t)shift; /* the padding goes into the first row's last column */
		n += (size_t)snprintf(text + n, cap - n, "0,0,1,1,%*s\r\n", shift, "x");
		for (int i = 1; i < 5000; i++)
			n += (size_t)snprintf(text + n, cap - n, "%d,%lld,%lld,%d,\r\n", i,
			                      i % 2 ? 1234567890123456LL + i : i,
			                      i % 2 ? 12345678901234567LL + i : i + 1, 1 + i % 9);
		cr_assert_eq(import_text(text, NULL, &st, &err), 0, "shift %d: %s", shift, err.msg);
		cr_assert_eq(st.n_events, 10000, "shift %d", shift);
	}
	{
		char *out = th_path(dir, "out.db");

		cr_assert_eq(unlink(out), 0); /* refused() wants the input alone */
		free(out);
	}
	n = (size_t)snprintf(text, cap, "id,lower,upper,size\n");
	for (int i = 0; i < 4500; i++)
		n += (size_t)snprintf(text + n, cap - n, "%d,%d,%d,1\n", i, i, i + 1);
	snprintf(text + n, cap - n, "4500,1234567890123456,12x,1\n4501,0,1,1\n");
	refused(text, "invalid upper 'in.csv:4502:23': expected a whole number, found '12x'");
	free(text);
}
