/*
 * tests/unit/test_pool_mxfp8.c - the mxfp8 pool alone against the fake
 * host, on cases worked by hand from its rules (a parameter and a gradient
 * allocation with one pair key share a buffer of max(param, grad) bytes,
 * the gradient bytes are zeroed when the buffer switches from parameters to
 * gradients): issue 6's param/grad pair, both orders, pairs on call sites
 * with an escaped ':', unpaired sides, and a trace without pairs, which
 * must replay exactly as the caching pool does.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/caching/embed.h"
#include "fake_host.h"

#define MiB (1ull << 20)

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;
static struct memprof_pool *pool;

/* One allocation of a test trace: its tag, site, size and lifetime steps. */
struct item {
	const char *phase, *site;
	uint64_t size;
	int64_t alloc_at, free_at;
};

static int make_pool(uint64_t cap, const struct memprof_pool_option *opts, size_t n)
{
	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_not_null(ops);
	pool = NULL;
	return ops->create(&fh.host, opts, n, &pool);
}

/* A pool that has planned items (index i is items[i]). */
static void setup(uint64_t cap, const struct memprof_pool_option *opts, size_t n_opts,
                  const struct item *items, size_t n)
{
	struct memprof_pool_lifetime lt[64];

	cr_assert_leq(n, 64);
	cr_assert_eq(make_pool(cap, opts, n_opts), 0, "create: %s", fh.last_log);
	for (size_t i = 0; i < n; i++)
		lt[i] = (struct memprof_pool_lifetime){.index = (int64_t)i,
		                                       .size_bytes = items[i].size,
		                                       .alloc_at = items[i].alloc_at,
		                                       .free_at = items[i].free_at,
		                                       .site = items[i].site,
		                                       .phase = items[i].phase};
	cr_assert_eq(ops->plan(pool, lt, n), 0, "plan: %s", fh.last_log);
}

static void teardown(void)
{
	ops->destroy(pool);
	cr_assert_eq(fake_host_live_regions(&fh), 0, "destroy left regions");
	cr_assert_eq(fh.reserved_bytes, 0);
}

static struct memprof_pool_request req_of(const struct item *items, int64_t i)
{
	return (struct memprof_pool_request){.struct_size = sizeof(struct memprof_pool_request),
	                                     .size_bytes = items[i].size,
	                                     .requested_bytes = items[i].size,
	                                     .index = i,
	                                     .block_token = (uint64_t)i,
	                                     .site = items[i].site,
	                                     .phase = items[i].phase};
}

static struct memprof_pool_block alloc_i(const struct item *items, int64_t i)
{
	struct memprof_pool_request r = req_of(items, i);
	struct memprof_pool_block b;

	cr_assert_eq(ops->alloc(pool, &r, &b), 0, "alloc #%lld failed: %s", (long long)i,
	             fh.last_log);
	cr_assert_geq(b.size_bytes, items[i].size);
	return b;
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

#define NEVER INT64_MAX

Test(mxfp8, header_and_options)
{
	const struct memprof_pool_option_spec *o;
	int seen = 0;

	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "mxfp8");
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_not_null(ops->stats);
	cr_assert_not_null(ops->plan);
	for (o = ops->options; o->name; o++) {
		cr_assert(o->value_hint && o->help && strstr(o->help, "default"), "%s", o->name);
		seen += !strcmp(o->name, "pair") + !strcmp(o->name, "pair-on");
	}
	cr_assert_eq(seen, 2);
}

/*
 * Issue 6's param/grad pair: the 4096 B grad buffer of bucket 0 from init,
 * then the 2048 B MXFP8 param buffer of bucket 0 while the grad is live.
 * The pair's buffer is max(2048, 4096) = 4096, reserved once at the grad;
 * the param lies at the same address, inside the live grad block
 * (block_shares(param, grad)); its free switches the buffer back to
 * gradients: a memset of the grad's 4096 B.  Saved: 2048 + 4096 - 4096.
 * A second iteration's param (#2) does the same again.
 */
