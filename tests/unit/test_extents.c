/*
 * tests/unit/test_extents.c - src/analysis/extents.c: hand-worked holes in
 * both models (segments and maps, the address space at 2 MiB), edge cases
 * (zero-size, overlapping, outside blocks, refused calls), and randomized
 * runs checked after every operation against brute-force references.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extents.h"
#include "util/error.h"

#define MiB (1024ull * 1024)

static struct mp_extents *x;

static void teardown(void)
{
	mp_extents_destroy(x);
	x = NULL;
}

TestSuite(extents, .fini = teardown);

static void make(uint64_t granularity)
{
	cr_assert_eq(mp_extents_new(granularity, &x), 0);
}

static struct mp_extents_figures fig(void)
{
	struct mp_extents_figures f;

	mp_extents_figures(x, &f);
	return f;
}

/* container bytes, hole bytes, largest hole, number of holes */
#define EXPECT(cb, hb, lh, nh)                                                                     \
	do {                                                                                       \
		struct mp_extents_figures f_ = fig();                                              \
		cr_assert_eq(f_.container_bytes, (uint64_t)(cb), "container_bytes %llu",           \
		             (unsigned long long)f_.container_bytes);                              \
		cr_assert_eq(f_.hole_bytes, (uint64_t)(hb), "hole_bytes %llu",                     \
		             (unsigned long long)f_.hole_bytes);                                   \
		cr_assert_eq(f_.largest_hole, (uint64_t)(lh), "largest_hole %llu",                 \
		             (unsigned long long)f_.largest_hole);                                 \
		cr_assert_eq(f_.n_holes, (uint64_t)(nh), "n_holes %llu",                           \
		             (unsigned long long)f_.n_holes);                                      \
	} while (0)

/* ---- segments model -------------------------------------------------------- */

Test(extents, empty_has_nothing)
{
	struct mp_extents_figures f;

	make(0);
	EXPECT(0, 0, 0, 0);
	f = fig();
	cr_assert_eq(f.n_blocks + f.n_outside + f.n_overlaps + f.n_containers, 0);
	mp_extents_destroy(x);
	make(2 * MiB);
	EXPECT(0, 0, 0, 0);
}

Test(extents, one_segment_is_one_hole)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0x10000, 4096), 0);
	EXPECT(4096, 4096, 4096, 1);
	cr_assert_eq(fig().n_containers, 1);
	cr_assert_eq(mp_extents_remove_segment(x, 0x10000), 1);
	EXPECT(0, 0, 0, 0);
	cr_assert_eq(mp_extents_remove_segment(x, 0x10000), 0);
}

Test(extents, blocks_at_start_middle_end)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 1000, 1000), 0); /* [1000, 2000) */
	cr_assert_eq(mp_extents_add_block(x, 1, 1000, 100), 0); /* at the start: [1000, 1100) */
	/* one hole [1100, 2000) = 900 */
	EXPECT(1000, 900, 900, 1);
	cr_assert_eq(mp_extents_add_block(x, 2, 1900, 100), 0); /* at the end: [1900, 2000) */
	/* one hole [1100, 1900) = 800 */
	EXPECT(1000, 800, 800, 1);
	cr_assert_eq(mp_extents_add_block(x, 3, 1300, 200), 0); /* middle: [1300, 1500) */
	/* holes [1100, 1300) = 200 and [1500, 1900) = 400 */
	EXPECT(1000, 600, 400, 2);
	cr_assert_eq(mp_extents_remove_block(x, 2, 1900), 1);
	/* holes 200 and [1500, 2000) = 500 */
	EXPECT(1000, 700, 500, 2);
	cr_assert_eq(mp_extents_remove_block(x, 1, 1000), 1);
	/* holes [1000, 1300) = 300 and 500 */
	EXPECT(1000, 800, 500, 2);
	cr_assert_eq(fig().n_blocks, 1);
	cr_assert_eq(fig().n_outside, 0);
}

Test(extents, adjacent_segments_keep_their_holes_apart)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0, 100), 0);
	cr_assert_eq(mp_extents_add_segment(x, 100, 100), 0);
	/* two holes of 100, not one of 200 */
	EXPECT(200, 200, 100, 2);
	cr_assert_eq(mp_extents_add_block(x, 1, 40, 20), 0); /* [40, 60) in the first */
	/* holes 40, 40, 100 */
	EXPECT(200, 180, 100, 3);
	cr_assert_eq(fig().n_containers, 2);
}

