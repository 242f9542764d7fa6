/*
 * tests/unit/test_visible.c - src/util/visible: control characters, C1 and
 * bidi controls and bytes that are not UTF-8 shown as \xNN, the rest kept;
 * the same whether the text comes in one write or byte by byte.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/visible.h"

/* in (n bytes) made visible by mp_visible_write, malloc'd. */
static char *at_once(const char *in, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	cr_assert_not_null(m);
	cr_assert_eq(mp_visible_write(m, in, n), 0);
	fclose(m);
	return buf;
}

/* The same through the stream, split into writes of step bytes. */
static char *in_steps(const char *in, size_t n, size_t step)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len), *v;

	cr_assert_not_null(m);
	v = mp_visible_open(m);
	cr_assert_not_null(v);
	setvbuf(v, NULL, _IONBF, 0);
	for (i = 0; i < n; i += step)
		cr_assert_eq(fwrite(in + i, 1, n - i < step ? n - i : step, v),
		             n - i < step ? n - i : step);
	cr_assert_eq(fclose(v), 0);
	fclose(m);
	return buf;
}

#define HOSTILE                                                                                    \
	"a\x1b[2Jb\r\n\tc\x07\x7f|\xc2\x9b|\xe2\x80\xae|\xe2\x81\xa6|\xff|\xc3(|\xed\xa0\x80|"     \
	"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xe2\x82"
#define SHOWN                                                                                      \
	"a\\x1b[2Jb\\x0d\n\tc\\x07\\x7f|\\xc2\\x9b|\\xe2\\x80\\xae|\\xe2\\x81\\xa6|\\xff|\\xc3(|"  \
	"\\xed\\xa0\\x80|\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\xe2\\x82"

Test(visible, controls_and_invalid_bytes_shown_the_rest_kept)
{
	char *got = at_once(HOSTILE, sizeof(HOSTILE) - 1);

	cr_expect_str_eq(got, SHOWN);
	free(got);
}

Test(visible, the_same_whatever_the_writes)
{
	size_t step;

	for (step = 1; step <= 8; step++) {
		char *got = in_steps(HOSTILE, sizeof(HOSTILE) - 1, step);

		cr_expect_str_eq(got, SHOWN, "writes of %zu bytes", step);
		free(got);
	}
}

Test(visible, plain_text_unchanged)
{
	static const char text[] = "peak 1.00 GiB\tforward (model.py:41) \xe2\x86\x90 train\n";
	char *got = in_steps(text, sizeof(text) - 1, 3);

	cr_expect_str_eq(got, text);
	free(got);
}
