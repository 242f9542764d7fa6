/*
 * tests/unit/test_ranks.c - src/analysis/ranks.c fed hand-made records
 * through memstate, with answers worked out by hand: two ranks on one
 * device number, a rank over several devices, processes without a rank,
 * segments of the same id in two ranks, the spread and the median
 * threshold, and the call sites at each rank's own peak.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/ranks.h"

static struct mp_memstate ms;
static struct mp_ranks rk;
static struct mp_consumer c;
static int64_t seq;

/* call sites: one frame each (file given: the key is NAME@FILE) */
static const struct memprof_frame f_model = {"build", "model.py", 10};
static const struct memprof_frame f_extra = {"extra", "shard.py", 20};
static const struct memprof_frame f_act = {"forward", "layers.py", 30};
static const struct memprof_stack s_model = {1, &f_model};
static const struct memprof_stack s_extra = {1, &f_extra};
static const struct memprof_stack s_act = {1, &f_act};

static void start(const struct memprof_process *procs, size_t n, int32_t device)
{
	struct mp_mem_listener l;

	mp_memstate_init(&ms);
	cr_assert_eq(mp_ranks_init(&rk, procs, n, device), 0);
	l = mp_ranks_listener(&rk);
	cr_assert_eq(mp_memstate_listen(&ms, &l), 0);
	c = mp_memstate_consumer(&ms);
	seq = 0;
}

static void finish(void)
{
	cr_assert_eq(c.on_end(c.ctx), 0);
}

static void teardown(void)
{
	mp_ranks_free(&rk);
	mp_memstate_free(&ms);
}

TestSuite(ranks, .fini = teardown);

/* One event of process (row id) proc on device, with stack (1, 2, 3 for
 * model, extra, act; 0 none). */
static void ev(int op, int64_t proc, int32_t device, int64_t id, int64_t size, int stack)
{
	static const struct memprof_stack *stacks[] = {NULL, &s_model, &s_extra, &s_act};
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 10;
	rec.ev.op = op;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.requested_bytes = size > 8 ? size - 8 : size;
	rec.ev.device = device;
	rec.ev.process_id = proc;
	rec.ev.stack_id = stack;
	rec.stack = stacks[stack];
	rec.pid = 4000 + proc;
	cr_assert_eq(c.on_record(c.ctx, &rec), 0, "event %lld", (long long)seq);
}

#define ALLOC(p, d, id, size, st) ev(MEMPROF_OP_ALLOC, p, d, id, size, st)
#define FREE(p, d, id)            ev(MEMPROF_OP_FREE, p, d, id, 0, 0)

static struct memprof_process proc(int64_t id, int64_t pid, int64_t rank, const char *host)
{
	struct memprof_process p = {id, pid, 0, host, rank, rank >= 0 ? rank % 2 : -1, -1, NULL};

	return p;
}

static const struct mp_rank *unit(int64_t rank)
{
	size_t i;

	for (i = 0; i < rk.n_units; i++)
		if (rk.units[i].rank == rank)
			return &rk.units[i];
	cr_assert_fail("no unit for rank %lld", (long long)rank);
	return NULL;
}

static int64_t site_bytes(const struct mp_rank *u, const char *key)
{
	size_t i;

	for (i = 0; i < rk.n_sites; i++)
		if (strcmp(rk.sites[i].key, key) == 0)
			return mp_rank_site_bytes(u, i);
	return -1;
}

