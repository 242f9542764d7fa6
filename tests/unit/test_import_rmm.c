/*
 * tests/unit/test_import_rmm.c - src/import/rmm.c and rmm_scan.c: small RMM
 * logs imported end to end into a real trace, compared event by event with
 * sequences worked out by hand; the clock rules; and every error's text.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "import/import.h"
#include "import/rmm_scan.h"
#include "store/reader.h"

#define HDR            "Thread,Time,Action,Pointer,Size,Stream\n"
#define S              INT64_C(1000000000) /* ns per second */
#define T(h, m, s, us) ((((int64_t)(h)*60 + (m)) * 60 + (s)) * S + (int64_t)(us)*1000)

static char *dir;

static void setup(void)
{
	dir = th_mkdtemp();
}

static void teardown(void)
{
	th_rmdir(dir);
}

TestSuite(import_rmm, .init = setup, .fini = teardown);

/* What a test expects of one event. */
struct want {
	int64_t ts;
	int op;
	int64_t id, size;
	uint64_t address;
	int64_t thread;
	uint64_t stream;
};

static struct mp_import_stats st;
static struct mp_error err;

/* Import text written to dir/name (format detected unless format is set). */
static int import_as(const char *name, const char *text, size_t len, const char *format)
{
	char *in = th_path(dir, name), *out = th_path(dir, "out.db");
	struct mp_import_opts o = {.format = format, .overwrite = 1, .tool_version = "test"};
	FILE *f = fopen(in, "wb");
	int rc;

	cr_assert(f);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	memset(&err, 0, sizeof(err));
	rc = mp_import_files((const char *const[]){in}, 1, out, &o, &st, &err);
	free(in);
	free(out);
	return rc;
}

static int import(const char *text)
{
	return import_as("in.csv", text, strlen(text), NULL);
}

static struct mp_store *open_out(void)
{
	char *out = th_path(dir, "out.db");
	struct mp_store *s;

	cr_assert_eq(mp_store_open(&s, out, &err), 0, "%s", err.msg);
	free(out);
	return s;
}

/* The trace holds exactly these n events, on device, in process pid 0. */
static void expect_events(const struct want *w, int n, int32_t device)
{
	struct mp_store *s = open_out();
	const struct memprof_record *rec;
	struct mp_reader *r;
	int i;

	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	for (i = 0; i < n; i++) {
		const struct memprof_event *e;

		cr_assert_eq(mp_reader_next(r, &rec), 1, "event %d is missing", i + 1);
		e = &rec->ev;
		cr_expect_eq(e->seq, i + 1);
		cr_expect_eq(e->ts_ns, w[i].ts, "event %d: ts %lld, want %lld", i + 1,
		             (long long)e->ts_ns, (long long)w[i].ts);
		cr_expect_eq(e->op, w[i].op, "event %d: op %d, want %d", i + 1, e->op, w[i].op);
		cr_expect_eq(e->alloc_id, w[i].id, "event %d: id %lld, want %lld", i + 1,
		             (long long)e->alloc_id, (long long)w[i].id);
		cr_expect_eq(e->size_bytes, w[i].size, "event %d: size", i + 1);
		cr_expect_eq(e->requested_bytes, w[i].size, "event %d: requested", i + 1);
		cr_expect_eq(e->address, w[i].address, "event %d: address", i + 1);
		cr_expect_eq(e->thread, w[i].thread, "event %d: thread", i + 1);
		cr_expect_eq(e->stream, w[i].stream, "event %d: stream", i + 1);
		cr_expect_eq(e->device, device, "event %d: device", i + 1);
		cr_expect_eq(e->device_free_bytes, -1, "event %d: device_free", i + 1);
		cr_expect_eq(rec->pid, 0);
		cr_expect_null(rec->phase);
		cr_expect_null(rec->api);
	}
	cr_expect_eq(mp_reader_next(r, &rec), 0, "more events than the %d expected", n);
	mp_reader_close(r);
	mp_store_close(s);
}

static char *meta(const char *key)
{
	struct mp_store *s = open_out();
	char *v = mp_store_get_meta(s, key);

	mp_store_close(s);
	return v;
}

enum { A = MEMPROF_OP_ALLOC, F = MEMPROF_OP_FREE, O = MEMPROF_OP_OOM };

