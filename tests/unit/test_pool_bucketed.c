/*
 * tests/unit/test_pool_bucketed.c - the bucketed pool alone against the
 * fake host, on cases worked by hand: the default and growth series, the
 * issue's bucket rounding case (65, 100, 128, 129 bytes in buckets 64, 128,
 * 256), slot addresses and LIFO reuse, slab sizes and occupancy, the large
 * pool, release and retry under a capacity, stats, and refusals.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/bucketed/bucketed.h"
#include "fake_host.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct memprof_pool *pool;

static int make_pool(uint64_t cap, const char *const *kv)
{
	struct memprof_pool_option opts[8];
	size_t n = 0;

	for (; kv && kv[2 * n]; n++)
		opts[n] = (struct memprof_pool_option){kv[2 * n], kv[2 * n + 1]};
	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
	pool = NULL;
	return ops->create(&fh.host, opts, n, &pool);
}

static void setup(uint64_t cap, const char *const *kv)
{
	cr_assert_eq(make_pool(cap, kv), 0, "create: %s", fh.last_log);
}

static void teardown(void)
{
	ops->destroy(pool);
	cr_assert_eq(fake_host_live_regions(&fh), 0, "destroy left regions");
	cr_assert_eq(fh.reserved_bytes, 0);
}

static int try_alloc(uint64_t size, struct memprof_pool_block *b)
{
	static int64_t index;
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = size,
	                                 .requested_bytes = size,
	                                 .index = index++};
	return ops->alloc(pool, &r, b);
}

static struct memprof_pool_block alloc(uint64_t size)
{
	struct memprof_pool_block b;

	cr_assert_eq(try_alloc(size, &b), 0, "alloc of %llu failed: %s", (unsigned long long)size,
	             fh.last_log);
	return b;
}

static void release(struct memprof_pool_block b)
{
	cr_assert_eq(ops->free(pool, &b, 0), 0, "free: %s", fh.last_log);
}

/* The stat's value, or -1 when the pool did not emit it. */
static double stat(const char *name)
{
	double v = -1;

	cr_assert_geq(fake_host_stat(ops, pool, name, &v), 0,
	              "a stat name of 48 bytes or more, or too many stats");
	return v;
}

/* The size of the most recent reservation the fake host made. */
static uint64_t last_reserve(void)
{
	return fh.regions[fh.n_regions - 1].size_bytes;
}

Test(bucketed, header_and_options)
{
	int seen = 0;

	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "bucketed");
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_null(ops->plan);
	for (const struct memprof_pool_option_spec *o = ops->options; o->name; o++) {
		cr_assert(o->value_hint && o->help && strstr(o->help, "default"), "%s", o->name);
		seen += !strcmp(o->name, "buckets") + !strcmp(o->name, "growth") +
		        !strcmp(o->name, "slab") + !strcmp(o->name, "slab-slots");
	}
	cr_assert_eq(seen, 4);
}

