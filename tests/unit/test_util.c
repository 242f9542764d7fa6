/*
 * tests/unit/test_util.c - src/util: hash maps, edit distance and
 * suggestions, the stack text grammar, byte formatting.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"
#include "util/format.h"
#include "util/intmap.h"
#include "util/op_names.h"
#include "util/radix_sort.h"
#include "util/slot_pool.h"
#include "util/stack_text.h"
#include "util/strmap.h"
#include "util/suggest.h"

Test(intmap, put_get_delete_many)
{
	struct mp_intmap m;
	uint64_t v, i;

	mp_intmap_init(&m);
	for (i = 0; i < 100000; i++)
		cr_assert_eq(mp_intmap_put(&m, i * 7919, i), 0);
	cr_assert_eq(m.n, 100000);
	for (i = 0; i < 100000; i += 2)
		cr_assert(mp_intmap_del(&m, i * 7919));
	for (i = 0; i < 100000; i++) {
		int found = mp_intmap_get(&m, i * 7919, &v);

		cr_assert_eq(found, (int)(i % 2), "key %llu", (unsigned long long)i);
		if (found)
			cr_assert_eq(v, i);
	}
	cr_assert_not(mp_intmap_del(&m, 2));
	cr_assert_eq(m.n, 50000);
	mp_intmap_free(&m);
}

Test(intmap, replace_and_zero_key)
{
	struct mp_intmap m;
	uint64_t v = 0;

	mp_intmap_init(&m);
	cr_assert_not(mp_intmap_get(&m, 0, &v));
	mp_intmap_put(&m, 0, 5);
	mp_intmap_put(&m, 0, 6);
	cr_assert(mp_intmap_get(&m, 0, &v));
	cr_assert_eq(v, 6);
	cr_assert_eq(m.n, 1);
	mp_intmap_free(&m);
}

/* add inserts only absent keys, says so, and gives the present key's value;
 * through growth it leaves the map as puts of the same keys do, slot for slot. */
Test(intmap, add_once_and_growth_keeps_slots)
{
	struct mp_intmap m, ref;
	uint64_t v;

	mp_intmap_init(&m);
	mp_intmap_init(&ref);
	cr_assert_eq(mp_intmap_add(&m, 0, 5, &v), 1);
	v = 99;
	cr_assert_eq(mp_intmap_add(&m, 0, 6, &v), 0);
	cr_assert_eq(v, 5);
	cr_assert_eq(mp_intmap_add(&m, 0, 7, NULL), 0);
	cr_assert(mp_intmap_get(&m, 0, &v));
	cr_assert_eq(v, 5);
	mp_intmap_put(&ref, 0, 5);
	for (uint64_t i = 1; i < 5000; i++) { /* every third key twice */
		uint64_t k = i * 7919 + ((i % 7) << 40);

		cr_assert_eq(mp_intmap_add(&m, k, i, NULL), 1, "key %llu", (unsigned long long)i);
		cr_assert_eq(mp_intmap_put(&ref, k, i), 0);
		if (i % 3 == 0) {
			cr_assert_eq(mp_intmap_add(&m, k, 0, &v), 0);
			cr_assert_eq(v, i);
		}
	}
	cr_assert_eq(m.n, ref.n);
	cr_assert_eq(m.cap, ref.cap);
	for (size_t i = 0; i < m.cap; i++) {
		cr_assert_eq(m.used[i], ref.used[i], "slot %zu", i);
		if (m.used[i])
			cr_assert(m.keys[i] == ref.keys[i] && m.vals[i] == ref.vals[i], "slot %zu",
			          i);
	}
	mp_intmap_free(&m);
	mp_intmap_free(&ref);
}

Test(strmap, binary_keys_and_stored_copy)
{
	struct mp_strmap m;
	const char *stored;
	char key[3] = {'a', '\0', 'b'};
	int64_t v;

	mp_strmap_init(&m);
	cr_assert_eq(mp_strmap_put(&m, key, 3, 42, &stored), 0);
	cr_assert(mp_strmap_get(&m, key, 3, &v));
	cr_assert_eq(v, 42);
	cr_assert_not(mp_strmap_get(&m, key, 1, &v));
	cr_assert_eq(memcmp(stored, key, 3), 0);
	for (v = 0; v < 5000; v++) {
		char k[32];

		snprintf(k, sizeof(k), "name%lld", (long long)v);
		cr_assert_eq(mp_strmap_put(&m, k, strlen(k), v, NULL), 0);
	}
	cr_assert(mp_strmap_get(&m, "name4999", 8, &v));
	cr_assert_eq(v, 4999);
	mp_strmap_free(&m);
}