Test(import_rmm, allocate_free_pairing_and_failure)
{
	const struct want w[] = {
	        {T(15, 47, 2, 841961), A, 1, 1048576, 0x10012400000, 2342727, 0},
	        {T(15, 47, 2, 841970), A, 2, 256, 0x10012500000, 2342728, 0x7f3a5c000b20},
	        {T(15, 47, 2, 842000), F, 1, 1048576, 0x10012400000, 2342728, 0},
	        {T(15, 47, 2, 842100), O, 0, 1099511627776, 0, 2342727, 0x2},
	        {T(15, 47, 2, 842200), A, 3, 512, 0x10012400000, 2342727, 0},
	        {T(15, 47, 2, 842300), F, 3, 512, 0x10012400000, 2342727, 0},
	        {T(15, 47, 3, 0), F, 2, 256, 0x10012500000, 2342728, 0x7f3a5c000b20},
	};

	cr_assert_eq(import(HDR
	                    "2342727,15:47:02.841961,allocate,0x10012400000,1048576,0\n"
	                    "2342728,15:47:02.841970,allocate,0x10012500000,256,0x7f3a5c000b20\n"
	                    "2342728,15:47:02.842000,free,0x10012400000,1048576,0\n"
	                    "2342727,15:47:02.842100,allocate failure,(nil),1099511627776,0x2\n"
	                    "2342727,15:47:02.842200,allocate,0x10012400000,512,0\n"
	                    "2342727,15:47:02.842300,free,0x10012400000,512,0\n"
	                    "2342728,15:47:03.000000,free,0x10012500000,256,0x7f3a5c000b20\n"),
	             0, "%s", err.msg);
	cr_expect_eq(st.n_events, 7);
	cr_expect_eq(st.n_allocs, 3);
	for (int i = 0; i < MP_WARN_N; i++)
		cr_expect_eq(st.n_warnings[i], 0, "warning %d", i);
	expect_events(w, 7, 0);
	char *clock = meta("clock"), *source = meta("source"), *trunc = meta("truncated");
	cr_expect(clock && strncmp(clock, "time_of_day_ns", 14) == 0, "clock %s", clock);
	cr_expect_str_eq(source, "rmm");
	cr_expect_str_eq(trunc, "0");
	free(clock);
	free(source);
	free(trunc);
}

Test(import_rmm, unknown_free_is_kept_with_an_id_of_its_own)
{
	const struct want w[] = {
	        {T(1, 0, 0, 0), A, 1, 100, 0xa00, 7, 0},
	        {T(1, 0, 0, 1), F, 2, 64, 0xb00, 7, 0},
	        {T(1, 0, 0, 2), F, 1, 100, 0xa00, 7, 0},
	        {T(1, 0, 0, 3), F, 3, 0, 0, 7, 0},
	};

	cr_assert_eq(import(HDR "7,01:00:00.000000,allocate,0xa00,100,0\n"
	                        "7,01:00:00.000001,free,0xb00,64,0\n"
	                        "7,01:00:00.000002,free,0xa00,100,0\n"
	                        "7,01:00:00.000003,free,(nil),0,0\n"),
	             0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_UNMATCHED_FREE], 2);
	expect_events(w, 4, 0);
}

Test(import_rmm, allocate_at_a_live_address_closes_the_earlier_block)
{
	const struct want w[] = {
	        {T(2, 0, 0, 0), A, 1, 100, 0xa00, 7, 0},
	        {T(2, 0, 0, 5), F, 1, 100, 0xa00, 8, 0x3},
	        {T(2, 0, 0, 5), A, 2, 200, 0xa00, 8, 0x3},
	        {T(2, 0, 0, 6), F, 2, 200, 0xa00, 7, 0},
	};

	cr_assert_eq(import(HDR "7,02:00:00.000000,allocate,0xa00,100,0\n"
	                        "8,02:00:00.000005,allocate,0xa00,200,0x3\n"
	                        "7,02:00:00.000006,free,0xa00,200,0\n"),
	             0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_DUPLICATE_ALLOC], 1);
	cr_expect_eq(st.n_events, 4);
	cr_expect_eq(st.n_allocs, 2);
	expect_events(w, 4, 0);
	char *lossy = meta("lossy");
	cr_expect_str_eq(lossy, "1");
	free(lossy);
}

