/*
 * tests/unit/test_pool_compacting.c - the compacting pool alone against the
 * fake host: compactions worked by hand (the exact blocks, bytes, new
 * addresses and chunks released), forced compaction under a capacity,
 * overlapping moves in pieces, coalescing, best fit, vmm's exact maps and
 * unmaps, option and handle errors, and a random run checked independently.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

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

static int try_alloc(uint64_t size, uint64_t token, struct memprof_pool_block *b)
{
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = size,
	                                 .requested_bytes = size,
	                                 .index = (int64_t)token,
	                                 .block_token = token};
	return ops->alloc(pool, &r, b);
}

static struct memprof_pool_block alloc_t(uint64_t size, uint64_t token)
{
	struct memprof_pool_block b;

	cr_assert_eq(try_alloc(size, token, &b), 0, "alloc of %llu failed: %s",
	             (unsigned long long)size, fh.last_log);
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

/* Every copy the pool asks for, checked for overlap, then passed to the fake host. */
static int (*real_copy)(void *, uint64_t, uint64_t, uint64_t, uint64_t);
static struct {
	uint64_t dst, src, n;
} copies[64];
static size_t n_copies;

static int checked_copy(void *ctx, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	cr_assert(dst + n <= src || src + n <= dst, "overlapping copy 0x%llx <- 0x%llx, %llu",
	          (unsigned long long)dst, (unsigned long long)src, (unsigned long long)n);
	if (n_copies < 64)
		copies[n_copies].dst = dst, copies[n_copies].src = src, copies[n_copies].n = n;
	n_copies++;
	return real_copy(ctx, dst, src, n, stream);
}

static void check_copies(void)
{
	real_copy = fh.host.copy;
	fh.host.copy = checked_copy;
	n_copies = 0;
}

#define OPT(n, v) ((struct memprof_pool_option){(n), (v)})

Test(compacting, header_and_options)
{
	const struct memprof_pool_option_spec *o;
	int n = 0;

	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	cr_assert_str_eq(ops->name, "compacting");
	cr_assert_eq(ops->struct_size, sizeof(struct memprof_pool_ops));
	cr_assert_not_null(ops->stats);
	cr_assert_null(ops->plan);
	for (o = ops->options; o->name; o++, n++)
		cr_assert(o->value_hint && o->help && strstr(o->help, "default"), "%s", o->name);
	cr_assert_eq(n, 6);
}

/*
 * The issue's case.  grow=4MiB, compact-min=0; requests under 2 MiB (half
 * of grow) share 4 MiB chunks.  A B C D (1 MiB each) fill chunk 0; E
 * (1.5 MiB) and F (1 MiB) go to chunk 1.  Freeing B, D and F leaves holes
 * of 1, 1 and 2.5 MiB: free 4.5 MiB, largest 2.5, fragmentation 1 - 2.5/4.5
 * = 4/9 > 0.3.  G (3 MiB) fits no hole, so the pool compacts: A stays, C
 * slides from +2 to +1 MiB, E crosses into chunk 0 at +2 MiB; chunk 1 is
 * left empty and released.  Moved: C and E, 1 + 1.5 = 2.5 MiB.  G then
 * needs a chunk of its own, 3 MiB rounded up to 4: 8 MiB reserved, where
 * growing alone would hold 12.
 */
#define ISSUE_SIZES                                                                                \
	{                                                                                          \
		MiB, MiB, MiB, MiB, MiB + MiB / 2, MiB, 3 * MiB                                    \
	}

