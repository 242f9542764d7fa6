/*
 * tests/unit/test_pool_caching.c - the caching pool alone against the fake
 * host, on cases worked by hand from PyTorch's CUDACachingAllocator rules:
 * rounding, segment sizes, splitting, best fit, streams, coalescing,
 * max_split_size, the OOM ladder, garbage collection, expandable segments,
 * seeding a preexisting layout, and option errors.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/caching/caching.h"
#include "fake_host.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct cb_pool *pool; /* caching.h's; the ops see it as struct memprof_pool */
#define POOL ((struct memprof_pool *)pool)

static int make_pool(uint64_t cap, const struct memprof_pool_option *opts, size_t n)
{
	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
	pool = NULL;
	return ops->create(&fh.host, opts, n, (struct memprof_pool **)&pool);
}

static void setup(uint64_t cap, const struct memprof_pool_option *opts, size_t n)
{
	cr_assert_eq(make_pool(cap, opts, n), 0, "create: %s", fh.last_log);
}

static void teardown(void)
{
	ops->destroy(POOL);
	cr_assert_eq(fake_host_live_regions(&fh), 0, "destroy left regions");
	cr_assert_eq(fh.reserved_bytes, 0);
}

/* Allocate size bytes on stream; the request index is the running count. */
static struct memprof_pool_block alloc_on(uint64_t size, uint64_t stream)
{
	static int64_t index;
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = size,
	                                 .requested_bytes = size,
	                                 .stream = stream,
	                                 .index = 1000000 + index++};
	struct memprof_pool_block b;

	cr_assert_eq(ops->alloc(POOL, &r, &b), 0, "alloc of %llu failed", (unsigned long long)size);
	return b;
}

static struct memprof_pool_block alloc0(uint64_t size)
{
	return alloc_on(size, 0);
}

static int try_alloc(uint64_t size, struct memprof_pool_block *b)
{
	struct memprof_pool_request r = {
	        .struct_size = sizeof r, .size_bytes = size, .requested_bytes = size, .index = -1};
	return ops->alloc(POOL, &r, b);
}

static void free_on(struct memprof_pool_block b, uint64_t stream)
{
	cr_assert_eq(ops->free(POOL, &b, stream), 0);
}

static void free0(struct memprof_pool_block b)
{
	free_on(b, 0);
}

static double stat(const char *name)
{
	double v = 0;

	cr_assert_eq(fake_host_stat(ops, POOL, name, &v), 1,
	             "no stat '%s' (or a stat name of 48 bytes or more)", name);
	return v;
}

Test(caching, header_and_options)
{
	const struct memprof_pool_option_spec *o;
	int seen = 0;

	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "caching");
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_not_null(ops->stats);
	cr_assert_null(ops->plan);
	for (o = ops->options; o->name; o++) {
		cr_assert(o->value_hint && o->help && strstr(o->help, "default"), "%s", o->name);
		seen += !strcmp(o->name, "max_split_size") +
		        !strcmp(o->name, "expandable_segments") +
		        !strcmp(o->name, "roundup_power2_divisions") +
		        !strcmp(o->name, "garbage_collection_threshold");
	}
	cr_assert_eq(seen, 4);
}

Test(caching, rounds_to_512_bytes)
{
	setup(0, NULL, 0);
	cr_assert_eq(alloc0(1).size_bytes, 512);
	cr_assert_eq(alloc0(512).size_bytes, 512);
	cr_assert_eq(alloc0(513).size_bytes, 1024);
	cr_assert_eq(alloc0(1000).size_bytes, 1024);
	cr_assert_eq(cb_round_size(&pool->cfg, 5 * MiB + 1), 5 * MiB + 512);
	cr_assert_eq(fh.n_reserve, 1, "four small requests share one 2 MiB segment");
	teardown();
}