Test(import_rmm, free_with_another_size_keeps_the_allocation_size)
{
	const struct want w[] = {
	        {T(3, 0, 0, 0), A, 1, 4096, 0xc00, 1, 0},
	        {T(3, 0, 0, 1), F, 1, 4096, 0xc00, 1, 0},
	};

	cr_assert_eq(import(HDR "1,03:00:00.000000,allocate,0xc00,4096,0\n"
	                        "1,03:00:00.000001,free,0xc00,4000,0\n"),
	             0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_SIZE_MISMATCH], 1);
	expect_events(w, 2, 0);
}

Test(import_rmm, midnight_wraps_to_the_next_day)
{
	const struct want w[] = {
	        {T(23, 59, 59, 500000), A, 1, 1, 0x10, 1, 0},
	        {T(24, 0, 0, 250000), A, 2, 2, 0x20, 1, 0},
	        /* back less than an hour: held at the last time */
	        {T(24, 0, 0, 250000), A, 3, 3, 0x30, 2, 0},
	        /* a line from before midnight, seen within the hour after it: held */
	        {T(24, 0, 0, 250000), A, 4, 4, 0x40, 2, 0},
	        {T(24, 0, 1, 0), A, 5, 5, 0x50, 1, 0},
	        /* 23:00 right after midnight is from before it: held */
	        {T(24, 0, 1, 0), A, 6, 6, 0x60, 1, 0},
	        {T(26, 0, 0, 0), A, 7, 7, 0x70, 1, 0},
	        /* but not once the day is more than an hour old */
	        {T(47, 0, 0, 0), A, 8, 8, 0x80, 1, 0},
	        {T(48, 30, 0, 0), A, 9, 9, 0x90, 1, 0},
	};

	cr_assert_eq(import(HDR "1,23:59:59.500000,allocate,0x10,1,0\n"
	                        "1,00:00:00.250000,allocate,0x20,2,0\n"
	                        "2,00:00:00.100000,allocate,0x30,3,0\n"
	                        "2,23:59:59.900000,allocate,0x40,4,0\n"
	                        "1,00:00:01.000000,allocate,0x50,5,0\n"
	                        "1,23:00:00.000000,allocate,0x60,6,0\n"
	                        "1,02:00:00.000000,allocate,0x70,7,0\n"
	                        "1,23:00:00.000000,allocate,0x80,8,0\n"
	                        "1,00:30:00.000000,allocate,0x90,9,0\n"),
	             0, "%s", err.msg);
	cr_expect_eq(st.n_warnings[MP_WARN_CLOCK_WRAP], 2);
	expect_events(w, 9, 0);
	char *lossy = meta("lossy");
	cr_expect_str_eq(lossy, "0", "a midnight loses nothing");
	free(lossy);
}

Test(import_rmm, time_fractions_of_any_length_up_to_nine_digits)
{
	const struct want w[] = {
	        {T(0, 0, 1, 0), A, 1, 1, 0x1, 1, 0},
	        {T(0, 0, 1, 0) + 500000000, A, 2, 1, 0x2, 1, 0},
	        {T(0, 0, 1, 0) + 500000001, A, 3, 1, 0x3, 1, 0},
	        {T(0, 0, 2, 0) + 120000000, A, 4, 1, 0x4, 1, 0},
	        {T(23, 59, 60, 999999), A, 5, 1, 0x5, 1, 0},
	};

	cr_assert_eq(import(HDR "1,00:00:01,allocate,0x1,1,0\n"
	                        "1,00:00:01.5,allocate,0x2,1,0\n"
	                        "1,00:00:01.500000001,allocate,0x3,1,0\n"
	                        "1,00:00:02.12,allocate,0x4,1,0\n"
	                        "1,23:59:60.999999,allocate,0x5,1,0\n"),
	             0, "%s", err.msg);
	expect_events(w, 5, 0);
}

Test(import_rmm, thread_and_stream_forms_are_kept)
{
	const struct want w[] = {
	        {T(4, 0, 0, 0), A, 1, 8, 0xdeadbeef00, 9223372036854775807, 0},
	        {T(4, 0, 0, 0), A, 2, 8, 0xdeadbeef08, 0, 12345},
	        {T(4, 0, 0, 0), A, 3, 8, 0xdeadbeef10, 1, 0xffffffffffffffff},
	        {T(4, 0, 0, 0), A, 4, 8, 0xdeadbeef18, 1, 0x2},
	};

	cr_assert_eq(import(HDR
	                    "9223372036854775807,04:00:00.000000,allocate,0xdeadbeef00,8,(nil)\n"
	                    "0,04:00:00.000000,allocate,0xDeadBeef08,8,12345\n"
	                    "1,04:00:00.000000,allocate,0xdeadbeef10,8,0xffffffffffffffff\n"
	                    "1,04:00:00.000000,allocate,0xdeadbeef18,8,0X2\n"),
	             0, "%s", err.msg);
	expect_events(w, 4, 0);
}