Test(compacting, issue_case_moves_exactly_the_expected_bytes)
{
	struct memprof_pool_option o[] = {OPT("grow", "4MiB"), OPT("compact-min", "0")};
	struct memprof_pool_block A, B, C, D, E, F, G, stale;
	uint64_t b0, b2;

	setup(0, o, 2);
	A = alloc_t(MiB, 10), B = alloc_t(MiB, 11), C = alloc_t(MiB, 12), D = alloc_t(MiB, 13);
	b0 = fh.regions[0].addr;
	cr_assert_eq(C.addr, b0 + 2 * MiB);
	E = alloc_t(MiB + MiB / 2, 14), F = alloc_t(MiB, 15);
	cr_assert_eq(E.addr, fh.regions[1].addr);
	cr_assert_eq(F.addr, fh.regions[1].addr + MiB + MiB / 2);
	free_b(B), free_b(D), free_b(F);
	cr_assert_float_eq(stat("external_fragmentation_at_end"), 4.0 / 9, 1e-12);
	cr_assert_eq(stat("compactions"), 0);

	G = alloc_t(3 * MiB, 16);
	cr_assert_eq(stat("compactions"), 1);
	cr_assert_eq(stat("compactions_threshold"), 1);
	cr_assert_eq(stat("compactions_forced"), 0);
	cr_assert_eq(stat("bytes_moved"), 2 * MiB + MiB / 2);
	cr_assert_eq(stat("blocks_moved"), 2);
	cr_assert_eq(fh.n_moved, 2);
	cr_assert_eq(fh.moves[0].token, 12);
	cr_assert_eq(fh.moves[0].arg, b0 + MiB);
	cr_assert_eq(fh.moves[1].token, 14);
	cr_assert_eq(fh.moves[1].arg, b0 + 2 * MiB);
	cr_assert_eq(fh.n_copy, 2);
	cr_assert_eq(fh.bytes_copied, 2 * MiB + MiB / 2);
	cr_assert_eq(fh.n_release, 1);
	cr_assert_eq(fh.regions[1].live, 0, "chunk 1 was not the one released");
	cr_assert_eq(stat("chunks_released"), 1);
	cr_assert_eq(stat("chunks_reserved"), 3);
	cr_assert_float_eq(stat("external_fragmentation_before_max"), 4.0 / 9, 1e-12);
	cr_assert_float_eq(stat("external_fragmentation_after_mean"), 0.0, 1e-12); /* one 0.5 MiB tail */
	b2 = fh.regions[2].addr;
	cr_assert_eq(fh.regions[2].size_bytes, 4 * MiB);
	cr_assert_eq(G.addr, b2);
	cr_assert_eq(fh.reserved_bytes, 8 * MiB);
	cr_assert_eq(stat("peak_arena_bytes"), 8 * MiB);

	stale = C; /* the host updates its view from block_moved; a stale one is refused */
	cr_assert_eq(ops->free(pool, &stale, 0), MEMPROF_POOL_EINVAL);
	C.addr = b0 + MiB, E.addr = b0 + 2 * MiB;
	free_b(A), free_b(C), free_b(E), free_b(G);
	teardown();
}

/* Replays the issue's case up to G and returns how much the fake host holds. */
static uint64_t issue_case_reserved(const struct memprof_pool_option *o, size_t n)
{
	uint64_t sizes[7] = ISSUE_SIZES;
	struct memprof_pool_block b[7];

	setup(0, o, n);
	for (int i = 0; i < 7; i++) {
		b[i] = alloc_t(sizes[i], 10 + (uint64_t)i);
		if (i == 5)
			free_b(b[1]), free_b(b[3]), free_b(b[5]);
	}
	cr_assert_eq(stat("compactions"), 0);
	cr_assert_eq(fh.n_moved, 0);
	free_b(b[0]), free_b(b[2]), free_b(b[4]), free_b(b[6]);
	return fh.peak_reserved_bytes;
}

/* The same requests with the threshold off (compact-at=1) grow to 12 MiB and move nothing. */
Test(compacting, issue_case_without_compaction_grows)
{
	struct memprof_pool_option o[] = {OPT("grow", "4MiB"), OPT("compact-at", "1"),
	                                  OPT("compact-min", "0")};

	cr_assert_eq(issue_case_reserved(o, 3), 12 * MiB);
	teardown();
}

/* The issue's case with the default compact-min (64 MiB): 4.5 MiB free is too little. */
Test(compacting, compact_min_spares_small_arenas)
{
	struct memprof_pool_option o[] = {OPT("grow", "4MiB")};

	cr_assert_eq(issue_case_reserved(o, 1), 12 * MiB);
	teardown();
}

/*
 * Capacity 8 MiB, grow=4MiB, compact-at=1 (no threshold compaction).  A-D
 * fill chunk 0, E-H chunk 1; B and G are freed.  X (2 MiB, not under half
 * of grow) fits no 1 MiB hole and its own 2 MiB chunk is refused, so the
 * pool compacts (forced): C -> +1, D -> +2, E -> chunk 0 +3, F -> chunk 1
 * +0, H -> chunk 1 +1 MiB: 5 blocks, 5 MiB; chunk 1 keeps F and H, and X
 * lands at chunk 1 +2 MiB.  Y (2 MiB) then finds neither room nor anything
 * to compact.
 */