Test(caching, segment_sizes)
{
	setup(0, NULL, 0);
	alloc0(1000);
	cr_assert_eq(fh.reserved_bytes, 2 * MiB, "small request: a 2 MiB segment");
	alloc0(5 * MiB);
	cr_assert_eq(fh.reserved_bytes, 22 * MiB, "1..10 MiB request: a 20 MiB segment");
	alloc0(30 * MiB);
	cr_assert_eq(fh.reserved_bytes, 52 * MiB, "30 MiB request: its own 30 MiB segment");
	alloc0(11 * MiB);
	cr_assert_eq(fh.reserved_bytes, 52 * MiB, "11 MiB fits the 15 MiB left of the 20 MiB one");
	alloc0(16 * MiB + 1);
	cr_assert_eq(fh.reserved_bytes, 70 * MiB, "rounded up to 2 MiB: 18 MiB");
	alloc0(1 * MiB);
	cr_assert_eq(fh.reserved_bytes, 70 * MiB, "1 MiB is still small: fits the 2 MiB segment");
	cr_assert_eq(cb_allocation_size(cb_round_size(&pool->cfg, MiB + 1)), 20 * MiB);
	cr_assert_eq(cb_allocation_size(10 * MiB), 10 * MiB);
	cr_assert_eq(fh.n_reserve, 4);
	cr_assert_eq(stat("segments_reserved"), 4);
	teardown();
}

Test(caching, split_and_reuse)
{
	struct memprof_pool_block a, b, c;

	setup(0, NULL, 0);
	a = alloc0(5 * MiB);
	b = alloc0(3 * MiB);
	cr_assert_eq(fh.n_reserve, 1, "the 3 MiB block is split from the 20 MiB segment");
	cr_assert_eq(b.addr, a.addr + 5 * MiB);
	cr_assert_eq(b.size_bytes, 3 * MiB);
	free0(b);
	c = alloc0(2 * MiB);
	cr_assert_eq(c.addr, b.addr, "freed space is reused in place");
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("cache_hits"), 2);
	cr_assert_eq(stat("splits"), 3);
	teardown();
}

Test(caching, large_remainder_of_a_megabyte_is_not_split)
{
	struct memprof_pool_block a, b;

	setup(0, NULL, 0);
	a = alloc0(24 * MiB);
	free0(a);
	b = alloc0(23 * MiB);
	cr_assert_eq(b.addr, a.addr);
	cr_assert_eq(b.size_bytes, 24 * MiB, "remainder 1 MiB is not > 1 MiB: no split");
	teardown();
}

Test(caching, best_fit_takes_the_smallest_block_that_fits)
{
	struct memprof_pool_block big, mid, small, x, keep[3];

	setup(0, NULL, 0);
	big = alloc0(40 * MiB);
	keep[0] = alloc0(1000);
	mid = alloc0(30 * MiB);
	keep[1] = alloc0(1000);
	small = alloc0(24 * MiB);
	keep[2] = alloc0(1000);
	free0(big);
	free0(mid);
	free0(small);
	x = alloc0(25 * MiB);
	cr_assert_eq(x.addr, mid.addr, "30 MiB is the smallest free block of at least 25 MiB");
	cr_assert_eq(x.size_bytes, 25 * MiB);
	x = alloc0(20 * MiB);
	cr_assert_eq(x.addr, small.addr);
	cr_assert_eq(fh.n_reserve, 4);
	(void)keep;
	teardown();
}

Test(caching, streams_have_separate_pools)
{
	struct memprof_pool_block a, b, c;

	setup(0, NULL, 0);
	a = alloc_on(1000, 1);
	free_on(a, 1);
	b = alloc_on(1000, 2);
	cr_assert_eq(fh.n_reserve, 2, "stream 2 cannot use stream 1's cached block");
	c = alloc_on(1000, 1);
	cr_assert_eq(c.addr, a.addr);
	(void)b;
	teardown();
}

Test(caching, free_on_another_stream_returns_to_the_allocation_stream)
{
	struct memprof_pool_block a, b;

	setup(0, NULL, 0);
	a = alloc_on(8 * MiB, 1);
	free_on(a, 2);
	b = alloc_on(8 * MiB, 1);
	cr_assert_eq(b.addr, a.addr);
	cr_assert_eq(fh.n_reserve, 1);
	alloc_on(8 * MiB, 2);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(stat("cross_stream_frees"), 1);
	teardown();
}