Test(mxfp8, a_param_grad_pair)
{
	static const struct item it[] = {
	        {"grad bucket 0", "init (train.py:1)", 4096, 0, NEVER},
	        {"param bucket 0", "gather (fp8.py:7)", 2048, 1, 2},
	        {"param bucket 0", "gather (fp8.py:7)", 2048, 3, 4},
	};
	struct memprof_pool_block g, pa, pb;

	setup(0, NULL, 0, it, 3);
	cr_assert_eq(stat("pairs_found"), 1);
	g = alloc_i(it, 0);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(fh.regions[0].size_bytes, 4096);
	cr_assert_eq(g.addr, fh.regions[0].addr);
	cr_assert_eq(fh.n_memset, 0, "a fresh buffer holds no parameters: no zeroing");
	pa = alloc_i(it, 1);
	cr_assert_eq(pa.addr, g.addr);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(fh.n_shares, 1);
	cr_assert_eq(fh.shares[0].token, 1, "the param's token");
	cr_assert_eq(fh.shares[0].arg, 0, "lies inside the live grad's");
	cr_assert_eq(fh.n_memset, 0);
	free_b(pa);
	cr_assert_eq(fh.n_memset, 1, "params -> grads: zero the grad bytes");
	cr_assert_eq(fh.bytes_set, 4096);
	pb = alloc_i(it, 2);
	cr_assert_eq(pb.addr, g.addr);
	cr_assert_eq(fh.n_shares, 2);
	cr_assert_eq(fh.shares[1].token, 2);
	cr_assert_eq(fh.shares[1].arg, 0);
	free_b(pb);
	cr_assert_eq(fh.n_memset, 2);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("bytes_saved"), 2048);
	cr_assert_eq(stat("pairs_shared"), 1);
	cr_assert_eq(stat("param_allocs_shared"), 2);
	cr_assert_eq(stat("grad_allocs_shared"), 0);
	cr_assert_eq(stat("zeroings"), 2);
	cr_assert_eq(stat("bytes_zeroed"), 8192);
	cr_assert_eq(stat("fallback_requests"), 0);
	cr_assert_eq(stat("unpaired_sides"), 0);
	free_b(g);
	cr_assert_eq(fh.n_memset, 2, "a grad's free zeroes nothing");
	teardown();
}

/*
 * The other order: param 8192 live, then grad 6144 into the buffer whose
 * content is parameters: it shares the param's block and its 6144 bytes
 * are zeroed at its alloc; the param's free then zeroes nothing more (the
 * buffer already holds gradients).  Buffer 8192; saved 6144.
 */
Test(mxfp8, a_grad_into_a_param_buffer_is_zeroed_at_its_alloc)
{
	static const struct item it[] = {
	        {"param bucket 2", NULL, 8192, 0, 2},
	        {"grad bucket 2", NULL, 6144, 1, 3},
	};
	struct memprof_pool_block p, g;

	setup(0, NULL, 0, it, 2);
	p = alloc_i(it, 0);
	cr_assert_eq(p.size_bytes, 8192);
	g = alloc_i(it, 1);
	cr_assert_eq(g.addr, p.addr);
	cr_assert_eq(g.size_bytes, 8192, "a block of the pair is its whole buffer");
	cr_assert_eq(fh.n_shares, 1);
	cr_assert_eq(fh.shares[0].token, 1);
	cr_assert_eq(fh.shares[0].arg, 0);
	cr_assert_eq(fh.n_memset, 1);
	cr_assert_eq(fh.bytes_set, 6144);
	free_b(p);
	cr_assert_eq(fh.n_memset, 1);
	free_b(g);
	cr_assert_eq(stat("bytes_saved"), 6144);
	cr_assert_eq(stat("grad_allocs_shared"), 1);
	cr_assert_eq(stat("zeroings"), 1);
	teardown();
}

/* Sides never live at once share the buffer but no block: nothing saved is claimed. */
Test(mxfp8, sides_never_live_at_once_claim_no_saving)
{
	static const struct item it[] = {
	        {"param bucket 0", NULL, 1024, 0, 1},
	        {"grad bucket 0", NULL, 4096, 1, 2},
	};
	struct memprof_pool_block p, g;

	setup(0, NULL, 0, it, 2);
	p = alloc_i(it, 0);
	free_b(p);
	g = alloc_i(it, 1);
	cr_assert_eq(g.addr, p.addr);
	cr_assert_eq(fh.n_shares, 0);
	cr_assert_eq(fh.n_memset, 1, "the buffer last held parameters");
	cr_assert_eq(fh.bytes_set, 4096);
	free_b(g);
	cr_assert_eq(stat("pairs_found"), 1);
	cr_assert_eq(stat("pairs_shared"), 0);
	cr_assert_eq(stat("bytes_saved"), 0);
	teardown();
}

/* A request sequence with no pairs, through mxfp8 and through a plain caching pool. */
static const struct item no_pairs[] = {
        {"init", "a (m.py:1)", 3 * MiB, 0, NEVER}, {"forward", "b (m.py:2)", 1000, 1, 3},
        {"forward", "c (m.py:3)", 25 * MiB, 1, 2}, {"backward", "d (m.py:4)", 12 * MiB, 2, 3},
        {"grad-reduce bucket 0", NULL, 700, 3, 4}, {"optimizer", NULL, 5 * MiB, 4, 5},
};
static const int no_pairs_ops[] = {0, 1, 2, -2, 3, -1, -3, 4, -4, 5, -5}; /* -k: free k */