Test(extents, maps_that_touch_merge)
{
	make(0);
	cr_assert_eq(mp_extents_map(x, 0, 100), 0);
	cr_assert_eq(mp_extents_map(x, 200, 100), 0);
	/* [0, 100) and [200, 300): two holes of 100 */
	EXPECT(200, 200, 100, 2);
	cr_assert_eq(mp_extents_map(x, 100, 100), 0);
	/* touches both: one range [0, 300), one hole of 300 */
	EXPECT(300, 300, 300, 1);
	cr_assert_eq(fig().n_containers, 1);
	cr_assert_eq(mp_extents_map(x, 250, 100), 0); /* overlaps: [0, 350) */
	EXPECT(350, 350, 350, 1);
}

Test(extents, a_map_takes_in_a_block_that_straddled)
{
	make(0);
	cr_assert_eq(mp_extents_map(x, 0, 100), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, 90, 20), 0); /* [90, 110): past the end */
	cr_assert_eq(fig().n_outside, 1);
	/* outside: the hole [0, 90) before it is not counted either */
	EXPECT(100, 0, 0, 0);
	cr_assert_eq(mp_extents_map(x, 100, 100), 0); /* [0, 200) */
	cr_assert_eq(fig().n_outside, 0);
	/* holes [0, 90) = 90 and [110, 200) = 90 */
	EXPECT(200, 180, 90, 2);
	cr_assert_eq(mp_extents_unmap(x, 100, 100), 100); /* back to [0, 100) */
	cr_assert_eq(fig().n_outside, 1);
	EXPECT(100, 0, 0, 0);
}

Test(extents, unmap_splits_a_range)
{
	make(0);
	cr_assert_eq(mp_extents_map(x, 0, 300), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, 10, 20), 0);  /* [10, 30) */
	cr_assert_eq(mp_extents_add_block(x, 2, 250, 10), 0); /* [250, 260) */
	/* holes 10, [30, 250) = 220, [260, 300) = 40 */
	EXPECT(300, 270, 220, 3);
	cr_assert_eq(mp_extents_unmap(x, 100, 100), 100);
	/* [0, 100): holes 10, [30, 100) = 70; [200, 300): [200, 250) = 50, 40 */
	EXPECT(200, 170, 70, 4);
	cr_assert_eq(fig().n_containers, 2);
	cr_assert_eq(fig().n_outside, 0);
}

Test(extents, unmap_spans_two_ranges_and_counts_only_mapped_bytes)
{
	make(0);
	cr_assert_eq(mp_extents_map(x, 0, 100), 0);
	cr_assert_eq(mp_extents_map(x, 200, 100), 0);
	/* [50, 250) holds [50, 100) and [200, 250) mapped: 100 of 200 bytes */
	cr_assert_eq(mp_extents_unmap(x, 50, 200), 100);
	/* left: [0, 50) and [250, 300) */
	EXPECT(100, 100, 50, 2);
	cr_assert_eq(mp_extents_unmap(x, 40, 20), 10); /* only [40, 50) was mapped */
	EXPECT(90, 90, 50, 2);
	cr_assert_eq(mp_extents_unmap(x, 1000, 100), 0);
	cr_assert_eq(mp_extents_unmap(x, 0, 0), 0);
}

Test(extents, unmap_never_touches_segments)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0, 100), 0);
	cr_assert_eq(mp_extents_map(x, 100, 100), 0);
	cr_assert_eq(mp_extents_unmap(x, 0, 200), 100);
	EXPECT(100, 100, 100, 1);
	cr_assert_eq(fig().n_containers, 1);
}

Test(extents, release_with_live_blocks_leaves_them_outside)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0, 1000), 0);
	cr_assert_eq(mp_extents_add_segment(x, 1000, 1000), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, 100, 100), 0);  /* [100, 200) */
	cr_assert_eq(mp_extents_add_block(x, 2, 1500, 100), 0); /* [1500, 1600) */
	/* holes 100, 800, 500, 400 */
	EXPECT(2000, 1800, 800, 4);
	cr_assert_eq(mp_extents_remove_segment(x, 0), 1);
	/* only [1000, 2000) is left: holes 500, 400 */
	EXPECT(1000, 900, 500, 2);
	cr_assert_eq(fig().n_outside, 1);
	cr_assert_eq(fig().n_blocks, 2);
	/* reserved again: the block is inside again */
	cr_assert_eq(mp_extents_add_segment(x, 0, 1000), 0);
	EXPECT(2000, 1800, 800, 4);
	cr_assert_eq(fig().n_outside, 0);
	cr_assert_eq(mp_extents_remove_segment(x, 0), 1);
	cr_assert_eq(mp_extents_remove_block(x, 1, 100), 1);
	cr_assert_eq(fig().n_outside, 0);
	EXPECT(1000, 900, 500, 2);
}