Test(import_rmm, device_comes_from_the_file_name)
{
	static const struct {
		const char *name;
		int32_t device;
	} cases[] = {
	        {"log.dev3.csv", 3},           {"rmm_log.dev12", 12},    {"log.csv", 0},
	        {"log.dev1x.csv", 0},          {"a.dev2.b.dev5.csv", 5}, {"log.dev.csv", 0},
	        {"log.dev99999999999.csv", 0},
	};
	const char *text = HDR "1,05:00:00.000000,allocate,0x1,1,0\n";
	const struct want w[] = {{T(5, 0, 0, 0), A, 1, 1, 0x1, 1, 0}};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(import_as(cases[i].name, text, strlen(text), NULL), 0, "%s", err.msg);
		expect_events(w, 1, cases[i].device);
	}
}

Test(import_rmm, line_ends_blank_lines_and_byte_order_mark)
{
	static const char *const texts[] = {
	        "\xef\xbb\xbf" HDR "1,06:00:00.000000,allocate,0x1,1,0\n"
	        "1,06:00:00.000001,free,0x1,1,0\n",
	        "\n  \n Thread , Time,Action,Pointer,Size,Stream\t\r\n\r\n"
	        "1,06:00:00.000000,allocate,0x1,1,0\r\n   \r\n"
	        "1,06:00:00.000001,free,0x1,1,0\r\n",
	        "Thread,Time,Action,Pointer,Size,Stream\r1,06:00:00.000000,allocate,0x1,1,0\r\r"
	        "1,06:00:00.000001,free,0x1,1,0\r",
	        HDR "1,06:00:00.000000,allocate,0x1,1,0\n"
	            "1,06:00:00.000001,free,0x1,1,0", /* no line end: a whole row, kept */
	};
	const struct want w[] = {
	        {T(6, 0, 0, 0), A, 1, 1, 0x1, 1, 0},
	        {T(6, 0, 0, 1), F, 1, 1, 0x1, 1, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		cr_assert_eq(import(texts[i]), 0, "text %zu: %s", i, err.msg);
		expect_events(w, 2, 0);
		cr_expect_eq(st.n_warnings[MP_WARN_PARTIAL_LINE], 0);
	}
}

Test(import_rmm, cut_off_last_line_is_dropped_and_the_trace_says_so)
{
	const struct want w[] = {{T(7, 0, 0, 0), A, 1, 1048576, 0xa000, 1, 0}};
	static const char *const tails[] = {"1,07:00:00.000001,free,0x", "1,07:0", "2",
	                                    "1,07:00:00.000001,alloc", "\0\0\0\0"};
	size_t i;

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		char text[256];
		size_t n = (size_t)snprintf(text, sizeof(text),
		                            HDR "1,07:00:00.000000,allocate,0xa000,1048576,0\n%s",
		                            tails[i]);

		if (i == 4)
			n += 4; /* the NUL bytes */
		cr_assert_eq(import_as("in.csv", text, n, NULL), 0, "tail %zu: %s", i, err.msg);
		cr_expect_eq(st.n_warnings[MP_WARN_PARTIAL_LINE], 1);
		expect_events(w, 1, 0);
		char *trunc = meta("truncated"), *lossy = meta("lossy"),
		     *warn = meta("import_warnings");
		cr_expect_str_eq(trunc, "1");
		cr_expect_str_eq(lossy, "1");
		cr_expect(warn && strstr(warn, "1 cut-off last lines"), "%s", warn);
		free(trunc);
		free(lossy);
		free(warn);
	}
}