Test(ranks, two_ranks_on_one_device_number_count_their_own_blocks)
{
	struct memprof_process p[2] = {proc(1, 100, 0, "a"), proc(2, 200, 1, "b")};

	start(p, 2, -1);
	ALLOC(1, 0, 1, 100, 1); /* rank 0: 100 */
	ALLOC(2, 0, 1, 300, 1); /* rank 1: 300; device 0 holds 400 */
	ALLOC(1, 0, 2, 50, 2);  /* rank 0: 150, its peak (seq 3) */
	FREE(2, 0, 1);          /* rank 1: 0 */
	ALLOC(2, 0, 2, 200, 2); /* rank 1: 200 */
	FREE(1, 0, 1);          /* rank 0: 50 */
	finish();
	cr_assert_eq(ms.devices[0].live_peak.bytes, 450); /* the device: both ranks */
	cr_assert_eq(rk.n_units, 2);
	cr_assert_eq(rk.n_ranked, 2);
	cr_assert_eq(rk.n_hosts, 2);
	cr_assert_eq(unit(0)->live_peak.bytes, 150);
	cr_assert_eq(unit(0)->live_peak.seq, 3);
	cr_assert_eq(unit(0)->live_peak.ts_ns, 30);
	cr_assert_eq(unit(0)->requested_peak.bytes, 92 + 42);
	cr_assert_eq(unit(1)->live_peak.bytes, 300);
	cr_assert_eq(unit(1)->live_peak.seq, 2);
	cr_assert_eq(unit(0)->live_bytes, 50);
	cr_assert_eq(unit(0)->live_blocks, 1);
	cr_assert_eq(unit(1)->live_bytes, 200);
	cr_assert_eq(unit(0)->n_devices, 1);
	cr_assert_eq(unit(0)->devices[0], 0);
	cr_assert_str_eq(unit(1)->host, "b");
	cr_assert_eq(unit(1)->pids[0], 200);
	cr_assert_eq(unit(0)->has_segments, 0);
	/* the spread: rank 1 is the worst, rank 0 the best */
	cr_assert_eq(rk.units[rk.spread.worst].rank, 1);
	cr_assert_eq(rk.units[rk.spread.best].rank, 0);
	cr_assert_eq(rk.spread.spread_bytes, 150);
	cr_assert_float_eq(rk.spread.max_over_min, 2.0, 1e-12);
	cr_assert_float_eq(rk.spread.max_over_mean, 300.0 / 225.0, 1e-12);
	cr_assert_float_eq(rk.spread.median_bytes, 225.0, 1e-12);
	cr_assert_eq(rk.spread.n_above, 1);
	cr_assert_eq(rk.units[rk.spread.above[0]].rank, 1);
	/* at its peak rank 0 held model 100 and extra 50; rank 1 model 300 */
	cr_assert_eq(site_bytes(unit(0), "build@model.py"), 100);
	cr_assert_eq(site_bytes(unit(0), "extra@shard.py"), 50);
	cr_assert_eq(site_bytes(unit(1), "build@model.py"), 300);
	cr_assert_eq(site_bytes(unit(1), "extra@shard.py"), 0); /* came after its peak */
	cr_assert_eq(rk.n_diffs, 2);
	cr_assert_str_eq(rk.diffs[0].key, "build@model.py"); /* 200 apart */
	cr_assert_eq(rk.diffs[0].max_bytes - rk.diffs[0].min_bytes, 200);
	cr_assert_eq(rk.units[rk.diffs[0].max_unit].rank, 1);
	cr_assert_eq(rk.units[rk.diffs[0].min_unit].rank, 0);
	cr_assert_eq(rk.diffs[0].n_present, 2);
	cr_assert_str_eq(rk.diffs[1].key, "extra@shard.py"); /* on rank 0 only */
	cr_assert_eq(rk.diffs[1].min_bytes, 0);
	cr_assert_eq(rk.diffs[1].max_bytes, 50);
	cr_assert_eq(rk.units[rk.diffs[1].min_unit].rank, 1);
	cr_assert_eq(rk.diffs[1].n_present, 1);
}

Test(ranks, a_rank_over_several_devices_and_processes_sums_them)
{
	/* rank 0: processes 1 and 2 (devices 0 and 1); rank 1: process 3 on device 2 */
	struct memprof_process p[3] = {proc(1, 10, 0, "a"), proc(2, 11, 0, "a"),
	                               proc(3, 12, 1, "a")};

	start(p, 3, -1);
	ALLOC(1, 0, 1, 100, 1);
	ALLOC(2, 1, 1, 100, 1); /* rank 0: 200 over two devices, its peak */
	FREE(1, 0, 1);
	ALLOC(2, 1, 2, 150, 3); /* rank 0: 250, the new peak (seq 4) */
	ALLOC(3, 2, 1, 250, 1); /* rank 1: 250 */
	finish();
	cr_assert_eq(rk.n_units, 2);
	cr_assert_eq(rk.n_hosts, 1);
	cr_assert_eq(unit(0)->n_pids, 2);
	cr_assert_eq(unit(0)->n_devices, 2);
	cr_assert_eq(unit(0)->devices[0], 0);
	cr_assert_eq(unit(0)->devices[1], 1);
	cr_assert_eq(unit(0)->live_peak.bytes, 250);
	cr_assert_eq(unit(0)->live_peak.seq, 4);
	cr_assert_eq(site_bytes(unit(0), "build@model.py"), 100);
	cr_assert_eq(site_bytes(unit(0), "forward@layers.py"), 150);
	cr_assert_eq(unit(1)->live_peak.bytes, 250);
	/* equal peaks: the first unit is both worst and best */
	cr_assert_eq(rk.spread.spread_bytes, 0);
	cr_assert_eq(rk.spread.worst, 0);
	cr_assert_eq(rk.spread.n_above, 0);
	cr_assert_float_eq(rk.spread.max_over_min, 1.0, 1e-12);
	/* model: 100 vs 250, act: 150 vs 0 */
	cr_assert_eq(rk.n_diffs, 2);
	cr_assert_str_eq(rk.diffs[0].key, "build@model.py");
	cr_assert_str_eq(rk.diffs[1].key, "forward@layers.py");
}

