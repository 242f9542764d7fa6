/*
 * tests/unit/test_pickle.c - src/import/pickle.c: every opcode it reads,
 * byte by byte and in Python's own pickles of protocols 2 to 5
 * (pickle_fixtures.h), and the exact wording and byte offset of every
 * refusal: code-loading opcodes, truncation, absurd lengths, bad stacks,
 * values past the memory budget; each read both from a buffer and from a
 * file (read in chunks), alike.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/pickle.h"
#include "pickle_fixtures.h"
#include "util/mem_budget.h"

/* Opcodes by their names in Python's pickletools. */
enum {
	MARK = '(',
	STOP = '.',
	POP = '0',
	POP_MARK = '1',
	DUP = '2',
	BININT = 'J',
	BININT1 = 'K',
	BININT2 = 'M',
	NONE = 'N',
	BINSTRING = 'T',
	SHORT_BINSTRING = 'U',
	BINUNICODE = 'X',
	APPEND = 'a',
	BINBYTES = 'B',
	SHORT_BINBYTES = 'C',
	EMPTY_DICT = '}',
	APPENDS = 'e',
	BINGET = 'h',
	LONG_BINGET = 'j',
	LIST = 'l',
	DICT = 'd',
	EMPTY_LIST = ']',
	BINPUT = 'q',
	LONG_BINPUT = 'r',
	SETITEM = 's',
	TUPLE = 't',
	EMPTY_TUPLE = ')',
	SETITEMS = 'u',
	BINFLOAT = 'G',
	PROTO = 0x80,
	TUPLE1 = 0x85,
	TUPLE2 = 0x86,
	TUPLE3 = 0x87,
	NEWTRUE = 0x88,
	NEWFALSE = 0x89,
	LONG1 = 0x8a,
	LONG4 = 0x8b,
	SHORT_BINUNICODE = 0x8c,
	BINUNICODE8 = 0x8d,
	BINBYTES8 = 0x8e,
	EMPTY_SET = 0x8f,
	ADDITEMS = 0x90,
	FROZENSET = 0x91,
	MEMOIZE = 0x94,
	FRAME = 0x95,
	BYTEARRAY8 = 0x96,
};

static struct mp_pickle *doc;
static struct mp_error err;

static void fini(void)
{
	mp_pickle_free(doc);
	doc = NULL;
}

TestSuite(pickle, .fini = fini);

/* Read b from a buffer, and again from a file: both must agree. */
static int load(const unsigned char *b, size_t n)
{
	struct mp_pickle *from_file = NULL;
	struct mp_error file_err = {0};
	FILE *f = fmemopen((void *)b, n, "rb");
	int rc, file_rc;

	mp_pickle_free(doc);
	doc = NULL;
	memset(&err, 0, sizeof(err));
	cr_assert_not_null(f);
	file_rc = mp_pickle_load(&from_file, f, "t.pkl", &file_err);
	fclose(f);
	rc = mp_pickle_load_buffer(&doc, b, n, "t.pkl", &err);
	cr_assert_eq(file_rc, rc, "from a file: %d (%s), from a buffer: %d", file_rc, file_err.msg,
	             rc);
	cr_assert_str_eq(file_err.msg, err.msg);
	if (rc == 0)
		cr_assert_eq(mp_pickle_n_slots(from_file), mp_pickle_n_slots(doc));
	mp_pickle_free(from_file);
	return rc;
}

#define BYTES(...) ((const unsigned char[]){__VA_ARGS__})
#define LOAD(...)  load(BYTES(__VA_ARGS__), sizeof(BYTES(__VA_ARGS__)))

/* Load the bytes, which must be read; their root. */
static const struct mp_pk *root_of(const unsigned char *b, size_t n)
{
	cr_assert_eq(load(b, n), 0, "%s", err.msg);
	return mp_pickle_root(doc);
}

#define ROOT(...) root_of(BYTES(__VA_ARGS__), sizeof(BYTES(__VA_ARGS__)))

/* Load the bytes, which must be refused with exactly this message. */
#define EXPECT_REFUSED(want, ...)                                                                  \
	do {                                                                                       \
		cr_assert_eq(LOAD(__VA_ARGS__), MP_EFORMAT, "read, expected '%s'", want);          \
		cr_assert_str_eq(err.msg, want);                                                   \
		cr_assert_null(doc);                                                               \
	} while (0)

static void expect_int(const struct mp_pk *v, int64_t want)
{
	int64_t got = 0;

	cr_assert_not_null(v);
	cr_assert_eq(v->type, MP_PK_INT, "type %d", v->type);
	cr_assert_eq(v->is_u64, 0);
	cr_assert(mp_pk_int(v, &got));
	cr_assert_eq(got, want, "%lld != %lld", (long long)got, (long long)want);
}