Test(caching, free_neighbours_coalesce)
{
	struct memprof_pool_block a, b, c, d;

	setup(0, NULL, 0);
	a = alloc0(5 * MiB);
	b = alloc0(5 * MiB);
	c = alloc0(5 * MiB);
	free0(a);
	free0(c);
	d = alloc0(10 * MiB);
	cr_assert_eq(d.addr, c.addr, "c merged with the 5 MiB tail into one 10 MiB block");
	cr_assert_eq(fh.n_reserve, 1);
	free0(d);
	free0(b);
	d = alloc0(18 * MiB);
	cr_assert_eq(d.addr, a.addr, "all merged back into one 20 MiB block");
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("merges"), 3);
	teardown();
}

Test(caching, max_split_size_keeps_oversize_blocks_whole)
{
	struct memprof_pool_option o = {"max_split_size", "32MiB"};
	struct memprof_pool_block big, x, huge;

	setup(0, &o, 1);
	big = alloc0(40 * MiB);
	free0(big);
	x = alloc0(25 * MiB);
	cr_assert_neq(x.addr, big.addr, "a request under max_split never takes an oversize block");
	cr_assert_eq(fh.reserved_bytes, 66 * MiB);
	x = alloc0(35 * MiB);
	cr_assert_eq(x.addr, big.addr, "40 < 35 + 20 MiB: within the tolerance");
	cr_assert_eq(x.size_bytes, 40 * MiB, "oversize blocks are not split");
	huge = alloc0(64 * MiB);
	free0(huge);
	x = alloc0(36 * MiB);
	cr_assert_neq(x.addr, huge.addr, "64 >= 36 + 20 MiB: beyond the tolerance");
	cr_assert_eq(fh.n_reserve, 4);
	teardown();
}

Test(caching, without_max_split_a_large_block_is_split)
{
	struct memprof_pool_block big, x;

	setup(0, NULL, 0);
	big = alloc0(40 * MiB);
	free0(big);
	x = alloc0(25 * MiB);
	cr_assert_eq(x.addr, big.addr);
	cr_assert_eq(x.size_bytes, 25 * MiB);
	teardown();
}

Test(caching, oom_releases_cached_segments_and_retries)
{
	struct memprof_pool_block s, x;

	setup(21 * MiB, NULL, 0);
	s = alloc0(1000);
	free0(s);
	x = alloc0(5 * MiB);
	cr_assert_eq(fh.n_refused, 1, "2 + 20 MiB is over 21: refused once");
	cr_assert_eq(fh.n_release, 1, "the cached small segment went back");
	cr_assert_eq(fh.reserved_bytes, 20 * MiB);
	cr_assert_eq(stat("alloc_retries"), 1);
	cr_assert_eq(stat("ooms"), 0);
	(void)x;
	teardown();
}

Test(caching, oom_with_max_split_releases_one_oversize_block)
{
	struct memprof_pool_option o = {"max_split_size", "32MiB"};
	struct memprof_pool_block a, b, x;

	setup(100 * MiB, &o, 1);
	a = alloc0(40 * MiB);
	b = alloc0(50 * MiB);
	free0(a);
	free0(b);
	x = alloc0(12 * MiB);
	cr_assert_eq(fh.n_release, 1, "only the smallest oversize block covering 32 MiB");
	cr_assert_eq(fh.reserved_bytes, 62 * MiB, "the 50 MiB segment stays cached");
	cr_assert_eq(stat("alloc_retries"), 0, "release_available_cached_blocks is no retry");
	(void)x;
	teardown();
}

