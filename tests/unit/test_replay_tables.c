/*
 * tests/unit/test_replay_tables.c - the replay engine's live-state tables
 * against brute force: the live-block table (replay/live_blocks.h) against
 * a plain array over random adds and frees, and the state saved at the
 * reserved peak (replay/peak_state.h) against an mp_extents kept up to date
 * with every change and read at each save, over random traces whose saves
 * come both often (the journal is applied) and rarely (it overflows and
 * the current state is copied); and the replay input's live ids
 * (replay/live_ids.h) against a plain list.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extents.h"
#include "replay/live_blocks.h"
#include "replay/live_ids.h"
#include "replay/peak_state.h"
#include "util/error.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define N_KEYS 3000

Test(live_blocks, matches_an_array_over_random_adds_and_frees)
{
	static uint8_t present[N_KEYS];
	static uint64_t addr[N_KEYS];
	struct mp_live_blocks t;
	size_t n = 0, max_live = 0;

	memset(present, 0, sizeof present);
	cr_assert_eq(mp_live_blocks_init(&t, N_KEYS), 0);
	for (int step = 0; step < 200000; step++) {
		uint32_t k = (uint32_t)(next() % N_KEYS);
		struct block *b = mp_live_blocks_get(&t, k);

		cr_assert_eq(b != NULL, present[k], "key %u", k);
		if (b) {
			cr_assert_eq(b->index, k);
			cr_assert_eq(b->pb.addr, addr[k]);
			mp_live_blocks_del(&t, k);
			present[k] = 0;
			n--;
		} else if (next() % 4 != 0 || n < 50) { /* a live set that grows, then churns */
			b = mp_live_blocks_add(&t, k);
			cr_assert_not_null(b);
			cr_assert_eq(b->held, 0, "a new record is zeroed");
			b->pb.addr = addr[k] = next();
			present[k] = 1;
			n++;
		}
		cr_assert_eq(mp_live_blocks_count(&t), n);
		max_live = n > max_live ? n : max_live;
	}
	/* every record is walked once, and slots are recycled: no more than the live peak */
	cr_assert_leq(mp_live_blocks_n_slots(&t), max_live);
	size_t seen = 0;
	for (size_t s = 0; s < mp_live_blocks_n_slots(&t); s++) {
		struct block *b = mp_live_blocks_at(&t, s);
		if (!b)
			continue;
		cr_assert(present[b->index]);
		cr_assert_eq(b->pb.addr, addr[b->index]);
		seen++;
	}
	cr_assert_eq(seen, n);
	cr_assert_null(mp_live_blocks_get(&t, N_KEYS + 7));
	cr_assert_null(mp_live_blocks_add(&t, N_KEYS), "an index past the table's");
	mp_live_blocks_free(&t);
}

/* --- peak_state ------------------------------------------------------------ */

#define N_SEGS   64
#define SEG_SPAN (1ull << 20)
#define VA_BASE  (1ull << 40)
#define GRAN     (64ull << 10)

struct world {
	struct mp_extents *x; /* the reference, kept up to date */
	struct mp_peak_state *ps;
	uint64_t seg_size[N_SEGS]; /* 0: not reserved */
	uint8_t live[N_KEYS];
	uint64_t b_addr[N_KEYS], b_size[N_KEYS];
	uint64_t want_holes, want_largest; /* the reference at the last save */
	int saved;
};

static int each_block(void *ctx, mp_peak_state_emit_fn emit, void *emit_ctx)
{
	const struct world *w = ctx;
	int rc = 0;

	for (uint32_t k = 0; k < N_KEYS && rc == 0; k++)
		if (w->live[k])
			rc = emit(emit_ctx, k, w->b_addr[k], w->b_size[k]);
	return rc;
}

/* A block somewhere in the segments' span or the mapped area, maybe across an edge. */
static void random_block(struct world *w, uint32_t k)
{
	uint64_t base = next() % 3 ? (next() % N_SEGS) * SEG_SPAN : VA_BASE + (next() % 64) * GRAN;

	w->b_addr[k] = base + (next() % 8) * 4096;
	w->b_size[k] = next() % 10 == 0 ? 0 : 512 * (1 + next() % 300);
}

