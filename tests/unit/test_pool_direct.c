/*
 * tests/unit/test_pool_direct.c - the direct pool alone against the fake
 * host: one reservation per request, released at free, ENOMEM at capacity.
 */
#include <criterion/criterion.h>

#include "fake_host.h"

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct memprof_pool *pool;

static void setup_cap(uint64_t cap)
{
	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), 0);
}

static struct memprof_pool_request req(uint64_t size, int64_t index)
{
	return (struct memprof_pool_request){.struct_size = sizeof(struct memprof_pool_request),
	                                     .size_bytes = size,
	                                     .requested_bytes = size,
	                                     .index = index};
}

Test(direct, header_names_the_abi)
{
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "direct");
	cr_assert_eq(ops->abi_major, MEMPROF_POOL_ABI_MAJOR);
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_null(ops->plan);
}

Test(direct, one_reservation_per_request_released_at_free)
{
	struct memprof_pool_block a, b;
	struct memprof_pool_request ra = req(1000, 0), rb = req(3000, 1);

	setup_cap(0);
	cr_assert_eq(ops->alloc(pool, &ra, &a), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), 0);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(fh.reserved_bytes, 4000);
	cr_assert_eq(a.size_bytes, 1000);
	cr_assert(a.addr + a.size_bytes <= b.addr || b.addr + b.size_bytes <= a.addr);
	cr_assert_eq(ops->free(pool, &a, 0), 0);
	cr_assert_eq(fh.reserved_bytes, 3000);
	cr_assert_eq(ops->free(pool, &b, 0), 0);
	cr_assert_eq(fh.reserved_bytes, 0);
	cr_assert_eq(fh.peak_reserved_bytes, 4000);
	cr_assert_eq(fh.n_release, 2);
	ops->destroy(pool);
}

Test(direct, refused_beyond_capacity)
{
	struct memprof_pool_block a, b;
	struct memprof_pool_request ra = req(600, 0), rb = req(600, 1);

	setup_cap(1000);
	cr_assert_eq(ops->alloc(pool, &ra, &a), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(ops->free(pool, &a, 0), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), 0);
	ops->destroy(pool);
}
