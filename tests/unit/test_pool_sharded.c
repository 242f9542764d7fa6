/*
 * tests/unit/test_pool_sharded.c - the sharded pool alone against the fake
 * host, on traces small enough to work out by hand: the shard table, which
 * keys recur and how many slots they need, iterations from phases and from
 * periodicity, none in a random sequence, collectives, bad options and bad
 * frees.  Each replay also checks, independently, that no two live blocks
 * overlap.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/sharded/sharded.h"
#include "fake_host.h"

const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);

static struct fake_host fh;
static const struct memprof_pool_ops *ops;

/* ---- helpers ------------------------------------------------------------ */

static double stat(struct memprof_pool *p, const char *name)
{
	double v = 0;

	cr_assert_eq(fake_host_stat(ops, p, name, &v), 1,
	             "no stat '%s' (or a stat name of 48 bytes or more)", name);
	return v;
}

static int has_stat(struct memprof_pool *p, const char *name)
{
	double v;

	return fake_host_stat(ops, p, name, &v) == 1;
}

/* create with opts ("name", "value", ..., NULL) on a fresh host; the status. */
static int try_make(uint64_t cap, const char *const *opts, struct memprof_pool **p)
{
	struct memprof_pool_option o[8];
	size_t n = 0;

	fake_host_init(&fh, cap);
	ops = memprof_pool_init(MEMPROF_POOL_ABI_MAJOR);
	for (; opts && opts[2 * n]; n++)
		o[n] = (struct memprof_pool_option){opts[2 * n], opts[2 * n + 1]};
	*p = NULL;
	return ops->create(&fh.host, o, n, p);
}

static struct memprof_pool *make(uint64_t cap, const char *const *opts)
{
	struct memprof_pool *p;

	cr_assert_eq(try_make(cap, opts, &p), 0, "create: %s", fh.last_log);
	return p;
}

static void finish(struct memprof_pool *p)
{
	ops->destroy(p);
	cr_assert_eq(fake_host_live_regions(&fh), 0, "destroy left regions");
}

/* One allocation of a script: what the trace says about it. */
struct spec {
	const char *site;
	uint64_t size;
	const char *phase;
};

/* ops: allocation number i allocs as +(i + 1), frees as -(i + 1); 0 ends. */
#define MAX_ALLOCS 512
static struct memprof_pool_block blocks[MAX_ALLOCS];
static int live[MAX_ALLOCS];

/* Lifetimes in MiniMalloc steps, as the engine computes them (input.c op_steps). */
static void lifetimes(const struct spec *a, size_t n, const int *script,
                      struct memprof_pool_lifetime *lt)
{
	int64_t step = 0;
	int last = 0;

	for (size_t i = 0; i < n; i++)
		lt[i] = (struct memprof_pool_lifetime){.index = (int64_t)i,
		                                       .size_bytes = a[i].size,
		                                       .free_at = INT64_MAX,
		                                       .site = a[i].site,
		                                       .phase = a[i].phase};
	for (const int *op = script; *op; op++) {
		int kind = *op > 0 ? 1 : -1;

		if (last && kind != last)
			step++;
		last = kind;
		if (kind > 0)
			lt[*op - 1].alloc_at = step;
		else
			lt[-*op - 1].free_at = step;
	}
}

static void check_disjoint(size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && live[j] && blocks[j].size_bytes && blocks[i].size_bytes)
			cr_assert(blocks[i].addr + blocks[i].size_bytes <= blocks[j].addr ||
			                  blocks[j].addr + blocks[j].size_bytes <= blocks[i].addr,
			          "allocations %zu and %zu overlap", i, j);
}

/* Plan (when plan_it) and replay the script; every op must succeed. */
static void replay(struct memprof_pool *p, const struct spec *a, size_t n, const int *script,
                   int plan_it)
{
	struct memprof_pool_lifetime lt[MAX_ALLOCS];

	cr_assert_leq(n, MAX_ALLOCS);
	lifetimes(a, n, script, lt);
	if (plan_it)
		cr_assert_eq(ops->plan(p, lt, n), 0, "plan: %s", fh.last_log);
	memset(live, 0, sizeof live);
	for (const int *op = script; *op; op++) {
		size_t i = (size_t)(*op > 0 ? *op : -*op) - 1;

		if (*op > 0) {
			struct memprof_pool_request r = {.struct_size = sizeof r,
			                                 .size_bytes = a[i].size,
			                                 .requested_bytes = a[i].size,
			                                 .index = (int64_t)i,
			                                 .site = a[i].site,
			                                 .phase = a[i].phase};
			cr_assert_eq(ops->alloc(p, &r, &blocks[i]), 0, "alloc %zu: %s", i,
			             fh.last_log);
			cr_assert_geq(blocks[i].size_bytes, a[i].size);
			live[i] = 1;
			check_disjoint(n, i);
		} else {
			cr_assert_eq(ops->free(p, &blocks[i], 0), 0, "free %zu: %s", i,
			             fh.last_log);
			live[i] = 0;
		}
	}
}