/* The rounding case: 65, 100, 128 -> 128 and 129 -> 256; waste 63 + 28 + 0 + 127. */
Test(bucketed, rounding_case)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	struct memprof_pool_block b[4];
	const uint64_t req[4] = {65, 100, 128, 129}, want[4] = {128, 128, 128, 256};

	setup(0, kv);
	for (int i = 0; i < 4; i++) {
		b[i] = alloc(req[i]);
		cr_assert_eq(b[i].size_bytes, want[i], "request %llu", (unsigned long long)req[i]);
		cr_assert(b[i].handle & BK_MARK);
	}
	/* One slab per bucket used: 1 KiB holds 8 slots of 128 and 4 of 256 (the minimum 4). */
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(fh.regions[0].size_bytes, 1024);
	cr_assert_eq(fh.regions[1].size_bytes, 1024);
	/* Consecutive slots of the 128 B slab, from its start. */
	cr_assert_eq(b[0].addr, fh.regions[0].addr);
	cr_assert_eq(b[1].addr, b[0].addr + 128);
	cr_assert_eq(b[2].addr, b[0].addr + 256);
	cr_assert_eq(b[3].addr, fh.regions[1].addr);
	cr_assert_eq(stat("bucket_128B_requests"), 3);
	cr_assert_eq(stat("bucket_128B_waste_bytes"), 63 + 28 + 0);
	cr_assert_eq(stat("bucket_256B_requests"), 1);
	cr_assert_eq(stat("bucket_256B_waste_bytes"), 127);
	cr_assert_eq(stat("bucket_64B_requests"), -1, "an unused bucket has no stats");
	cr_assert_eq(stat("rounding_waste_bytes"), 218);
	cr_assert_eq(stat("rounding_waste_peak_bytes"), 218);
	cr_assert_eq(stat("bucketed_requests"), 4);
	cr_assert_eq(stat("large_requests"), 0);
	cr_assert_eq(stat("buckets_used"), 2);
	/* Occupancy: peak live / slots carved = 3/8 and 1/4. */
	cr_assert_float_eq(stat("bucket_128B_slab_occupancy"), 0.375, 1e-12);
	cr_assert_float_eq(stat("bucket_256B_slab_occupancy"), 0.25, 1e-12);
	/* Internal fragmentation: live waste 218 over live slot bytes 3*128 + 256 = 640. */
	cr_assert_float_eq(stat("internal_fragmentation_share_at_end"), 218.0 / 640.0, 1e-12);
	release(b[3]);
	cr_assert_float_eq(stat("internal_fragmentation_share_at_end"), 91.0 / 384.0, 1e-12);
	/* The peak of live waste stays, the cumulative figure too. */
	cr_assert_eq(stat("rounding_waste_peak_bytes"), 218);
	cr_assert_eq(stat("rounding_waste_bytes"), 218);
	for (int i = 0; i < 3; i++)
		release(b[i]);
	cr_assert_eq(stat("internal_fragmentation_share_at_end"), 0);
	teardown();
}

/* Cumulative waste vs peak live waste: 65 (63) freed before 100 (28): peak 63, sum 91. */
Test(bucketed, waste_peak_is_live)
{
	const char *kv[] = {"buckets", "64,128,256", NULL};

	setup(0, kv);
	release(alloc(65));
	release(alloc(100));
	cr_assert_eq(stat("rounding_waste_bytes"), 91);
	cr_assert_eq(stat("rounding_waste_peak_bytes"), 63);
	teardown();
}

/* A freed slot is handed out again before any other, the last freed first (LIFO). */
Test(bucketed, lifo_reuse_and_no_eager_release)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	struct memprof_pool_block a, b, c, d;
	uint64_t base;

	setup(0, kv);
	a = alloc(128);
	b = alloc(128);
	c = alloc(128);
	base = a.addr;
	cr_assert_eq(c.addr, base + 256);
	release(b);
	release(a);
	cr_assert_eq(alloc(100).addr, base, "the last freed (slot 0) first");
	d = alloc(120);
	cr_assert_eq(d.addr, base + 128, "then slot 1");
	cr_assert_eq(alloc(128).addr, base + 384, "then a fresh slot: 3");
	cr_assert_eq(fh.n_reserve, 1);
	release(d);
	release(c);
	/* Slabs stay reserved while memory lasts, even when (nearly) wholly free. */
	cr_assert_eq(fh.n_release, 0);
	cr_assert_eq(stat("slabs_released"), 0);
	teardown();
}

/* A full slab: the 9th slot of 128 B with 1 KiB slabs comes from a second slab. */
Test(bucketed, second_slab_and_occupancy)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	struct memprof_pool_block b[9];

	setup(0, kv);
	for (int i = 0; i < 9; i++)
		b[i] = alloc(128);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(b[7].addr, fh.regions[0].addr + 7 * 128);
	cr_assert_eq(b[8].addr, fh.regions[1].addr);
	cr_assert_eq(stat("slabs_reserved"), 2);
	cr_assert_eq(stat("slab_bytes_peak"), 2048);
	/* 9 live of 16 carved. */
	cr_assert_float_eq(stat("bucket_128B_slab_occupancy"), 9.0 / 16.0, 1e-12);
	cr_assert_eq(stat("internal_fragmentation_share_at_end"), 0);
	teardown();
}

