/*
 * tests/unit/test_report_html.c - the HTML report's helpers: the escaper
 * (markup, quotes, control characters, invalid UTF-8, cutting on character
 * boundaries), the tooltip text buffer, the SVG axis arithmetic (nice
 * steps, byte axis tops) and step paths, and the data of the interactive
 * views (base64 of doubles, JSON string literals).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/html_data.h"
#include "report/svg.h"

/* What fn writes to a FILE, as a malloc'd string. */
static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void escape_fn(FILE *f, const void *arg)
{
	mp_html_escape(f, arg);
}

static void expect_escaped(const char *in, const char *want)
{
	char *got = capture(escape_fn, in);

	cr_assert_str_eq(got, want, "escape of '%s'", in);
	free(got);
}

Test(html, escapes_markup_quotes_and_controls)
{
	expect_escaped("plain text", "plain text");
	expect_escaped("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
	expect_escaped("a\"b'c&d", "a&quot;b&#39;c&amp;d");
	expect_escaped("</svg>]]>", "&lt;/svg&gt;]]&gt;");
	expect_escaped("line\nbreak", "line&#10;break");
	expect_escaped("bell\x07tab\tdel\x7f", "bell\\x07tab\\x09del\\x7f");
	expect_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

Test(html, invalid_utf8_becomes_visible_bytes)
{
	expect_escaped("a\xff"
	               "b",
	               "a\\xffb");
	expect_escaped("\xc3", "\\xc3");                            /* cut sequence */
	expect_escaped("\xc0\xaf", "\\xc0\\xaf");                   /* overlong '/' */
	expect_escaped("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* surrogate */
	expect_escaped("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
}

static void cut_fn(FILE *f, const void *arg)
{
	mp_html_escape_cut(f, arg, 3);
}

Test(html, cut_on_character_boundaries)
{
	char *got = capture(cut_fn, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");

	cr_assert_str_eq(got, "\xc3\xa9\xc3\xa9\xc3\xa9...");
	free(got);
	got = capture(cut_fn, "a<c");
	cr_assert_str_eq(got, "a&lt;c");
	free(got);
}

Test(html, text_buffer_cuts_with_an_ellipsis)
{
	static struct mp_html_text t;
	int i;

	mp_html_text_reset(&t);
	mp_html_text_add(&t, "%s %d", "frame", 7);
	cr_assert_str_eq(t.buf, "frame 7");
	for (i = 0; i < 5000; i++)
		mp_html_text_add(&t, "\xc3\xa9xyz");
	cr_assert(t.cut);
	cr_assert_lt(t.len, sizeof(t.buf));
	cr_assert_str_eq(t.buf + t.len - 3, "...");
	cr_assert_eq(strlen(t.buf), t.len);
	/* the byte before the ellipsis ends a whole character */
	cr_assert_neq((unsigned char)t.buf[t.len - 4], 0xc3);
}

Test(svg, nice_steps_and_byte_tops)
{
	cr_assert_float_eq(mp_svg_nice_step(0.3), 0.5, 1e-12);
	cr_assert_float_eq(mp_svg_nice_step(3), 5, 1e-12);
	cr_assert_float_eq(mp_svg_nice_step(1), 1, 1e-12);
	cr_assert_float_eq(mp_svg_nice_step(140), 200, 1e-12);
	cr_assert_float_eq(mp_svg_nice_step(2.2), 2.5, 1e-12);
	/* 700 MiB: steps of 200 MiB, top 800 MiB */
	cr_assert_float_eq(mp_svg_bytes_top(700.0 * 1048576), 800.0 * 1048576, 1e-3);
	/* 1.5 GiB: steps of 0.5 GiB, top 1.5 GiB */
	cr_assert_float_eq(mp_svg_bytes_top(1.5 * 1073741824), 1.5 * 1073741824, 1e-3);
	cr_assert_float_eq(mp_svg_bytes_top(3), 3, 1e-12);
	cr_assert_float_eq(mp_svg_bytes_top(0), 1, 1e-12);
}

static void path_fn(FILE *f, const void *arg)
{
	const struct mp_svg_plot *p = arg;
	struct mp_svg_path s;

	mp_svg_path_begin(&s, f, p, "live");
	mp_svg_path_point(&s, 0, 0);
	mp_svg_path_point(&s, 50, 50);
	mp_svg_path_point(&s, 50, 50); /* draws nothing new */
	mp_svg_path_point(&s, 100, 50);
	mp_svg_path_gap(&s);
	mp_svg_path_point(&s, 100, 100);
	mp_svg_path_end(&s);
}

Test(svg, step_paths)
{
	struct mp_svg_plot p = {10, 0, 100, 100, 0, 100, 100};
	char *got = capture(path_fn, &p);

	cr_assert_str_eq(got,
	                 "<path class=\"series live\" d=\"M10.0,100.0H60.0V50.0H110.0M110.0,0.0\" "
	                 "data-points=\"4\"/>\n");
	free(got);
}

static void b64_fn(FILE *f, const void *arg)
{
	const double *v = arg;

	mp_html_b64_doubles(f, v + 1, (size_t)v[0]);
}

Test(html_data, doubles_as_base64_little_endian)
{
	/* 1.0 is 00 00 00 00 00 00 f0 3f; -2.0 is ... 00 c0 */
	static const double one[] = {1, 1.0}, two[] = {2, 1.0, -2.0}, none[] = {0};
	char *got = capture(b64_fn, one);

	cr_assert_str_eq(got, "AAAAAAAA8D8=");
	free(got);
	got = capture(b64_fn, two);
	cr_assert_str_eq(got, "AAAAAAAA8D8AAAAAAAAAwA==");
	free(got);
	got = capture(b64_fn, none);
	cr_assert_str_eq(got, "");
	free(got);
}

static void json_fn(FILE *f, const void *arg)
{
	mp_html_json_string(f, arg, strlen(arg));
}

Test(html_data, json_strings_escape_quotes_controls_and_bad_utf8)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	        {"plain", "\"plain\""},
	        {"a\"b\\c", "\"a\\\"b\\\\c\""},
	        {"</script>", "\"</script>\""},
	        {"line\nfeed\x01", "\"line\\u000afeed\\u0001\""},
	        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
	        {"bad\xff\xc3", "\"bad\\ufffd\\ufffd\""},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = capture(json_fn, cases[i].in);

		cr_assert_str_eq(got, cases[i].want, "case %zu", i);
		free(got);
	}
}