Test(extents, zero_size_blocks_cover_nothing)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0, 100), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, 50, 0), 0);
	cr_assert_eq(mp_extents_add_block(x, 2, 500, 0), 0); /* not in any container */
	/* the hole is still one of 100 */
	EXPECT(100, 100, 100, 1);
	cr_assert_eq(fig().n_blocks, 2);
	cr_assert_eq(fig().n_outside, 0);
	cr_assert_eq(mp_extents_add_block(x, 3, 40, 20), 0); /* [40, 60) over the empty one */
	cr_assert_eq(fig().n_overlaps, 0);
	EXPECT(100, 80, 40, 2);
	cr_assert_eq(mp_extents_remove_block(x, 1, 50), 1);
	cr_assert_eq(mp_extents_remove_block(x, 1, 50), 0);
	EXPECT(100, 80, 40, 2);
	mp_extents_destroy(x);
	/* address space: a zero-size block touches no granule */
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_block(x, 1, 3 * MiB, 0), 0);
	EXPECT(0, 0, 0, 0);
	cr_assert_eq(fig().n_blocks, 1);
}

Test(extents, overlapping_blocks_are_counted_and_holes_stay_sane)
{
	make(0);
	cr_assert_eq(mp_extents_add_segment(x, 0, 1000), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, 100, 500), 0); /* [100, 600) */
	cr_assert_eq(mp_extents_add_block(x, 2, 200, 100), 0); /* [200, 300): inside block 1 */
	cr_assert_eq(fig().n_overlaps, 1);
	/* holes by address-order neighbour: [0, 100) = 100, none before block 2
	 * (it starts before block 1 ends), [300, 1000) = 700 measured from
	 * block 2: the documented overestimate (the truth is [600, 1000) = 400) */
	EXPECT(1000, 800, 700, 2);
	cr_assert_eq(mp_extents_add_block(x, 3, 500, 200), 0); /* [500, 700): overlaps block 1 */
	cr_assert_eq(fig().n_overlaps, 2);
	/* holes 100, [300, 500) = 200, [700, 1000) = 300 */
	EXPECT(1000, 600, 300, 3);
	cr_assert_eq(mp_extents_add_block(x, 4, 700, 100), 0); /* touches block 3, no overlap */
	cr_assert_eq(fig().n_overlaps, 2);
	cr_assert_eq(mp_extents_add_block(x, 5, 100, 50), 0); /* same start as block 1 */
	cr_assert_eq(fig().n_overlaps, 3);
	cr_assert_eq(mp_extents_remove_block(x, 1, 100), 1);
	cr_assert_eq(mp_extents_remove_block(x, 5, 100), 1);
	/* blocks [200, 300), [500, 700), [700, 800): holes 200, 200, 200 */
	EXPECT(1000, 600, 200, 3);
	cr_assert_eq(fig().n_overlaps, 3, "a count since creation");
}