/* Slab sizes: at least 4 slots; slab-slots changes the minimum. */
Test(bucketed, slab_sizes)
{
	const char *two[] = {"slab-slots", "1", NULL};
	const char *big[] = {"slab", "8MiB", NULL};

	setup(0, NULL);
	alloc(1 * MiB);
	cr_assert_eq(last_reserve(), 4 * MiB, "2 MiB holds 2 slots of 1 MiB: 4 slots instead");
	alloc(64 * MiB);
	cr_assert_eq(last_reserve(), 256 * MiB);
	alloc(1000);
	cr_assert_eq(last_reserve(), 2 * MiB, "1 KiB slots: 2048 of them in 2 MiB");
	teardown();
	setup(0, two);
	alloc(1 * MiB);
	cr_assert_eq(last_reserve(), 2 * MiB);
	teardown();
	setup(0, big);
	alloc(1 * MiB);
	cr_assert_eq(last_reserve(), 8 * MiB);
	teardown();
}

/* Default series: 2^9 .. 2^26, 18 classes; 64 MiB + 1 is the large pool's. */
Test(bucketed, default_series)
{
	struct memprof_pool_block b;

	setup(0, NULL);
	cr_assert_eq(pool->cfg.n_sizes, 18);
	for (size_t i = 0; i < 18; i++)
		cr_assert_eq(pool->cfg.sizes[i], 512ull << i);
	cr_assert_eq(alloc(1).size_bytes, 512);
	cr_assert_eq(alloc(513).size_bytes, 1024);
	cr_assert_eq(alloc(64 * MiB).size_bytes, 64 * MiB);
	b = alloc(64 * MiB + 1);
	cr_assert_eq(b.handle & BK_MARK, 0);
	cr_assert_eq(b.size_bytes, 64 * MiB + 512, "the caching model rounds to 512 B");
	cr_assert_eq(last_reserve(), 66 * MiB, "its segment: the size rounded up to 2 MiB");
	cr_assert_eq(stat("large_requests"), 1);
	release(b);
	teardown();
}

/*
 * growth=1.5: 512 * 1.5^k = 512, 768, 1152, 1728, 2592, 3888, 5832, 8748 rounded
 * up to 512 B: 512, 1024, 1536, 2048, 3072, 4096, 6144, 9216; the last class 64 MiB.
 */
Test(bucketed, growth_series)
{
	const char *kv[] = {"growth", "1.5", NULL};
	const uint64_t want[] = {512, 1024, 1536, 2048, 3072, 4096, 6144, 9216};

	setup(0, kv);
	for (size_t i = 0; i < 8; i++)
		cr_assert_eq(pool->cfg.sizes[i], want[i], "class %zu", i);
	cr_assert_eq(pool->cfg.sizes[pool->cfg.n_sizes - 1], 64 * MiB);
	cr_assert_gt(pool->cfg.sizes[pool->cfg.n_sizes - 2], 64 * MiB / 1.5 - 512);
	cr_assert_eq(alloc(1100).size_bytes, 1536);
	teardown();
}

/* Above the largest bucket: the caching model's large pool, one 20 MiB segment for 2 MiB. */
Test(bucketed, large_pool)
{
	const char *kv[] = {"buckets", "64,128,256", NULL};
	struct memprof_pool_block b, c;

	setup(0, kv);
	b = alloc(2 * MiB);
	cr_assert_eq(b.handle & BK_MARK, 0);
	cr_assert_eq(b.size_bytes, 2 * MiB);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(last_reserve(), 20 * MiB);
	/* Best fit with splitting: the next 2 MiB request takes the rest of that segment. */
	c = alloc(2 * MiB);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(c.addr, b.addr + 2 * MiB);
	/* 300 B is above 256: the caching model's small pool (a 2 MiB segment). */
	alloc(300);
	cr_assert_eq(last_reserve(), 2 * MiB);
	cr_assert_eq(stat("large_requests"), 3);
	cr_assert_eq(stat("bucketed_requests"), 0);
	cr_assert_eq(stat("large_pool_peak_reserved_bytes"), 22 * MiB);
	release(b);
	release(c);
	teardown();
}