static int is_slot(size_t i)
{
	return (blocks[i].handle & SH_MINE) != 0;
}

/* ---- the shard table ---------------------------------------------------- */

/* shard = ceil(size / world) rounded up to 256 B, by hand. */
Test(sharded, shard_bytes_by_hand)
{
	cr_assert_eq(sh_shard_bytes(1000, 4), 256);   /* 250 -> 256 */
	cr_assert_eq(sh_shard_bytes(1, 8), 256);      /* 1 -> 256 */
	cr_assert_eq(sh_shard_bytes(1000, 3), 512);   /* 334 -> 512 */
	cr_assert_eq(sh_shard_bytes(256, 1), 256);    /* exact */
	cr_assert_eq(sh_shard_bytes(257, 1), 512);    /* one over */
	cr_assert_eq(sh_shard_bytes(16385, 8), 2304); /* 2049 -> 9 x 256 */
	cr_assert_eq(sh_shard_bytes(0, 8), 0);        /* never cached */
	cr_assert_eq(sh_shard_bytes(1ull << 60, 8), 0);
}

/*
 * world-size 4; 3 iterations, each: forward allocs and frees A (site a,
 * 1000 B), backward allocs and frees G (site g, 512 B).  Both recur, one
 * live at a time: 1 slot each.  A: shard ceil(1000/4) = 250 -> 256, slot
 * 1024, shard offsets 0, 256, 512, 768; G: 128 -> 256, slot 1024.  Slab =
 * 2048 at offset 0 (A) and 1024 (G); 512 per rank.  Iterations 2 and 3
 * serve 4 requests that caching would have allocated.
 */
static const struct spec two_keys[] = {
        {"a", 1000, "forward"}, {"g", 512, "backward"}, {"a", 1000, "forward"},
        {"g", 512, "backward"}, {"a", 1000, "forward"}, {"g", 512, "backward"},
};
static const int two_keys_script[] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 0};

Test(sharded, shard_table_world_4)
{
	static const char *const o[] = {"world-size", "4", NULL};
	struct memprof_pool *p = make(0, o);
	const struct sh_table *t;

	replay(p, two_keys, 6, two_keys_script, 1);
	t = sh_pool_table(p);
	cr_assert_eq(t->n_keys, 2);
	cr_assert_eq(t->n_slots, 2);
	cr_assert_eq(t->keys[0].size_bytes, 1000);
	cr_assert_eq(t->keys[0].shard_bytes, 256);
	cr_assert_eq(t->keys[0].slot_bytes, 1024);
	for (uint32_t r = 0; r < 4; r++) {
		cr_assert_eq(t->shard_offsets[0 * 4 + r], 256 * r);
		cr_assert_eq(t->shard_offsets[1 * 4 + r], 256 * r);
	}
	cr_assert_eq(fh.n_reserve, 1, "the slab is the only reservation");
	cr_assert_eq(t->slots[0].addr, fh.regions[0].addr);
	cr_assert_eq(t->slots[1].addr, fh.regions[0].addr + 1024);
	for (size_t i = 0; i < 6; i += 2) { /* every A in slot 0, every G in slot 1 */
		cr_assert(is_slot(i) && is_slot(i + 1));
		cr_assert_eq(blocks[i].addr, t->slots[0].addr);
		cr_assert_eq(blocks[i].size_bytes, 1024);
		cr_assert_eq(blocks[i + 1].addr, t->slots[1].addr);
	}
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "iterations_from"), 1);
	cr_assert(!has_stat(p, "period_allocs"));
	cr_assert_eq(stat(p, "recurring_sites"), 2);
	cr_assert_eq(stat(p, "slots"), 2);
	cr_assert_eq(stat(p, "slab_bytes"), 2048);
	cr_assert_eq(stat(p, "shard_bytes_per_rank"), 512);
	cr_assert_eq(stat(p, "allocations_avoided"), 4);
	cr_assert_eq(stat(p, "fallback_requests"), 0);
	finish(p);
}

/* ---- recurring keys and slots ------------------------------------------- */