Test(extents, refusals)
{
	make(0);
	cr_assert_eq(mp_extents_add_block(x, 7, 100, 10), 0);
	cr_assert_eq(mp_extents_add_block(x, 7, 200, 10), MP_EINVAL, "duplicate key");
	cr_assert_eq(mp_extents_add_block(x, 7, 100, 10), MP_EINVAL, "duplicate key");
	cr_assert_eq(mp_extents_remove_block(x, 7, 200), 0, "wrong address");
	cr_assert_eq(mp_extents_remove_block(x, 8, 100), 0, "unknown key");
	cr_assert_eq(mp_extents_add_block(x, 9, UINT64_MAX - 5, 10), MP_EINVAL, "wraps");
	cr_assert_eq(fig().n_blocks, 1);
	cr_assert_eq(mp_extents_add_segment(x, 1000, 100), 0);
	cr_assert_eq(mp_extents_add_segment(x, 1000, 100), MP_EINVAL, "same address");
	cr_assert_eq(mp_extents_add_segment(x, 1050, 100), MP_EINVAL, "overlaps");
	cr_assert_eq(mp_extents_add_segment(x, 950, 51), MP_EINVAL, "overlaps its first byte");
	cr_assert_eq(mp_extents_add_segment(x, 950, 50), 0, "touches: fine");
	cr_assert_eq(mp_extents_map(x, 1099, 10), MP_EINVAL, "a map over a segment");
	cr_assert_eq(mp_extents_map(x, 1100, 10), 0, "a map touching a segment");
	cr_assert_eq(mp_extents_add_segment(x, 1105, 10), MP_EINVAL, "a segment over a map");
	cr_assert_eq(mp_extents_map(x, UINT64_MAX - 5, 10), MP_EINVAL);
	cr_assert_eq(mp_extents_unmap(x, 0, (uint64_t)INT64_MAX + 1), MP_EINVAL);
	cr_assert_eq(mp_extents_add_segment(x, 5000, 0), 0, "zero size: nothing");
	cr_assert_eq(mp_extents_remove_segment(x, 5000), 0);
	cr_assert_eq(mp_extents_remove_segment(x, 1100), 0, "a mapped range is no segment");
	EXPECT(160, 160, 100, 3);
	mp_extents_destroy(x);
	x = NULL;
	cr_assert_eq(mp_extents_new(3, &x), MP_EINVAL);
	cr_assert_null(x);
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_segment(x, 0, 100), MP_EINVAL);
	cr_assert_eq(mp_extents_map(x, 0, 100), MP_EINVAL);
	cr_assert_eq(mp_extents_unmap(x, 0, 100), MP_EINVAL);
	cr_assert_eq(mp_extents_remove_segment(x, 0), 0);
	cr_assert_eq(mp_extents_add_block(x, 1, UINT64_MAX - 3 * MiB, 2 * MiB), MP_EINVAL,
	             "its granule would end past 2^64");
	cr_assert_eq(mp_extents_add_block(x, 1, UINT64_MAX - 5 * MiB, 2 * MiB), 0);
}

/* ---- address-space model, 2 MiB granules ------------------------------------ */

#define KiB 1024ull

Test(extents, small_blocks_in_one_granule)
{
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_block(x, 1, 2 * MiB, 4 * KiB), 0);
	cr_assert_eq(mp_extents_add_block(x, 2, 2 * MiB + 8 * KiB, 4 * KiB), 0);
	/* granule [2M, 4M); holes [2M+4K, 2M+8K) = 4K and [2M+12K, 4M) = 2M-12K */
	EXPECT(2 * MiB, 2 * MiB - 8 * KiB, 2 * MiB - 12 * KiB, 2);
	cr_assert_eq(fig().n_containers, 1);
}

Test(extents, far_apart_granules_make_head_and_tail_holes)
{
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_block(x, 1, 2 * MiB + 4 * KiB, 4 * KiB), 0);
	cr_assert_eq(mp_extents_add_block(x, 2, 10 * MiB, 1 * MiB), 0);
	/* regions [2M, 4M) and [10M, 12M): holes 4K (head of 1),
	 * 4M - (2M+8K) = 2M-8K (tail of 1), none at the head of 2,
	 * 12M - 11M = 1M (tail of 2) */
	EXPECT(4 * MiB, 4 * KiB + 2 * MiB - 8 * KiB + 1 * MiB, 2 * MiB - 8 * KiB, 3);
	cr_assert_eq(fig().n_containers, 2);
	cr_assert_eq(mp_extents_remove_block(x, 1, 2 * MiB + 4 * KiB), 1);
	/* only [10M, 12M): the 1M tail */
	EXPECT(2 * MiB, 1 * MiB, 1 * MiB, 1);
}

Test(extents, a_block_spanning_granules)
{
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_block(x, 1, 3 * MiB, 2 * MiB + 1), 0);
	/* [3M, 5M+1) touches [2M, 6M): head 1M, tail 6M - (5M+1) = 1M-1 */
	EXPECT(4 * MiB, 2 * MiB - 1, 1 * MiB, 2);
}