Test(ranks, the_device_asked_is_the_only_one_counted)
{
	struct memprof_process p[2] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL)};

	start(p, 2, 1);
	ALLOC(1, 0, 1, 500, 1); /* device 0: left out */
	ALLOC(1, 1, 2, 100, 1);
	ev(MEMPROF_OP_RESERVE, 1, 0, 7, 4096, 0); /* on device 0 */
	ev(MEMPROF_OP_RELEASE, 1, 1, 7, 0, 0);    /* its release says device 1: left out too */
	ALLOC(2, 1, 1, 40, 2);
	ALLOC(2, 0, 2, 900, 2);
	finish();
	cr_assert_eq(rk.n_units, 2);
	cr_assert_eq(unit(0)->live_peak.bytes, 100);
	cr_assert_eq(unit(0)->n_devices, 1);
	cr_assert_eq(unit(0)->devices[0], 1);
	cr_assert_eq(unit(0)->has_segments, 0);
	cr_assert_eq(unit(1)->live_peak.bytes, 40);
	cr_assert_eq(rk.n_hosts, 0);
}

Test(ranks, processes_without_a_rank_are_units_of_their_own)
{
	/* two unranked processes and rank 3; process 9 is not in the table */
	struct memprof_process p[3] = {proc(1, 700, -1, NULL), proc(2, 500, -1, "h"),
	                               proc(3, 900, 3, "h")};

	start(p, 3, -1);
	ALLOC(1, 0, 1, 10, 0);
	ALLOC(2, 0, 1, 20, 0);
	ALLOC(3, 0, 1, 30, 0);
	ALLOC(9, 0, 1, 40, 0);
	finish();
	cr_assert_eq(rk.n_units, 4);
	cr_assert_eq(rk.n_ranked, 1);
	/* the rank first, then by pid: 500, 700, then 4009 (from the record) */
	cr_assert_eq(rk.units[0].rank, 3);
	cr_assert_eq(rk.units[1].rank, -1);
	cr_assert_eq(rk.units[1].pids[0], 500);
	cr_assert_eq(rk.units[1].live_peak.bytes, 20);
	cr_assert_eq(rk.units[2].pids[0], 700);
	cr_assert_eq(rk.units[3].pids[0], 4009);
	cr_assert_eq(rk.units[3].live_peak.bytes, 40);
	/* no stacks: one site, "(no call stack)" */
	cr_assert_eq(rk.n_sites, 1);
	cr_assert_str_eq(rk.sites[0].key, "(no call stack)");
	cr_assert_eq(rk.n_diffs, 1);
	cr_assert_eq(rk.diffs[0].max_unit, 3);
	cr_assert_eq(rk.diffs[0].min_unit, 2);
}

Test(ranks, a_process_without_events_is_left_out)
{
	struct memprof_process p[3] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL),
	                               proc(3, 12, 2, NULL)};

	start(p, 3, -1);
	ALLOC(1, 0, 1, 10, 0);
	ALLOC(3, 0, 1, 10, 0);
	finish();
	cr_assert_eq(rk.n_units, 2);
	cr_assert_eq(rk.units[0].rank, 0);
	cr_assert_eq(rk.units[1].rank, 2);
	cr_assert_eq(rk.n_diffs, 0); /* the same bytes everywhere */
}

Test(ranks, segments_of_the_same_id_in_two_ranks_are_each_their_own)
{
	struct memprof_process p[3] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL),
	                               proc(3, 12, 2, NULL)};

	start(p, 3, -1);
	ev(MEMPROF_OP_RESERVE, 1, 0, 5, 1000, 0);
	ev(MEMPROF_OP_RESERVE, 2, 0, 5, 3000, 0); /* same id, same device, other rank */
	ev(MEMPROF_OP_RELEASE, 1, 0, 5, 0, 0);    /* rank 0 gives back its 1000 only */
	ev(MEMPROF_OP_RESERVE, 1, 0, 6, 500, 0);
	ev(MEMPROF_OP_MAP, 2, 0, 0, 200, 0);
	ev(MEMPROF_OP_UNMAP, 2, 0, 0, 200, 0);
	ALLOC(3, 0, 1, 10, 0); /* rank 2: no segment events */
	finish();
	cr_assert_eq(ms.devices[0].reserved_peak.bytes, 4000);
	cr_assert_eq(unit(0)->has_segments, 1);
	cr_assert_eq(unit(0)->reserved_peak.bytes, 1000);
	cr_assert_eq(unit(0)->reserved_peak.seq, 1);
	cr_assert_eq(unit(0)->reserved_bytes, 500);
	cr_assert_eq(unit(1)->reserved_peak.bytes, 3200);
	cr_assert_eq(unit(1)->reserved_peak.seq, 5);
	cr_assert_eq(unit(1)->reserved_bytes, 3000);
	cr_assert_eq(unit(2)->has_segments, 0);
	cr_assert_eq(unit(0)->live_peak.bytes, 0); /* segments are not live bytes */
	cr_assert_eq(rk.spread.min_bytes, 0);
	cr_assert_float_eq(rk.spread.max_over_min, 0.0, 0); /* undefined */
}