Test(compacting, forced_compaction_when_capacity_forbids_growing)
{
	struct memprof_pool_option o[] = {OPT("grow", "4MiB"), OPT("compact-at", "0.85")};
	struct memprof_pool_block b[8], X, Y;
	uint64_t b0, b1, expect[5][2];

	setup(8 * MiB, o, 2);
	for (int i = 0; i < 8; i++)
		b[i] = alloc_t(MiB, 20 + i);
	b0 = fh.regions[0].addr, b1 = fh.regions[1].addr;
	cr_assert_eq(b[7].addr, b1 + 3 * MiB);
	free_b(b[1]), free_b(b[6]);
	X = alloc_t(2 * MiB, 30);
	cr_assert_eq(fh.n_refused, 1);
	cr_assert_eq(stat("grows_refused"), 1);
	cr_assert_eq(stat("compactions_forced"), 1);
	cr_assert_eq(stat("compactions_threshold"), 0);
	cr_assert_eq(stat("bytes_moved"), 5 * MiB);
	expect[0][0] = 22, expect[0][1] = b0 + MiB;
	expect[1][0] = 23, expect[1][1] = b0 + 2 * MiB;
	expect[2][0] = 24, expect[2][1] = b0 + 3 * MiB;
	expect[3][0] = 25, expect[3][1] = b1;
	expect[4][0] = 27, expect[4][1] = b1 + MiB;
	cr_assert_eq(fh.n_moved, 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(fh.moves[i].token, expect[i][0], "move %d", i);
		cr_assert_eq(fh.moves[i].arg, expect[i][1], "move %d", i);
	}
	cr_assert_eq(X.addr, b1 + 2 * MiB);
	cr_assert_eq(fh.n_release, 0);
	cr_assert_eq(fh.reserved_bytes, 8 * MiB);

	cr_assert_eq(try_alloc(2 * MiB, 31, &Y), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(stat("compactions"), 1, "nothing was freed: no second compaction");
	cr_assert_eq(stat("ooms"), 1);
	b[2].addr = b0 + MiB, b[3].addr = b0 + 2 * MiB, b[4].addr = b0 + 3 * MiB;
	b[5].addr = b1, b[7].addr = b1 + MiB;
	for (int i = 0; i < 8; i++)
		if (i != 1 && i != 6)
			free_b(b[i]);
	free_b(X);
	teardown();
}

/*
 * grow=8MiB: A 1 MiB @0, B 4 MiB @1, C 2 MiB @5, D 1 MiB @7.  Freeing A and
 * C: free 3 MiB, largest 2, fragmentation 1/3 > 0.3.  X (3 MiB) compacts: B
 * slides down 1 MiB, onto itself, so it goes in 4 copies of 1 MiB (each
 * clear of the bytes not yet copied); D moves 3 MiB down in one copy.  X
 * takes the tail at +5 MiB.
 */
Test(compacting, overlapping_slide_copies_in_pieces)
{
	struct memprof_pool_option o[] = {OPT("grow", "8MiB"), OPT("compact-min", "0")};
	struct memprof_pool_block A, B, C, D, X;
	uint64_t b0;

	setup(0, o, 2);
	check_copies();
	A = alloc_t(MiB, 1), B = alloc_t(4 * MiB, 2), C = alloc_t(2 * MiB, 3);
	D = alloc_t(MiB, 4);
	b0 = fh.regions[0].addr;
	cr_assert_eq(D.addr, b0 + 7 * MiB);
	free_b(A), free_b(C);
	X = alloc_t(3 * MiB, 5);
	cr_assert_eq(n_copies, 5);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(copies[i].dst, b0 + (uint64_t)i * MiB, "piece %d", i);
		cr_assert_eq(copies[i].src, b0 + (uint64_t)(i + 1) * MiB, "piece %d", i);
		cr_assert_eq(copies[i].n, MiB);
	}
	cr_assert_eq(copies[4].dst, b0 + 4 * MiB);
	cr_assert_eq(copies[4].src, b0 + 7 * MiB);
	cr_assert_eq(stat("bytes_moved"), 5 * MiB);
	cr_assert_eq(fh.moves[0].token, 2);
	cr_assert_eq(fh.moves[0].arg, b0);
	cr_assert_eq(fh.moves[1].arg, b0 + 4 * MiB);
	cr_assert_eq(X.addr, b0 + 5 * MiB);
	cr_assert_eq(fh.n_reserve, 1);
	B.addr = b0, D.addr = b0 + 4 * MiB;
	free_b(B), free_b(D), free_b(X);
	teardown();
}