static void expect_u64(const struct mp_pk *v, uint64_t want)
{
	int64_t got;

	cr_assert_eq(v->type, MP_PK_INT);
	cr_assert_eq(v->is_u64, 1);
	cr_assert_eq((uint64_t)v->v.i, want);
	cr_assert_eq(mp_pk_int(v, &got), 0, "an unsigned 64-bit value does not fit int64");
}

static void expect_str(const struct mp_pk *v, enum mp_pk_type type, const char *s, size_t n)
{
	cr_assert_not_null(v);
	cr_assert_eq(v->type, type, "type %d", v->type);
	cr_assert_eq(v->n, n);
	cr_assert_eq(memcmp(v->v.s, s, n), 0);
}

/* --- Python's pickles ------------------------------------------------------------ */

static const struct mp_pk *key(const struct mp_pk *d, const char *k)
{
	const struct mp_pk *v = mp_pk_get(d, k);

	cr_assert_not_null(v, "no key '%s'", k);
	return v;
}

static void check_values(const unsigned char *b, size_t n, int proto)
{
	const struct mp_pk *r, *v;
	size_t i;

	cr_assert_eq(load(b, n), 0, "protocol %d: %s", proto, err.msg);
	r = mp_pickle_root(doc);
	cr_assert_eq(r->type, MP_PK_DICT);
	cr_assert_eq(mp_pickle_size(doc), n);
	cr_assert_eq(key(r, "none")->type, MP_PK_NONE);
	cr_assert_eq(key(r, "true")->type, MP_PK_BOOL);
	cr_assert_eq(key(r, "true")->v.i, 1);
	cr_assert_eq(key(r, "false")->v.i, 0);
	expect_int(key(r, "i1"), 7);
	expect_int(key(r, "i2"), 300);
	expect_int(key(r, "i4"), 70000);
	expect_int(key(r, "neg"), -1);
	expect_int(key(r, "neg4"), -70000);
	expect_int(key(r, "min64"), INT64_MIN);
	expect_int(key(r, "max64"), INT64_MAX);
	expect_u64(key(r, "u64"), UINT64_C(1) << 63);
	expect_u64(key(r, "u64max"), UINT64_MAX);
	cr_assert_eq(key(r, "big")->type, MP_PK_BIGINT);
	cr_assert_eq(key(r, "big")->n, 9);
	cr_assert_eq(key(r, "negbig")->type, MP_PK_BIGINT);
	cr_assert_eq(key(r, "negbig")->n, 9);
	cr_assert_eq(key(r, "huge")->type, MP_PK_BIGINT); /* 2^2100: LONG4, 263 bytes */
	cr_assert_eq(key(r, "huge")->n, 263);
	cr_assert_eq(key(r, "f")->type, MP_PK_FLOAT);
	cr_assert_eq(key(r, "f")->v.f, -2.5);
	expect_str(key(r, "s"), MP_PK_STR, "h\xc3\xa9llo", 6);
	v = key(r, "long_s");
	cr_assert_eq(v->n, 300);
	for (i = 0; i < 300; i++)
		cr_assert_eq(v->v.s[i], 'y');
	for (i = 0; i <= 4; i++) {
		char name[4] = {'t', (char)('0' + i), 0, 0};

		v = key(r, name);
		cr_assert_eq(v->type, MP_PK_TUPLE);
		cr_assert_eq(v->n, i);
		if (i)
			expect_int(v->v.items[i - 1], (int64_t)i);
	}
	v = key(r, "l");
	cr_assert_eq(v->type, MP_PK_LIST);
	if (proto == 4) { /* 1001 Nones and a 1: two APPENDS batches */
		cr_assert_eq(v->n, 1002);
		cr_assert_eq(v->v.items[1000]->type, MP_PK_NONE);
		expect_int(v->v.items[1001], 1);
		v = key(r, "d");
		cr_assert_eq(v->n, 1002);
		expect_int(v->v.items[2 * 1001], 1001);
		cr_assert_eq(v->v.items[2 * 1001 + 1]->type, MP_PK_NONE);
	} else {
		cr_assert_eq(v->n, 3);
		expect_int(v->v.items[0], 1);
		expect_str(v->v.items[1], MP_PK_STR, "two", 3);
		cr_assert_eq(v->v.items[2]->type, MP_PK_LIST);
		expect_int(v->v.items[2]->v.items[0], 3);
		v = key(r, "d");
		cr_assert_eq(v->n, 2);
		expect_int(key(v, "k"), 1);
		expect_int(v->v.items[2], 2); /* a key that is not a string */
		expect_str(v->v.items[3], MP_PK_STR, "v", 1);
	}
	cr_assert_eq(key(r, "a"), key(r, "b"), "one object, twice: the memo");
	cr_assert_eq(key(r, "a")->n, 1);
	if (proto >= 3)
		expect_str(key(r, "bytes"), MP_PK_BYTES, "\x00\xff", 2);
	if (proto >= 4) {
		cr_assert_eq(key(r, "set")->type, MP_PK_SET);
		expect_int(key(r, "set")->v.items[0], 5);
		cr_assert_eq(key(r, "fset")->type, MP_PK_SET);
		expect_int(key(r, "fset")->v.items[0], 6);
	}
	if (proto >= 5)
		expect_str(key(r, "ba"), MP_PK_BYTES, "ab", 2);
}