Test(import_rmm, probe_is_by_content)
{
	cr_expect(mp_rmm_probe(HDR, strlen(HDR)));
	cr_expect(mp_rmm_probe("\xef\xbb\xbf\r\n  \n" HDR, 8 + strlen(HDR)));
	cr_expect(mp_rmm_probe("Thread,Time,Action,Pointer,Size,Stream", 38),
	          "whole file, no line end");
	cr_expect_not(mp_rmm_probe("Thread,Time,Action,Pointer,Size", 31));
	cr_expect_not(mp_rmm_probe("Thread,Time,Action,Pointer,Size,Stream,Extra\n", 45));
	cr_expect_not(mp_rmm_probe("ts_ns,op,id,size\n", 17));
	cr_expect_not(mp_rmm_probe("# comment\n" HDR, 10 + strlen(HDR)));
	cr_expect_not(mp_rmm_probe("thread,time,action,pointer,size,stream\n", 39));
	/* a file named like an RMM log but holding memprof CSV is read as CSV */
	cr_assert_eq(import_as("log.dev0.csv", "ts_ns,op,id,size\n1,alloc,1,8\n", 28, NULL), 0,
	             "%s", err.msg);
	char *source = meta("source");
	cr_expect_str_eq(source, "csv");
	free(source);
}

/*
 * Importing text (len bytes, or up to its NUL when 0) as dir/bad.csv must
 * fail with msg, in which 'bad.csv stands for the file's path.
 */
static void bad(const char *text, size_t len, const char *msg)
{
	const char *at = strstr(msg, "'bad.csv");
	char want[1024];

	cr_assert(at, "the message names no file: %s", msg);
	snprintf(want, sizeof(want), "%.*s'%s/%s", (int)(at - msg), msg, dir, at + 1);
	cr_assert_eq(import_as("bad.csv", text, len ? len : strlen(text), "rmm"), MP_EFORMAT,
	             "imported, but should fail with: %s", msg);
	cr_expect(strstr(err.msg, want), "\n got: %s\nwant: %s", err.msg, want);
	cr_expect_eq(th_count_entries(dir), 1, "only the input remains");
}

#define ROW2 "1,08:00:00.000000,allocate,0x1,1,0\n"
#define HF   "Thread,Time,Action,Pointer,Size,Stream"

Test(import_rmm, errors_name_file_line_and_column)
{
	bad("", 0, "empty trace 'bad.csv': no RMM log header ('" HF "')");
	bad("\n \n", 0, "empty trace 'bad.csv'");
	/* found by fuzzing: the last '\r' looked past the data for a '\n' */
	bad("\n\n\r\r", 0, "empty trace 'bad.csv'");
	bad("ts_ns,op\n", 0,
	    "not an RMM log 'bad.csv:1': expected the header '" HF "', found 'ts_ns");
	bad("\n[1][12:00:00:000001][info] x\n", 0, "not an RMM log 'bad.csv:2'");
	bad(HDR ROW2 "abc,08:00:00.000000,allocate,0x1,1,0\n", 0,
	    "invalid thread 'bad.csv:3:1': expected a thread id (decimal, below 2^63), found "
	    "'abc'");
	bad(HDR "-5,08:00:00.000000,allocate,0x1,1,0\n", 0, "invalid thread 'bad.csv:2:1'");
	bad(HDR "9223372036854775808,08:00:00.000000,allocate,0x1,1,0\n", 0,
	    "invalid thread 'bad.csv:2:1'");
	bad(HDR "1,24:00:00.000000,allocate,0x1,1,0\n", 0,
	    "invalid time 'bad.csv:2:3': expected a time of day HH:MM:SS.ffffff (up to 9 fraction "
	    "digits), found '24:00:00.000000'");
	bad(HDR "1,08:60:00.0,allocate,0x1,1,0\n", 0, "invalid time 'bad.csv:2:3'");
	bad(HDR "1,8:00:00.0,allocate,0x1,1,0\n", 0, "invalid time 'bad.csv:2:3'");
	bad(HDR "1,08:00:00.,allocate,0x1,1,0\n", 0, "invalid time 'bad.csv:2:3'");
	bad(HDR "1,08:00:00.0000000001,allocate,0x1,1,0\n", 0, "invalid time 'bad.csv:2:3'");
	bad(HDR "1,08:00:00.000000,alloc,0x1,1,0\n", 0,
	    "invalid action 'bad.csv:2:19': expected 'allocate', 'free' or 'allocate failure', "
	    "found 'alloc'");
	bad(HDR "1,08:00:00.000000,Free,0x1,1,0\n", 0, "invalid action 'bad.csv:2:19'");
	bad(HDR "1,08:00:00.000000,free,0xZZ,1,0\n", 0,
	    "invalid pointer 'bad.csv:2:24': expected an address (0x and 1 to 16 hex digits, or "
	    "(nil)), found '0xZZ'");
	bad(HDR "1,08:00:00.000000,free,0x,1,0\n", 0, "invalid pointer 'bad.csv:2:24'");
	bad(HDR "1,08:00:00.000000,free,1234,1,0\n", 0, "invalid pointer 'bad.csv:2:24'");
	bad(HDR "1,08:00:00.000000,free,0x10000000000000000,1,0\n", 0,
	    "invalid pointer 'bad.csv:2:24'");
	bad(HDR "1,08:00:00.000000,free,0x1,-1,0\n", 0,
	    "invalid size 'bad.csv:2:28': expected a size in bytes (decimal, below 2^56), found "
	    "'-1'");
	bad(HDR "1,08:00:00.000000,free,0x1,9223372036854775808,0\n", 0,
	    "invalid size 'bad.csv:2:28'");
	bad(HDR "1,08:00:00.000000,free,0x1,99999999999999999999999,0\n", 0,
	    "invalid size 'bad.csv:2:28'");
	bad(HDR "1,08:00:00.000000,free,0x1,1 ,0\n", 0, "invalid size 'bad.csv:2:28'");
	bad(HDR "1,08:00:00.000000,free,0x1,1,stream\n", 0,
	    "invalid stream 'bad.csv:2:30': expected a stream (0x and 1 to 16 hex digits, decimal, "
	    "or (nil)), found 'stream'");
	bad(HDR "1,08:00:00.000000,free,0x1,1,18446744073709551616\n", 0,
	    "invalid stream 'bad.csv:2:30'");
	bad(HDR "1,08:00:00.000000,free,0x1,1,0,7\n", 0,
	    "wrong number of fields 'bad.csv:2:32': expected 6 (" HF "), found 7");
	bad(HDR "1,08:00:00.000000,free,0x1,1\n", 0,
	    "wrong number of fields 'bad.csv:2:29': expected 6 (" HF "), found 5");
	bad(HDR "1,08:00:00.000000,free,0x1\0,1,0\n", strlen(HDR) + 32,
	    "invalid pointer 'bad.csv:2:24': expected an address (0x and 1 to 16 hex digits, or "
	    "(nil)), found '0x1?'");
	bad(HDR ROW2 HDR ROW2, 0,
	    "repeated header 'bad.csv:3': a second log starts here (were logs joined? import each "
	    "one as its own file)");
	bad(HDR "\n" ROW2 "1,08:00:00.000000,allocate failure ,(nil),1,0\n", 0,
	    "invalid action 'bad.csv:4:19'");
}

