/*
 * tests/unit/test_plugin_lib.c - the helpers pool plugins build in
 * (plugins/lib): size, list, ratio and switch parsers, the capturing glob,
 * and the byte-string key map.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/lib/keymap.h"
#include "../../plugins/lib/parse.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)

Test(plugin_parse, sizes_accept_binary_suffixes)
{
	uint64_t v = 0;

	cr_assert_eq(pl_parse_bytes("123", &v), 0);
	cr_assert_eq(v, 123);
	cr_assert_eq(pl_parse_bytes("64KiB", &v), 0);
	cr_assert_eq(v, 64 * KiB);
	cr_assert_eq(pl_parse_bytes("256 MiB", &v), 0);
	cr_assert_eq(v, 256 * MiB);
	cr_assert_eq(pl_parse_bytes("2g", &v), 0);
	cr_assert_eq(v, 2048 * MiB);
	cr_assert_neq(pl_parse_bytes("-5", &v), 0);
	cr_assert_neq(pl_parse_bytes("5 parsecs", &v), 0);
	cr_assert_neq(pl_parse_bytes("99999999999TiB", &v), 0);
}

Test(plugin_parse, size_lists_are_increasing)
{
	uint64_t v[4];
	size_t n = 9;

	cr_assert_eq(pl_parse_bytes_list("64,256,1KiB", v, 4, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(v[0], 64);
	cr_assert_eq(v[2], KiB);
	cr_assert_neq(pl_parse_bytes_list("256,64", v, 4, &n), 0, "decreasing");
	cr_assert_neq(pl_parse_bytes_list("64,64", v, 4, &n), 0, "repeated");
	cr_assert_neq(pl_parse_bytes_list("1,2,3,4,5", v, 4, &n), 0, "too many");
	cr_assert_neq(pl_parse_bytes_list("64,,128", v, 4, &n), 0, "empty item");
	cr_assert_neq(pl_parse_bytes_list("0,64", v, 4, &n), 0, "zero");
	cr_assert_neq(pl_parse_bytes_list("", v, 4, &n), 0);
}

Test(plugin_parse, ratios_counts_switches_choices)
{
	double r;
	uint64_t c;
	int on;
	static const char *const keys[] = {"site", "tag", "size", NULL};

	cr_assert_eq(pl_parse_ratio("0.3", 0, 1, &r), 0);
	cr_assert_float_eq(r, 0.3, 1e-12);
	cr_assert_neq(pl_parse_ratio("1.5", 0, 1, &r), 0);
	cr_assert_neq(pl_parse_ratio("nan", 0, 1, &r), 0);
	cr_assert_neq(pl_parse_ratio("0.3x", 0, 1, &r), 0);
	cr_assert_eq(pl_parse_ratio("30%", 0, 1, &r), 0); /* a ratio as a percentage */
	cr_assert_float_eq(r, 0.3, 1e-12);
	cr_assert_neq(pl_parse_ratio("130%", 0, 1, &r), 0);
	cr_assert_neq(pl_parse_ratio("%", 0, 1, &r), 0);
	cr_assert_neq(pl_parse_ratio("30%x", 0, 1, &r), 0);
	cr_assert_eq(pl_parse_count("17", &c), 0);
	cr_assert_eq(c, 17);
	cr_assert_neq(pl_parse_count("17k", &c), 0);
	cr_assert_neq(pl_parse_count("", &c), 0);
	cr_assert_eq(pl_parse_switch("off", &on), 0);
	cr_assert_eq(on, 0);
	cr_assert_eq(pl_parse_switch("yes", &on), 0);
	cr_assert_eq(on, 1);
	cr_assert_neq(pl_parse_switch("maybe", &on), 0);
	cr_assert_eq(pl_parse_choice("tag", keys), 1);
	cr_assert_eq(pl_parse_choice("stack", keys), -1);
}

static void assert_capture(const char *pattern, const char *text, const char *want)
{
	const char *cap = NULL;
	size_t len = 0;

	cr_assert(pl_glob(pattern, text, &cap, &len), "%s should match %s", pattern, text);
	cr_assert_eq(len, strlen(want), "%s on %s captured %.*s, not %s", pattern, text, (int)len,
	             cap, want);
	cr_assert_eq(strncmp(cap, want, len), 0);
}

Test(plugin_parse, glob_matches_and_captures_the_first_star)
{
	const char *cap;
	size_t len;

	assert_capture("param:*", "param:bucket-3", "bucket-3");
	assert_capture("grad:*/reduce", "grad:bucket-3/reduce", "bucket-3");
	assert_capture("*@model.py:*", "mlp@model.py:20", "mlp");
	assert_capture("exact", "exact", "exact");
	assert_capture("a?c", "abc", "abc");
	assert_capture("*", "", "");
	cr_assert_not(pl_glob("param:*", "grad:bucket-3", &cap, &len));
	cr_assert_not(pl_glob("a?c", "ac", &cap, &len));
	cr_assert_not(pl_glob("*x", "xyz", &cap, &len));
	cr_assert_not(pl_glob(NULL, "x", &cap, &len));
}

Test(plugin_keymap, keeps_many_keys_and_replaces_values)
{
	struct pl_keymap m;
	char key[64];
	uint64_t v;

	pl_keymap_init(&m);
	cr_assert_eq(pl_keymap_get(&m, "x", 1, &v), 0, "empty map");
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "site-%d", i);
		cr_assert_eq(pl_keymap_put(&m, key, (size_t)n, (uint64_t)i * 3), 0);
	}
	cr_assert_eq(m.n, 5000);
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "site-%d", i);
		cr_assert_eq(pl_keymap_get(&m, key, (size_t)n, &v), 1);
		cr_assert_eq(v, (uint64_t)i * 3);
	}
	cr_assert_eq(pl_keymap_put(&m, "site-7", 6, 99), 0);
	cr_assert_eq(m.n, 5000, "a replaced value is not a new key");
	cr_assert_eq(pl_keymap_get(&m, "site-7", 6, &v), 1);
	cr_assert_eq(v, 99);
	cr_assert_eq(pl_keymap_get(&m, "site-", 5, &v), 0, "a prefix is another key");
	pl_keymap_free(&m);
}

Test(plugin_keymap, text_and_size_keys_differ_by_either)
{
	char a[64], b[64], c[64];
	size_t la = pl_key_text_u64(a, sizeof a, "mlp@model.py:20", 4096);
	size_t lb = pl_key_text_u64(b, sizeof b, "mlp@model.py:20", 8192);
	size_t lc = pl_key_text_u64(c, sizeof c, NULL, 4096);

	cr_assert(la == lb && memcmp(a, b, la) != 0);
	cr_assert(lc != la);
	cr_assert_eq(pl_key_text_u64(c, sizeof c, "", 4096), lc, "same length as NULL text");
	cr_assert_neq(memcmp(c, (pl_key_text_u64(a, sizeof a, NULL, 4096), a), lc), 0,
	              "NULL text and empty text are different keys");
}