static void step(struct world *w)
{
	uint64_t r = next() % 100;

	if (r < 70) {
		uint32_t k = (uint32_t)(next() % N_KEYS);
		if (w->live[k]) {
			mp_extents_remove_block(w->x, k, w->b_addr[k]);
			cr_assert_eq(mp_peak_state_remove_block(w->ps, k), 0);
			w->live[k] = 0;
		} else {
			random_block(w, k);
			mp_extents_add_block(w->x, k, w->b_addr[k], w->b_size[k]);
			cr_assert_eq(mp_peak_state_add_block(w->ps, k, w->b_addr[k], w->b_size[k]),
			             0);
			w->live[k] = 1;
		}
	} else if (r < 85) {
		int s = (int)(next() % N_SEGS);
		uint64_t a = (uint64_t)s * SEG_SPAN;
		if (w->seg_size[s]) {
			mp_extents_remove_segment(w->x, a);
			cr_assert_eq(mp_peak_state_remove_segment(w->ps, a), 0);
			w->seg_size[s] = 0;
		} else {
			w->seg_size[s] = 4096 * (1 + next() % 256);
			mp_extents_add_segment(w->x, a, w->seg_size[s]);
			cr_assert_eq(mp_peak_state_add_segment(w->ps, a, w->seg_size[s]), 0);
		}
	} else {
		uint64_t a = VA_BASE + (next() % 64) * GRAN, n = GRAN * (1 + next() % 4);
		if (r < 93) {
			mp_extents_map(w->x, a, n);
			cr_assert_eq(mp_peak_state_map(w->ps, a, n), 0);
		} else {
			mp_extents_unmap(w->x, a, n);
			cr_assert_eq(mp_peak_state_unmap(w->ps, a, n), 0);
		}
	}
}

static void save(struct world *w)
{
	struct mp_extents_figures f;

	mp_extents_figures(w->x, &f);
	w->want_holes = f.hole_bytes;
	w->want_largest = f.largest_hole;
	w->saved = 1;
	cr_assert_eq(mp_peak_state_save(w->ps, each_block, w), 0);
}

static void check(const struct world *w)
{
	uint64_t holes, largest;
	int saved;

	cr_assert_eq(mp_peak_state_holes(w->ps, &holes, &largest, &saved), 0);
	cr_assert_eq(saved, w->saved);
	cr_assert_eq(holes, w->want_holes);
	cr_assert_eq(largest, w->want_largest);
}

/* n_keys: mp_peak_state_new_keys's (keys below it in an array, the others hashed), or 0. */
static void run_world(uint64_t seed, int mean_gap, size_t n_keys)
{
	static struct world w;

	memset(&w, 0, sizeof w);
	rng = seed;
	cr_assert_eq(mp_extents_new(0, &w.x), 0);
	w.ps = n_keys ? mp_peak_state_new_keys(n_keys) : mp_peak_state_new();
	cr_assert_not_null(w.ps);
	check(&w); /* nothing saved yet */
	for (int i = 0; i < 12; i++) {
		int gap = (int)(next() % (uint64_t)(2 * mean_gap + 1));
		for (int k = 0; k < gap; k++)
			step(&w);
		save(&w);
		check(&w);
		for (int k = 0; k < gap; k++) /* changes after the save do not move it */
			step(&w);
		check(&w);
	}
	mp_peak_state_free(w.ps);
	mp_extents_destroy(w.x);
}

Test(peak_state, frequent_saves_apply_the_journal)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		run_world(seed * 7919, 20, 0);
}

Test(peak_state, rare_saves_copy_the_current_state)
{
	/* gaps far above the journal's limit (2 x live + 1024 changes) */
	run_world(104729, 3000, 0);
}

Test(peak_state, keys_in_an_array_or_hashed_give_the_same_state)
{
	for (uint64_t seed = 1; seed <= 4; seed++) {
		run_world(seed * 15485863, 20, N_KEYS / 2); /* half the keys each way */
		run_world(seed * 15485863, 3000, N_KEYS);
	}
}

static int one_block(void *ctx, mp_peak_state_emit_fn emit, void *emit_ctx)
{
	(void)ctx;
	return emit(emit_ctx, 1, VA_BASE + 2 * GRAN, 512);
}