/*
 * Capacity 2 KiB, 1 KiB slabs: a wholly free 128 B slab and a live 64 B one
 * fill it; a 256 B request is refused once, the free slab is released, the
 * retry succeeds.  Then a 128 B request finds nothing to release: ENOMEM.
 */
Test(bucketed, release_and_retry_slabs)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	struct memprof_pool_block b[8], x;

	setup(2 * KiB, kv);
	for (int i = 0; i < 8; i++)
		b[i] = alloc(128);
	for (int i = 0; i < 8; i++)
		release(b[i]);
	alloc(64);
	cr_assert_eq(fh.reserved_bytes, 2 * KiB);
	cr_assert_eq(fh.n_release, 0);
	x = alloc(256);
	cr_assert_eq(fh.n_refused, 1);
	cr_assert_eq(fh.n_release, 1);
	cr_assert_eq(fh.regions[0].live, 0, "the 128 B slab went back");
	cr_assert_eq(x.addr, fh.regions[2].addr);
	cr_assert_eq(stat("slabs_released"), 1);
	cr_assert_eq(stat("oom_retries"), 1);
	cr_assert_eq(try_alloc(128, &x), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(fh.n_refused, 3, "tried twice, refused twice");
	cr_assert_eq(stat("oom_retries"), 2);
	cr_assert_eq(stat("slabs_released"), 1);
	teardown();
}

/* A 2 MiB request's 20 MiB segment does not fit beside a free 1 KiB slab under 20 MiB. */
Test(bucketed, release_and_retry_large)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	struct memprof_pool_block b;

	setup(20 * MiB, kv);
	release(alloc(128));
	b = alloc(2 * MiB);
	cr_assert_eq(b.size_bytes, 2 * MiB);
	/* The caching model tries twice (before and after emptying its cache), then we retry. */
	cr_assert_eq(fh.n_refused, 2);
	cr_assert_eq(fh.reserved_bytes, 20 * MiB);
	cr_assert_eq(stat("slabs_released"), 1);
	cr_assert_eq(stat("oom_retries"), 1);
	teardown();
}

/* A slab refused while the large pool caches a free segment: the segment is given back. */
Test(bucketed, release_and_retry_empties_large_cache)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};

	setup(20 * MiB, kv);
	release(alloc(2 * MiB)); /* a cached, wholly free 20 MiB segment */
	cr_assert_eq(fh.reserved_bytes, 20 * MiB);
	alloc(64);
	cr_assert_eq(fh.n_refused, 1);
	cr_assert_eq(fh.reserved_bytes, 1 * KiB);
	teardown();
}