Test(suggest, distances)
{
	cr_assert_eq(mp_edit_distance("import", "import"), 0);
	cr_assert_eq(mp_edit_distance("imprt", "import"), 1);
	cr_assert_eq(mp_edit_distance("exprot", "export"), 1); /* transposition */
	cr_assert_eq(mp_edit_distance("", "info"), 4);
}

Test(suggest, closest_command)
{
	const char *cmds[] = {"import", "export", "info"};

	cr_assert_str_eq(mp_suggest("imprt", cmds, 3), "import");
	cr_assert_str_eq(mp_suggest("exprot", cmds, 3), "export");
	cr_assert_str_eq(mp_suggest("inf", cmds, 3), "info");
	cr_assert_str_eq(mp_suggest("im", cmds, 3), "import"); /* unique prefix */
	cr_assert_null(mp_suggest("frobnicate", cmds, 3));
}

Test(stack_text, parse_frames_outermost_first_in_text)
{
	struct mp_frame_list l;
	struct mp_error err;
	const char *t = "main@train.py:88;forward@model.py:41;linear";

	mp_frame_list_init(&l);
	cr_assert_eq(mp_stack_text_parse(t, strlen(t), &l, &err), 0, "%s", err.msg);
	cr_assert_eq(l.n, 3);
	cr_assert_str_eq(l.frames[0].name, "linear"); /* innermost first */
	cr_assert_str_eq(l.frames[0].file, "");
	cr_assert_eq(l.frames[0].line, 0);
	cr_assert_str_eq(l.frames[1].name, "forward");
	cr_assert_str_eq(l.frames[1].file, "model.py");
	cr_assert_eq(l.frames[1].line, 41);
	cr_assert_str_eq(l.frames[2].name, "main");
	cr_assert_eq(l.frames[2].line, 88);
	mp_frame_list_free(&l);
}

Test(stack_text, escapes_round_trip)
{
	struct mp_frame_list l;
	struct mp_error err;
	struct memprof_stack s;
	const char *t = "a\\;b\\@c\\\\d@C\\:\\\\dir\\;x.py:7;std::vector<int>::push_back@v.h";
	char *out;

	mp_frame_list_init(&l);
	cr_assert_eq(mp_stack_text_parse(t, strlen(t), &l, &err), 0, "%s", err.msg);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(l.frames[1].name, "a;b@c\\d");
	cr_assert_str_eq(l.frames[1].file, "C:\\dir;x.py");
	cr_assert_eq(l.frames[1].line, 7);
	cr_assert_str_eq(l.frames[0].name, "std::vector<int>::push_back");
	s.n_frames = (uint32_t)l.n;
	s.frames = l.frames;
	out = mp_stack_text_format(&s, NULL);
	cr_assert_str_eq(out, t);
	free(out);
	mp_frame_list_free(&l);
}

Test(stack_text, errors_name_the_byte)
{
	struct mp_frame_list l;
	struct mp_error err;

	mp_frame_list_init(&l);
	cr_assert_eq(mp_stack_text_parse("a;;b", 4, &l, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "empty frame at byte 3"), "%s", err.msg);
	cr_assert_eq(mp_stack_text_parse("a@f.py:x1", 9, &l, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "line number"), "%s", err.msg);
	cr_assert_eq(mp_stack_text_parse("a\\n", 3, &l, &err), MP_EFORMAT);
	cr_assert(strstr(err.msg, "unknown escape"), "%s", err.msg);
	cr_assert_eq(mp_stack_text_parse("a\\", 2, &l, &err), MP_EFORMAT);
	cr_assert_eq(mp_stack_text_parse("a;", 2, &l, &err), MP_EFORMAT);
	cr_assert_eq(mp_stack_text_parse("f@x.py:", 7, &l, &err), MP_EFORMAT);
	cr_assert_eq(mp_stack_text_parse("f@x.py:99999999999999999999", 27, &l, &err), MP_EFORMAT);
	mp_frame_list_free(&l);
}

Test(stack_text, unnamed_frame_without_location_round_trips)
{
	struct mp_frame_list l;
	struct memprof_stack s;
	char *out;

	mp_frame_list_init(&l);
	cr_assert_eq(mp_stack_text_parse("a;@", 3, &l, NULL), 0);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(l.frames[0].name, "");
	s.n_frames = (uint32_t)l.n;
	s.frames = l.frames;
	out = mp_stack_text_format(&s, NULL);
	cr_assert_str_eq(out, "a;@");
	free(out);
	mp_frame_list_free(&l);
}

Test(stack_text, empty_text_is_no_frames)
{
	struct mp_frame_list l;
	struct memprof_stack s = {0, NULL};
	char *out;

	mp_frame_list_init(&l);
	cr_assert_eq(mp_stack_text_parse("", 0, &l, NULL), 0);
	cr_assert_eq(l.n, 0);
	out = mp_stack_text_format(&s, NULL);
	cr_assert_str_eq(out, "");
	free(out);
	mp_frame_list_free(&l);
}