/*
 * 3 iterations (forward entered 3 times).  Each: forward allocs A twice
 * (both live) and, in iteration 1 only, B; backward allocs G, then frees
 * all.  A and G recur (the same count in iterations 2 and 3), B does not
 * (absent from 2 and 3): 2 keys, A needs 2 slots, G 1.  World size 8 (the
 * default): A 1000 -> shard 125 -> 256, slot 2048; G 512 -> 64 -> 256,
 * slot 2048: a slab of 3 x 2048 = 6144.  B (4096 B) goes to the fallback.
 * Avoided: the 3 slot requests of each of iterations 2 and 3 = 6.
 */
static const struct spec ab[] = {
        {"a", 1000, "forward"}, {"a", 1000, "forward"}, {"b", 4096, "forward"},
        {"g", 512, "backward"}, {"a", 1000, "forward"}, {"a", 1000, "forward"},
        {"g", 512, "backward"}, {"a", 1000, "forward"}, {"a", 1000, "forward"},
        {"g", 512, "backward"},
};
static const int ab_script[] = {1,  2,  3,  4, -1, -2, -3, -4, 5,   6, 7,
                                -5, -6, -7, 8, 9,  10, -8, -9, -10, 0};

Test(sharded, recurring_every_iteration_only)
{
	struct memprof_pool *p = make(0, NULL);
	const struct sh_table *t;

	replay(p, ab, 10, ab_script, 1);
	t = sh_pool_table(p);
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "iterations_from"), 1);
	cr_assert_eq(stat(p, "recurring_sites"), 2);
	cr_assert_eq(t->keys[0].size_bytes, 1000);
	cr_assert_eq(t->keys[0].n_slots, 2);
	cr_assert_eq(t->keys[1].size_bytes, 512);
	cr_assert_eq(t->keys[1].n_slots, 1);
	cr_assert_eq(stat(p, "slots"), 3);
	cr_assert_eq(stat(p, "slab_bytes"), 6144);
	cr_assert_eq(stat(p, "shard_bytes_per_rank"), 768);
	cr_assert(!is_slot(2), "B is not recurring");
	cr_assert(is_slot(0) && is_slot(1) && is_slot(3));
	cr_assert_neq(blocks[0].addr, blocks[1].addr, "two live As, two slots");
	cr_assert_eq(stat(p, "fallback_requests"), 1);
	cr_assert_eq(stat(p, "allocations_avoided"), 6);
	finish(p);
}

/*
 * 4 iterations, each entering "fwd" then "opt" (one O there); C occurs in
 * iterations 1-3 only: after the first, in 2 of 3, so not recurring at
 * min-share 1 but recurring at 0.6 (2 >= 0.6 x 3 = 1.8).  D occurs twice in
 * iteration 2 and once in 3 and 4: at min-share 1 the counts differ, not
 * recurring; at 0.6 the common count (1) holds in 2 of 3, recurring.
 * E and O are in every iteration once.
 */
static const struct spec shares[] = {
        {"e", 256, "fwd"}, {"c", 512, "fwd"}, {"d", 768, "fwd"}, {"o", 64, "opt"},
        {"e", 256, "fwd"}, {"c", 512, "fwd"}, {"d", 768, "fwd"}, {"d", 768, "fwd"},
        {"o", 64, "opt"},  {"e", 256, "fwd"}, {"c", 512, "fwd"}, {"d", 768, "fwd"},
        {"o", 64, "opt"},  {"e", 256, "fwd"}, {"d", 768, "fwd"}, {"o", 64, "opt"},
};
#define N_SHARES (sizeof shares / sizeof shares[0])

/* Each allocation freed at once. */
static const int *alloc_free_script(size_t n)
{
	static int script[2 * MAX_ALLOCS + 1];
	size_t k = 0;

	for (size_t i = 1; i <= n; i++) {
		script[k++] = (int)i;
		script[k++] = -(int)i;
	}
	script[k] = 0;
	return script;
}

Test(sharded, min_share_one_needs_every_iteration)
{
	struct memprof_pool *p = make(0, NULL);

	replay(p, shares, N_SHARES, alloc_free_script(N_SHARES), 1);
	cr_assert_eq(stat(p, "iterations"), 4);
	cr_assert_eq(stat(p, "recurring_sites"), 2, "E and O only");
	cr_assert(is_slot(0) && is_slot(3) && !is_slot(1) && !is_slot(2));
	cr_assert_eq(stat(p, "fallback_requests"), 8, "3 Cs and 5 Ds");
	finish(p);
}

Test(sharded, min_share_below_one)
{
	static const char *const o[] = {"min-share", "0.6", NULL};
	struct memprof_pool *p = make(0, o);

	replay(p, shares, N_SHARES, alloc_free_script(N_SHARES), 1);
	cr_assert_eq(stat(p, "recurring_sites"), 4, "C, D, E and O");
	cr_assert_eq(stat(p, "fallback_requests"), 0);
	cr_assert_eq(stat(p, "slots"), 4, "each freed before the next: one slot each");
	finish(p);
}

