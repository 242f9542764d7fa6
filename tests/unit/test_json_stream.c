/*
 * tests/unit/test_json_stream.c - src/report/json_stream: string escaping
 * and UTF-8 repair (every output valid JSON and valid UTF-8), exact
 * integers and timestamps, writing through a FILE and failing sticky.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_stream.h"

/* s (n bytes) as a JSON string, in a malloc'd text. */
static char *escaped(const char *s, size_t n)
{
	struct mp_jstream j;
	char *t;

	cr_assert_eq(mp_jstream_init(&j, NULL), 0);
	mp_jstream_str_begin(&j);
	mp_jstream_str_part(&j, s, n);
	mp_jstream_str_end(&j);
	t = mp_jstream_take(&j, NULL);
	cr_assert_not_null(t);
	mp_jstream_free(&j);
	return t;
}

static void expect_escaped(const char *in, size_t n, const char *want)
{
	char *got = escaped(in, n);

	cr_expect_str_eq(got, want, "input of %zu bytes", n);
	free(got);
}

#define EXPECT(lit, want) expect_escaped((lit), sizeof(lit) - 1, (want))

Test(json_stream, plain_and_json_escapes)
{
	EXPECT("", "\"\"");
	EXPECT("forward", "\"forward\"");
	EXPECT("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	EXPECT("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
}

Test(json_stream, control_characters_and_del_as_u00xx)
{
	EXPECT("\x01x\x1f", "\"\\u0001x\\u001f\"");
	EXPECT("\x7f", "\"\\u007f\"");
	expect_escaped("a\0b", 3, "\"a\\u0000b\"");
}

Test(json_stream, valid_utf8_kept)
{
	EXPECT("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	EXPECT("\xe2\x82\xac \xf0\x9f\x98\x80", "\"\xe2\x82\xac \xf0\x9f\x98\x80\"");
	EXPECT("\xed\x9f\xbf\xf4\x8f\xbf\xbf", "\"\xed\x9f\xbf\xf4\x8f\xbf\xbf\"");
}

Test(json_stream, invalid_utf8_replaced_by_maximal_subpart)
{
	EXPECT("\xff\xfe", "\"\\ufffd\\ufffd\"");                       /* never valid */
	EXPECT("\x80z", "\"\\ufffdz\"");                                /* lone continuation */
	EXPECT("\xc0\xaf", "\"\\ufffd\\ufffd\"");                       /* overlong lead */
	EXPECT("\xe2\x82z", "\"\\ufffdz\"");                            /* truncated: one U+FFFD */
	EXPECT("\xe2\x82", "\"\\ufffd\"");                              /* truncated at the end */
	EXPECT("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");            /* a surrogate */
	EXPECT("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
	EXPECT("\xf0\x9f\x98", "\"\\ufffd\"");
	EXPECT("\xe0\x80\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* overlong 3-byte */
}

/* JSON text made elsewhere (a printed cJSON tree): only what its strings can
 * hold raw changes, by the same rule as mp_jstream_str_part. */
Test(json_stream, json_text_repaired_by_the_string_rule)
{
	static const char in[] = "{\n\t\"k\\\"\":\t\"a\xff"
	                         "b\xed\xa0\x80\xe2\x82\xac\x7f\",\n\t\"n\":\t1\n}";
	struct mp_jstream j;
	char *t;

	cr_assert_eq(mp_jstream_init(&j, NULL), 0);
	mp_jstream_json(&j, in, sizeof(in) - 1);
	t = mp_jstream_take(&j, NULL);
	cr_assert_not_null(t);
	cr_expect_str_eq(t, "{\n\t\"k\\\"\":\t\"a\\ufffdb\\ufffd\\ufffd\\ufffd\xe2\x82\xac"
	                    "\\u007f\",\n\t\"n\":\t1\n}");
	free(t);
	mp_jstream_free(&j);
}

Test(json_stream, null_string)
{
	struct mp_jstream j;
	char *t;

	mp_jstream_init(&j, NULL);
	mp_jstream_str(&j, NULL);
	t = mp_jstream_take(&j, NULL);
	cr_assert_str_eq(t, "null");
	free(t);
	mp_jstream_free(&j);
}

static char *numbers(int64_t i, uint64_t u, uint64_t hex, int64_t ts)
{
	struct mp_jstream j;
	char *t;

	mp_jstream_init(&j, NULL);
	mp_jstream_i64(&j, i);
	mp_jstream_lit(&j, " ");
	mp_jstream_u64(&j, u);
	mp_jstream_lit(&j, " ");
	mp_jstream_hex(&j, hex);
	mp_jstream_lit(&j, " ");
	mp_jstream_ts_us(&j, ts);
	t = mp_jstream_take(&j, NULL);
	mp_jstream_free(&j);
	return t;
}

Test(json_stream, exact_numbers_and_timestamps)
{
	char *t = numbers(INT64_MIN, UINT64_MAX, UINT64_MAX, INT64_MAX);

	cr_expect_str_eq(t, "-9223372036854775808 18446744073709551615 \"0xffffffffffffffff\" "
	                    "9223372036854775.807");
	free(t);
	t = numbers(0, 0, 0, 0);
	cr_expect_str_eq(t, "0 0 \"0x0\" 0");
	free(t);
	t = numbers(-1, 7, 0x7f0000000000ULL, 1748730219595970123LL);
	cr_expect_str_eq(t, "-1 7 \"0x7f0000000000\" 1748730219595970.123");
	free(t);
	t = numbers(1, 1, 1, 1040900);
	cr_expect_str_eq(t, "1 1 \"0x1\" 1040.900");
	free(t);
	t = numbers(1, 1, 1, -1500);
	cr_expect_str_eq(t, "1 1 \"0x1\" -1.500");
	free(t);
	t = numbers(1, 1, 1, 5);
	cr_expect_str_eq(t, "1 1 \"0x1\" 0.005");
	free(t);
}

Test(json_stream, file_mode_crosses_the_buffer)
{
	char *text = NULL;
	size_t size = 0, i;
	FILE *f = open_memstream(&text, &size);
	struct mp_jstream j;

	cr_assert_not_null(f);
	cr_assert_eq(mp_jstream_init(&j, f), 0);
	for (i = 0; i < 300000; i++)
		mp_jstream_str(&j, "abc\x01");
	cr_assert_eq(mp_jstream_flush(&j), 0);
	cr_assert_eq(j.n_bytes, 300000ULL * 11);
	fclose(f);
	cr_assert_eq(size, 300000ULL * 11);
	cr_expect_eq(memcmp(text + 11 * 299999, "\"abc\\u0001\"", 11), 0);
	free(text);
	mp_jstream_free(&j);
}

Test(json_stream, write_failure_sticks)
{
	FILE *f = fopen("/dev/full", "w");
	struct mp_jstream j;
	size_t i;

	if (!f)
		cr_skip_test("no /dev/full");
	cr_assert_eq(mp_jstream_init(&j, f), 0);
	for (i = 0; i < 200000; i++)
		mp_jstream_lit(&j, "0123456789");
	cr_assert_eq(mp_jstream_flush(&j), -1);
	cr_expect_eq(errno, ENOSPC);
	cr_expect(j.failed);
	fclose(f);
	mp_jstream_free(&j);
}
