/*
 * tests/unit/test_pool_global2x.c - the global2x pool alone against the fake
 * host, on sequences worked by hand from its rules (a key's buffer is
 * reused when free and large enough, else replaced by one of 2 x the
 * request; concurrent requests of one key get further buffers): the 2x
 * growth sequence of issue 6, keys by site, tag and size class, the sites
 * glob, traces without stacks, out of memory, and bad input.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fake_host.h"

#define MiB (1ull << 20)
/* Site texts as the replay engine gives them: the call site frame, "name (file:line)". */
#define SITE_A "_gather_along_first_dim (megatron/core/tensor_parallel/mappings.py:224)"
#define SITE_B "forward (model.py:10)"

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct memprof_pool *pool;

static int make_pool(uint64_t cap, const struct memprof_pool_option *opts, size_t n)
{
	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
	pool = NULL;
	return ops->create(&fh.host, opts, n, &pool);
}

static void setup(uint64_t cap, const struct memprof_pool_option *opts, size_t n)
{
	cr_assert_eq(make_pool(cap, opts, n), 0, "create: %s", fh.last_log);
}

static void teardown(void)
{
	ops->destroy(pool);
	cr_assert_eq(fake_host_live_regions(&fh), 0, "destroy left regions");
	cr_assert_eq(fh.reserved_bytes, 0);
}

static int try_alloc(const char *site, const char *phase, uint64_t size,
                     struct memprof_pool_block *b)
{
	static int64_t index;
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = size,
	                                 .requested_bytes = size,
	                                 .index = index,
	                                 .block_token = (uint64_t)index,
	                                 .site = site,
	                                 .phase = phase};
	index++;
	return ops->alloc(pool, &r, b);
}

static struct memprof_pool_block alloc_sp(const char *site, const char *phase, uint64_t size)
{
	struct memprof_pool_block b;

	cr_assert_eq(try_alloc(site, phase, size, &b), 0, "alloc of %llu failed: %s",
	             (unsigned long long)size, fh.last_log);
	cr_assert_geq(b.size_bytes, size);
	return b;
}

static struct memprof_pool_block alloc_a(uint64_t size)
{
	return alloc_sp(SITE_A, "forward", size);
}

static void free_b(struct memprof_pool_block b)
{
	cr_assert_eq(ops->free(pool, &b, 0), 0, "free: %s", fh.last_log);
}

static double stat(const char *name)
{
	double v = 0;

	cr_assert_eq(fake_host_stat(ops, pool, name, &v), 1,
	             "no stat '%s' (or a stat name of 48 bytes or more)", name);
	return v;
}

Test(global2x, header_and_options)
{
	const struct memprof_pool_option_spec *o;
	int seen = 0;

	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "global2x");
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_not_null(ops->stats);
	cr_assert_null(ops->plan);
	for (o = ops->options; o->name; o++) {
		cr_assert(o->value_hint && o->help && strstr(o->help, "default"), "%s", o->name);
		seen += !strcmp(o->name, "key") + !strcmp(o->name, "sites");
	}
	cr_assert_eq(seen, 2);
}

/*
 * Issue 6's 2x growth sequence on one key (site A), each request freed
 * before the next: 100 B reserves 2 x 100 = 200; 150 fits the free 200 B
 * buffer (a view, no call); 300 does not: the 200 B buffer is released and
 * 600 reserved; 500 fits 600; 1300 does not: 600 released, 2600 reserved.
 */