Test(import_rmm, a_line_too_long_is_an_error)
{
	size_t n = strlen(HDR) + (1 << 20) + 10;
	char *text = malloc(n + 1);

	strcpy(text, HDR);
	memset(text + strlen(HDR), '7', n - strlen(HDR) - 1);
	text[n - 1] = '\n';
	bad(text, n, "line too long 'bad.csv:2': more than 1048576 bytes without a line end");
	free(text);
}

Test(import_rmm, too_many_midnights_is_an_error)
{
	size_t cap = 40 * 200002, n = 0;
	char *text = malloc(cap);
	int i;

	n += (size_t)sprintf(text, HDR);
	for (i = 0; i < 100000; i++)
		n += (size_t)sprintf(text + n,
		                     "1,01:30:00.0,free,(nil),0,0\n1,00:00:00.0,free,(nil),0,0\n");
	bad(text, n,
	    "time out of range 'bad.csv:200001:3': the time of day went back past midnight "
	    "100000 times");
	free(text);
}

/* Lines that straddle the scanner's buffer refills read the same as in one read. */
Test(import_rmm, scanner_gives_the_same_rows_whatever_its_buffer)
{
	static const char text[] =
	        "\xef\xbb\xbf\r\n" HDR "\r\n"
	        "2342727,15:47:02.841961,allocate,0x10012400000,1048576,0\r\n"
	        "2342727,15:47:02.841962,free,0x10012400000,1048576,0x7f3a5c000b20\r"
	        "  \n"
	        "1,15:47:03,allocate failure,(nil),5,7\n"
	        "1,15:47:03.1,free,0xa,1,0\r\r"
	        "1,15:47:03.2,fre";
	struct mp_rmm_row want[4], got;
	size_t cap;
	int i, n = 0;

	for (cap = 0; cap <= 140; cap = cap ? cap + 1 : 69) {
		FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
		struct mp_rmm_scanner *s;
		int rc;

		cr_assert_eq(mp_rmm_scan_open(&s, f, "t", cap, &err), 0, "cap %zu: %s", cap,
		             err.msg);
		for (i = 0; (rc = mp_rmm_scan_next(s, &got, &err)) == 1; i++) {
			cr_assert_lt(i, 4);
			if (cap == 0)
				want[n++] = got;
			else
				cr_expect(memcmp(&got, &want[i], sizeof(got)) == 0,
				          "cap %zu, row %d", cap, i);
		}
		cr_expect_eq(rc, 0, "cap %zu: %s", cap, err.msg);
		cr_expect_eq(i, 4, "cap %zu", cap);
		cr_expect_eq(mp_rmm_scan_dropped_partial(s), 10, "cap %zu", cap);
		mp_rmm_scan_close(s);
		fclose(f);
	}
	cr_expect_eq(want[0].line, 4);
	cr_expect_eq(want[1].stream, 0x7f3a5c000b20);
	cr_expect_eq(want[2].line, 7);
	cr_expect_eq(want[2].action, MP_RMM_FAILURE);
	cr_expect_eq(want[3].line, 8);
	cr_expect_eq(want[3].time_ns, T(15, 47, 3, 100000));
}