/*
 * grow=32MiB: A 1 MiB @0, B 16 MiB @1, C 4 MiB @17, D 1 MiB @21, tail 10 MiB.
 * Freeing A and C: free 15 MiB, largest 10, fragmentation 1/3.  X (12 MiB)
 * compacts: sliding B down 1 MiB would take 16 pieces (> 8), so B stays and
 * its 1 MiB hole with it; D moves 4 MiB down to +17.  X lands at +18 MiB;
 * a 1 MiB request then takes the hole B left.
 */
Test(compacting, short_slide_of_large_block_is_skipped)
{
	struct memprof_pool_option o[] = {OPT("grow", "32MiB"), OPT("compact-min", "0")};
	struct memprof_pool_block A, B, C, D, X, Y;
	uint64_t b0;

	setup(0, o, 2);
	A = alloc_t(MiB, 1), B = alloc_t(16 * MiB, 2), C = alloc_t(4 * MiB, 3);
	D = alloc_t(MiB, 4);
	b0 = fh.regions[0].addr;
	free_b(A), free_b(C);
	X = alloc_t(12 * MiB, 5);
	cr_assert_eq(stat("compactions"), 1);
	cr_assert_eq(stat("blocks_kept_in_place"), 1);
	cr_assert_eq(stat("blocks_moved"), 1);
	cr_assert_eq(stat("bytes_moved"), MiB);
	cr_assert_eq(fh.n_moved, 1);
	cr_assert_eq(fh.moves[0].token, 4);
	cr_assert_eq(fh.moves[0].arg, b0 + 17 * MiB);
	cr_assert_eq(X.addr, b0 + 18 * MiB);
	/* right after it, before X: the 1 MiB hole @0 and the 14 MiB tail @18: 1 - 14/15 */
	cr_assert_float_eq(stat("external_fragmentation_after_mean"), 1.0 / 15, 1e-12);
	Y = alloc_t(MiB, 6);
	cr_assert_eq(Y.addr, b0);
	D.addr = b0 + 17 * MiB;
	free_b(B), free_b(D), free_b(X), free_b(Y);
	teardown();
}

/*
 * grow=8MiB: A-E 1 MiB @0..4, F 2 MiB @5, tail 1 MiB @7.  Freeing B and D
 * leaves three 1 MiB holes (fragmentation 1 - 1/3); freeing C merges B, C
 * and D into one 3 MiB hole (1 - 3/4 = 0.25), which a 3 MiB request takes
 * without growing.
 */
Test(compacting, coalescing_three_neighbours)
{
	struct memprof_pool_option o[] = {OPT("grow", "8MiB")};
	struct memprof_pool_block b[6], X;
	uint64_t b0;

	setup(0, o, 1);
	for (int i = 0; i < 5; i++)
		b[i] = alloc_t(MiB, (uint64_t)i);
	b[5] = alloc_t(2 * MiB, 5);
	b0 = fh.regions[0].addr;
	free_b(b[1]), free_b(b[3]);
	cr_assert_float_eq(stat("external_fragmentation_at_end"), 2.0 / 3, 1e-12);
	free_b(b[2]);
	cr_assert_float_eq(stat("external_fragmentation_at_end"), 0.25, 1e-12);
	X = alloc_t(3 * MiB, 6);
	cr_assert_eq(X.addr, b0 + MiB);
	cr_assert_eq(fh.n_reserve, 1);
	cr_assert_eq(stat("compactions"), 0);
	free_b(b[0]), free_b(b[4]), free_b(b[5]), free_b(X);
	cr_assert_float_eq(stat("external_fragmentation_at_end"), 0.0, 1e-12); /* one 8 MiB extent again */
	teardown();
}

/*
 * grow=16MiB: holes of 3 MiB @1, 1 MiB @5 and 2 MiB @7 between 1 MiB
 * blocks, and a 6 MiB tail @10.  1.5 MiB takes the 2 MiB hole, 1 MiB the
 * 1 MiB hole, 2.5 MiB the 3 MiB hole; 512 KiB then ties two 512 KiB
 * leftovers (@3.5 and @8.5 MiB) and takes the lower.
 */