Test(peak_state, mapped_runs_merge_and_split_as_the_map_does)
{
	struct mp_peak_state *ps = mp_peak_state_new();
	struct mp_extents *x;
	uint64_t holes, largest;
	int saved;
	struct mp_extents_figures f;

	cr_assert_eq(mp_extents_new(0, &x), 0);
	/* [0,4G) touching [4G,8G) merge; a hole cut in the middle splits them */
	const uint64_t G = GRAN;
	uint64_t ops[][3] = {{1, 0, 4 * G},  {1, 4 * G, 4 * G}, {0, 3 * G, 2 * G},
	                     {1, 10 * G, G}, {1, 9 * G, 3 * G}, {0, 0, G}};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		uint64_t a = VA_BASE + ops[i][1], n = ops[i][2];
		if (ops[i][0])
			mp_extents_map(x, a, n), mp_peak_state_map(ps, a, n);
		else
			mp_extents_unmap(x, a, n), mp_peak_state_unmap(ps, a, n);
	}
	mp_extents_add_block(x, 1, VA_BASE + 2 * G, 512);
	mp_peak_state_add_block(ps, 1, VA_BASE + 2 * G, 512);
	cr_assert_eq(mp_peak_state_save(ps, one_block, NULL), 0);
	mp_extents_figures(x, &f);
	cr_assert_eq(mp_peak_state_holes(ps, &holes, &largest, &saved), 0);
	cr_assert(saved);
	cr_assert_eq(holes, f.hole_bytes);
	cr_assert_eq(largest, f.largest_hole);
	cr_assert_gt(f.n_holes, 2);
	mp_peak_state_free(ps);
	mp_extents_destroy(x);
}

/* --- the holes of one saved state, against the address map rebuilt from it --- */

#define N_LONE 400

static uint64_t lone_addr[N_LONE], lone_size[N_LONE];

static int lone_blocks(void *ctx, mp_peak_state_emit_fn emit, void *emit_ctx)
{
	int rc = 0;

	(void)ctx;
	for (uint32_t k = 0; k < N_LONE && rc == 0; k++)
		rc = emit(emit_ctx, k, lone_addr[k], lone_size[k]);
	return rc;
}

/*
 * Segments and mapped ranges at random (16 of each; disjoint: each in a slot
 * of its own, else closer, so that some overlap and the address map refuses
 * them; never two segments at one address), blocks near them: across their edges, at equal
 * addresses, of size 0, one that would wrap.  peak_state must give the holes of an mp_extents given
 * segments, then ranges, then blocks.
 */
static void one_state(int disjoint)
{
	const uint64_t slot = 1ull << 24, base = next() & ~(slot - 1) & ~(1ull << 63);
	uint64_t c[32][2], holes, largest;
	struct mp_peak_state *ps = mp_peak_state_new();
	struct mp_extents *x;
	struct mp_extents_figures f;
	int saved;

	cr_assert_eq(mp_extents_new(0, &x), 0);
	for (int i = 0; i < 32; i++) { /* ranges 8 slots apart: they never touch one another */
		uint64_t at = disjoint ? (uint64_t)i * slot : (uint64_t)i * slot / 4;
		if (i >= 16)
			at = disjoint ? at : (uint64_t)(i - 16) * 8 * slot;
		c[i][0] = base + at + (next() % 16) * 4096;
		c[i][1] = 4096 * (1 + next() % 1024);
		if (i < 16) {
			mp_extents_add_segment(x, c[i][0], c[i][1]);
			cr_assert_eq(mp_peak_state_add_segment(ps, c[i][0], c[i][1]), 0);
		}
	}
	for (int i = 16; i < 32; i++) {
		mp_extents_map(x, c[i][0], c[i][1]);
		cr_assert_eq(mp_peak_state_map(ps, c[i][0], c[i][1]), 0);
	}
	for (uint32_t k = 0; k < N_LONE; k++) {
		const uint64_t *in = c[next() % 32];
		lone_addr[k] = in[0] + in[1] * (next() % 5) / 4 - 4096 + 512 * (next() % 8);
		lone_size[k] = next() % 8 == 0 ? 0 : 512 * (1 + next() % 64);
		if (k == 7)
			lone_size[k] = UINT64_MAX; /* refused by both */
		if (k % 50 == 1)
			lone_addr[k] = lone_addr[k - 1]; /* an equal address, a later key */
		mp_extents_add_block(x, k, lone_addr[k], lone_size[k]);
	}
	cr_assert_eq(mp_peak_state_save(ps, lone_blocks, NULL), 0);
	mp_extents_figures(x, &f);
	cr_assert_eq(mp_peak_state_holes(ps, &holes, &largest, &saved), 0);
	cr_assert(saved);
	cr_assert_eq(holes, f.hole_bytes, "disjoint %d: %llu against %llu", disjoint,
	             (unsigned long long)holes, (unsigned long long)f.hole_bytes);
	cr_assert_eq(largest, f.largest_hole);
	cr_assert_gt(f.n_holes, 0);
	mp_peak_state_free(ps);
	mp_extents_destroy(x);
}

