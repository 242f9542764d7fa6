/*
 * tests/unit/test_plan.c - src/analysis/plan.c and plan_stats.c: the
 * call-time histogram (exact below 128 ns, within 1/128 above, nearest
 * rank), the least-squares trend, the ratios and OOM verdicts, and the
 * listener fed through a real memory state and fragmentation analysis:
 * the state at the end of each step, the trend and its projection, call
 * counts and durations, OOM verdicts, and the copies pruned to what the
 * step detector needs.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/frag.h"
#include "analysis/memstate.h"
#include "analysis/plan.h"

#define MIB (INT64_C(1) << 20)

Test(plan_stats, histogram_exact_then_within_1_128)
{
	struct mp_hist h = {0};
	int64_t v;

	cr_assert_eq(mp_hist_quantile(&h, 0.5), -1);
	for (v = 1; v <= 100; v++)
		cr_assert_eq(mp_hist_add(&h, v), 0);
	cr_assert_eq(mp_hist_quantile(&h, 0.5), 50);
	cr_assert_eq(mp_hist_quantile(&h, 0.99), 99);
	cr_assert_eq(mp_hist_quantile(&h, 1.0), 100);
	mp_hist_free(&h);
	for (v = 1; v <= 100000; v++)
		cr_assert_eq(mp_hist_add(&h, v * 37), 0);
	/* nearest rank: 50000 * 37 and 99000 * 37 */
	cr_assert_leq(llabs(mp_hist_quantile(&h, 0.5) - 1850000), 1850000 / 128);
	cr_assert_leq(llabs(mp_hist_quantile(&h, 0.99) - 3663000), 3663000 / 128);
	cr_assert_eq(mp_hist_quantile(&h, 1.0), 3700000); /* clamped to the max */
	mp_hist_free(&h);
	cr_assert_eq(mp_hist_add(&h, -5), 0); /* counts as 0 */
	cr_assert_eq(mp_hist_add(&h, INT64_C(1) << 60), 0);
	cr_assert_eq(mp_hist_quantile(&h, 0.5), 0);
	cr_assert_eq(mp_hist_quantile(&h, 0.99), INT64_C(1) << 60);
	mp_hist_free(&h);
}

Test(plan_stats, histogram_error_bound_everywhere)
{
	int64_t v;

	for (v = 1; v < (INT64_C(1) << 40); v = v * 3 / 2 + 1) {
		struct mp_hist h = {0};
		int64_t got;

		cr_assert_eq(mp_hist_add(&h, 1), 0);
		cr_assert_eq(mp_hist_add(&h, v), 0);
		cr_assert_eq(mp_hist_add(&h, v), 0);
		cr_assert_eq(mp_hist_add(&h, INT64_C(1) << 45), 0);
		got = mp_hist_quantile(&h, 0.5); /* rank 2: v */
		cr_assert_leq(llabs(got - v), v / 128, "v %lld got %lld", (long long)v,
		              (long long)got);
		mp_hist_free(&h);
	}
}

Test(plan_stats, trend_and_ratios_and_verdicts)
{
	double x[5] = {1, 2, 3, 4, 5}, y[5];
	struct mp_trend t;
	struct mp_plan_point p = {1, 60 * MIB, 80 * MIB, 20 * MIB, 5 * MIB};
	int i;

	for (i = 0; i < 5; i++)
		y[i] = 0.2 + 0.0125 * x[i];
	mp_trend_fit(x, y, 5, &t);
	cr_assert(t.has_slope);
	cr_assert_float_eq(t.slope, 0.0125, 1e-12);
	cr_assert_float_eq(t.intercept, 0.2, 1e-12);
	mp_trend_fit(x, y, 1, &t);
	cr_assert_not(t.has_slope);
	x[1] = 1;
	mp_trend_fit(x, y, 2, &t); /* equal xs */
	cr_assert_not(t.has_slope);
	cr_assert_float_eq(mp_plan_frag_ratio(&p), 0.25, 1e-12);
	cr_assert_float_eq(mp_plan_external_ratio(&p), 0.75, 1e-12);
	p.reserved_bytes = 0;
	p.free_in_reserved_bytes = 0;
	cr_assert_float_eq(mp_plan_frag_ratio(&p), 0, 1e-12);
	cr_assert_float_eq(mp_plan_external_ratio(&p), 0, 1e-12);
	p.reserved_bytes = -1;
	cr_assert_lt(mp_plan_frag_ratio(&p), 0);
	cr_assert_eq(mp_plan_oom_verdict(6 * MIB, 7 * MIB, 4 * MIB), MP_OOM_FRAGMENTATION);
	cr_assert_eq(mp_plan_oom_verdict(8 * MIB, 7 * MIB, 4 * MIB), MP_OOM_CAPACITY);
	cr_assert_eq(mp_plan_oom_verdict(4 * MIB, 7 * MIB, 4 * MIB), MP_OOM_FITS_HOLE);
	cr_assert_eq(mp_plan_oom_verdict(4 * MIB, -1, -1), MP_OOM_UNKNOWN);
	cr_assert_str_eq(mp_plan_verdict_name(MP_OOM_FITS_HOLE), "fits-a-hole");
}