Test(compacting, best_fit_takes_the_smallest_hole)
{
	struct memprof_pool_option o[] = {OPT("grow", "16MiB")};
	uint64_t sizes[7] = {MiB, 3 * MiB, MiB, MiB, MiB, 2 * MiB, MiB};
	struct memprof_pool_block b[7], x[4];
	uint64_t b0;

	setup(0, o, 1);
	for (int i = 0; i < 7; i++)
		b[i] = alloc_t(sizes[i], (uint64_t)i);
	b0 = fh.regions[0].addr;
	cr_assert_eq(b[6].addr, b0 + 9 * MiB);
	free_b(b[1]), free_b(b[3]), free_b(b[5]);
	x[0] = alloc_t(MiB + MiB / 2, 10);
	x[1] = alloc_t(MiB, 11);
	x[2] = alloc_t(2 * MiB + MiB / 2, 12);
	x[3] = alloc_t(512 * KiB, 13);
	cr_assert_eq(x[0].addr, b0 + 7 * MiB);
	cr_assert_eq(x[1].addr, b0 + 5 * MiB);
	cr_assert_eq(x[2].addr, b0 + MiB);
	cr_assert_eq(x[3].addr, b0 + 3 * MiB + 512 * KiB);
	cr_assert_eq(fh.n_reserve, 1);
	for (int i = 0; i < 7; i++)
		if (i != 1 && i != 3 && i != 5)
			free_b(b[i]);
	for (int i = 0; i < 4; i++)
		free_b(x[i]);
	teardown();
}

