/*
 * tests/unit/test_densemap.c - util/densemap: random puts, replaces and
 * deletes of dense, sparse and mixed keys checked after every step against
 * a brute-force list of (key, value) pairs; and util/intmap's lookup by
 * slot and removal at a slot, the same way.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/densemap.h"
#include "util/error.h"

#define MAX_PAIRS 4096

struct brute {
	uint64_t keys[MAX_PAIRS];
	uint32_t vals[MAX_PAIRS];
	size_t n;
};

static uint32_t brute_get(const struct brute *b, uint64_t key)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->keys[i] == key)
			return b->vals[i];
	return MP_DENSEMAP_NONE;
}

static void brute_put(struct brute *b, uint64_t key, uint32_t val)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->keys[i] == key) {
			b->vals[i] = val;
			return;
		}
	b->keys[b->n] = key;
	b->vals[b->n++] = val;
}

static int brute_del(struct brute *b, uint64_t key)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->keys[i] == key) {
			b->keys[i] = b->keys[--b->n];
			b->vals[i] = b->vals[b->n];
			return 1;
		}
	return 0;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A key: small and dense, around the array's bounds, or huge. */
static uint64_t some_key(uint64_t *s, int mode)
{
	uint64_t r = next_rand(s);

	switch (mode == 2 ? r % 3 : (uint64_t)mode) {
	case 0:
		return r % 3000;
	case 1:
		return (r >> 8) % 5 == 0 ? UINT64_MAX - r % 7 : 1000 + (r >> 16) % 200000;
	default:
		return r >> 3;
	}
}

static void check_all(const struct mp_densemap *m, const struct brute *b, uint64_t *s, int mode)
{
	size_t i;

	cr_assert_eq(mp_densemap_count(m), b->n);
	for (i = 0; i < b->n; i++)
		cr_assert_eq(mp_densemap_get(m, b->keys[i]), b->vals[i], "key %llu",
		             (unsigned long long)b->keys[i]);
	for (i = 0; i < 20; i++) {
		uint64_t k = some_key(s, mode);

		cr_assert_eq(mp_densemap_get(m, k), brute_get(b, k));
	}
}

static void run(int mode, uint64_t seed)
{
	static struct brute b;
	struct mp_densemap m;
	uint64_t s = seed;
	int step;

	b.n = 0;
	mp_densemap_init(&m);
	for (step = 0; step < 6000; step++) {
		uint64_t k = some_key(&s, mode), r = next_rand(&s);

		if (r % 4 == 0) {
			cr_assert_eq(mp_densemap_del(&m, k), brute_del(&b, k));
		} else if (b.n < MAX_PAIRS) {
			uint32_t v = (uint32_t)(r >> 20) % 1000000;

			cr_assert_eq(mp_densemap_put(&m, k, v), 0);
			brute_put(&b, k, v);
		}
		if (step % 97 == 0)
			check_all(&m, &b, &s, mode);
	}
	check_all(&m, &b, &s, mode);
	mp_densemap_free(&m);
}

Test(densemap, dense_keys_match_brute_force)
{
	run(0, 0x9e3779b97f4a7c15ULL);
}

Test(densemap, growing_and_huge_keys_match_brute_force)
{
	run(1, 12345);
}

Test(densemap, mixed_keys_match_brute_force)
{
	run(2, 777);
}

Test(densemap, sparse_keys_keep_the_array_small)
{
	struct mp_densemap m;
	uint64_t i;

	mp_densemap_init(&m);
	for (i = 0; i < 1000; i++)
		cr_assert_eq(mp_densemap_put(&m, i * 1000003, (uint32_t)i), 0);
	cr_assert_leq(m.cap, 1024); /* a few hundred bytes per key at most */
	for (i = 0; i < 1000; i++)
		cr_assert_eq(mp_densemap_get(&m, i * 1000003), i);
	/* filling in below a key moves it into the array when that grows */
	for (i = 0; i < 5000; i++)
		if (i % 1000 != 3 && mp_densemap_get(&m, i) == MP_DENSEMAP_NONE)
			cr_assert_eq(mp_densemap_put(&m, i, 7), 0);
	cr_assert_geq(m.cap, 5000);
	cr_assert_eq(mp_densemap_get(&m, 1000003), 1);
	cr_assert_eq(mp_densemap_get(&m, 3), MP_DENSEMAP_NONE);
	cr_assert_eq(mp_densemap_put(&m, 3, MP_DENSEMAP_NONE), MP_EINVAL);
	mp_densemap_free(&m);
}

/* mp_intmap_slot then mp_intmap_del_slot removes what mp_intmap_del would,
 * clusters and wrap-around included: checked against a brute-force list. */
Test(intmap, remove_at_a_found_slot_matches_brute_force)
{
	static struct brute b;
	struct mp_intmap m;
	uint64_t s = 99;
	int step;
	size_t i;

	b.n = 0;
	mp_intmap_init(&m);
	for (step = 0; step < 20000; step++) {
		uint64_t k = next_rand(&s) % 700, r = next_rand(&s);
		size_t at = mp_intmap_slot(&m, k);

		cr_assert_eq(at == MP_INTMAP_NO_SLOT, brute_get(&b, k) == MP_DENSEMAP_NONE);
		if (at != MP_INTMAP_NO_SLOT) {
			cr_assert_eq(m.keys[at], k);
			cr_assert_eq(m.vals[at], brute_get(&b, k));
		}
		if (r % 2 && at != MP_INTMAP_NO_SLOT) {
			mp_intmap_del_slot(&m, at);
			cr_assert(brute_del(&b, k));
		} else if (!(r % 2) && b.n < MAX_PAIRS) {
			cr_assert_eq(mp_intmap_put(&m, k, (uint32_t)(r >> 8)), 0);
			brute_put(&b, k, (uint32_t)(r >> 8));
		}
	}
	cr_assert_eq(m.n, b.n);
	for (i = 0; i < b.n; i++) {
		uint64_t v;

		cr_assert(mp_intmap_get(&m, b.keys[i], &v));
		cr_assert_eq(v, b.vals[i]);
	}
	mp_intmap_free(&m);
}