Test(pickle, python_protocols_2_to_5)
{
	check_values(fx_values_p2, sizeof(fx_values_p2), 2);
	check_values(fx_values_p3, sizeof(fx_values_p3), 3);
	check_values(fx_values_p4, sizeof(fx_values_p4), 4);
	check_values(fx_values_p5, sizeof(fx_values_p5), 5);
}

Test(pickle, from_a_stream)
{
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(fx_values_p5, 1, sizeof(fx_values_p5), f), sizeof(fx_values_p5));
	rewind(f);
	cr_assert_eq(mp_pickle_load(&doc, f, "s.pkl", &err), 0, "%s", err.msg);
	cr_assert_eq(mp_pickle_size(doc), sizeof(fx_values_p5));
	expect_int(mp_pk_get(mp_pickle_root(doc), "i4"), 70000);
	mp_pickle_free(doc);
	doc = NULL;
	rewind(f);
	cr_assert_eq(ftruncate(fileno(f), 0), 0);
	cr_assert_eq(mp_pickle_load(&doc, f, "s.pkl", &err), MP_EFORMAT);
	cr_assert_str_eq(err.msg, "truncated pickle 's.pkl' at byte 0: no STOP opcode");
	cr_assert_null(doc);
	fclose(f);
}

/* A pickle that asks for more memory than the budget (here 64 MiB more than
 * the process holds) is refused with the byte it got to, not run until
 * memory runs out: 32 M None values would take more than a GiB. */
Test(pickle, values_past_the_memory_budget_are_refused)
{
	size_t n = 32u << 20;
	unsigned char *b = malloc(n + 2);
	char limit[32];
	unsigned long long at = 0;

	cr_assert_not_null(b);
	b[0] = 0x80;
	b[1] = 4;
	memset(b + 2, 'N', n);
	snprintf(limit, sizeof(limit), "%llu",
	         (unsigned long long)(mp_mem_resident() + ((uint64_t)64 << 20)));
	setenv("MEMPROF_MAX_MEMORY", limit, 1);
	cr_assert_eq(mp_pickle_load_buffer(&doc, b, n + 2, "big.pkl", &err), MP_ENOMEM);
	unsetenv("MEMPROF_MAX_MEMORY");
	cr_assert_null(doc);
	cr_assert_eq(sscanf(err.msg, "pickle 'big.pkl' at byte %llu holds more than this import", &at),
	             1, "%s", err.msg);
	cr_assert_gt(at, 2);
	cr_assert_lt(at, n, "%s", err.msg);
	cr_assert(strstr(err.msg, "(MEMPROF_MAX_MEMORY); refused before memory runs out"), "%s",
	          err.msg);
	free(b);
}

/* Every prefix of a good pickle is refused, with a message. */
Test(pickle, every_truncation_is_refused)
{
	size_t n;

	for (n = 0; n < sizeof(fx_values_p4); n++) {
		cr_assert_eq(load(fx_values_p4, n), MP_EFORMAT, "prefix of %zu bytes read", n);
		cr_assert(strstr(err.msg, "pickle 't.pkl' at byte "), "%s", err.msg);
		cr_assert_null(doc);
	}
}

/* --- opcode by opcode ------------------------------------------------------------ */

Test(pickle, frame_memoize_and_a_list_that_holds_itself)
{
	const struct mp_pk *r = ROOT(PROTO, 4, FRAME, 5, 0, 0, 0, 0, 0, 0, 0, EMPTY_LIST, MEMOIZE,
	                             BINGET, 0, APPEND, STOP);

	cr_assert_eq(r->type, MP_PK_LIST);
	cr_assert_eq(r->n, 1);
	cr_assert_eq(r->v.items[0], r);
}

Test(pickle, memo_put_and_get_short_and_long)
{
	const struct mp_pk *r =
	        ROOT(PROTO, 2, BININT1, 5, BINPUT, 3, POP, BININT1, 6, LONG_BINPUT, 0x10, 0x27, 0,
	             0, POP, EMPTY_DICT, MEMOIZE, POP, BINGET, 3, LONG_BINGET, 0x10, 0x27, 0, 0,
	             BINGET, 2, BINPUT, 0, POP, BINGET, 0, TUPLE3, STOP);

	cr_assert_eq(r->type, MP_PK_TUPLE);
	cr_assert_eq(r->n, 3);
	expect_int(r->v.items[0], 5);
	expect_int(r->v.items[1], 6);
	/* MEMOIZE took index 2 (two entries before it), not 0; BINPUT 0
	 * then stored the dict again at 0 */
	cr_assert_eq(r->v.items[2]->type, MP_PK_DICT);
}