static void run_ops(int (*alloc)(void *, const struct memprof_pool_request *,
                                 struct memprof_pool_block *),
                    int (*free_fn)(void *, const struct memprof_pool_block *), void *pl,
                    struct memprof_pool_block *blocks)
{
	for (size_t k = 0; k < sizeof no_pairs_ops / sizeof no_pairs_ops[0]; k++) {
		int op = no_pairs_ops[k];

		if (op >= 0) {
			struct memprof_pool_request r = req_of(no_pairs, op);
			cr_assert_eq(alloc(pl, &r, &blocks[op]), 0);
		} else {
			cr_assert_eq(free_fn(pl, &blocks[-op]), 0);
		}
	}
}

static int mx_alloc_fn(void *pl, const struct memprof_pool_request *r, struct memprof_pool_block *b)
{
	return ops->alloc(pl, r, b);
}

static int mx_free_fn(void *pl, const struct memprof_pool_block *b)
{
	return ops->free(pl, b, 0);
}

static int cb_alloc_fn(void *pl, const struct memprof_pool_request *r, struct memprof_pool_block *b)
{
	return cb_pool_alloc(pl, r, b);
}

static int cb_free_fn(void *pl, const struct memprof_pool_block *b)
{
	return cb_pool_free(pl, b, 0);
}

/*
 * No pairs: a WARN that says so, zero pairs and savings, and every request
 * served exactly as the caching pool serves it: the same reservations, in
 * the same order and sizes, and the same addresses.
 */
Test(mxfp8, no_pairs_replays_exactly_as_caching)
{
	static struct fake_host fh2;
	struct memprof_pool_block mine[6], theirs[6];
	struct cb_pool *cb;

	setup(0, NULL, 0, no_pairs, 6);
	cr_assert(strstr(fh.last_log, "no parameter/gradient pairs in this trace"), "%s",
	          fh.last_log);
	cr_assert(strstr(fh.last_log, "param*:grad*"), "%s", fh.last_log);
	run_ops(mx_alloc_fn, mx_free_fn, pool, mine);
	fake_host_init(&fh2, 0);
	cr_assert_eq(cb_pool_create(&fh2.host, NULL, 0, &cb), 0);
	run_ops(cb_alloc_fn, cb_free_fn, cb, theirs);
	cr_assert_eq(fh.n_reserve, fh2.n_reserve);
	cr_assert_eq(fh.n_release, fh2.n_release);
	cr_assert_eq(fh.n_regions, fh2.n_regions);
	cr_assert_geq(fh.n_regions, 3, "the sequence needs several segments");
	for (size_t i = 0; i < fh.n_regions; i++) {
		cr_assert_eq(fh.regions[i].size_bytes, fh2.regions[i].size_bytes, "region %zu", i);
		cr_assert_eq(fh.regions[i].live, fh2.regions[i].live, "region %zu", i);
	}
	for (size_t i = 0; i < 6; i++) {
		cr_assert_eq(mine[i].addr, theirs[i].addr, "block %zu", i);
		cr_assert_eq(mine[i].size_bytes, theirs[i].size_bytes, "block %zu", i);
	}
	cr_assert_eq(fh.peak_reserved_bytes, fh2.peak_reserved_bytes);
	cr_assert_eq(stat("pairs_found"), 0);
	cr_assert_eq(stat("bytes_saved"), 0);
	cr_assert_eq(stat("fallback_requests"), 6);
	cr_assert_eq(stat("unpaired_sides"), 1, "grad-reduce bucket 0 matches grad*, alone");
	cb_pool_destroy(cb);
	teardown();
}

/*
 * pair-on=site with ':' in the globs: '* (fp8.py\:10)' and '* (grads.py\:20)'
 * capture the function name, so bucket3's param and grad pair; bucket4 has
 * only a param (unpaired, to the fallback).
 */
