/*
 * tests/unit/test_id_set.c - src/util/id_set.c against a sorted reference:
 * nearly consecutive ids (all in the bitmap), ids that cannot grow it (to
 * the hash map, which then keeps the bitmap at its limit), 0 and the largest
 * ids, and the memory rule (the bitmap stays within 64 bits an id held).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "util/id_set.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

Test(id_set, nearly_consecutive_ids_stay_in_the_bitmap)
{
	struct mp_id_set s;
	uint64_t seed = 42;

	mp_id_set_init(&s);
	cr_assert_eq(mp_id_set_has(&s, 0), 0);
	for (uint64_t i = 0; i < 200000; i++) { /* ids 0, 4, 8, ... each moved by up to 3 */
		uint64_t id = 4 * i + rnd(&seed) % 4;

		cr_assert_eq(mp_id_set_add(&s, id), 1, "id %llu", (unsigned long long)id);
		cr_assert_eq(mp_id_set_add(&s, id), 0, "id %llu again", (unsigned long long)id);
		cr_assert(mp_id_set_has(&s, id));
	}
	cr_assert_eq(s.n, 200000);
	cr_assert_eq(s.rest.n, 0, "every id in the bitmap");
	cr_assert_leq(s.limit, (1u << 16) + 64 * (uint64_t)s.n);
	seed = 42;
	for (uint64_t i = 0; i < 200000; i++) {
		uint64_t id = 4 * i + rnd(&seed) % 4;

		cr_assert(mp_id_set_has(&s, id));
		if (id % 4 != 3)
			cr_assert_eq(mp_id_set_has(&s, id + 1) && (id + 1) / 4 == i, 0);
	}
	mp_id_set_free(&s);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(mp_id_set_has(&s, 5), 0);
}

Test(id_set, large_ids_go_to_the_hash_map_and_freeze_the_bitmap)
{
	struct mp_id_set s;
	uint64_t limit;

	mp_id_set_init(&s);
	cr_assert_eq(mp_id_set_add(&s, 7), 1);
	cr_assert_eq(mp_id_set_add(&s, UINT64_MAX), 1);
	cr_assert_eq(mp_id_set_add(&s, (uint64_t)1 << 40), 1);
	cr_assert_eq(s.rest.n, 2, "too large for the bitmap's rule");
	limit = s.limit;
	for (uint64_t id = 0; id < 4 * limit; id += 3) /* beyond the limit now: the map */
		cr_assert_eq(mp_id_set_add(&s, id), id != 7 ? 1 : 0, "id %llu",
		             (unsigned long long)id);
	cr_assert_eq(s.limit, limit, "the bitmap does not grow once the map holds ids");
	for (uint64_t id = 0; id < 4 * limit; id++)
		cr_assert_eq(mp_id_set_has(&s, id), id % 3 == 0 || id == 7, "id %llu",
		             (unsigned long long)id);
	cr_assert_eq(mp_id_set_add(&s, UINT64_MAX), 0);
	cr_assert_eq(mp_id_set_add(&s, (uint64_t)1 << 40), 0);
	cr_assert(mp_id_set_has(&s, UINT64_MAX));
	cr_assert_eq(mp_id_set_has(&s, UINT64_MAX - 1), 0);
	mp_id_set_free(&s);
}

Test(id_set, random_ids_match_a_reference)
{
	enum { N = 5000 };
	static uint64_t ref[3 * N];
	struct mp_id_set s;
	uint64_t seed = 7;
	size_t n = 0;

	mp_id_set_init(&s);
	for (int i = 0; i < 3 * N; i++) { /* small ids, repeats, a few huge ones */
		uint64_t r = rnd(&seed), id = r % 7 == 0 ? r : r % (2 * N);
		int held = 0;

		for (size_t k = 0; k < n && !held; k++)
			held = ref[k] == id;
		cr_assert_eq(mp_id_set_has(&s, id), held);
		cr_assert_eq(mp_id_set_add(&s, id), !held, "id %llu", (unsigned long long)id);
		if (!held)
			ref[n++] = id;
	}
	cr_assert_eq(s.n, n);
	for (size_t k = 0; k < n; k++)
		cr_assert(mp_id_set_has(&s, ref[k]));
	mp_id_set_free(&s);
}