Test(extents, a_block_bridges_regions_and_its_removal_splits_them)
{
	make(2 * MiB);
	cr_assert_eq(mp_extents_add_block(x, 1, 2 * MiB, 1 * MiB), 0); /* [2M, 3M) */
	cr_assert_eq(mp_extents_add_block(x, 2, 7 * MiB, 1 * MiB), 0); /* [7M, 8M) */
	/* regions [2M, 4M) and [6M, 8M): tail [3M, 4M) = 1M, head [6M, 7M) = 1M */
	EXPECT(4 * MiB, 2 * MiB, 1 * MiB, 2);
	cr_assert_eq(fig().n_containers, 2);
	cr_assert_eq(mp_extents_add_block(x, 3, 3 * MiB + 512 * KiB, 3 * MiB), 0);
	/* [3.5M, 6.5M) touches [2M, 8M): one region of 6M; holes
	 * [3M, 3.5M) = 512K and [6.5M, 7M) = 512K */
	EXPECT(6 * MiB, 1 * MiB, 512 * KiB, 2);
	cr_assert_eq(fig().n_containers, 1);
	cr_assert_eq(mp_extents_remove_block(x, 3, 3 * MiB + 512 * KiB), 1);
	EXPECT(4 * MiB, 2 * MiB, 1 * MiB, 2);
	cr_assert_eq(fig().n_containers, 2);
	/* adjacent granules are one region: [4M, 4M+1) joins [2M, 4M) */
	cr_assert_eq(mp_extents_add_block(x, 4, 4 * MiB, 1), 0);
	/* [2M, 6M) and [6M, 8M) are adjacent too: one region [2M, 8M);
	 * holes [3M, 4M) = 1M, [4M+1, 7M) = 3M-1 */
	EXPECT(6 * MiB, 4 * MiB - 1, 3 * MiB - 1, 2);
	cr_assert_eq(fig().n_containers, 1);
}

/* ---- randomized, against brute force --------------------------------------- */

#define SPAN   2048 /* containers lie in [0, SPAN); blocks start there */
#define MARGIN 128  /* blocks may run past SPAN by less than this */
#define BASE   0x100000ull
#define MAXB   1024

struct ref_block {
	uint64_t key, start, size;
};

struct ref {
	int cont[SPAN + MARGIN]; /* 0 none, -1 mapped, else the segment's id */
	struct ref_block b[MAXB];
	int n;
	int next_id;
	uint64_t n_overlaps;
};

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? rng_state % n : 0;
}

static int by_start(const void *a, const void *b)
{
	const struct ref_block *p = a, *q = b;

	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->key < q->key ? -1 : p->key > q->key;
}

static void hole(struct mp_extents_figures *f, uint64_t v)
{
	if (v == 0)
		return;
	f->hole_bytes += v;
	f->n_holes++;
	if (v > f->largest_hole)
		f->largest_hole = v;
}

/* The documented segments-model rule, container by container: holes between
 * address-order neighbours that are both inside (or a marker). */
static void rule_segments(const struct ref *r, struct mp_extents_figures *f)
{
	struct ref_block s[MAXB];
	int n = 0, i, j, cs, ce;

	for (i = 0; i < r->n; i++)
		if (r->b[i].size)
			s[n++] = r->b[i];
	qsort(s, (size_t)n, sizeof(s[0]), by_start);
	for (cs = 0; cs < SPAN; cs = ce) {
		uint64_t prev_end = (uint64_t)cs;
		int prev_ok = 1;

		for (ce = cs + 1; ce < SPAN && r->cont[ce] == r->cont[cs]; ce++)
			;
		if (!r->cont[cs])
			continue;
		f->container_bytes += (uint64_t)(ce - cs);
		f->n_containers++;
		for (j = 0; j < n; j++) {
			int ok = s[j].start + s[j].size <= (uint64_t)ce;

			if (s[j].start < (uint64_t)cs || s[j].start >= (uint64_t)ce)
				continue;
			if (prev_ok && ok && s[j].start > prev_end)
				hole(f, s[j].start - prev_end);
			f->n_outside += !ok;
			prev_ok = ok;
			prev_end = s[j].start + s[j].size;
		}
		if (prev_ok && (uint64_t)ce > prev_end)
			hole(f, (uint64_t)ce - prev_end);
	}
	for (j = 0; j < n; j++) /* blocks that start in no container */
		f->n_outside += s[j].start >= SPAN || !r->cont[s[j].start];
}