Test(mxfp8, pair_on_site_with_an_escaped_colon)
{
	struct memprof_pool_option o[] = {{"pair", "* (fp8.py\\:10):* (grads.py\\:20)"},
	                                  {"pair-on", "site"}};
	static const struct item it[] = {
	        {"init", "bucket3 (grads.py:20)", 4096, 0, NEVER},
	        {"forward", "bucket3 (fp8.py:10)", 4096, 1, 2},
	        {"forward", "bucket4 (fp8.py:10)", 4096, 1, 2},
	};
	struct memprof_pool_block g, p, q;

	setup(0, o, 2, it, 3);
	cr_assert_eq(stat("pairs_found"), 1);
	cr_assert_eq(stat("pairs_from_sites"), 1);
	cr_assert_eq(stat("unpaired_sides"), 1);
	g = alloc_i(it, 0);
	p = alloc_i(it, 1);
	q = alloc_i(it, 2);
	cr_assert_eq(p.addr, g.addr);
	cr_assert_neq(q.addr, g.addr);
	cr_assert_eq(fh.n_reserve, 2, "the pair's 4096 B and the fallback's 2 MiB segment");
	cr_assert_eq(fh.regions[1].size_bytes, 2 * MiB);
	cr_assert_eq(stat("fallback_requests"), 1);
	free_b(q);
	free_b(p);
	free_b(g);
	cr_assert_eq(stat("bytes_saved"), 4096);
	teardown();
}

/* pair-on=auto: the tags pair nothing, so the sites are tried. */
Test(mxfp8, auto_tries_sites_after_tags)
{
	struct memprof_pool_option o[] = {{"pair", "w_*:g_*"}, {"pair-on", "auto"}};
	static const struct item it[] = {
	        {"forward", "g_layer1", 100, 0, 2},
	        {"forward", "w_layer1", 300, 1, 2},
	};

	setup(0, o, 2, it, 2);
	cr_assert_eq(stat("pairs_found"), 1);
	cr_assert_eq(stat("pairs_from_sites"), 1);
	ops->destroy(pool);
	o[1].value = "tag";
	setup(0, o, 2, it, 2);
	cr_assert_eq(stat("pairs_found"), 0);
	cr_assert(strstr(fh.last_log, "rule pair=w_*:g_* on tags"), "%s", fh.last_log);
	teardown();
}

/*
 * A side without a partner goes to the fallback; so does a second live
 * allocation of a side whose first is still in the buffer.
 */
Test(mxfp8, unpaired_and_same_side_requests_go_to_the_fallback)
{
	static const struct item it[] = {
	        {"grad bucket 0", NULL, 4096, 0, NEVER}, {"param bucket 0", NULL, 4096, 1, 3},
	        {"param bucket 0", NULL, 4096, 1, 3},    {"grad bucket 1", NULL, 4096, 2, 3},
	        {"param bucket 9", NULL, 4096, 2, 3},
	};
	struct memprof_pool_block b[5];

	setup(0, NULL, 0, it, 5);
	cr_assert_eq(stat("pairs_found"), 1);
	cr_assert_eq(stat("unpaired_sides"), 2);
	for (int i = 0; i < 5; i++)
		b[i] = alloc_i(it, i);
	cr_assert_eq(b[1].addr, b[0].addr);
	cr_assert_neq(b[2].addr, b[0].addr);
	cr_assert_eq(stat("same_side_live"), 1);
	cr_assert_eq(stat("fallback_requests"), 3);
	cr_assert_eq(fh.n_shares, 1);
	for (int i = 4; i >= 0; i--)
		free_b(b[i]);
	teardown();
}

/* A host without block_shares: the overlapping side gets a separate allocation, with a WARN. */
Test(mxfp8, a_host_without_block_shares_gets_separate_allocations)
{
	static const struct item it[] = {
	        {"grad bucket 0", NULL, 4096, 0, NEVER},
	        {"param bucket 0", NULL, 2048, 1, 2},
	};
	struct memprof_pool_block g, p;

	setup(0, NULL, 0, it, 2);
	fh.host.block_shares = NULL;
	g = alloc_i(it, 0);
	p = alloc_i(it, 1);
	cr_assert_neq(p.addr, g.addr);
	cr_assert(strstr(fh.last_log, "no block_shares"), "%s", fh.last_log);
	cr_assert_eq(stat("shares_refused"), 1);
	cr_assert_eq(stat("bytes_saved"), 0);
	free_b(p);
	cr_assert_eq(fh.n_memset, 0, "the buffer never held parameters");
	free_b(g);
	teardown();
}

/*
 * Capacity 2 MiB: the pair's 4096 B buffer is reserved and left empty;
 * a 1000 B fallback request needs a 2 MiB segment: refused, the empty pair
 * buffer is released, the retry fits.  The grad again: 4096 more do not
 * fit beside the segment, nothing empty to release: ENOMEM.
 */