/* One row whose time field is t: 1 and *ns, or the scanner's error. */
static int scan_time_of(const char *t, int64_t *ns)
{
	char text[256];
	int n = snprintf(text, sizeof(text), HDR "7,%s,allocate,0x10,8,0\n", t);
	FILE *f = fmemopen(text, (size_t)n, "r");
	struct mp_rmm_scanner *s;
	struct mp_rmm_row row;
	int rc;

	cr_assert_eq(mp_rmm_scan_open(&s, f, "t", 0, &err), 0, "%s", err.msg);
	rc = mp_rmm_scan_next(s, &row, &err);
	if (rc == 1)
		*ns = row.time_ns;
	mp_rmm_scan_close(s);
	fclose(f);
	return rc;
}

/* HH:MM:SS byte by byte: each of the eight bytes replaced by bytes around
 * the digits and the colon (and ones that carry when 6 is added), against
 * the rule worked out here: digits where digits go, colons where they go,
 * hours to 23, minutes to 59, seconds to 60. */
Test(import_rmm, every_byte_of_the_time_of_day)
{
	static const unsigned char subs[] = {'0', '1', '5', '9',         '/',  ':',  ';',  '?',
	                                     '@', 'a', ' ', 0x30 + 0x40, 0x80, 0xb9, 0xfa, 0xff};
	char t[16];
	int64_t ns;

	for (int i = 0; i < 8; i++)
		for (size_t k = 0; k < sizeof(subs); k++) {
			int ok = 1, rc, h, m, sec;

			strcpy(t, "12:34:56.5");
			t[i] = (char)subs[k];
			for (int j = 0; j < 8; j++)
				ok &= j == 2 || j == 5 ? t[j] == ':'
				                       : (unsigned)(unsigned char)t[j] - '0' < 10;
			h = (t[0] - '0') * 10 + t[1] - '0';
			m = (t[3] - '0') * 10 + t[4] - '0';
			sec = (t[6] - '0') * 10 + t[7] - '0';
			ok = ok && h <= 23 && m <= 59 && sec <= 60;
			rc = scan_time_of(t, &ns);
			cr_expect_eq(rc, ok ? 1 : MP_EFORMAT, "'%s': rc %d (%s)", t, rc, err.msg);
			if (ok && rc == 1)
				cr_expect_eq(ns, T(h, m, sec, 500000), "'%s'", t);
			if (!ok)
				cr_expect(strstr(err.msg, "invalid time 't:2:3'") != NULL,
				          "'%s': %s", t, err.msg);
		}
	cr_expect_eq(scan_time_of("23:59:60.999999999", &ns), 1);
	cr_expect_eq(ns, T(23, 59, 60, 999999) + 999);
	cr_expect_eq(scan_time_of("00:00:00", &ns), 1);
	cr_expect_eq(ns, 0);
	cr_expect_eq(scan_time_of("24:00:00", &ns), MP_EFORMAT);
	cr_expect_eq(scan_time_of("19:60:00", &ns), MP_EFORMAT);
	cr_expect_eq(scan_time_of("19:00:61", &ns), MP_EFORMAT);
	cr_expect_eq(scan_time_of("1:00:00", &ns), MP_EFORMAT);
}