Test(caching, oom_when_nothing_can_be_released)
{
	struct memprof_pool_block live, x;

	setup(30 * MiB, NULL, 0);
	live = alloc0(25 * MiB);
	cr_assert_eq(try_alloc(10 * MiB, &x), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(stat("ooms"), 1);
	cr_assert_eq(stat("alloc_retries"), 1);
	cr_assert_eq(fh.reserved_bytes, 26 * MiB, "the live segment is untouched");
	free0(live);
	cr_assert_eq(try_alloc(10 * MiB, &x), 0);
	cr_assert_eq(x.addr, live.addr);
	teardown();
}

Test(caching, garbage_collection_frees_old_blocks_past_the_threshold)
{
	/* "50%" is the ratio 0.5: a ratio is also taken as a percentage */
	struct memprof_pool_option o = {"garbage_collection_threshold", "50%"};
	struct memprof_pool_block a, b, x;

	setup(100 * MiB, &o, 1);
	a = alloc0(30 * MiB);
	free0(a);
	b = alloc0(40 * MiB);
	free0(b);
	x = alloc0(45 * MiB); /* 70 MiB reserved > 50: A (age 2) >= mean 1.5 goes, B stays */
	cr_assert_eq(fh.n_release, 1);
	cr_assert_eq(fh.reserved_bytes, 86 * MiB, "40 + 46 (45 rounded to 2 MiB)");
	cr_assert_eq(stat("blocks_released_by_gc"), 1);
	x = alloc0(40 * MiB);
	cr_assert_eq(x.addr, b.addr);
	teardown();
}

Test(caching, garbage_collection_needs_a_capacity)
{
	struct memprof_pool_option o = {"garbage_collection_threshold", "0.5"};
	struct memprof_pool_block a, b;

	setup(0, &o, 1);
	a = alloc0(30 * MiB);
	free0(a);
	b = alloc0(40 * MiB);
	free0(b);
	alloc0(45 * MiB);
	cr_assert_eq(fh.n_release, 0);
	teardown();
}

Test(caching, roundup_power2_divisions)
{
	struct memprof_pool_option all = {"roundup_power2_divisions", "4"};
	struct memprof_pool_option list = {"roundup_power2_divisions", "[256:4,512:2]"};

	setup(0, &all, 1);
	cr_assert_eq(cb_round_size(&pool->cfg, 1200), 1536, "1200 <= 512 x 4: plain rounding");
	cr_assert_eq(cb_round_size(&pool->cfg, 4500), 5120, "4096 + one 1 KiB division");
	cr_assert_eq(cb_round_size(&pool->cfg, 4096), 4096, "powers of two stay");
	cr_assert_eq(cb_round_size(&pool->cfg, 300 * MiB + 1), 320 * MiB);
	cr_assert_eq(alloc0(300 * MiB + 1).size_bytes, 320 * MiB);
	cr_assert_eq(fh.reserved_bytes, 320 * MiB);
	teardown();
	setup(0, &list, 1);
	cr_assert_eq(cb_round_size(&pool->cfg, 300 * MiB + 1), 320 * MiB, "256 MB interval: 4");
	cr_assert_eq(cb_round_size(&pool->cfg, 4500), 5120, "the first entry fills below it");
	cr_assert_eq(cb_round_size(&pool->cfg, 600 * MiB), 768 * MiB, "512 MB interval: 2");
	cr_assert_eq(cb_round_size(&pool->cfg, 2048 * MiB + 1), 2048 * MiB + 512, "above: off");
	teardown();
}

Test(caching, expandable_segments_grow_by_mapping_chunks)
{
	struct memprof_pool_option o = {"expandable_segments", "on"};
	struct memprof_pool_block a, b, s;

	setup(0, &o, 1);
	a = alloc0(5 * MiB);
	cr_assert_eq(fh.n_va_reserve, 1);
	cr_assert_eq(fh.n_reserve, 0, "no cudaMalloc in expandable mode");
	cr_assert_eq(fh.n_map, 1);
	cr_assert_eq(fh.reserved_bytes, 20 * MiB, "one 20 MiB chunk");
	b = alloc0(30 * MiB);
	cr_assert_eq(b.addr, a.addr + 5 * MiB, "the segment grows in place");
	cr_assert_eq(fh.n_map, 2, "15 MiB free + one more chunk covers 30 MiB");
	cr_assert_eq(fh.reserved_bytes, 40 * MiB);
	s = alloc0(1000);
	cr_assert_eq(fh.n_va_reserve, 2, "the small pool has its own range");
	cr_assert_eq(fh.reserved_bytes, 42 * MiB, "mapped in 2 MiB chunks");
	alloc_on(1000, 3);
	cr_assert_eq(fh.n_va_reserve, 3, "and so does each stream");
	(void)s;
	teardown();
}

Test(caching, expandable_segments_unmap_free_chunks_on_oom)
{
	struct memprof_pool_option o = {"expandable_segments", "on"};
	struct memprof_pool_block a, b, c;

	setup(64 * MiB, &o, 1);
	a = alloc0(5 * MiB);
	b = alloc0(30 * MiB);
	free0(a);
	free0(b);
	cr_assert_eq(fh.reserved_bytes, 40 * MiB);
	c = alloc_on(50 * MiB, 7);
	cr_assert_eq(fh.n_unmap, 3, "1 chunk rolled back after the refusal + 2 cached chunks");
	cr_assert_eq(fh.n_va_release, 1, "stream 0's range, wholly unmapped, went back");
	cr_assert_eq(fh.reserved_bytes, 60 * MiB);
	cr_assert_eq(stat("chunks_mapped"), 6, "incl. the one rolled back");
	cr_assert_eq(stat("alloc_retries"), 1);
	(void)c;
	teardown();
}

Test(caching, expandable_partial_chunks_stay_mapped)
{
	struct memprof_pool_option o = {"expandable_segments", "on"};
	struct memprof_pool_block a, b, c;

	setup(64 * MiB, &o, 1);
	a = alloc0(30 * MiB); /* 40 MiB mapped: a [0,30) free [30,40) */
	b = alloc0(8 * MiB);  /* [30,38) */
	free0(a);             /* free [0,30): only chunk [0,20) is whole */
	c = alloc_on(40 * MiB, 5);
	cr_assert_eq(fh.n_unmap, 2, "chunk [0,20) after the refusal, and the rolled-back one");
	cr_assert_eq(fh.reserved_bytes, 60 * MiB, "[20,40) stays: it holds b");
	(void)b, (void)c;
	teardown();
}

Test(caching, seeded_layout_is_adopted)
{
	struct cb_seed_block layout[] = {
	        {0, 4 * MiB, 0}, {4 * MiB, 6 * MiB, -1}, {10 * MiB, 10 * MiB, 1}};
	struct memprof_pool_request r0 = {.struct_size = sizeof r0,
	                                  .size_bytes = 4 * MiB,
	                                  .requested_bytes = 3 * MiB,
	                                  .index = 0};
	struct memprof_pool_request r1 = r0;
	struct memprof_pool_block b0, b1, x;

	setup(0, NULL, 0);
	cr_assert_eq(cb_seed_segment(pool, 20 * MiB, 0, layout, 3), 0);
	cr_assert_eq(fh.reserved_bytes, 20 * MiB);
	r1.index = 1;
	r1.size_bytes = r1.requested_bytes = 10 * MiB;
	cr_assert_eq(ops->alloc(POOL, &r1, &b1), 0);
	cr_assert_eq(ops->alloc(POOL, &r0, &b0), 0);
	cr_assert_eq(b1.addr - b0.addr, 10 * MiB);
	cr_assert_eq(b0.size_bytes, 4 * MiB, "the recorded block, not a fresh 3 MiB one");
	x = alloc0(5 * MiB);
	cr_assert_eq(x.addr, b0.addr + 4 * MiB, "the recorded hole serves the next request");
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("seeded_blocks_claimed"), 2);
	teardown();
}