Test(global2x, growth_sequence_2x)
{
	static const uint64_t reqs[] = {100, 150, 300, 500, 1300};
	static const uint64_t n_reserve_after[] = {1, 1, 2, 2, 3};
	static const uint64_t n_release_after[] = {0, 0, 1, 1, 2};
	struct memprof_pool_block b[5];

	setup(0, NULL, 0);
	for (int i = 0; i < 5; i++) {
		b[i] = alloc_a(reqs[i]);
		cr_assert_eq(b[i].size_bytes, reqs[i], "a view of exactly the request");
		cr_assert_eq(fh.n_reserve, n_reserve_after[i], "reserves after request %d", i);
		cr_assert_eq(fh.n_release, n_release_after[i], "releases after request %d", i);
		free_b(b[i]);
	}
	cr_assert_eq(fh.n_regions, 3);
	cr_assert_eq(fh.regions[0].size_bytes, 200);
	cr_assert_eq(fh.regions[1].size_bytes, 600);
	cr_assert_eq(fh.regions[2].size_bytes, 2600);
	cr_assert(!fh.regions[0].live && !fh.regions[1].live && fh.regions[2].live);
	cr_assert_eq(b[1].addr, b[0].addr, "150 B is a view of the 200 B buffer");
	cr_assert_eq(b[3].addr, b[2].addr, "500 B is a view of the 600 B buffer");
	cr_assert_eq(b[2].addr, fh.regions[1].addr);
	cr_assert_eq(b[4].addr, fh.regions[2].addr);
	cr_assert_eq(stat("reallocations"), 2);
	cr_assert_eq(stat("buffer_reserves"), 3);
	cr_assert_eq(stat("requests_served_from_buffer"), 2);
	cr_assert_eq(stat("keys"), 1);
	cr_assert_eq(stat("buffers"), 1);
	cr_assert_eq(stat("fallback_requests"), 0);
	cr_assert_eq(stat("bytes_held_peak"), 2600, "200, then 600, then 2600: never two at once");
	cr_assert_eq(stat("bytes_held_end"), 2600);
	cr_assert_eq(stat("view_waste_peak"), 2600 - 1300, "the 1300 B view in its 2600 B buffer");
	cr_assert_eq(fh.peak_reserved_bytes, 2600);
	teardown();
}

/* Two live requests of one key: a second buffer of 2 x 100; both reused after. */
Test(global2x, two_live_requests_of_one_key_get_two_buffers)
{
	struct memprof_pool_block a, b, c, d;

	setup(0, NULL, 0);
	a = alloc_a(100);
	b = alloc_a(100);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_neq(a.addr, b.addr);
	cr_assert_eq(fh.regions[1].size_bytes, 200);
	cr_assert_eq(stat("buffers"), 2);
	cr_assert_eq(stat("reallocations"), 0, "an added buffer is not a reallocation");
	free_b(a);
	free_b(b);
	c = alloc_a(150);
	d = alloc_a(180);
	cr_assert_eq(fh.n_reserve, 2, "both fit the two free 200 B buffers");
	cr_assert_neq(c.addr, d.addr);
	cr_assert_eq(stat("requests_served_from_buffer"), 2);
	cr_assert_eq(stat("bytes_held_peak"), 400);
	cr_assert_eq(stat("view_waste_peak"), 400 - 200, "at the second reserve: 100 + 100 live");
	free_b(c);
	free_b(d);
	teardown();
}

/*
 * Buffers of 200 (live) and 200 (free); 500 B: the free one is too small
 * and is replaced (released, 1000 reserved), the live one is kept.  Then
 * with 200 and 1000 free, 150 B takes the smallest that fits, the 200.
 */
Test(global2x, too_small_free_buffer_is_replaced_not_added)
{
	struct memprof_pool_block a, b, c, d;

	setup(0, NULL, 0);
	a = alloc_a(100);
	b = alloc_a(100);
	free_b(b);
	c = alloc_a(500);
	cr_assert_eq(fh.n_reserve, 3);
	cr_assert_eq(fh.n_release, 1);
	cr_assert(!fh.regions[1].live, "the free 200 B buffer went");
	cr_assert_eq(fh.regions[2].size_bytes, 1000);
	cr_assert_eq(c.addr, fh.regions[2].addr);
	cr_assert_eq(stat("reallocations"), 1);
	cr_assert_eq(stat("buffers"), 2);
	free_b(a);
	free_b(c);
	d = alloc_a(150);
	cr_assert_eq(d.addr, a.addr, "the smallest free buffer that fits");
	free_b(d);
	teardown();
}

/* key=size: 100 and 120 B are both in the 128 B class; 129 B is in 256's. */
Test(global2x, key_size_class)
{
	struct memprof_pool_option o[] = {{"key", "size"}};
	struct memprof_pool_block a, b, c;

	setup(0, o, 1);
	a = alloc_sp(SITE_A, "forward", 100);
	free_b(a);
	b = alloc_sp(SITE_B, "backward", 120);
	cr_assert_eq(b.addr, a.addr, "another site, same size class: same buffer");
	c = alloc_sp(SITE_A, "forward", 129);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(fh.regions[1].size_bytes, 258);
	cr_assert_eq(stat("keys"), 2);
	cr_assert_eq(stat("reallocations"), 0);
	free_b(b);
	free_b(c);
	teardown();
}

