/*
 * tests/unit/test_pool_async.c - the async pool alone against the fake host:
 * every request becomes one alloc_async on its own stream and every free one
 * free_async on the free's stream; any backend but cuda is refused at create.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fake_host.h"

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

#define MAX_SEEN 16

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct memprof_pool *pool;

/* The fake host ignores streams: these wrappers record them, then forward. */
static int (*real_alloc_async)(void *, uint64_t, uint64_t, struct memprof_region *);
static int (*real_free_async)(void *, const struct memprof_region *, uint64_t);
static uint64_t alloc_streams[MAX_SEEN], free_streams[MAX_SEEN];
static size_t n_alloc_seen, n_free_seen;

static int spy_alloc_async(void *ctx, uint64_t size, uint64_t stream, struct memprof_region *out)
{
	if (n_alloc_seen < MAX_SEEN)
		alloc_streams[n_alloc_seen++] = stream;
	return real_alloc_async(ctx, size, stream, out);
}

static int spy_free_async(void *ctx, const struct memprof_region *r, uint64_t stream)
{
	if (n_free_seen < MAX_SEEN)
		free_streams[n_free_seen++] = stream;
	return real_free_async(ctx, r, stream);
}

static void setup_host(const char *backend, int async_enabled, uint64_t cap)
{
	fake_host_init(&fh, cap);
	fh.host.backend = backend;
	fh.async_enabled = async_enabled;
	real_alloc_async = fh.host.alloc_async;
	real_free_async = fh.host.free_async;
	fh.host.alloc_async = spy_alloc_async;
	fh.host.free_async = spy_free_async;
	n_alloc_seen = n_free_seen = 0;
	pool = NULL;
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
}

static struct memprof_pool_request req(uint64_t size, uint64_t stream, int64_t index)
{
	return (struct memprof_pool_request){.struct_size = sizeof(struct memprof_pool_request),
	                                     .size_bytes = size,
	                                     .requested_bytes = size,
	                                     .stream = stream,
	                                     .index = index};
}

Test(async, header_names_the_abi)
{
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "async");
	cr_assert_eq(ops->abi_major, MEMPROF_POOL_ABI_MAJOR);
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_null(ops->plan);
	cr_assert_null(ops->options);
}

Test(async, sim_is_refused_with_the_reason)
{
	fake_host_init(&fh, 0); /* the default fake host is a sim backend */
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	pool = (struct memprof_pool *)&fh; /* must be cleared on failure */
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_ENOTSUP);
	cr_assert_null(pool);
	cr_assert_eq(fh.n_log_errors, 1);
	cr_assert_str_eq(fh.last_log, "async needs --backend=cuda: cudaMallocAsync is the "
	                              "driver's own stream-ordered pool and only a GPU has one");
	cr_assert_eq(fh.n_alloc_async + fh.n_reserve, 0);
}

Test(async, host_backend_is_refused_too)
{
	setup_host("host", 1, 0);
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(fh.n_log_errors, 1);
	cr_assert(strstr(fh.last_log, "--backend=cuda") != NULL);
}

Test(async, cuda_host_without_async_services_is_refused)
{
	setup_host("cuda", 1, 0);
	fh.host.alloc_async = NULL;
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(fh.n_log_errors, 1);
	cr_assert(strstr(fh.last_log, "alloc_async") != NULL);
}

Test(async, each_request_goes_to_the_driver_pool_on_its_stream)
{
	struct memprof_pool_block a, b;
	struct memprof_pool_request ra = req(1000, 7, 0), rb = req(3000, 9, 1);

	setup_host("cuda", 1, 0);
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_OK);
	cr_assert_eq(ops->alloc(pool, &ra, &a), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), 0);
	cr_assert_eq(fh.n_alloc_async, 2);
	cr_assert_eq(fh.n_reserve, 0); /* never cudaMalloc */
	cr_assert_eq(n_alloc_seen, 2);
	cr_assert_eq(alloc_streams[0], 7);
	cr_assert_eq(alloc_streams[1], 9);
	cr_assert_eq(fh.reserved_bytes, 4000);
	cr_assert_eq(a.size_bytes, 1000);
	cr_assert(a.addr + a.size_bytes <= b.addr || b.addr + b.size_bytes <= a.addr);
	/* freed on another stream than it was allocated on: the free's stream is used */
	cr_assert_eq(ops->free(pool, &a, 3), 0);
	cr_assert_eq(n_free_seen, 1);
	cr_assert_eq(free_streams[0], 3);
	cr_assert_eq(fh.reserved_bytes, 3000);
	cr_assert_eq(ops->free(pool, &b, 9), 0);
	cr_assert_eq(free_streams[1], 9);
	cr_assert_eq(fh.n_free_async, 2);
	cr_assert_eq(fh.reserved_bytes, 0);
	cr_assert_eq(fh.peak_reserved_bytes, 4000);
	cr_assert_eq(fake_host_live_regions(&fh), 0);
	ops->destroy(pool);
}

Test(async, out_of_memory_is_passed_through)
{
	struct memprof_pool_block a, b;
	struct memprof_pool_request ra = req(600, 0, 0), rb = req(600, 0, 1);

	setup_host("cuda", 1, 1000);
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_OK);
	cr_assert_eq(ops->alloc(pool, &ra, &a), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(ops->free(pool, &a, 0), 0);
	cr_assert_eq(ops->alloc(pool, &rb, &b), 0);
	cr_assert_eq(fh.reserved_bytes, 600);
	ops->destroy(pool);
}

Test(async, a_backend_refusal_is_passed_through)
{
	struct memprof_pool_block a;
	struct memprof_pool_request ra = req(64, 0, 0);

	setup_host("cuda", 0, 0); /* the fake host answers ENOTSUP to alloc_async */
	cr_assert_eq(ops->create(&fh.host, NULL, 0, &pool), MEMPROF_POOL_OK);
	cr_assert_eq(ops->alloc(pool, &ra, &a), MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(fh.reserved_bytes, 0);
	ops->destroy(pool);
}