/* Bytes: maximal uncovered runs of one container (exact without anomalies). */
static void bytes_segments(const struct ref *r, struct mp_extents_figures *f)
{
	static unsigned char covered[SPAN + MARGIN];
	int i, run = 0;
	uint64_t k;

	memset(covered, 0, sizeof(covered));
	for (i = 0; i < r->n; i++)
		for (k = r->b[i].start; k < r->b[i].start + r->b[i].size; k++)
			covered[k] = 1;
	for (i = 0; i <= SPAN; i++) {
		int free_here = i < SPAN && r->cont[i] && !covered[i];

		if (run && (!free_here || r->cont[i] != r->cont[i - 1])) {
			hole(f, (uint64_t)run);
			run = 0;
		}
		run += free_here;
		if (i < SPAN && r->cont[i]) {
			f->container_bytes++;
			f->n_containers += i == 0 || r->cont[i - 1] != r->cont[i];
		}
	}
	for (i = 0; i < r->n; i++) {
		uint64_t s = r->b[i].start, e = s + r->b[i].size;

		if (r->b[i].size &&
		    (!r->cont[s] || (e > 0 && r->cont[e - 1] != r->cont[s]) || e > SPAN))
			f->n_outside++;
	}
}

#define G 16

/* The documented address-space rule over address-order neighbours. */
static void rule_space(const struct ref *r, struct mp_extents_figures *f)
{
	struct ref_block s[MAXB];
	int n = 0, i;

	for (i = 0; i < r->n; i++)
		if (r->b[i].size)
			s[n++] = r->b[i];
	qsort(s, (size_t)n, sizeof(s[0]), by_start);
	for (i = 0; i < n; i++) {
		uint64_t lo = s[i].start / G * G, e = s[i].start + s[i].size;
		uint64_t hi = (e + G - 1) / G * G;

		if (i == 0) {
			hole(f, s[i].start - lo);
			f->container_bytes += hi - lo;
			f->n_containers++;
		} else {
			uint64_t pe = s[i - 1].start + s[i - 1].size, pc = (pe + G - 1) / G * G;
			uint64_t base = pc > lo ? pc : lo;

			if (pc >= lo) {
				hole(f, s[i].start > pe ? s[i].start - pe : 0);
			} else {
				hole(f, pc - pe);
				hole(f, s[i].start - lo);
				f->n_containers++;
			}
			f->container_bytes += hi > base ? hi - base : 0;
		}
		if (i == n - 1)
			hole(f, hi - e);
	}
}

/* Granules: touched granules, uncovered bytes in them (exact without overlaps). */
static void bytes_space(const struct ref *r, struct mp_extents_figures *f)
{
	static unsigned char covered[SPAN + MARGIN], touched[(SPAN + MARGIN) / G + 1];
	int i, run = 0;
	uint64_t k;

	memset(covered, 0, sizeof(covered));
	memset(touched, 0, sizeof(touched));
	for (i = 0; i < r->n; i++) {
		for (k = r->b[i].start; k < r->b[i].start + r->b[i].size; k++) {
			covered[k] = 1;
			touched[k / G] = 1;
		}
	}
	for (i = 0; i <= SPAN + MARGIN; i++) {
		int free_here = i < SPAN + MARGIN && touched[i / G] && !covered[i];

		if (run && !free_here) {
			hole(f, (uint64_t)run);
			run = 0;
		}
		run += free_here;
	}
	for (i = 0; i < (SPAN + MARGIN) / G; i++) {
		f->container_bytes += touched[i] ? G : 0;
		f->n_containers += touched[i] && (i == 0 || !touched[i - 1]);
	}
}

static int valid_exact(const struct ref *r, int space)
{
	static unsigned char covered[SPAN + MARGIN];
	int i;
	uint64_t k;

	memset(covered, 0, sizeof(covered));
	for (i = 0; i < r->n; i++) {
		uint64_t s = r->b[i].start, e = s + r->b[i].size;

		for (k = s; k < e; k++)
			if (covered[k]++)
				return 0; /* overlapping blocks */
		if (space || s == e)
			continue;
		for (k = s; k < e; k++) /* wholly in one container, or in none */
			if (r->cont[k] != r->cont[s])
				return 0;
	}
	return 1;
}

static int overlaps_live(const struct ref *r, uint64_t s, uint64_t size)
{
	int i;

	for (i = 0; size && i < r->n; i++)
		if (r->b[i].size && r->b[i].start < s + size && s < r->b[i].start + r->b[i].size)
			return 1;
	return 0;
}

static uint64_t next_key;
static int stats[4]; /* reserves, releases, maps, unmaps that changed something */

static int keep = 60; /* the live block count hovers around this */
static int rising;    /* new blocks mostly above the last one, as a bump allocator places them */
static uint64_t cursor;