/* 0 bytes takes the smallest bucket; 2^60 bytes is refused without a crash or a retry. */
Test(bucketed, extreme_sizes)
{
	const char *kv[] = {"buckets", "64,128,256", NULL};
	struct memprof_pool_block b;

	setup(0, kv);
	b = alloc(0);
	cr_assert_eq(b.size_bytes, 64);
	cr_assert_eq(try_alloc(1ull << 60, &b), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(try_alloc(UINT64_MAX, &b), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(stat("oom_retries"), 0);
	teardown();
}

/* requested_bytes chooses the bucket when set; size_bytes when it is 0. */
Test(bucketed, requested_or_granted)
{
	const char *kv[] = {"buckets", "64,128,256", NULL};
	struct memprof_pool_request r = {
	        .struct_size = sizeof r, .size_bytes = 512, .requested_bytes = 100};
	struct memprof_pool_block b;

	setup(0, kv);
	cr_assert_eq(ops->alloc(pool, &r, &b), 0);
	cr_assert_eq(b.size_bytes, 128);
	r.size_bytes = 200;
	r.requested_bytes = 0;
	cr_assert_eq(ops->alloc(pool, &r, &b), 0);
	cr_assert_eq(b.size_bytes, 256);
	cr_assert_eq(stat("rounding_waste_bytes"), 28 + 56);
	teardown();
}

Test(bucketed, unknown_handles_refused)
{
	const char *kv[] = {"buckets", "64,128,256", NULL};
	struct memprof_pool_block b, forged;

	setup(0, kv);
	b = alloc(100);
	forged = b;
	forged.handle = BK_MARK | 123ull << 32;
	cr_assert_eq(ops->free(pool, &forged, 0), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(fh.last_log, "did not hand out"), "%s", fh.last_log);
	forged = b;
	forged.addr += 128;
	cr_assert_eq(ops->free(pool, &forged, 0), MEMPROF_POOL_EINVAL, "wrong address");
	forged = b;
	forged.handle = b.handle + 1; /* the next slot, free */
	cr_assert_eq(ops->free(pool, &forged, 0), MEMPROF_POOL_EINVAL);
	forged.handle = 77; /* the large pool's kind of handle, unknown to it */
	cr_assert_eq(ops->free(pool, &forged, 0), MEMPROF_POOL_EINVAL);
	release(b);
	cr_assert_eq(ops->free(pool, &b, 0), MEMPROF_POOL_EINVAL, "a double free");
	cr_assert_eq(fh.n_log_errors, 5);
	teardown();
}

static void refused(const char *name, const char *value, const char *why)
{
	const char *kv[] = {name, value, NULL};

	cr_assert_eq(make_pool(0, kv), MEMPROF_POOL_EINVAL, "%s=%s", name, value);
	cr_assert(strstr(fh.last_log, why), "%s=%s: %s", name, value, fh.last_log);
	cr_assert_eq(fh.n_reserve, 0);
}

Test(bucketed, bad_options)
{
	const char *both[] = {"buckets", "64,128", "growth", "2", NULL};
	char many[2048];
	size_t len = 0;

	refused("buckets", "256,64", "bad option 'buckets=256,64': '256,64' is not increasing");
	refused("buckets", "64,64", "'64,64' is not increasing");
	refused("buckets", "64,128,1KiB,512", "'1KiB,512' is not increasing");
	refused("buckets", "64,abc", "'abc' is not a size");
	refused("buckets", "", "'' is not a size");
	refused("buckets", "0,64", "a bucket of 0 bytes");
	refused("buckets", "64,2TiB", "larger than 1TiB");
	for (int i = 1; i <= 257; i++)
		len += (size_t)snprintf(many + len, sizeof many - len, "%s%d", i > 1 ? "," : "", i);
	refused("buckets", many, "more than 256 buckets");
	refused("growth", "1", "not a ratio above 1");
	refused("growth", "x", "'growth=x'");
	refused("growth", "1.001", "over 256 classes");
	refused("slab", "0", "'slab=0'");
	refused("slab", "2GiB", "'slab=2GiB'");
	refused("slab-slots", "0", "'slab-slots=0'");
	refused("slab-slots", "65537", "'slab-slots=65537'");
	refused("bogus", "1", "unknown option");
	cr_assert_eq(make_pool(0, both), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(fh.last_log, "exclude each other"), "%s", fh.last_log);
}

/* 17 buckets used: the 15 with most requests by name, buckets 1 and 2 KiB as "other". */
Test(bucketed, stats_top_and_other)
{
	const char *kv[] = {"buckets",
	                    "1KiB,2KiB,3KiB,4KiB,5KiB,6KiB,7KiB,8KiB,9KiB,10KiB,11KiB,12KiB,13KiB,"
	                    "14KiB,15KiB,16KiB,17KiB,18KiB,19KiB,20KiB",
	                    NULL};

	setup(0, kv);
	for (uint64_t k = 1; k <= 17; k++)
		for (uint64_t j = 0; j < k; j++)
			alloc(k * KiB - 1); /* bucket k KiB, waste 1 each */
	cr_assert_eq(stat("bucket_1KiB_requests"), -1);
	cr_assert_eq(stat("bucket_2KiB_requests"), -1);
	cr_assert_eq(stat("bucket_3KiB_requests"), 3);
	cr_assert_eq(stat("bucket_17KiB_requests"), 17);
	cr_assert_eq(stat("bucket_17KiB_waste_bytes"), 17);
	cr_assert_eq(stat("bucket_other_requests"), 3);
	cr_assert_eq(stat("bucket_other_waste_bytes"), 3);
	/* Peak live 1 + 2 over 2048 + 1024 slots carved (2 MiB slabs). */
	cr_assert_float_eq(stat("bucket_other_slab_occupancy"), 3.0 / 3072.0, 1e-12);
	cr_assert_eq(stat("buckets_used"), 17);
	cr_assert_eq(stat("rounding_waste_bytes"), 17 * 18 / 2);
	cr_assert_eq(fake_host_n_stats(ops, pool), 15 * 3 + 3 + 11);
	teardown();
}

Test(bucketed, size_names)
{
	char buf[32];
	const struct {
		uint64_t v;
		const char *name;
	} cases[] = {{512, "512B"},
	             {64 * KiB, "64KiB"},
	             {MiB, "1MiB"},
	             {1536, "1536B"},
	             {3 * KiB / 2 * 1024, "1536KiB"},
	             {0, "0B"},
	             {1ull << 40, "1TiB"},
	             {1ull << 50, "1024TiB"}};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bk_size_name(cases[i].v, buf, sizeof buf);
		cr_assert_str_eq(buf, cases[i].name);
	}
}

/*
 * An independent check on a long pseudo-random sequence under a 6 MiB
 * capacity (small requests to the buckets, one in eight up to 1 MiB to the
 * large pool): no two live blocks overlap, each holds its request, the
 * capacity holds, and the counts add up.
 */
Test(bucketed, random_sequence_never_overlaps)
{
	const char *kv[] = {"buckets", "64,128,256", "slab", "1KiB", NULL};
	static struct memprof_pool_block live[512];
	size_t n_live = 0, n_ok = 0;
	uint64_t x = 12345;

	setup(6 * MiB, kv);
	for (int step = 0; step < 4000; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (n_live && ((x >> 33) % 2 == 0 || n_live == 512)) {
			size_t k = (size_t)(x >> 40) % n_live;

			release(live[k]);
			live[k] = live[--n_live];
			continue;
		}
		uint64_t size = (x >> 50) % 8 == 0 ? (x >> 20) % MiB : (x >> 20) % 300;
		struct memprof_pool_block b;
		int rc = try_alloc(size, &b);

		cr_assert(rc == 0 || rc == MEMPROF_POOL_ENOMEM, "rc %d", rc);
		if (rc)
			continue;
		cr_assert_geq(b.size_bytes, size);
		for (size_t i = 0; i < n_live; i++)
			cr_assert(b.addr + b.size_bytes <= live[i].addr ||
			                  live[i].addr + live[i].size_bytes <= b.addr,
			          "step %d overlaps", step);
		live[n_live++] = b;
		n_ok++;
	}
	cr_assert_eq(stat("bucketed_requests") + stat("large_requests"), (double)n_ok);
	cr_assert_leq(fh.peak_reserved_bytes, 6 * MiB);
	/* This fixed sequence runs out of memory and releases slabs (5 of them, 3 retries). */
	cr_assert_gt(stat("oom_retries"), 0);
	cr_assert_gt(stat("slabs_released"), 0);
	cr_assert_gt(fh.n_refused, 0);
	while (n_live)
		release(live[--n_live]);
	cr_assert_eq(stat("internal_fragmentation_share_at_end"), 0);
	teardown();
}