/* The listener through a real memory state and frag analysis. */
static struct mp_memstate ms;
static struct mp_frag frag;
static struct mp_plan plan;
static struct mp_consumer cons;
static int64_t seq;

static void start(const char *step_name, size_t prefix)
{
	struct mp_mem_listener lf, lp;

	mp_memstate_init(&ms);
	mp_frag_init(&frag, &ms, 4096);
	cr_assert_eq(mp_plan_init(&plan, &ms, &frag, step_name, -1, prefix), 0);
	lf = mp_frag_listener(&frag);
	lp = mp_plan_listener(&plan);
	cr_assert_eq(mp_memstate_listen(&ms, &lf), 0);
	cr_assert_eq(mp_memstate_listen(&ms, &lp), 0);
	cons = mp_memstate_consumer(&ms);
	seq = 0;
}

static void teardown(void)
{
	mp_plan_free(&plan);
	mp_frag_free(&frag);
	mp_memstate_free(&ms);
}

static void ev_on(int32_t device, int op, int64_t id, int64_t size, uint64_t addr,
                  const char *phase, int64_t dur)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 1000;
	rec.ev.op = op;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.requested_bytes = size;
	rec.ev.address = addr;
	rec.ev.process_id = 1;
	rec.ev.duration_ns = dur;
	rec.ev.device = device;
	rec.phase = phase;
	cr_assert_eq(cons.on_record(cons.ctx, &rec), 0);
}

static void ev(int op, int64_t id, int64_t size, uint64_t addr, const char *phase, int64_t dur)
{
	ev_on(0, op, id, size, addr, phase, dur);
}

#define SEG UINT64_C(0x10000000)

TestSuite(plan, .fini = teardown);

Test(plan, steps_fragmentation_trend_overhead_ooms)
{
	const struct mp_plan_device *pd;
	int k;

	start(NULL, 0);
	ev(MEMPROF_OP_RESERVE, 100, 8 * MIB, SEG, NULL, 0);
	for (k = 0; k < 8; k++)
		ev(MEMPROF_OP_ALLOC, k + 1, MIB, SEG + (uint64_t)k * MIB, NULL, 1000 + k);
	for (k = 0; k < 3; k++) { /* step k frees block 2k: holes of 1 MiB */
		ev(MEMPROF_OP_PHASE_BEGIN, 0, 0, 0, "step", 0);
		ev(MEMPROF_OP_FREE, 2 * k + 1, MIB, SEG + (uint64_t)(2 * k) * MIB, NULL, 500);
		ev(MEMPROF_OP_PHASE_END, 0, 0, 0, "step", 0);
	}
	ev(MEMPROF_OP_OOM, 0, 2 * MIB, 0, NULL, 0); /* 3 MiB free, holes of 1: fragmentation */
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	cr_assert_eq(plan.steps.result.method, MP_STEPS_PHASE_NAME);
	cr_assert_eq(plan.n_steps, 3);
	cr_assert_eq(plan.step_list[0].start.seq, 10);
	cr_assert_eq(plan.step_list[0].end.seq, 13);
	cr_assert_eq(plan.step_list[2].end.seq, 18); /* the last phase end */
	cr_assert_eq(plan.n_devices, 1);
	pd = &plan.devices[0];
	for (k = 0; k < 3; k++) {
		cr_assert_eq(pd->at_end[k].live_bytes, (7 - k) * MIB);
		cr_assert_eq(pd->at_end[k].free_in_reserved_bytes, (k + 1) * MIB);
		cr_assert_eq(pd->at_end[k].largest_free_bytes, MIB);
	}
	cr_assert_float_eq(pd->trend.fit.slope, 1.0 / 8, 1e-12);
	cr_assert_eq(pd->trend.last_step, 3);
	cr_assert_float_eq(pd->trend.last_ratio, 3.0 / 8, 1e-12);
	cr_assert(pd->trend.has_target && !pd->trend.target_measured);
	cr_assert_float_eq(pd->trend.target_ratio, 1.0, 1e-12); /* clamped */
	cr_assert_eq(plan.overhead.n_calls, 1 + 8 + 3 + 1);
	cr_assert_eq(plan.overhead.n_with_duration, 8 + 3);
	cr_assert_eq(plan.overhead.time_ns, 8 * 1000 + 28 + 3 * 500);
	cr_assert_eq(plan.overhead.by_class[MP_CALL_ALLOC][21].n, 8); /* 1 MiB: 2^20, class 21 */
	/* rank 4 of 1000..1007: 1003, in the bucket [1000, 1008) */
	cr_assert_leq(
	        llabs(mp_hist_quantile(&plan.overhead.by_class[MP_CALL_ALLOC][21], 0.5) - 1003),
	        1003 / 128);
	cr_assert_eq(plan.n_ooms[MP_OOM_FRAGMENTATION], 1);
	cr_assert_eq(mp_plan_alloc_target_met(&plan), 1);
}