Test(ranks, ooms_and_leaks_per_rank)
{
	struct memprof_process p[2] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL)};

	start(p, 2, -1);
	ALLOC(1, 0, 1, 10, 0);
	ev(MEMPROF_OP_OOM, 2, 3, 0, 0, 0);
	ev(MEMPROF_OP_OOM, 2, 3, 0, 0, 0);
	ALLOC(2, 0, 1, 10, 0);
	FREE(2, 0, 1);
	finish();
	cr_assert_eq(unit(0)->n_ooms, 0);
	cr_assert_eq(unit(1)->n_ooms, 2);
	cr_assert_eq(unit(1)->n_devices, 2); /* the OOM's device 3 and device 0 */
	cr_assert_eq(unit(0)->live_bytes, 10);
	cr_assert_eq(unit(1)->live_bytes, 0);
}

Test(ranks, the_median_of_an_even_count_is_the_mean_of_the_middle_two)
{
	/* peaks 100, 100, 105, 108: median 102.5, threshold 107.625: 108 only */
	struct memprof_process p[4] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL),
	                               proc(3, 12, 2, NULL), proc(4, 13, 3, NULL)};

	start(p, 4, -1);
	ALLOC(1, 0, 1, 100, 0);
	ALLOC(2, 0, 1, 100, 0);
	ALLOC(3, 0, 1, 105, 0);
	ALLOC(4, 0, 1, 108, 0);
	finish();
	cr_assert_float_eq(rk.spread.median_bytes, 102.5, 1e-12);
	cr_assert_eq(rk.spread.n_above, 1);
	cr_assert_eq(rk.units[rk.spread.above[0]].rank, 3);
}

Test(ranks, five_percent_exactly_is_not_above)
{
	struct memprof_process p[3] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL),
	                               proc(3, 12, 2, NULL)};

	start(p, 3, -1);
	ALLOC(1, 0, 1, 100, 0);
	ALLOC(2, 0, 1, 105, 0); /* exactly 5% above the median 100 */
	ALLOC(3, 0, 1, 106, 0);
	finish();
	cr_assert_float_eq(rk.spread.median_bytes, 105.0, 1e-12);
	cr_assert_eq(rk.spread.n_above, 0);
	mp_ranks_free(&rk);
	mp_memstate_free(&ms);

	start(p, 3, -1);
	ALLOC(1, 0, 1, 100, 0);
	ALLOC(2, 0, 1, 100, 0);
	ALLOC(3, 0, 1, 105, 0);
	finish();
	cr_assert_float_eq(rk.spread.median_bytes, 100.0, 1e-12);
	cr_assert_eq(rk.spread.n_above, 0);
	mp_ranks_free(&rk);
	mp_memstate_free(&ms);

	start(p, 3, -1);
	ALLOC(1, 0, 1, 100, 0);
	ALLOC(2, 0, 1, 100, 0);
	ALLOC(3, 0, 1, 106, 0);
	finish();
	cr_assert_eq(rk.spread.n_above, 1);
	cr_assert_eq(rk.units[rk.spread.above[0]].rank, 2);
}

Test(ranks, the_copy_at_the_peak_is_not_moved_by_later_changes)
{
	/* rank 0 peaks at 300 (model 100 + act 200); then act goes, extra
	 * grows to 250 (a total of 350 would be a new peak: stay below) */
	struct memprof_process p[2] = {proc(1, 10, 0, NULL), proc(2, 11, 1, NULL)};

	start(p, 2, -1);
	ALLOC(1, 0, 1, 100, 1);
	ALLOC(1, 0, 2, 200, 3); /* peak 300 */
	FREE(1, 0, 2);
	ALLOC(1, 0, 3, 150, 2); /* 250 */
	FREE(1, 0, 1);
	ALLOC(1, 0, 4, 100, 2); /* 250 */
	ALLOC(2, 0, 1, 1, 1);
	finish();
	cr_assert_eq(unit(0)->live_peak.bytes, 300);
	cr_assert_eq(site_bytes(unit(0), "build@model.py"), 100);
	cr_assert_eq(site_bytes(unit(0), "forward@layers.py"), 200);
	cr_assert_eq(site_bytes(unit(0), "extra@shard.py"), 0);
	cr_assert_eq(mp_rank_site_blocks(unit(0), 0), 1);
}