Test(pickle, memoize_counts_entries)
{
	const struct mp_pk *r = ROOT(PROTO, 4, BININT1, 1, MEMOIZE, BININT1, 2, MEMOIZE, BINGET, 0,
	                             BINGET, 1, TUPLE2, TUPLE3, STOP);

	expect_int(r->v.items[0], 1);
	expect_int(r->v.items[1], 2);
	expect_int(r->v.items[2]->v.items[0], 1);
	expect_int(r->v.items[2]->v.items[1], 2);
}

Test(pickle, binints)
{
	const struct mp_pk *r = ROOT(PROTO, 2, MARK, BININT, 0xff, 0xff, 0xff, 0xff, BININT, 0, 0,
	                             0, 0x80, BININT, 0x78, 0x56, 0x34, 0x12, BININT1, 255, BININT2,
	                             0xff, 0xff, BININT2, 0x34, 0x12, LIST, STOP);

	cr_assert_eq(r->n, 6);
	expect_int(r->v.items[0], -1);
	expect_int(r->v.items[1], INT32_MIN);
	expect_int(r->v.items[2], 0x12345678);
	expect_int(r->v.items[3], 255);
	expect_int(r->v.items[4], 65535);
	expect_int(r->v.items[5], 0x1234);
}

Test(pickle, long1_every_width_and_sign)
{
	const struct mp_pk *r = ROOT(
	        PROTO, 2, MARK, LONG1, 0,                                 /* 0 */
	        LONG1, 1, 0xff,                                           /* -1 */
	        LONG1, 1, 0x80,                                           /* -128 */
	        LONG1, 2, 0x00, 0x80,                                     /* -32768 */
	        LONG1, 3, 0x00, 0x80, 0x00,                               /* 32768 */
	        LONG1, 3, 0x01, 0x00, 0x00,                               /* 1, redundant zeros */
	        LONG1, 4, 0xff, 0xff, 0xff, 0xff,                         /* -1, redundant 0xff */
	        LONG1, 8, 0, 0, 0, 0, 0, 0, 0, 0x80,                      /* INT64_MIN */
	        LONG1, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, /* INT64_MAX */
	        LONG1, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0xff,                /* INT64_MIN, 9 bytes */
	        LONG1, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x00,                /* 2^63 */
	        LONG1, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, /* 2^64 - 1 */
	        LONG1, 10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, /* again */
	        LONG1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,                                /* 2^64 */
	        LONG1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,                                /* -2^64 */
	        LONG1, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, /* -2^63 - 1 */
	        LIST, STOP);

	cr_assert_eq(r->n, 16);
	expect_int(r->v.items[0], 0);
	expect_int(r->v.items[1], -1);
	expect_int(r->v.items[2], -128);
	expect_int(r->v.items[3], -32768);
	expect_int(r->v.items[4], 32768);
	expect_int(r->v.items[5], 1);
	expect_int(r->v.items[6], -1);
	expect_int(r->v.items[7], INT64_MIN);
	expect_int(r->v.items[8], INT64_MAX);
	expect_int(r->v.items[9], INT64_MIN);
	expect_u64(r->v.items[10], UINT64_C(1) << 63);
	expect_u64(r->v.items[11], UINT64_MAX);
	expect_u64(r->v.items[12], UINT64_MAX);
	cr_assert_eq(r->v.items[13]->type, MP_PK_BIGINT);
	cr_assert_eq(r->v.items[13]->n, 9);
	cr_assert_eq(r->v.items[14]->type, MP_PK_BIGINT);
	cr_assert_eq(r->v.items[14]->n, 9);
	cr_assert_eq(r->v.items[15]->type, MP_PK_BIGINT);
	cr_assert_eq(r->v.items[15]->n, 9);
}

Test(pickle, long4)
{
	unsigned char b[322] = {PROTO, 2, MARK, LONG4, 2, 0,     0,    0, 0x34, 0x12,
	                        LONG4, 0, 0,    0,     0, LONG4, 0x2c, 1, 0,    0};
	size_t n = 20;
	const struct mp_pk *r;

	memset(b + n, 0, 300); /* 2^2392: 300 bytes, the last 0x01 */
	b[n + 299] = 0x01;
	b[n + 300] = LIST;
	b[n + 301] = STOP;
	cr_assert_eq(load(b, n + 302), 0, "%s", err.msg);
	r = mp_pickle_root(doc);
	cr_assert_eq(r->n, 3);
	expect_int(r->v.items[0], 0x1234);
	expect_int(r->v.items[1], 0);
	cr_assert_eq(r->v.items[2]->type, MP_PK_BIGINT);
	cr_assert_eq(r->v.items[2]->n, 300);
}

Test(pickle, binfloat)
{
	const struct mp_pk *r =
	        ROOT(PROTO, 2, BINFLOAT, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, BINFLOAT, 0x80, 0, 0, 0, 0,
	             0, 0, 0, BINFLOAT, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0, TUPLE3, STOP);

	cr_assert_eq(r->v.items[0]->type, MP_PK_FLOAT);
	cr_assert_eq(r->v.items[0]->v.f, 1.5);
	cr_assert_eq(r->v.items[1]->v.f, 0.0);
	cr_assert(signbit(r->v.items[1]->v.f));
	cr_assert(isinf(r->v.items[2]->v.f) && r->v.items[2]->v.f > 0);
}