/* ---- iterations --------------------------------------------------------- */

/*
 * No phases: A B C A B C A B C (sites a, b, c), each freed at once.  The
 * gaps between successive occurrences are all 3 (6 exceeds n / 2), and
 * key[i] == key[i + 3] for all 6 i: period 3, 3 iterations, 3 recurring
 * keys, 6 requests avoided (iterations 2 and 3).
 */
static const struct spec abc[] = {
        {"a", 100, NULL}, {"b", 200, NULL}, {"c", 300, NULL}, {"a", 100, NULL}, {"b", 200, NULL},
        {"c", 300, NULL}, {"a", 100, NULL}, {"b", 200, NULL}, {"c", 300, NULL},
};

Test(sharded, periodicity_abc)
{
	struct memprof_pool *p = make(0, NULL);

	replay(p, abc, 9, alloc_free_script(9), 1);
	cr_assert_eq(stat(p, "iterations_from"), 2);
	cr_assert_eq(stat(p, "period_allocs"), 3);
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "recurring_sites"), 3);
	cr_assert_eq(stat(p, "allocations_avoided"), 6);
	cr_assert_eq(stat(p, "fallback_requests"), 0);
	finish(p);
}

/*
 * A prologue P Q, then (A B C) x 8 and a trailing A: 27 allocations.  The
 * prologue counts against the share: period 3 matches i = 2..23, 22 of 24
 * = 0.917 (period 6: 19 of 21 = 0.905).  The first i with key[i] ==
 * key[i + 3] is 2, so (27 - 2) / 3 = 8 full iterations start there; the
 * trailing A is in none but is served from A's slot.  P and Q are in no
 * iteration: fallback.  Avoided: iterations 2-8 (7 x 3) + the trailing A.
 */
static struct spec prologue[27];

Test(sharded, periodicity_after_a_prologue)
{
	static const struct spec abc3[] = {{"a", 100, NULL}, {"b", 200, NULL}, {"c", 300, NULL}};
	struct memprof_pool *p = make(0, NULL);

	prologue[0] = (struct spec){"p", 64, NULL};
	prologue[1] = (struct spec){"q", 64, NULL};
	for (size_t i = 2; i < 27; i++)
		prologue[i] = abc3[(i - 2) % 3];
	replay(p, prologue, 27, alloc_free_script(27), 1);
	cr_assert_eq(stat(p, "iterations_from"), 2);
	cr_assert_eq(stat(p, "period_allocs"), 3);
	cr_assert_eq(stat(p, "iterations"), 8);
	cr_assert_eq(stat(p, "recurring_sites"), 3);
	cr_assert(!is_slot(0) && !is_slot(1) && is_slot(26));
	cr_assert_eq(stat(p, "fallback_requests"), 2);
	cr_assert_eq(stat(p, "allocations_avoided"), 22);
	finish(p);
}

/* A shorter run, (A B C) x 4: 10 of 12 = 0.83 < 0.9, so no iterations. */
Test(sharded, prologue_too_long_for_the_share)
{
	struct memprof_pool *p = make(0, NULL);

	prologue[0] = (struct spec){"p", 64, NULL};
	prologue[1] = (struct spec){"q", 64, NULL};
	for (size_t i = 2; i < 15; i++)
		prologue[i] = (struct spec){i % 3 == 2 ? "a" : i % 3 ? "c" : "b", 100, NULL};
	replay(p, prologue, 15, alloc_free_script(15), 1);
	cr_assert_eq(stat(p, "iterations_from"), 0);
	cr_assert_eq(stat(p, "fallback_requests"), 15);
	finish(p);
}

/* The best match share over every period, by brute force. */
static double best_share(const struct spec *a, size_t n)
{
	double best = 0;

	for (size_t per = 1; per <= n / 2; per++) {
		size_t hits = 0;

		for (size_t i = 0; i + per < n; i++)
			hits += strcmp(a[i].site, a[i + per].site) == 0;
		if ((double)hits / (double)(n - per) > best)
			best = (double)hits / (double)(n - per);
	}
	return best;
}