static uint64_t block_start(void)
{
	if (rising && rnd(8)) {
		cursor = (cursor + rnd(48)) % SPAN; /* wraps to the bottom now and then */
		return cursor;
	}
	return rnd(SPAN);
}

/* One random block operation on r and x. */
static void random_block_op(struct ref *r, struct ref *t, int exact, int space, int step)
{
	int i;

	if (r->n && rnd((uint64_t)(r->n + keep)) < (uint64_t)r->n) {
		i = (int)rnd((uint64_t)r->n);
		if (rnd(20) == 0) { /* the wrong address */
			cr_assert_eq(
			        mp_extents_remove_block(x, r->b[i].key, BASE + r->b[i].start + 1),
			        0);
			return;
		}
		cr_assert_eq(mp_extents_remove_block(x, r->b[i].key, BASE + r->b[i].start), 1,
		             "step %d", step);
		r->b[i] = r->b[--r->n];
		return;
	}
	if (r->n && rnd(30) == 0) { /* a duplicate key */
		i = (int)rnd((uint64_t)r->n);
		cr_assert_eq(mp_extents_add_block(x, r->b[i].key, rnd(SPAN), 8), MP_EINVAL);
		return;
	}
	if (r->n == MAXB)
		return;
	*t = *r;
	t->b[t->n].key = next_key++;
	t->b[t->n].start = block_start();
	for (i = 0; !space && i < 8 && !t->cont[t->b[t->n].start] && rnd(4); i++)
		t->b[t->n].start = block_start(); /* mostly in a container */
	t->b[t->n].size = rnd(12) == 0 ? 0 : 1 + rnd(40);
	if (overlaps_live(t, t->b[t->n].start, t->b[t->n].size))
		t->n_overlaps++;
	t->n++;
	if (exact && !valid_exact(t, space))
		return;
	cr_assert_eq(mp_extents_add_block(x, t->b[t->n - 1].key, BASE + t->b[t->n - 1].start,
	                                  t->b[t->n - 1].size),
	             0);
	*r = *t;
}

/* One random segment, map or unmap on r and x (segments model). */
static void random_container_op(struct ref *r, struct ref *t, int exact, int step)
{
	static const int ops[8] = {0, 0, 0, 1, 1, 2, 2, 3}; /* reserve, release, map, unmap */
	uint64_t a = rnd(SPAN), size = 1 + rnd(256), k, n = 0;
	int op = ops[rnd(8)], refused = 0, i = 0;

	if (a + size > SPAN)
		size = SPAN - a;
	*t = *r;
	if (op == 0) { /* reserve */
		for (k = a; k < a + size; k++)
			refused |= t->cont[k] != 0;
		for (k = a; k < a + size && !refused; k++)
			t->cont[k] = t->next_id;
		t->next_id++;
	} else if (op == 1) {                 /* release: a live segment's start, or any address */
		if (rnd(4) && t->cont[a] > 0) /* walk back to its start */
			while (a > 0 && t->cont[a - 1] == t->cont[a])
				a--;
		i = t->cont[a] > 0 && (a == 0 || t->cont[a - 1] != t->cont[a]) ? t->cont[a] : 0;
		for (k = a; i && k < SPAN && t->cont[k] == i; k++)
			t->cont[k] = 0;
	} else if (op == 2) { /* map */
		for (k = a; k < a + size; k++)
			refused |= t->cont[k] > 0;
		for (k = a; k < a + size && !refused; k++)
			t->cont[k] = -1;
	} else { /* unmap */
		for (k = a; k < a + size; k++)
			if (t->cont[k] == -1) {
				t->cont[k] = 0;
				n++;
			}
	}
	if (exact && !refused && !valid_exact(t, 0))
		return;
	if (op == 0)
		cr_assert_eq(mp_extents_add_segment(x, BASE + a, size), refused ? MP_EINVAL : 0,
		             "step %d", step);
	else if (op == 1)
		cr_assert_eq(mp_extents_remove_segment(x, BASE + a), i != 0, "step %d", step);
	else if (op == 2)
		cr_assert_eq(mp_extents_map(x, BASE + a, size), refused ? MP_EINVAL : 0, "step %d",
		             step);
	else
		cr_assert_eq(mp_extents_unmap(x, BASE + a, size), (int64_t)n, "step %d", step);
	if (!refused)
		*r = *t;
	stats[op] += !refused && (op == 0 || op == 2 || i || n);
}