Test(pickle, none_and_bools)
{
	const struct mp_pk *r = ROOT(PROTO, 2, NEWTRUE, NEWFALSE, NONE, TUPLE3, STOP);
	int64_t i;

	cr_assert_eq(r->v.items[0]->type, MP_PK_BOOL);
	cr_assert(mp_pk_int(r->v.items[0], &i) && i == 1);
	cr_assert(mp_pk_int(r->v.items[1], &i) && i == 0);
	cr_assert_eq(r->v.items[2]->type, MP_PK_NONE);
	cr_assert_eq(mp_pk_int(r->v.items[2], &i), 0);
}

Test(pickle, strings_and_bytes_of_every_length_prefix)
{
	const struct mp_pk *r = ROOT(
	        PROTO, 5, MARK, SHORT_BINUNICODE, 2, 'h', 'i', BINUNICODE, 3, 0, 0, 0, 'a', 0, 'b',
	        BINUNICODE8, 1, 0, 0, 0, 0, 0, 0, 0, 'c', SHORT_BINSTRING, 1, 'd', BINSTRING, 0, 0,
	        0, 0, SHORT_BINBYTES, 1, 0, BINBYTES, 2, 0, 0, 0, 7, 8, BINBYTES8, 1, 0, 0, 0, 0, 0,
	        0, 0, 9, BYTEARRAY8, 2, 0, 0, 0, 0, 0, 0, 0, 'x', 'y', LIST, STOP);

	cr_assert_eq(r->n, 9);
	expect_str(r->v.items[0], MP_PK_STR, "hi", 2);
	expect_str(r->v.items[1], MP_PK_STR, "a\0b", 3);
	expect_str(r->v.items[2], MP_PK_STR, "c", 1);
	expect_str(r->v.items[3], MP_PK_STR, "d", 1);
	expect_str(r->v.items[4], MP_PK_STR, "", 0);
	expect_str(r->v.items[5], MP_PK_BYTES, "\0", 1);
	expect_str(r->v.items[6], MP_PK_BYTES, "\x07\x08", 2);
	expect_str(r->v.items[7], MP_PK_BYTES, "\x09", 1);
	expect_str(r->v.items[8], MP_PK_BYTES, "xy", 2);
	cr_assert(mp_pk_str_is(r->v.items[0], "hi"));
	cr_assert_not(mp_pk_str_is(r->v.items[0], "h"));
	cr_assert_not(mp_pk_str_is(r->v.items[8], "xy"), "bytes are not a string");
	cr_assert_not(mp_pk_str_is(NULL, ""));
}

Test(pickle, sets_and_frozensets)
{
	const struct mp_pk *r = ROOT(PROTO, 4, EMPTY_SET, MARK, BININT1, 1, BININT1, 2, ADDITEMS,
	                             MARK, BININT1, 3, FROZENSET, MARK, FROZENSET, TUPLE3, STOP);

	cr_assert_eq(r->v.items[0]->type, MP_PK_SET);
	cr_assert_eq(r->v.items[0]->n, 2);
	expect_int(r->v.items[0]->v.items[1], 2);
	cr_assert_eq(r->v.items[1]->type, MP_PK_SET);
	cr_assert_eq(r->v.items[1]->n, 1);
	cr_assert_eq(r->v.items[2]->n, 0);
}

Test(pickle, mark_dict_list_tuple)
{
	const struct mp_pk *r =
	        ROOT(PROTO, 2, MARK, SHORT_BINUNICODE, 1, 'k', BININT1, 2, MARK, NONE, TUPLE, MARK,
	             LIST, SHORT_BINUNICODE, 1, 'e', EMPTY_TUPLE, DICT, STOP);
	const struct mp_pk *t;

	cr_assert_eq(r->type, MP_PK_DICT);
	cr_assert_eq(r->n, 3);
	expect_int(mp_pk_get(r, "k"), 2);
	t = r->v.items[2]; /* the second key: a tuple (None,) */
	cr_assert_eq(t->type, MP_PK_TUPLE);
	cr_assert_eq(t->n, 1);
	cr_assert_eq(t->v.items[0]->type, MP_PK_NONE);
	cr_assert_eq(r->v.items[3]->type, MP_PK_LIST);
	cr_assert_eq(r->v.items[3]->n, 0);
	cr_assert_eq(mp_pk_get(r, "e")->type, MP_PK_TUPLE);
	cr_assert_null(mp_pk_get(r, "x"));
	cr_assert_null(mp_pk_get(t, "k"), "a tuple is not a dict");
	cr_assert_null(mp_pk_get(NULL, "k"));
}

