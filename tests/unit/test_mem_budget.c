/*
 * tests/unit/test_mem_budget.c - src/util/mem_budget.c: MEMPROF_MAX_MEMORY
 * read in bytes or with a K, M or G suffix and said as the reason, a
 * malformed one ignored for the machine's own budget, and the process's
 * resident bytes read and growing with what it touches.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/mem_budget.h"

static uint64_t budget_with(const char *value, const char **why)
{
	setenv("MEMPROF_MAX_MEMORY", value, 1);
	return mp_mem_budget(why);
}

Test(mem_budget, max_memory_in_bytes_or_with_a_suffix)
{
	const char *why = NULL;

	cr_assert_eq(budget_with("123456", &why), 123456);
	cr_assert_str_eq(why, "MEMPROF_MAX_MEMORY");
	cr_assert_eq(budget_with("64K", &why), 64u << 10);
	cr_assert_eq(budget_with("300M", &why), 300u << 20);
	cr_assert_eq(budget_with("2g", &why), (uint64_t)2 << 30);
}

Test(mem_budget, a_malformed_max_memory_leaves_the_machines_budget)
{
	uint64_t machine = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	const char *why = NULL;
	const char *bad[] = {"", "12X", "M", "-5", "0", "99999999999999999999", "7G7"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		uint64_t b = budget_with(bad[i], &why);

		cr_assert_gt(b, 0, "'%s'", bad[i]);
		cr_assert_leq(b, machine / 5 * 4, "'%s': %llu", bad[i], (unsigned long long)b);
		cr_assert(strstr(why, "0% of"), "'%s': %s", bad[i], why);
	}
	unsetenv("MEMPROF_MAX_MEMORY");
	cr_assert_leq(mp_mem_budget(NULL), machine / 5 * 4);
}

Test(mem_budget, resident_bytes_grow_with_what_is_touched)
{
	uint64_t before = mp_mem_resident(), after;
	size_t n = 64u << 20;
	char *p = malloc(n);

	cr_assert_gt(before, 0);
	cr_assert_not_null(p);
	memset(p, 1, n);
	after = mp_mem_resident();
	cr_assert_geq(after, before + n / 2, "%llu then %llu", (unsigned long long)before,
	              (unsigned long long)after);
	free(p);
}