Test(caching, seeded_layout_must_tile_the_segment)
{
	struct cb_seed_block gap[] = {{0, 4 * MiB, 0}, {6 * MiB, 14 * MiB, -1}};

	setup(0, NULL, 0);
	cr_assert_eq(cb_seed_segment(pool, 20 * MiB, 0, gap, 2), MEMPROF_POOL_EINVAL);
	cr_assert_eq(fh.n_reserve, 0);
	cr_assert_eq(fh.n_log_errors, 1);
	teardown();
}

/* The seed callback of pool ABI 1.3 reaches seed.c: one free and one claimed block. */
Test(caching, seed_callback_adopts_segments)
{
	struct memprof_pool_seed_block blocks[] = {{0, 12 * MiB, 7}, {12 * MiB, 8 * MiB, -1}};
	struct memprof_pool_seed_segment seg = {sizeof seg, 20 * MiB, 0, blocks, 2};
	struct memprof_pool_request r = {
	        .struct_size = sizeof r, .size_bytes = 12 * MiB, .requested_bytes = 12 * MiB, .index = 7};
	struct memprof_pool_block b;

	setup(0, NULL, 0);
	cr_assert_not_null(ops->seed);
	cr_assert_eq(ops->seed(POOL, &seg, 1), 0);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(ops->alloc(POOL, &r, &b), 0);
	cr_assert_eq(alloc0(8 * MiB).addr, b.addr + 12 * MiB, "the recorded free block serves it");
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("seeded_segments"), 1);
	teardown();
}