Test(pickle, appends_append_setitems_setitem)
{
	const struct mp_pk *r =
	        ROOT(PROTO, 2, EMPTY_DICT, MARK, SHORT_BINUNICODE, 1, 'a', BININT1, 1,
	             SHORT_BINUNICODE, 1, 'b', BININT1, 2, SETITEMS, SHORT_BINUNICODE, 1, 'c',
	             EMPTY_LIST, MARK, BININT1, 1, BININT1, 2, APPENDS, BININT1, 3, APPEND, MARK,
	             APPENDS, SETITEM, MARK, SETITEMS, STOP);
	const struct mp_pk *l;

	cr_assert_eq(r->n, 3);
	expect_int(mp_pk_get(r, "a"), 1);
	expect_int(mp_pk_get(r, "b"), 2);
	l = mp_pk_get(r, "c");
	cr_assert_eq(l->n, 3);
	expect_int(l->v.items[2], 3);
}

Test(pickle, pop_pop_mark_dup)
{
	const struct mp_pk *r = ROOT(PROTO, 2, BININT1, 1, BININT1, 2, POP, MARK, BININT1, 5,
	                             BININT1, 6, POP_MARK, MARK, POP, DUP, TUPLE2, STOP);

	cr_assert_eq(r->n, 2);
	expect_int(r->v.items[0], 1);
	cr_assert_eq(r->v.items[0], r->v.items[1], "DUP pushes the same value");
}

/* 10^6 levels of lists, and of tuples: nothing recurses. */
Test(pickle, a_million_levels_deep)
{
	size_t n = 1000000, i, depth;
	unsigned char *b = malloc(2 * n + 8);
	const struct mp_pk *v;

	cr_assert_not_null(b);
	b[0] = PROTO;
	b[1] = 4;
	memset(b + 2, EMPTY_LIST, n);
	memset(b + 2 + n, APPEND, n - 1);
	b[2 * n + 1] = STOP;
	cr_assert_eq(load(b, 2 * n + 2), 0, "%s", err.msg);
	for (depth = 1, v = mp_pickle_root(doc); v->n; depth++)
		v = v->v.items[0];
	cr_assert_eq(depth, n);
	b[2] = NONE;
	memset(b + 3, TUPLE1, n);
	b[n + 3] = STOP;
	cr_assert_eq(load(b, n + 4), 0, "%s", err.msg);
	for (i = 0, v = mp_pickle_root(doc); v->type == MP_PK_TUPLE; i++)
		v = v->v.items[0];
	cr_assert_eq(i, n);
	free(b);
}

Test(pickle, probe)
{
	cr_assert(mp_pickle_probe("\x80\x02", 2));
	cr_assert(mp_pickle_probe("\x80\x05\x95", 3));
	cr_assert_not(mp_pickle_probe("\x80\x06", 2));
	cr_assert_not(mp_pickle_probe("\x80\x01", 2));
	cr_assert_not(mp_pickle_probe("\x80", 1));
	cr_assert_not(mp_pickle_probe("ts_ns,op", 8));
}

/* --- refusals ---------------------------------------------------------------- */

Test(pickle, code_loading_opcodes_are_refused)
{
	static const struct {
		unsigned char op;
		const char *name;
	} ops[] = {
	        {'c', "GLOBAL"},    {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"},  {'b', "BUILD"},
	        {'i', "INST"},      {'o', "OBJ"},           {0x81, "NEWOBJ"}, {0x92, "NEWOBJ_EX"},
	        {0x82, "EXT1"},     {0x83, "EXT2"},         {0x84, "EXT4"},   {'P', "PERSID"},
	        {'Q', "BINPERSID"},
	};
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		unsigned char b[] = {PROTO, 4, NONE, NONE, ops[i].op, STOP};

		snprintf(
		        want, sizeof(want),
		        "refused pickle 't.pkl' at byte 4: opcode %s (0x%02x) would import or call "
		        "Python code; memprof reads plain data only",
		        ops[i].name, ops[i].op);
		cr_assert_eq(load(b, sizeof(b)), MP_EFORMAT, "%s read", ops[i].name);
		cr_assert_str_eq(err.msg, want);
		cr_assert_null(doc);
	}
	EXPECT_REFUSED("unsupported pickle 't.pkl' at byte 2: opcode NEXT_BUFFER (0x97): "
	               "out-of-band buffers are not part of a file",
	               PROTO, 5, 0x97, STOP);
	EXPECT_REFUSED("unsupported pickle 't.pkl' at byte 2: opcode READONLY_BUFFER (0x98): "
	               "out-of-band buffers are not part of a file",
	               PROTO, 5, 0x98, STOP);
}