Test(peak_state, holes_equal_the_address_map_rebuilt_from_the_saved_state)
{
	rng = 4242;
	for (int i = 0; i < 200; i++)
		one_state(i % 2);
}

/*
 * The live ids against a list of (process, id, value): random adds, ends
 * (a value changed in place) and removes in three processes, the first
 * one's ids counted up (the table), a second's far apart (the maps), ids
 * live again while live (reused), and ids the first process used past the
 * table's reach that the table later grows over (found in the map still).
 */
Test(live_ids, against_a_list)
{
	enum { N = 6000 };
	static struct live_id {
		int64_t process;
		uint64_t id;
		uint32_t value;
		int live;
	} ref[N];
	struct mp_live_ids t;
	size_t n = 0, n_allocs = 0;
	uint64_t counted = 0;

	mp_live_ids_init(&t);
	for (int step = 0; step < 40000; step++) {
		uint64_t r = next();
		size_t k = n ? (size_t)(r >> 20) % n : 0;
		struct mp_live_ref lr;

		if (n < N && (r % 3 == 0 || n == 0)) { /* a new allocation (or an id reused) */
			int64_t p = (int64_t)(r >> 8) % 5 < 3 ? 7 : (r >> 8) % 5 == 3 ? 8 : 9;
			uint64_t id = p == 7   ? ((r >> 12) % 50 == 0 ? counted + 70000 : counted++)
			              : p == 8 ? (r >> 16) * 977
			                       : (r >> 40) % 64;
			int reused, was = 0;

			for (size_t j = 0; j < n; j++)
				if (ref[j].live && ref[j].process == p && ref[j].id == id)
					was = 1, ref[j].live = 0;
			ref[n] = (struct live_id){p, id, (uint32_t)(n_allocs++ << 1), 1};
			cr_assert_eq(mp_live_ids_add(&t, p, id, ref[n].value, n_allocs, &reused),
			             0);
			cr_assert_eq(reused, was, "step %d", step);
			n++;
		} else if (ref[k].live) {
			cr_assert(mp_live_ids_find(&t, ref[k].process, ref[k].id, &lr));
			cr_assert_eq(mp_live_ids_value(&lr), ref[k].value, "step %d", step);
			if (r % 3 == 1) {
				ref[k].value |= 1;
				mp_live_ids_set(&lr, ref[k].value);
			} else {
				ref[k].live = 0;
				mp_live_ids_remove(&lr);
			}
		} else {
			int again = 0;

			for (size_t j = 0; j < n; j++)
				again |= ref[j].live && ref[j].process == ref[k].process &&
				         ref[j].id == ref[k].id;
			cr_assert_eq(mp_live_ids_find(&t, ref[k].process, ref[k].id, &lr), again);
		}
	}
	for (size_t j = 0; j < n; j++) {
		struct mp_live_ref lr;

		if (!ref[j].live)
			continue;
		cr_assert(mp_live_ids_find(&t, ref[j].process, ref[j].id, &lr));
		cr_assert_eq(mp_live_ids_value(&lr), ref[j].value);
	}
	cr_assert_gt(t.n_cells, 1000, "the table was used");
	mp_live_ids_free(&t);
}