/* 300 allocations from 7 sites drawn by an LCG: no period, all fallback. */
Test(sharded, random_sequence_has_no_iterations)
{
	static const char *const sites[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6"};
	static struct spec rnd[300];
	uint64_t x = 12345;
	struct memprof_pool *p = make(0, NULL);

	for (size_t i = 0; i < 300; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		rnd[i] = (struct spec){sites[(x >> 33) % 7], 512, NULL};
	}
	cr_assert_lt(best_share(rnd, 300), 0.9, "the sequence must not be periodic");
	replay(p, rnd, 300, alloc_free_script(300), 1);
	cr_assert(strstr(fh.last_log, "no iterations found"), "log: %s", fh.last_log);
	cr_assert_eq(stat(p, "iterations_from"), 0);
	cr_assert_eq(stat(p, "iterations"), 0);
	cr_assert_eq(stat(p, "recurring_sites"), 0);
	cr_assert_eq(stat(p, "fallback_requests"), 300);
	cr_assert_eq(stat(p, "slab_bytes"), 0);
	for (size_t i = 0; i < 300; i++)
		cr_assert(!is_slot(i));
	finish(p);
}

/*
 * iteration-phase=backward on two_keys: 3 iterations, at indices 1-2, 3-4
 * and 5: A (0, 2, 4) is missing from iteration 3, so only G recurs; G's
 * requests at 3 and 5 are avoided.  An absent phase: a period of 2 (A G).
 */
Test(sharded, iteration_phase_option)
{
	static const char *const back[] = {"iteration-phase", "backward", NULL};
	static const char *const none[] = {"iteration-phase", "nosuch", NULL};
	struct memprof_pool *p = make(0, back);

	replay(p, two_keys, 6, two_keys_script, 1);
	cr_assert_eq(stat(p, "iterations_from"), 1);
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "recurring_sites"), 1);
	cr_assert(is_slot(1) && !is_slot(0) && !is_slot(4));
	cr_assert_eq(stat(p, "allocations_avoided"), 2);
	finish(p);
	p = make(0, none);
	replay(p, two_keys, 6, two_keys_script, 1);
	cr_assert_eq(stat(p, "iterations_from"), 2);
	cr_assert_eq(stat(p, "period_allocs"), 2);
	cr_assert_eq(stat(p, "iterations"), 3);
	finish(p);
}

/* Sites absent: never recurring, even when periodic. */
Test(sharded, no_site_never_recurs)
{
	static const struct spec nosite[] = {{NULL, 100, "f"}, {NULL, 100, "b"}, {NULL, 100, "f"},
	                                     {NULL, 100, "b"}, {NULL, 100, "f"}, {NULL, 100, "b"}};
	struct memprof_pool *p = make(0, NULL);

	replay(p, nosite, 6, alloc_free_script(6), 1);
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "recurring_sites"), 0);
	cr_assert_eq(stat(p, "fallback_requests"), 6);
	finish(p);
}

/* ---- collectives -------------------------------------------------------- */

/* two_keys at world size 4: all-gather then reduce-scatter over each key's 1024-B slot. */
Test(sharded, collectives_recorded)
{
	static const char *const o[] = {"world-size", "4", NULL};
	struct memprof_pool *p = make(0, o);
	const struct sh_table *t;

	fh.collective_enabled = 1;
	replay(p, two_keys, 6, two_keys_script, 1);
	t = sh_pool_table(p);
	cr_assert_eq(fh.n_collectives, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(fh.collectives[i].kind,
		             i % 2 ? MEMPROF_POOL_REDUCE_SCATTER : MEMPROF_POOL_ALL_GATHER);
		cr_assert_eq(fh.collectives[i].n_bytes, 1024);
		cr_assert_eq(fh.collectives[i].world_size, 4);
		cr_assert_eq(fh.collectives[i].addr, t->slots[i / 2].addr);
	}
	cr_assert_eq(stat(p, "collectives_run"), 4);
	cr_assert_eq(stat(p, "all_gather_ns"), 2000, "the fake host says 1000 ns each");
	cr_assert_eq(stat(p, "reduce_scatter_ns"), 2000);
	finish(p);
}

Test(sharded, collectives_not_run_without_backend_support)
{
	struct memprof_pool *p = make(0, NULL);
	struct memprof_pool_lifetime lt[6];
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = 1000,
	                                 .requested_bytes = 1000,
	                                 .site = "a",
	                                 .phase = "forward"};
	struct memprof_pool_block b;

	lifetimes(two_keys, 6, two_keys_script, lt);
	cr_assert_eq(ops->plan(p, lt, 6), 0);
	cr_assert_eq(ops->alloc(p, &r, &b), 0);
	cr_assert(strstr(fh.last_log,
	                 "collectives not run: the backend cannot run them here (sim: "
	                 "no NCCL, or one GPU, where a collective would have one rank)"),
	          "last log: %s", fh.last_log);
	cr_assert_eq(fh.n_collectives, 0);
	cr_assert_eq(stat(p, "collectives_run"), 0);
	cr_assert_eq(ops->free(p, &b, 0), 0);
	finish(p);
}