Test(plan, period_copies_pruned_to_the_anchors)
{
	int k;

	start(NULL, 64);
	ev(MEMPROF_OP_RESERVE, 100, 64 * MIB, SEG, NULL, 0);
	for (k = 0; k < 3000; k++) {
		ev(MEMPROF_OP_ALLOC, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_ALLOC, 2, MIB, SEG + 4 * MIB, NULL, 0);
		ev(MEMPROF_OP_FREE, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_FREE, 2, MIB, SEG + 4 * MIB, NULL, 0);
	}
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	cr_assert_eq(plan.steps.result.method, MP_STEPS_PERIOD);
	cr_assert_eq(plan.steps.period.period, 2);
	cr_assert_eq(plan.n_steps, 3000);
	/* at most the anchors and the copies since the last prune */
	cr_assert_leq(plan.n_snaps, 2 * 3000 + 1024);
	for (k = 0; k < 2999; k++) {
		cr_assert_eq(plan.devices[0].at_end[k].live_bytes, 0);
		cr_assert_eq(plan.devices[0].at_end[k].free_in_reserved_bytes, 64 * MIB);
	}
	cr_assert_eq(plan.overhead.n_with_duration, 0);
	cr_assert_eq(mp_plan_alloc_target_met(&plan), -1);
}

/* Copies dropped by a prune are reused for later ones (plan.c keeps their
 * arrays): every step's figures must still be its own.  A block leaks each
 * period, so each step ends with 4 KiB more live than the one before. */
Test(plan, reused_copies_hold_their_own_step)
{
	int k;

	start(NULL, 64);
	ev(MEMPROF_OP_RESERVE, 100, 64 * MIB, SEG, NULL, 0);
	for (k = 0; k < 3000; k++) {
		ev(MEMPROF_OP_ALLOC, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_ALLOC, 2, MIB, SEG + 4 * MIB, NULL, 0);
		ev(MEMPROF_OP_FREE, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_FREE, 2, MIB, SEG + 4 * MIB, NULL, 0);
		ev(MEMPROF_OP_ALLOC, 1000 + k, 4096, SEG + 8 * MIB + (uint64_t)k * 4096, NULL, 0);
	}
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	cr_assert_eq(plan.steps.result.method, MP_STEPS_PERIOD);
	cr_assert_gt(plan.n_steps, 2000);
	cr_assert_leq(plan.n_snaps, 2 * plan.n_steps + 1024);
	for (k = 0; k + 2 < (int)plan.n_steps; k++)
		cr_assert_eq(plan.devices[0].at_end[k + 1].live_bytes -
		                     plan.devices[0].at_end[k].live_bytes,
		             4096, "step %d: %lld then %lld", k,
		             (long long)plan.devices[0].at_end[k].live_bytes,
		             (long long)plan.devices[0].at_end[k + 1].live_bytes);
}

/* The copies of each device's figures, kept inline for one or two devices
 * and in an array of their own for more (plan.c's SNAP_INLINE): device j
 * leaks (j + 1) * 4 KiB each period, so each step of each device ends
 * that much above the one before. */
static void each_device_holds_its_own_step(int n_dev)
{
	int k, j;

	start(NULL, 64);
	for (j = 0; j < n_dev; j++)
		ev_on(j, MEMPROF_OP_RESERVE, 100 + j, 64 * MIB, SEG, NULL, 0);
	for (k = 0; k < 1500; k++) {
		ev(MEMPROF_OP_ALLOC, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_ALLOC, 2, MIB, SEG + 4 * MIB, NULL, 0);
		ev(MEMPROF_OP_FREE, 1, 4 * MIB, SEG, NULL, 0);
		ev(MEMPROF_OP_FREE, 2, MIB, SEG + 4 * MIB, NULL, 0);
		for (j = 0; j < n_dev; j++) /* not the anchor's device but for j = 0 */
			ev_on(j, MEMPROF_OP_ALLOC, 10000 * (j + 1) + k, 4096 * (j + 1),
			      SEG + 8 * MIB + (uint64_t)k * 4096 * (uint64_t)(j + 1), NULL, 0);
	}
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	cr_assert_eq(plan.steps.result.method, MP_STEPS_PERIOD);
	cr_assert_gt(plan.n_steps, 1000);
	cr_assert_eq(plan.n_devices, n_dev);
	for (j = 0; j < n_dev; j++)
		for (k = 0; k + 2 < (int)plan.n_steps; k++)
			cr_assert_eq(plan.devices[j].at_end[k + 1].live_bytes -
			                     plan.devices[j].at_end[k].live_bytes,
			             4096 * (j + 1), "device %d, step %d: %lld then %lld", j, k,
			             (long long)plan.devices[j].at_end[k].live_bytes,
			             (long long)plan.devices[j].at_end[k + 1].live_bytes);
}

Test(plan, copies_of_two_devices_inline)
{
	each_device_holds_its_own_step(2);
}

Test(plan, copies_of_three_devices_in_arrays)
{
	each_device_holds_its_own_step(3);
}