Test(pickle, protocol_0_text_opcodes_are_refused)
{
	static const struct {
		unsigned char op;
		const char *name;
	} ops[] = {
	        {'I', "INT (protocol 0)"},     {'L', "LONG (protocol 0)"},
	        {'F', "FLOAT (protocol 0)"},   {'S', "STRING (protocol 0)"},
	        {'V', "UNICODE (protocol 0)"}, {'p', "PUT (protocol 0)"},
	        {'g', "GET (protocol 0)"},
	};
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		unsigned char b[] = {MARK, ops[i].op, '1', '\n', STOP};

		snprintf(want, sizeof(want),
		         "unsupported pickle 't.pkl' at byte 1: opcode %s (0x%02x): memprof reads "
		         "binary pickles (protocol 2 or later), not text ones",
		         ops[i].name, ops[i].op);
		cr_assert_eq(load(b, sizeof(b)), MP_EFORMAT, "%s read", ops[i].name);
		cr_assert_str_eq(err.msg, want);
	}
}

Test(pickle, protocol_6_and_unknown_opcodes)
{
	EXPECT_REFUSED(
	        "unsupported pickle 't.pkl' at byte 0: protocol 6 (memprof reads protocols 2 to 5)",
	        PROTO, 6, NONE, STOP);
	EXPECT_REFUSED(
	        "unsupported pickle 't.pkl' at byte 2: protocol 255 (memprof reads protocols 2 to "
	        "5)",
	        PROTO, 4, PROTO, 255, NONE, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: unknown opcode 0xff", PROTO, 4, 0xff,
	               STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 3: unknown opcode 0x99", PROTO, 4, NONE,
	               0x99);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 0: unknown opcode 0x00", 0);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: unknown opcode 0x5a", PROTO, 4, 'Z',
	               STOP);
}

Test(pickle, truncated_input)
{
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 3: no STOP opcode", PROTO, 4, NONE);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 0: opcode needs 1 more bytes, 0 left",
	               PROTO);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 4 more bytes, 2 left",
	               PROTO, 4, BININT, 1, 2);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 8 more bytes, 3 left",
	               PROTO, 4, FRAME, 1, 0, 0);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 8 more bytes, 0 left",
	               PROTO, 4, BINFLOAT);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 5 more bytes, 1 left",
	               PROTO, 4, LONG1, 5, 1);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: LONG4 longer than the rest of the input",
	               PROTO, 4, LONG4, 0xff, 0xff, 0xff, 0x7f, 0);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: a string of 5 bytes but only 2 bytes left",
	        PROTO, 4, SHORT_BINUNICODE, 5, 'a', 'b');
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 8 more bytes, 2 left",
	               PROTO, 4, BINBYTES8, 1, 0);
	EXPECT_REFUSED("truncated pickle 't.pkl' at byte 2: opcode needs 1 more bytes, 0 left",
	               PROTO, 4, BINGET);
}

Test(pickle, absurd_lengths_are_refused_without_allocating_them)
{
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: a string of 4611686018427387904 bytes but only "
	        "2 bytes left",
	        PROTO, 4, BINUNICODE8, 0, 0, 0, 0, 0, 0, 0, 0x40, 'x', STOP);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: a string of 18446744073709551615 bytes but only "
	        "1 bytes left",
	        PROTO, 4, BINBYTES8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, STOP);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: a string of 9223372036854775808 bytes but only "
	        "0 bytes left",
	        PROTO, 5, BYTEARRAY8, 0, 0, 0, 0, 0, 0, 0, 0x80);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: a string of 4294967295 bytes but only 1 bytes "
	        "left",
	        PROTO, 2, BINUNICODE, 0xff, 0xff, 0xff, 0xff, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: LONG4 longer than the rest of the input",
	               PROTO, 2, LONG4, 0xff, 0xff, 0xff, 0xff, STOP);
}

Test(pickle, memo_reference_never_stored)
{
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: memo reference 7 was never stored", PROTO,
	               4, BINGET, 7, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: memo reference 1000000 was never stored",
	               PROTO, 4, NONE, MEMOIZE, NONE, LONG_BINGET, 0x40, 0x42, 0x0f, 0, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: memo store from an empty stack", PROTO, 4,
	               MEMOIZE, STOP);
}

Test(pickle, bad_containers)
{
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: DICT with a key and no value", PROTO, 2,
	               MARK, BININT1, 1, DICT, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 6: SETITEMS with a key and no value", PROTO,
	               2, EMPTY_DICT, MARK, BININT1, 1, SETITEMS, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 6: APPEND on something that is not a list",
	               PROTO, 2, BININT1, 1, BININT1, 2, APPEND, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: APPEND on something that is not a list",
	               PROTO, 2, EMPTY_TUPLE, BININT1, 1, APPEND, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 6: APPENDS on something that is not a list",
	               PROTO, 2, EMPTY_DICT, MARK, BININT1, 1, APPENDS, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 7: SETITEM on something that is not a dict",
	               PROTO, 2, EMPTY_LIST, BININT1, 1, BININT1, 2, SETITEM, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: APPEND with too few values", PROTO, 2,
	               APPEND, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 4: SETITEM with too few values", PROTO, 2,
	               NONE, NONE, SETITEM, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 3: TUPLE with too few values on the stack",
	               PROTO, 2, NONE, TUPLE2, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 3: no MARK before this opcode", PROTO, 2,
	               NONE, APPENDS, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: no MARK before this opcode", PROTO, 2,
	               POP_MARK, NONE, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: POP from an empty stack", PROTO, 2, POP,
	               STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 2: DUP of an empty stack", PROTO, 2, DUP,
	               STOP);
}