/*
 * Expandable mode with max_split_size (PyTorch #134338): out of memory, the
 * second step frees a cached oversize block that is not expandable (here a
 * seeded 100 MiB segment) and the request is served without the third step
 * (emptyCache, counted as a retry).  Capacity 120 MiB: the seeded 100 plus
 * 60 MiB mapped for a 50 MiB request would be 160.
 */
Test(caching, expandable_oom_frees_oversize_cudamalloc_blocks)
{
	struct memprof_pool_option o[] = {{"expandable_segments", "on"},
	                                  {"max_split_size", "64MiB"}};
	struct cb_seed_block whole[] = {{0, 100 * MiB, -1}};

	setup(120 * MiB, o, 2);
	cr_assert_eq(cb_seed_segment(pool, 100 * MiB, 0, whole, 1), 0);
	alloc0(50 * MiB);
	cr_assert_eq(stat("blocks_released_for_oom"), 1);
	cr_assert_eq(stat("alloc_retries"), 0, "released by the second step, not emptyCache");
	cr_assert_eq(fh.reserved_bytes, 60 * MiB);
	teardown();
}

Test(caching, foreign_and_double_frees_are_refused)
{
	struct memprof_pool_block a, forged;

	setup(0, NULL, 0);
	a = alloc0(1000);
	forged = a;
	forged.handle ^= 1ull << 32;
	cr_assert_eq(ops->free(POOL, &forged, 0), MEMPROF_POOL_EINVAL);
	free0(a);
	cr_assert_eq(ops->free(POOL, &a, 0), MEMPROF_POOL_EINVAL);
	cr_assert_eq(fh.n_log_errors, 2);
	teardown();
}

static void assert_refused(const char *name, const char *value)
{
	struct memprof_pool_option o = {name, value};

	cr_assert_eq(make_pool(0, &o, 1), MEMPROF_POOL_EINVAL, "%s=%s accepted", name, value);
	cr_assert_null(pool);
	cr_assert_eq(fh.n_log_errors, 1);
	cr_assert(strstr(fh.last_log, name) && strstr(fh.last_log, value), "log: %s", fh.last_log);
}

Test(caching, bad_options_are_refused_with_a_message)
{
	assert_refused("max_split_size", "20MiB");
	assert_refused("max_split_size", "lots");
	assert_refused("max_split_size", "64XB");
	assert_refused("max_non_split_rounding", "1MiB");
	assert_refused("roundup_power2_divisions", "3");
	assert_refused("roundup_power2_divisions", "[256:4,>:3]");
	assert_refused("roundup_power2_divisions", "[256:4");
	assert_refused("expandable_segments", "maybe");
	assert_refused("garbage_collection_threshold", "1.5");
	assert_refused("garbage_collection_threshold", "0");
	assert_refused("garbage_collection_threshold", "150%");
	assert_refused("garbage_collection_threshold", "50%%");
	assert_refused("device_memory", "1KiB");
	assert_refused("frobnicate", "1");
}
