/*
 * tests/unit/test_pair_map.c - src/util/pair_map.c against a plain array:
 * random puts, adds, gets, takes and deletes over few keys (long probe runs that wrap
 * around the end of the table, deletions inside them), pairs alike in one
 * half, and growth.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "util/pair_map.h"

#define N_KEYS 300

struct ref {
	uint64_t a, b, val;
	int present;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

Test(pair_map, random_operations_match_an_array)
{
	static struct ref ref[N_KEYS];
	struct mp_pair_map m;
	uint64_t seed = 88172645463325252ULL, v;
	size_t n = 0;

	mp_pair_map_init(&m);
	cr_assert_eq(mp_pair_map_get(&m, 1, 2, &v), 0);
	cr_assert_eq(mp_pair_map_del(&m, 1, 2), 0);
	for (int i = 0; i < N_KEYS; i++) { /* (a, b) and (b, a), equal halves, zeros */
		ref[i].a = (uint64_t)(i % 17) << (i % 3 ? 0 : 40);
		ref[i].b = (uint64_t)(i / 17);
		if (i % 5 == 0)
			ref[i].a = UINT64_MAX - (uint64_t)i;
	}
	for (int step = 0; step < 200000; step++) {
		struct ref *r = &ref[rnd(&seed) % N_KEYS];
		int op = (int)(rnd(&seed) % 5), found;

		if (op == 0) {
			uint64_t val = rnd(&seed);

			cr_assert_eq(mp_pair_map_put(&m, r->a, r->b, val), 0);
			n += !r->present;
			r->present = 1;
			r->val = val;
		} else if (op == 1) {
			found = mp_pair_map_get(&m, r->a, r->b, &v);
			cr_assert_eq(found, r->present, "step %d", step);
			if (found)
				cr_assert_eq(v, r->val, "step %d", step);
		} else if (op == 2) {
			cr_assert_eq(mp_pair_map_del(&m, r->a, r->b), r->present, "step %d", step);
			n -= r->present;
			r->present = 0;
		} else if (op == 3) { /* add: only when absent */
			uint64_t val = rnd(&seed);

			cr_assert_eq(mp_pair_map_add(&m, r->a, r->b, val), !r->present, "step %d",
			             step);
			if (!r->present)
				r->val = val, n++;
			r->present = 1;
		} else { /* take: get and delete */
			v = 0;
			cr_assert_eq(mp_pair_map_take(&m, r->a, r->b, &v), r->present, "step %d",
			             step);
			if (r->present)
				cr_assert_eq(v, r->val, "step %d", step);
			n -= r->present;
			r->present = 0;
		}
		cr_assert_eq(m.n, n, "step %d", step);
	}
	for (int i = 0; i < N_KEYS; i++)
		cr_assert_eq(mp_pair_map_get(&m, ref[i].a, ref[i].b, NULL), ref[i].present);
	mp_pair_map_free(&m);
}

/* Deleting every third key of a table filled to its growth limit leaves
 * the others found: the runs are shifted back correctly. */
Test(pair_map, deletions_inside_runs)
{
	struct mp_pair_map m;
	uint64_t keys[40], v;
	int n = 0;

	mp_pair_map_init(&m);
	cr_assert_eq(mp_pair_map_put(&m, 0, 0, 0), 0); /* cap is now known */
	for (n = 0; n < 40; n++)                       /* 41 keys in 64 slots: long runs */
		keys[n] = (uint64_t)n * 64 + 1;
	for (int i = 0; i < 40; i++)
		cr_assert_eq(mp_pair_map_put(&m, keys[i], 7, (uint64_t)i), 0);
	for (int i = 0; i < 40; i += 3)
		cr_assert_eq(mp_pair_map_del(&m, keys[i], 7), 1);
	for (int i = 0; i < 40; i++) {
		int found = mp_pair_map_get(&m, keys[i], 7, &v);

		cr_assert_eq(found, i % 3 != 0, "key %d", i);
		if (found)
			cr_assert_eq(v, (uint64_t)i);
	}
	cr_assert_eq(mp_pair_map_get(&m, 0, 0, NULL), 1);
	cr_assert_eq(m.n, 1 + 40 - 14);
	mp_pair_map_free(&m);
}