/* Requests round up to align: 1 byte and 0 bytes take 512, 513 takes 1024; align=4KiB too. */
Test(compacting, rounding_and_edge_sizes)
{
	struct memprof_pool_option o[] = {OPT("grow", "2MiB")};
	struct memprof_pool_option o4k[] = {OPT("align", "4KiB")};
	struct memprof_pool_block a, z, c, d, huge;
	uint64_t b0;

	setup(64 * MiB, o, 1);
	a = alloc_t(1, 1), z = alloc_t(0, 2), c = alloc_t(513, 3), d = alloc_t(1, 4);
	b0 = fh.regions[0].addr;
	cr_assert_eq(a.size_bytes, 512);
	cr_assert_eq(z.addr, b0 + 512);
	cr_assert_eq(z.size_bytes, 512);
	cr_assert_eq(c.size_bytes, 1024);
	cr_assert_eq(d.addr, b0 + 2048);
	cr_assert_eq(try_alloc(1ull << 60, 5, &huge), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(try_alloc(UINT64_MAX, 6, &huge), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(stat("ooms"), 2);
	free_b(a), free_b(z), free_b(c), free_b(d);
	teardown();

	setup(0, o4k, 1);
	a = alloc_t(1, 1), c = alloc_t(4097, 2);
	cr_assert_eq(a.size_bytes, 4096);
	cr_assert_eq(c.addr, fh.regions[0].addr + 4096);
	cr_assert_eq(c.size_bytes, 8192);
	cr_assert_eq(fh.regions[0].size_bytes, 20 * MiB);
	free_b(a), free_b(c);
	teardown();
}

/*
 * mode=vmm, va-size=64MiB, 2 MiB granules.  A (3 MiB @0) maps granules 0-1
 * in one call; B (1 MiB @3) shares granule 1; C (2 MiB @4) maps granule 2.
 * Freeing A unmaps granule 0 only (B holds 1), freeing B unmaps granule 1.
 * D (2 MiB) best-fits the 4 MiB hole @0 and maps granule 0 again.
 */
Test(compacting, vmm_maps_and_unmaps_exact_chunks)
{
	struct memprof_pool_option o[] = {OPT("mode", "vmm"), OPT("va-size", "64MiB")};
	struct memprof_pool_block A, B, C, D;
	uint64_t va;

	setup(0, o, 2);
	cr_assert_eq(fh.n_va_reserve, 0, "nothing reserved before the first request");
	A = alloc_t(3 * MiB, 1);
	cr_assert_eq(fh.n_va_reserve, 1);
	cr_assert_eq(fh.regions[0].size_bytes, 64 * MiB);
	va = fh.regions[0].addr;
	cr_assert_eq(A.addr, va);
	cr_assert_eq(fh.n_map, 1);
	cr_assert_eq(fh.reserved_bytes, 4 * MiB);
	B = alloc_t(MiB, 2);
	cr_assert_eq(B.addr, va + 3 * MiB);
	cr_assert_eq(fh.n_map, 1);
	C = alloc_t(2 * MiB, 3);
	cr_assert_eq(C.addr, va + 4 * MiB);
	cr_assert_eq(fh.n_map, 2);
	cr_assert_eq(fh.reserved_bytes, 6 * MiB);
	free_b(A);
	cr_assert_eq(fh.n_unmap, 1);
	cr_assert_eq(fh.reserved_bytes, 4 * MiB);
	free_b(B);
	cr_assert_eq(fh.n_unmap, 2);
	cr_assert_eq(fh.reserved_bytes, 2 * MiB);
	D = alloc_t(2 * MiB, 4);
	cr_assert_eq(D.addr, va);
	cr_assert_eq(fh.n_map, 3);
	cr_assert_eq(fh.reserved_bytes, 4 * MiB);
	cr_assert_eq(stat("chunks_mapped"), 4);
	cr_assert_eq(stat("chunks_unmapped"), 2);
	cr_assert_eq(stat("peak_arena_bytes"), 6 * MiB);
	cr_assert_eq(stat("compactions"), 0);
	cr_assert_eq(fh.n_copy + fh.n_moved + fh.n_reserve, 0, "vmm never copies nor reserves");
	teardown(); /* C and D still live: destroy unmaps them and gives the range back */
	cr_assert_eq(fh.n_va_release, 1);
}

/*
 * Capacity 4 MiB: the range is 4 MiB + 1/8 rounded up to granules, 6 MiB.
 * A (3 MiB) maps 4 MiB; B (2 MiB @3) needs granule 2, which the capacity
 * refuses: ENOMEM, nothing left behind, and after A is freed B fits @0.
 */
Test(compacting, vmm_capacity_refusal_leaves_nothing)
{
	struct memprof_pool_option o[] = {OPT("mode", "vmm")};
	struct memprof_pool_block A, B;

	setup(4 * MiB, o, 1);
	A = alloc_t(3 * MiB, 1);
	cr_assert_eq(fh.regions[0].size_bytes, 6 * MiB);
	cr_assert_eq(try_alloc(2 * MiB, 2, &B), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(fh.reserved_bytes, 4 * MiB);
	cr_assert_eq(stat("ooms"), 1);
	free_b(A);
	cr_assert_eq(fh.reserved_bytes, 0);
	B = alloc_t(2 * MiB, 3);
	cr_assert_eq(B.addr, fh.regions[0].addr);
	cr_assert_eq(fh.reserved_bytes, 2 * MiB);
	cr_assert_eq(try_alloc(7 * MiB, 4, &A), MEMPROF_POOL_ENOMEM, "larger than the range");
	cr_assert_eq(try_alloc(1ull << 60, 5, &A), MEMPROF_POOL_ENOMEM);
	free_b(B);
	teardown();
}

static void refused(const char *name, const char *value)
{
	struct memprof_pool_option o = {name, value};
	char want[128];

	cr_assert_eq(make_pool(0, &o, 1), MEMPROF_POOL_EINVAL, "%s=%s accepted", name, value);
	snprintf(want, sizeof want, "'%s=%s'", name, value);
	cr_assert(strstr(fh.last_log, want), "log '%s' does not name %s", fh.last_log, want);
	cr_assert_eq(fh.n_log_errors, 1);
}

Test(compacting, bad_options_are_refused)
{
	refused("mode", "move");
	refused("mode", "");
	refused("align", "3");
	refused("align", "0");
	refused("align", "2GiB");
	refused("grow", "0");
	refused("grow", "lots");
	refused("compact-at", "1.5");
	refused("compact-at", "-0.1");
	refused("compact-at", "x");
	refused("compact-min", "-1");
	refused("va-size", "0");
	refused("va-size", "5TiB");
	refused("compact_at", "0.3");
}

Test(compacting, unknown_and_stale_handles_are_refused)
{
	struct memprof_pool_block a, bogus = {.addr = 1ull << 40, .size_bytes = 512, .handle = 7};

	setup(0, NULL, 0);
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	cr_assert_eq(fh.n_log_errors, 1);
	cr_assert(strstr(fh.last_log, "does not hold"), "%s", fh.last_log);
	a = alloc_t(4096, 1);
	free_b(a);
	cr_assert_eq(ops->free(pool, &a, 0), MEMPROF_POOL_EINVAL, "double free accepted");
	a = alloc_t(4096, 2); /* reuses the slot: the old handle must not name it */
	bogus = a;
	bogus.handle ^= 1ull << 32;
	cr_assert_eq(ops->free(pool, &bogus, 0), MEMPROF_POOL_EINVAL);
	free_b(a);
	teardown();
}

/*
 * A random run, checked independently: the test follows every block_moved
 * and asserts after each call that live blocks never overlap and lie inside
 * live reservations (copy), or that the mapped bytes are exactly the
 * granules live blocks touch (vmm).  A small capacity forces compactions.
 */
#define N_SLOTS 64

static struct {
	struct memprof_pool_block b;
	uint64_t token;
	int live;
} slots[N_SLOTS];

static void follow_moves(void)
{
	for (uint64_t k = 0; k < fh.n_moved; k++)
		for (int i = 0; i < N_SLOTS; i++)
			if (slots[i].live && slots[i].token == fh.moves[k].token)
				slots[i].b.addr = fh.moves[k].arg;
	fh.n_moved = 0;
}

static int inside_live_region(uint64_t addr, uint64_t n)
{
	for (size_t r = 0; r < fh.n_regions; r++)
		if (fh.regions[r].live && addr >= fh.regions[r].addr &&
		    addr + n <= fh.regions[r].addr + fh.regions[r].size_bytes)
			return 1;
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static void check_layout(int vmm)
{
	uint64_t granules[N_SLOTS * 64], n_g = 0, distinct = 0, g = 2 * MiB;

	for (int i = 0; i < N_SLOTS; i++) {
		const struct memprof_pool_block *a = &slots[i].b;

		if (!slots[i].live)
			continue;
		cr_assert(inside_live_region(a->addr, a->size_bytes), "block %d outside", i);
		for (int j = i + 1; j < N_SLOTS; j++)
			cr_assert(!slots[j].live || a->addr + a->size_bytes <= slots[j].b.addr ||
			                  slots[j].b.addr + slots[j].b.size_bytes <= a->addr,
			          "blocks %d and %d overlap", i, j);
		for (uint64_t x = a->addr / g; vmm && x <= (a->addr + a->size_bytes - 1) / g; x++)
			granules[n_g++] = x;
	}
	if (!vmm)
		return;
	qsort(granules, n_g, sizeof granules[0], cmp_u64);
	for (uint64_t k = 0; k < n_g; k++)
		distinct += k == 0 || granules[k] != granules[k - 1];
	cr_assert_eq(fh.reserved_bytes, distinct * g);
}

static void random_run(const struct memprof_pool_option *o, size_t n, int vmm)
{
	uint64_t seed = 12345, token = 0;

	setup(96 * MiB, o, n);
	check_copies();
	memset(slots, 0, sizeof slots);
	for (int step = 0; step < 4000; step++) {
		int i;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		i = (int)((seed >> 33) % N_SLOTS);
		if (slots[i].live) {
			free_b(slots[i].b);
			slots[i].live = 0;
		} else {
			uint64_t size = ((seed >> 13) % (4 * MiB)) + 1;
			int rc = try_alloc(size, token, &slots[i].b);

			cr_assert(rc == 0 || rc == MEMPROF_POOL_ENOMEM, "rc %d", rc);
			slots[i].token = token++;
			slots[i].live = rc == 0;
		}
		follow_moves();
		check_layout(vmm);
	}
	for (int i = 0; i < N_SLOTS; i++)
		if (slots[i].live && i % 2)
			free_b(slots[i].b);
}

Test(compacting, random_run_copy_keeps_blocks_apart)
{
	struct memprof_pool_option o[] = {OPT("grow", "6MiB"), OPT("compact-min", "1MiB"),
	                                  OPT("compact-at", "0.85")};

	random_run(o, 3, 0);
	cr_assert_gt(stat("compactions_forced"), 0);
	cr_assert_gt(stat("compactions_threshold"), 0);
	cr_assert_gt(stat("ooms"), 0, "the capacity never bit");
	cr_assert_eq(fh.n_copy, n_copies);
	teardown();
}

Test(compacting, random_run_vmm_maps_what_blocks_touch)
{
	struct memprof_pool_option o[] = {OPT("mode", "vmm"), OPT("va-size", "256MiB")};

	random_run(o, 2, 1);
	cr_assert_gt(stat("chunks_unmapped"), 0);
	cr_assert_eq(stat("compactions"), 0);
	teardown();
}