/* ---- bad options, bad requests ------------------------------------------ */

Test(sharded, bad_options_refused)
{
	static const char *const bad[][2] = {
	        {"world-size", "0"},  {"world-size", "abc"},   {"world-size", "5000"},
	        {"world-size", "-4"}, {"min-share", "0"},      {"min-share", "1.5"},
	        {"min-share", "x"},   {"iteration-phase", ""}, {"no-such", "1"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *const o[] = {bad[i][0], bad[i][1], NULL};
		struct memprof_pool *p;
		char want[64];

		cr_assert_eq(try_make(0, o, &p), MEMPROF_POOL_EINVAL, "%s=%s accepted", bad[i][0],
		             bad[i][1]);
		snprintf(want, sizeof want, "'%s=%s'", bad[i][0], bad[i][1]);
		cr_assert(strstr(fh.last_log, want), "log: %s", fh.last_log);
		cr_assert_eq(fh.n_log_errors, 1);
	}
}

Test(sharded, good_options_accepted)
{
	static const char *const o[] = {"world-size",      "1",    "min-share", "1",
	                                "iteration-phase", "auto", NULL};
	finish(make(0, o));
}

Test(sharded, bad_frees_and_odd_sizes)
{
	struct memprof_pool *p = make(0, NULL);
	struct memprof_pool_request r = {.struct_size = sizeof r, .site = "a"};
	struct memprof_pool_block b, bogus = {.addr = 1, .size_bytes = 1, .handle = SH_MINE | 7};
	int rc;

	replay(p, ab, 10, ab_script, 1);
	cr_assert_eq(ops->free(p, &bogus, 0), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->free(p, &blocks[0], 0), MEMPROF_POOL_EINVAL, "a slot freed twice");
	bogus.handle = 12345;
	cr_assert_eq(ops->free(p, &bogus, 0), MEMPROF_POOL_EINVAL, "unknown fallback handle");
	r.size_bytes = 0;
	cr_assert_eq(ops->alloc(p, &r, &b), 0);
	cr_assert(!(b.handle & SH_MINE));
	cr_assert_eq(ops->free(p, &b, 0), 0);
	r.size_bytes = r.requested_bytes = 1ull << 60;
	rc = ops->alloc(p, &r, &b);
	cr_assert(rc == 0 || rc == MEMPROF_POOL_ENOMEM);
	if (rc == 0)
		cr_assert_eq(ops->free(p, &b, 0), 0);
	finish(p);
}

/* Without plan everything goes to the fallback; plan twice is refused. */
Test(sharded, unplanned_and_plan_twice)
{
	struct memprof_pool *p = make(0, NULL);
	struct memprof_pool_lifetime lt[6];

	replay(p, two_keys, 6, two_keys_script, 0);
	cr_assert_eq(stat(p, "fallback_requests"), 6);
	lifetimes(two_keys, 6, two_keys_script, lt);
	cr_assert_eq(ops->plan(p, lt, 6), 0);
	cr_assert_eq(ops->plan(p, lt, 6), MEMPROF_POOL_EINVAL);
	finish(p);
}

/* A capacity below the slab: the fallback serves (and fails here: 2 MiB segments). */
Test(sharded, slab_refused_under_capacity)
{
	struct memprof_pool *p = make(4096, NULL);
	struct memprof_pool_lifetime lt[10];
	struct memprof_pool_request r = {.struct_size = sizeof r,
	                                 .size_bytes = 1000,
	                                 .requested_bytes = 1000,
	                                 .site = "a",
	                                 .phase = "forward"};
	struct memprof_pool_block b;

	lifetimes(ab, 10, ab_script, lt);
	cr_assert_eq(ops->plan(p, lt, 10), 0);
	cr_assert_eq(ops->alloc(p, &r, &b), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(stat(p, "slab_bytes"), 0);
	cr_assert_eq(stat(p, "fallback_requests"), 1);
	finish(p);
}

/*
 * Nested ranges, as Megatron's: the outer range is re-entered after every
 * inner one.  "init" is entered three times in the prologue (around two
 * grad buffers), "fwd" twice in each iteration (around "param 0"): neither
 * cuts the trace into like segments covering most of it ("init"'s last
 * segment holds every iteration; "fwd"'s alternate two kinds of segment).
 * "param 0" is entered once per iteration and cuts 3 like segments: 3
 * iterations, and X (every iteration) recurs.
 */
static const struct spec nested[] = {
        {"w", 4096, "init"},     {"gb", 8192, "grad 0"},  {"w", 4096, "init"},
        {"gb", 8192, "grad 1"},  {"w", 4096, "init"},     {"pa", 2048, "param 0"},
        {"x", 1000, "fwd"},      {"pb", 2048, "param 1"}, {"y", 3000, "fwd"},
        {"z", 512, "bwd"},       {"pa", 2048, "param 0"}, {"x", 1000, "fwd"},
        {"pb", 2048, "param 1"}, {"y", 3000, "fwd"},      {"z", 512, "bwd"},
        {"pa", 2048, "param 0"}, {"x", 1000, "fwd"},      {"pb", 2048, "param 1"},
        {"y", 3000, "fwd"},      {"z", 512, "bwd"},
};
#define N_NESTED (sizeof nested / sizeof nested[0])

Test(sharded, auto_finds_iterations_under_nested_ranges)
{
	struct memprof_pool *p = make(0, NULL);

	replay(p, nested, N_NESTED, alloc_free_script(N_NESTED), 1);
	cr_assert_eq(stat(p, "iterations_from"), 1);
	cr_assert_eq(stat(p, "iterations"), 3);
	cr_assert_eq(stat(p, "recurring_sites"), 5, "pa, x, pb, y, z");
	cr_assert_eq(stat(p, "fallback_requests"), 5, "the prologue's w and gb");
	finish(p);
}

/*
 * Phases are told apart by text, not address: the nested trace with each
 * phase text copied per item (no two items share an address), then one copy
 * per text (runs share one), finds the same iterations.
 */
Test(sharded, phase_texts_at_other_addresses_find_the_same_iterations)
{
	static struct spec copy[N_NESTED];
	static char text[N_NESTED][16];
	const char *first[N_NESTED] = {0};

	for (int shared = 0; shared < 2; shared++) {
		struct memprof_pool *p = make(0, NULL);

		for (size_t i = 0; i < N_NESTED; i++) {
			size_t j = 0;

			while (shared && j < i && strcmp(nested[j].phase, nested[i].phase) != 0)
				j++;
			snprintf(text[i], sizeof text[i], "%s", nested[i].phase);
			first[i] = shared && j < i ? first[j] : text[i];
			copy[i] = (struct spec){nested[i].site, nested[i].size, first[i]};
		}
		replay(p, copy, N_NESTED, alloc_free_script(N_NESTED), 1);
		cr_assert_eq(stat(p, "iterations_from"), 1);
		cr_assert_eq(stat(p, "iterations"), 3);
		cr_assert_eq(stat(p, "recurring_sites"), 5);
		cr_assert_eq(stat(p, "fallback_requests"), 5);
		finish(p);
	}
}

/* The period search as it was before the gap histogram: every gap of at most
 * n/2 to a key's next four occurrences, sorted, and the 16 most frequent
 * (ties to the shorter) tried by match share; an independent reference. */
static int cmp_gap(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t period_by_sorting(const uint32_t *key, size_t n, size_t n_keys, double *share)
{
	uint64_t *gaps = malloc(4 * n * sizeof *gaps), cand[16], count[16], best = 0;
	int64_t *last = malloc(4 * n_keys * sizeof *last);
	size_t m = 0, n_cand = 0;
	double best_share = -1;

	cr_assert(gaps && last);
	for (size_t k = 0; k < 4 * n_keys; k++)
		last[k] = -1;
	for (size_t i = 0; i < n; i++) {
		int64_t *l = &last[key[i] * 4];

		for (int d = 0; d < 4 && l[d] >= 0; d++)
			if (i - (size_t)l[d] <= n / 2)
				gaps[m++] = i - (size_t)l[d];
		memmove(l + 1, l, 3 * sizeof *l);
		l[0] = (int64_t)i;
	}
	qsort(gaps, m, sizeof *gaps, cmp_gap);
	for (size_t i = 0, j; i < m; i = j) {
		size_t at = 0;

		for (j = i; j < m && gaps[j] == gaps[i]; j++)
			;
		while (at < n_cand && count[at] >= j - i) /* stable: an equal count stays first */
			at++;
		if (at == 16)
			continue;
		n_cand = n_cand < 16 ? n_cand + 1 : 16;
		memmove(count + at + 1, count + at, (n_cand - 1 - at) * sizeof *count);
		memmove(cand + at + 1, cand + at, (n_cand - 1 - at) * sizeof *cand);
		count[at] = j - i;
		cand[at] = gaps[i];
	}
	for (size_t c = 0; c < n_cand; c++) {
		size_t hits = 0;

		for (size_t i = 0; i + cand[c] < n; i++)
			hits += key[i] == key[i + cand[c]];
		double s = (double)hits / (double)(n - cand[c]);
		if (s > best_share || (s == best_share && cand[c] < best)) {
			best_share = s;
			best = cand[c];
		}
	}
	*share = best ? best_share : 0;
	free(gaps);
	free(last);
	return best;
}

/*
 * sh_find_period counts gaps in a histogram instead of sorting them all:
 * the same period and share as the sorting reference on periodic sequences
 * with noise and prologues, random ones, few keys and many, and lengths
 * from 2 up (more than 16 distinct gaps, so the top-16 cut matters).
 */
Test(sharded, period_from_the_histogram_equals_sorting_every_gap)
{
	uint64_t state = 0x9e3779b97f4a7c15u;
	int periodic = 0; /* rounds that found a period above 1 */

	for (int round = 0; round < 400; round++) {
		size_t n = 2 + (size_t)(round * 37 % 900), n_keys = 1 + (size_t)(round % 50), p;
		uint32_t *key = malloc(n * sizeof *key);
		double share_got, share_ref;

		cr_assert(key);
		p = 1 + (size_t)(round % 23);
		for (size_t i = 0; i < n; i++) {
			state = state * 6364136223846793005u + 1442695040888963407u;
			/* a third random, the rest periodic with one key in ten noisy */
			key[i] = (uint32_t)(round % 3 == 0 || (state >> 60) == 0
			                            ? (state >> 33) % n_keys
			                            : (i % p) % n_keys);
		}
		uint64_t got = sh_find_period(key, n, n_keys, &share_got);
		uint64_t ref = period_by_sorting(key, n, n_keys, &share_ref);

		cr_assert_eq(got, ref, "round %d (n %zu, keys %zu): period %llu, reference %llu",
		             round, n, n_keys, (unsigned long long)got, (unsigned long long)ref);
		cr_assert(share_got == share_ref, "round %d: share %g, reference %g", round,
		          share_got, share_ref);
		periodic += got > 1;
		free(key);
	}
	cr_assert_gt(periodic, 100, "only %d rounds found a period above 1", periodic);
}

/* The key numbers of the items' texts, as a map of the whole key text gives them. */
static void key_ids_by_text(const struct memprof_pool_lifetime *items, size_t n, uint32_t *want,
                            size_t *n_want)
{
	struct pl_keymap m;
	static char buf[SH_KEY_BYTES];
	uint64_t id;

	pl_keymap_init(&m);
	for (size_t i = 0; i < n; i++) {
		size_t len = sh_key_of(buf, items[i].site, items[i].size_bytes);
		if (!pl_keymap_get(&m, buf, len, &id)) {
			id = m.n;
			cr_assert_eq(pl_keymap_put(&m, buf, len, id), 0);
		}
		want[i] = (uint32_t)id;
	}
	*n_want = m.n;
	pl_keymap_free(&m);
}

/*
 * Sites by address and by text: one text at several addresses, NULL apart
 * from "", and long texts alike up to where the key cuts them.
 */
Test(sharded, key_ids_by_site_address_equal_those_of_the_key_text)
{
	enum { N = 20000, N_SITES = 12 };
	static char texts[N_SITES][2 * SH_KEY_BYTES];
	static struct memprof_pool_lifetime it[N];
	static uint32_t got[N], want[N];
	const char *sites[N_SITES + 1];
	size_t n_got, n_want;
	uint64_t r = 99;

	for (int s = 0; s < N_SITES; s++) {
		memset(texts[s], 'a' + s / 4,
		       sizeof texts[s] - 1); /* 4 of each text, long or short */
		texts[s][s % 2 ? sizeof texts[s] - 1 - s : 5] = '\0';
		sites[s] = texts[s];
	}
	texts[N_SITES - 1][0] = '\0'; /* "" */
	sites[N_SITES] = NULL;
	for (size_t i = 0; i < N; i++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		it[i] = (struct memprof_pool_lifetime){.index = (int64_t)i,
		                                       .size_bytes = 512 * (1 + (r >> 8) % 40),
		                                       .site = sites[(r >> 32) % (N_SITES + 1)]};
	}
	cr_assert_eq(sh_key_ids(it, N, got, &n_got), MEMPROF_POOL_OK);
	key_ids_by_text(it, N, want, &n_want);
	cr_assert_eq(n_got, n_want);
	/* 8 texts (2 in each group of 4, one of them "", and NULL) of 40 sizes, not 13 sites */
	cr_assert_eq(n_want, 8 * 40, "texts are shared: %zu keys", n_want);
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(got[i], want[i], "item %zu", i);
}