static void same(const struct mp_extents_figures *want, int step, const char *what)
{
	struct mp_extents_figures got = fig();

	cr_assert_eq(got.container_bytes, want->container_bytes, "%s step %d: container %llu %llu",
	             what, step, (unsigned long long)got.container_bytes,
	             (unsigned long long)want->container_bytes);
	cr_assert_eq(got.hole_bytes, want->hole_bytes, "%s step %d: holes %llu %llu", what, step,
	             (unsigned long long)got.hole_bytes, (unsigned long long)want->hole_bytes);
	cr_assert_eq(got.largest_hole, want->largest_hole, "%s step %d: largest", what, step);
	cr_assert_eq(got.n_holes, want->n_holes, "%s step %d: n_holes", what, step);
	cr_assert_eq(got.n_outside, want->n_outside, "%s step %d: n_outside", what, step);
	cr_assert_eq(got.n_containers, want->n_containers, "%s step %d: n_containers", what, step);
}

static void check(const struct ref *r, int exact, int space, int step)
{
	struct mp_extents_figures want;
	struct mp_extents_figures got = fig();

	memset(&want, 0, sizeof(want));
	if (space)
		rule_space(r, &want);
	else
		rule_segments(r, &want);
	same(&want, step, "rule");
	if (exact) {
		memset(&want, 0, sizeof(want));
		if (space)
			bytes_space(r, &want);
		else
			bytes_segments(r, &want);
		same(&want, step, "bytes");
	}
	cr_assert_eq(got.n_blocks, (uint64_t)r->n, "step %d", step);
	cr_assert_eq(got.n_overlaps, r->n_overlaps, "step %d", step);
}

static void random_run(uint64_t seed, int exact, int space, int steps, int every)
{
	static struct ref r, t;
	int step;

	memset(&r, 0, sizeof(r));
	r.next_id = 1;
	rng_state = seed;
	next_key = seed % 1000;
	make(space ? G : 0);
	for (step = 0; step < steps; step++) {
		if (!space && rnd(100) < 12)
			random_container_op(&r, &t, exact, step);
		else
			random_block_op(&r, &t, exact, space, step);
		if (step % every == 0 || step == steps - 1)
			check(&r, exact, space, step);
	}
	for (step = 0; !space && step < 4; step++)
		cr_assert_gt(stats[step], 5, "the run exercised every container call");
	memset(stats, 0, sizeof(stats));
	mp_extents_destroy(x);
	x = NULL;
}

Test(extents, random_segments_exact)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++)
		random_run(seed * 0x9e3779b97f4a7c15ull, 1, 0, 3000, 1);
}

Test(extents, random_segments_with_anomalies)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++)
		random_run(seed * 0x2545f4914f6cdd1dull, 0, 0, 3000, 1);
}

Test(extents, random_address_space_exact)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++)
		random_run(seed * 0x9e3779b97f4a7c15ull + 7, 1, 1, 3000, 1);
}

Test(extents, random_address_space_with_overlaps)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++)
		random_run(seed * 0x2545f4914f6cdd1dull + 7, 0, 1, 3000, 1);
}

Test(extents, random_with_many_live_blocks)
{
	keep = 1200; /* near MAXB: deep treaps, checked every 7th step */
	random_run(0x5deece66dull, 0, 0, 20000, 7);
	random_run(0x5deece66dull, 0, 1, 20000, 7);
	keep = 60;
}

/* Blocks placed mostly at rising addresses go in after the last node
 * without a descent (extents.c's after_tail): the same figures, overlaps
 * and holes as the references, in both models, with and without anomalies. */
Test(extents, random_rising_addresses)
{
	uint64_t seed;

	rising = 1;
	for (seed = 1; seed <= 3; seed++) {
		cursor = 0;
		random_run(seed * 0x9e3779b97f4a7c15ull + 11, 1, 0, 3000, 1);
		random_run(seed * 0x2545f4914f6cdd1dull + 11, 0, 0, 3000, 1);
		random_run(seed * 0x9e3779b97f4a7c15ull + 13, 1, 1, 3000, 1);
		random_run(seed * 0x2545f4914f6cdd1dull + 13, 0, 1, 3000, 1);
	}
	keep = 400;
	random_run(0x5deece66dull + 1, 0, 0, 12000, 5);
	random_run(0x5deece66dull + 1, 0, 1, 12000, 5);
	keep = 60;
	rising = 0;
}