/* key=tag: one site, two phases are two keys; a request without a phase goes to the fallback. */
Test(global2x, key_tag)
{
	struct memprof_pool_option o[] = {{"key", "tag"}};
	struct memprof_pool_block a, b, c, d;

	setup(0, o, 1);
	a = alloc_sp(SITE_A, "grad bucket 0", 1000);
	free_b(a);
	b = alloc_sp(SITE_A, "param bucket 0", 1000);
	cr_assert_neq(b.addr, a.addr);
	c = alloc_sp(SITE_B, "grad bucket 0", 2000);
	cr_assert_eq(c.addr, a.addr, "the tag's 2000 B buffer, another site");
	cr_assert_eq(fh.n_reserve, 2);
	d = alloc_sp(SITE_A, NULL, 1000);
	cr_assert_eq(fh.n_reserve, 3);
	cr_assert_eq(fh.regions[2].size_bytes, 2 * MiB, "the fallback's small segment");
	cr_assert_eq(stat("keys"), 2);
	cr_assert_eq(stat("requests_without_key"), 1);
	cr_assert_eq(stat("fallback_requests"), 1);
	cr_assert_eq(stat("fallback_segments_reserved"), 1);
	free_b(b);
	free_b(c);
	free_b(d);
	teardown();
}

/* sites=GLOB: only the all-gather site is served from global buffers. */
Test(global2x, sites_glob_routes_the_rest_to_the_fallback)
{
	struct memprof_pool_option o[] = {{"sites", "*tensor_parallel/mappings.py:*"}};
	struct memprof_pool_block a, b, c;

	setup(0, o, 1);
	a = alloc_sp(SITE_A, "forward", 4096);
	b = alloc_sp(SITE_B, "forward", 4096);
	c = alloc_sp(SITE_B, "forward", 4096);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(fh.regions[0].size_bytes, 8192);
	cr_assert_eq(fh.regions[1].size_bytes, 2 * MiB);
	cr_assert_eq(c.addr, b.addr + 4096, "caching splits its 2 MiB segment");
	cr_assert_eq(stat("requests_outside_sites"), 2);
	cr_assert_eq(stat("fallback_requests"), 2);
	cr_assert_eq(stat("fallback_cache_hits"), 1);
	cr_assert_eq(stat("keys"), 1);
	free_b(a);
	free_b(b);
	free_b(c);
	teardown();
}

/* A trace without stacks: every request goes to the fallback, which serves it as caching. */
Test(global2x, no_stacks_means_everything_goes_to_the_fallback)
{
	struct memprof_pool_block a, b;

	setup(0, NULL, 0);
	a = alloc_sp(NULL, "forward", 3 * MiB);
	b = alloc_sp(NULL, "forward", 1000);
	cr_assert_eq(fh.n_reserve, 2);
	cr_assert_eq(fh.regions[0].size_bytes, 20 * MiB, "caching's large segment");
	cr_assert_eq(fh.regions[1].size_bytes, 2 * MiB);
	cr_assert_eq(stat("requests_without_key"), 2);
	cr_assert_eq(stat("fallback_requests"), 2);
	cr_assert_eq(stat("keys"), 0);
	cr_assert_eq(stat("bytes_held_peak"), 0);
	free_b(a);
	free_b(b);
	teardown();
}

/*
 * Capacity 1000: A 100 (200) and B 300 (600) held free = 800; C 200 needs
 * 400 more: refused, both free buffers are released, the retry fits.
 * Then with C live, D 400 needs 800 beyond C's 400: refused for good.
 */