Test(mxfp8, out_of_memory_releases_empty_pair_buffers)
{
	static const struct item it[] = {
	        {"grad bucket 0", NULL, 4096, 0, 1},
	        {"param bucket 0", NULL, 2048, 2, 3},
	        {"forward", NULL, 1000, 1, 3},
	        {"grad bucket 0", NULL, 4096, 2, 3},
	};
	struct memprof_pool_block g, f, x;
	struct memprof_pool_request r = req_of(it, 3);

	setup(2 * MiB, NULL, 0, it, 4);
	g = alloc_i(it, 0);
	free_b(g);
	f = alloc_i(it, 2);
	cr_assert_eq(stat("pair_buffers_released_for_oom"), 1);
	cr_assert_eq(fh.reserved_bytes, 2 * MiB);
	cr_assert_eq(ops->alloc(pool, &r, &x), MEMPROF_POOL_ENOMEM);
	free_b(f);
	teardown();
}

Test(mxfp8, bad_frees_plans_and_options)
{
	static const struct item it[] = {
	        {"grad bucket 0", NULL, 4096, 0, 1},
	        {"param bucket 0", NULL, 0, 1, 2},
	};
	struct memprof_pool_option bad[][1] = {
	        {{"pair", "param*"}}, {{"pair", ":grad*"}},   {{"pair", "param*:"}},
	        {{"pair", "a\\:b"}},  {{"pair-on", "stack"}}, {{"key", "site"}},
	};
	struct memprof_pool_lifetime lt = {.index = 0, .size_bytes = 1};
	struct memprof_pool_block g, z, bogus;

	setup(0, NULL, 0, it, 2);
	cr_assert_eq(ops->plan(pool, &lt, 1), MEMPROF_POOL_EINVAL, "plan twice");
	g = alloc_i(it, 0);
	z = alloc_i(it, 1);
	cr_assert_eq(z.addr, g.addr, "a 0 B param shares the grad's buffer");
	bogus = g;
	bogus.handle ^= 1ull << 33; /* another serial */
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	bogus.handle = (1ull << 63) | 77;
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	free_b(z);
	free_b(g);
	cr_assert_eq(ops->free(pool, &g, 0), MEMPROF_POOL_EINVAL, "a double free");
	teardown();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(make_pool(0, bad[i], 1), MEMPROF_POOL_EINVAL, "%s=%s", bad[i][0].name,
		             bad[i][0].value);
		cr_assert(strstr(fh.last_log, bad[i][0].name), "%s", fh.last_log);
	}
}

/* Without a plan every request goes to the fallback, with a WARN. */
Test(mxfp8, no_plan_means_fallback)
{
	struct memprof_pool_block b;
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = 1ull << 60,
	                                 .requested_bytes = 1ull << 60,
	                                 .phase = "param bucket 0"};

	cr_assert_eq(make_pool(1ull << 40, NULL, 0), 0);
	cr_assert_eq(ops->alloc(pool, &r, &b), MEMPROF_POOL_ENOMEM);
	cr_assert(strstr(fh.last_log, "no plan") || fh.n_log_errors, "%s", fh.last_log);
	r.size_bytes = r.requested_bytes = 100;
	cr_assert_eq(ops->alloc(pool, &r, &b), 0);
	cr_assert_eq(stat("fallback_requests"), 2);
	free_b(b);
	teardown();
}

/*
 * Tags are matched by text, whatever their addresses: 20 buckets, each
 * parameter tag at two addresses and its gradient at a third (more
 * addresses than the plan's memo of texts by address holds, so they evict
 * each other), a lone parameter bucket twice at one address, an unmatched tag.
 */
Test(mxfp8, tags_at_many_addresses_pair_by_text)
{
	static char text[64][32];
	static struct item it[64];
	size_t n = 0;

	for (int k = 0; k < 20; k++)
		for (int copy = 0; copy < 3; copy++) {
			snprintf(text[n], sizeof text[n], "%s bucket %d",
			         copy < 2 ? "param" : "grad", k);
			it[n] = (struct item){text[n], "s (a.py:1)", 1024, (int64_t)n,
			                      (int64_t)n + 1};
			n++;
		}
	snprintf(text[n], sizeof text[n], "param bucket 99");
	it[n] = (struct item){text[n], "s (a.py:1)", 1024, (int64_t)n, (int64_t)n + 1};
	n++;
	it[n] = (struct item){text[n - 1], "s (a.py:1)", 1024, (int64_t)n, (int64_t)n + 1};
	n++;
	it[n] = (struct item){"optimizer", "s (a.py:1)", 1024, (int64_t)n, (int64_t)n + 1};
	n++;
	setup(0, NULL, 0, it, n);
	cr_assert_eq(stat("pairs_found"), 20);
	cr_assert_eq(stat("unpaired_sides"), 2, "bucket 99's two allocations");
	teardown();
}