Test(pickle, stop_needs_exactly_one_value)
{
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 4: STOP with the stack not holding exactly one "
	        "value",
	        PROTO, 2, NONE, NONE, STOP);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 2: STOP with the stack not holding exactly one "
	        "value",
	        PROTO, 2, STOP);
	EXPECT_REFUSED(
	        "invalid pickle 't.pkl' at byte 4: STOP with the stack not holding exactly one "
	        "value",
	        PROTO, 2, NONE, MARK, STOP);
	/* what follows STOP is not read */
	cr_assert_eq(ROOT(PROTO, 2, NONE, STOP, 0xff, 0xff)->type, MP_PK_NONE);
}

Test(pickle, int_accessor)
{
	const struct mp_pk *r = ROOT(PROTO, 2, SHORT_BINUNICODE, 1, 's', BINFLOAT, 0x3f, 0xf0, 0, 0,
	                             0, 0, 0, 0, TUPLE2, STOP);
	int64_t i = 42;

	cr_assert_eq(mp_pk_int(r->v.items[0], &i), 0);
	cr_assert_eq(mp_pk_int(r->v.items[1], &i), 0, "a float is not an int");
	cr_assert_eq(mp_pk_int(NULL, &i), 0);
	cr_assert_eq(i, 42);
}

/* An opcode that does not pop a MARK takes nothing from below it, as in
 * CPython, which calls that a stack underflow. */
Test(pickle, values_below_a_mark_are_out_of_reach)
{
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: TUPLE with too few values on the stack",
	               PROTO, 2, NONE, MARK, NONE, TUPLE2, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: APPEND with too few values", PROTO, 2,
	               EMPTY_LIST, MARK, NONE, APPEND, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 6: SETITEM with too few values", PROTO, 2,
	               EMPTY_DICT, NONE, MARK, NONE, SETITEM, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 4: DUP of an empty stack", PROTO, 2, NONE,
	               MARK, DUP, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 4: memo store from an empty stack", PROTO, 2,
	               NONE, MARK, BINPUT, 0, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 6: nothing to add to", PROTO, 2, EMPTY_LIST,
	               MARK, MARK, NONE, APPENDS, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 3: nothing to add to", PROTO, 2, MARK,
	               APPENDS, STOP);
}

Test(pickle, sets_take_additems_and_lists_append)
{
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 5: ADDITEMS on something that is not a set",
	               PROTO, 4, EMPTY_LIST, MARK, NONE, ADDITEMS, STOP);
	EXPECT_REFUSED("invalid pickle 't.pkl' at byte 4: APPEND on something that is not a list",
	               PROTO, 4, EMPTY_SET, NONE, APPEND, STOP);
}

/* mp_pk_get remembers where it last found a key: dicts of other layouts, a
 * key missing, and a key buffer whose text changes must still be exact. */
Test(pickle, key_lookup_is_exact_whatever_it_remembers)
{
	const struct mp_pk *r =
	        ROOT(PROTO, 2, MARK, SHORT_BINUNICODE, 1, 'a', MARK, SHORT_BINUNICODE, 1, 'x',
	             BININT1, 1, SHORT_BINUNICODE, 1, 'y', BININT1, 2, DICT, SHORT_BINUNICODE, 1,
	             'b', MARK, SHORT_BINUNICODE, 1, 'y', BININT1, 3, SHORT_BINUNICODE, 2, 'x', 'x',
	             BININT1, 4, SHORT_BINUNICODE, 1, 'x', BININT1, 5, DICT, DICT, STOP);
	const struct mp_pk *a = mp_pk_get(r, "a"), *b = mp_pk_get(r, "b");
	char buf[3] = "x";
	int i;

	for (i = 0; i < 3; i++) { /* alternate the layouts, so each lookup follows the other */
		expect_int(mp_pk_get(a, "x"), 1);
		expect_int(mp_pk_get(b, "x"), 5);
		expect_int(mp_pk_get(a, "y"), 2);
		expect_int(mp_pk_get(b, "y"), 3);
		cr_assert_null(mp_pk_get(a, "xx"));
		expect_int(mp_pk_get(b, "xx"), 4);
	}
	expect_int(mp_pk_get(b, buf), 5); /* remembered at b's third key ... */
	memcpy(buf, "xx", 3);             /* ... the same buffer, another key */
	expect_int(mp_pk_get(b, buf), 4);
	memcpy(buf, "y", 2);
	expect_int(mp_pk_get(b, buf), 3);
	cr_assert_null(mp_pk_get(a, "z"));
}