Test(global2x, out_of_memory_releases_free_buffers_and_retries_once)
{
	struct memprof_pool_block a, b, c, d;

	setup(1000, NULL, 0);
	a = alloc_sp(SITE_A, NULL, 100);
	free_b(a);
	b = alloc_sp(SITE_B, NULL, 300);
	free_b(b);
	c = alloc_sp("c (x.py:1)", NULL, 200);
	cr_assert_eq(fh.n_refused, 1);
	cr_assert_eq(fh.n_release, 2);
	cr_assert_eq(fh.reserved_bytes, 400);
	cr_assert_eq(stat("buffers_released_for_oom"), 2);
	cr_assert_eq(try_alloc("d (x.py:1)", NULL, 400, &d), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(fh.reserved_bytes, 400, "the live buffer stays");
	cr_assert_eq(stat("buffers"), 1);
	free_b(c);
	teardown();
}

Test(global2x, bad_frees_zero_and_huge_requests)
{
	struct memprof_pool_block a, z, bogus, h;

	setup(1ull << 40, NULL, 0);
	a = alloc_a(100);
	bogus = a;
	bogus.handle ^= 1;
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	bogus = a;
	bogus.handle = (1ull << 63) | 12345;
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	free_b(a);
	cr_assert_eq(ops->free(pool, &a, 0), MEMPROF_POOL_EINVAL, "a double free");
	z = alloc_a(0);
	cr_assert_eq(stat("fallback_requests"), 1, "a 0 B request goes to the fallback");
	free_b(z);
	cr_assert_eq(try_alloc(SITE_A, NULL, 1ull << 60, &h), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(fh.reserved_bytes, 2 * MiB, "the refused 2^61 left nothing behind");
	cr_assert_gt(fh.n_log_errors, 0);
	teardown();
}

Test(global2x, bad_options)
{
	struct memprof_pool_option k[] = {{"key", "stack"}};
	struct memprof_pool_option s[] = {{"sites", ""}};
	struct memprof_pool_option u[] = {{"pair", "x"}};

	cr_assert_eq(make_pool(0, k, 1), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(fh.last_log, "key=stack"), "%s", fh.last_log);
	cr_assert_eq(make_pool(0, s, 1), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(fh.last_log, "sites="), "%s", fh.last_log);
	cr_assert_eq(make_pool(0, u, 1), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(fh.last_log, "pair=x"), "%s", fh.last_log);
	cr_assert_eq(fake_host_live_regions(&fh), 0);
}

/*
 * Many buffers of one key, most of them live: each request gets the
 * smallest free buffer that fits, the earliest reserved among equals, and
 * a request no free buffer fits replaces the smallest free one (the
 * earliest among equals).  Checked against a plain scan of every buffer.
 */
Test(global2x, best_fit_among_many_buffers_matches_a_scan)
{
	enum { N = 300, R = 200 };
	struct memprof_pool_block blk[N + R]; /* the last view of each buffer */
	uint64_t size[N + R];                 /* each buffer's size; 0 once released */
	int is_free[N + R] = {0}, n = 0;

	setup(0, NULL, 0);
	for (; n < N; n++) {
		blk[n] = alloc_a(100 * (uint64_t)(1 + (n * 5) % 7));
		size[n] = 2 * blk[n].size_bytes; /* 200 .. 1400 B */
	}
	for (int i = 0; i < N; i += 3) { /* free a third, out of order */
		int j = (i * 37) % N;

		if (!is_free[j]) {
			free_b(blk[j]);
			is_free[j] = 1;
		}
	}
	for (int r = 0; r < R; r++) {
		uint64_t need = 50 + (uint64_t)(r * 211) % 1500; /* some fit nothing: > 1400 B */
		int fit = -1, small = -1, j;
		uint64_t releases = fh.n_release;
		struct memprof_pool_block b;

		for (j = 0; j < n; j++) { /* the plain scan, buffers in reserve order */
			if (!is_free[j])
				continue;
			if (size[j] >= need && (fit < 0 || size[j] < size[fit]))
				fit = j;
			if (small < 0 || size[j] < size[small])
				small = j;
		}
		b = alloc_a(need);
		if (fit >= 0) {
			cr_assert_eq(b.addr, blk[fit].addr, "request %d of %llu B", r,
			             (unsigned long long)need);
			cr_assert_eq(fh.n_release, releases);
			j = fit;
		} else {
			cr_assert_eq(fh.n_release, releases + (small >= 0), "request %d", r);
			if (small >= 0) {
				is_free[small] = 0;
				size[small] = 0;
			}
			j = n++;
			size[j] = 2 * need;
		}
		blk[j] = b;
		is_free[j] = 0;
		if (r % 3 != 0) { /* most go back at once */
			free_b(b);
			is_free[j] = 1;
		}
	}
	teardown();
}