Test(op_names, every_op_round_trips)
{
	int op;

	for (op = MEMPROF_OP_MIN; op <= MEMPROF_OP_MAX; op++) {
		const char *n = mp_op_name(op);

		cr_assert_not_null(n);
		cr_assert_eq(mp_op_from_name(n, strlen(n)), op);
	}
	cr_assert_null(mp_op_name(0));
	cr_assert_null(mp_op_name(MEMPROF_OP_MAX + 1));
	cr_assert_eq(mp_op_from_name("allocx", 6), 0);
	cr_assert_eq(mp_op_from_name("alloc", 4), 0);
}

Test(format, bytes)
{
	char b[32];

	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), 0), "0 B");
	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), 1023), "1023 B");
	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), 1536), "1.50 KiB");
	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), 3LL << 30), "3.00 GiB");
	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), 200LL << 20), "200 MiB");
	cr_assert_str_eq(mp_format_bytes(b, sizeof(b), -(1LL << 20)), "-1.00 MiB");
}

Test(slot_pool, freed_slots_are_reused_and_records_survive_growth)
{
	struct mp_slot_pool p;
	size_t slot, i;
	int64_t *v;

	mp_slot_pool_init(&p, sizeof(int64_t) * 3);
	for (i = 0; i < 5000; i++) { /* past the first growth */
		v = mp_slot_pool_take(&p, &slot);
		cr_assert_not_null(v);
		cr_assert_eq(slot, i);
		cr_assert_eq(v[0] | v[1] | v[2], 0, "a taken record is zeroed");
		v[0] = (int64_t)i;
		v[2] = -(int64_t)i;
	}
	for (i = 0; i < 5000; i++) {
		v = mp_slot_pool_at(&p, i);
		cr_assert_eq(v[0], (int64_t)i);
		cr_assert_eq(v[2], -(int64_t)i);
	}
	mp_slot_pool_give(&p, 17);
	mp_slot_pool_give(&p, 4000);
	v = mp_slot_pool_take(&p, &slot);
	cr_assert_eq(slot, 4000, "the last slot given back is taken first");
	cr_assert_eq(v[0], 0);
	mp_slot_pool_take(&p, &slot);
	cr_assert_eq(slot, 17);
	mp_slot_pool_take(&p, &slot);
	cr_assert_eq(slot, 5000, "then the array grows again");
	mp_slot_pool_free(&p);
}

Test(parse, count_takes_a_whole_decimal_in_range)
{
	int64_t v = -7;

	cr_assert_eq(mp_parse_count("0", 0, 10, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(mp_parse_count("-3", -5, 5, &v), 0);
	cr_assert_eq(v, -3);
	cr_assert_eq(mp_parse_count("2147483647", 0, INT32_MAX, &v), 0);
	cr_assert_eq(v, INT32_MAX);
	v = 42;
	cr_assert_eq(mp_parse_count("2147483648", 0, INT32_MAX, &v), MP_EINVAL);
	cr_assert_eq(mp_parse_count("99999999999999999999", INT64_MIN, INT64_MAX, &v), MP_EINVAL);
	cr_assert_eq(mp_parse_count("", 0, 10, &v), MP_EINVAL);
	cr_assert_eq(mp_parse_count("3x", 0, 10, &v), MP_EINVAL);
	cr_assert_eq(mp_parse_count("-1", 0, 10, &v), MP_EINVAL);
	cr_assert_eq(v, 42, "a refused text leaves the value alone");
}

static int by_key_then_val(const void *a, const void *b)
{
	const struct mp_radix_pair *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->val < y->val ? -1 : x->val > y->val;
}

/* Keys of every shape: few distinct, low bytes only, high bytes only, full width. */
Test(radix_sort, stable_and_equal_to_a_comparison_sort)
{
	static struct mp_radix_pair v[5000], tmp[5000], want[5000];
	const uint64_t masks[] = {0x7, 0xffff, 0xff00000000000000ull, UINT64_MAX, 0};
	uint64_t r = 12345;

	for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++)
		for (size_t n = 0; n <= 5000; n += n < 4 ? 1 : 1249) {
			for (size_t i = 0; i < n; i++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				v[i] = want[i] = (struct mp_radix_pair){r & masks[m], i};
			}
			qsort(want, n, sizeof *want, by_key_then_val); /* val: the input order */
			mp_radix_sort(v, tmp, n);
			for (size_t i = 0; i < n; i++)
				cr_assert(v[i].key == want[i].key && v[i].val == want[i].val,
				          "mask %zu, n %zu, at %zu", m, n, i);
		}
}
