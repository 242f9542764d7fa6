/*
 * tests/unit/test_steps.c - src/analysis/steps.c and steps_period.c fed
 * records directly: which phase names look like steps, the choice among
 * step-like names (top level first), --step with numbered names, begins in
 * other processes, the period with a warm-up before it, the anchor at the
 * fewest live bytes, a prefix that fills (later anchors still found), what
 * the caller must keep, and sequences with no period.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/steps.h"

static struct mp_steps st;
static int64_t seq;

static void teardown(void)
{
	mp_steps_free(&st);
}

TestSuite(steps, .fini = teardown);

static int phase(int op, const char *name, int64_t process, int64_t thread)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 10;
	rec.ev.op = op;
	rec.ev.process_id = process;
	rec.ev.thread = thread;
	rec.phase = name;
	return mp_steps_feed(&st, &rec, 0);
}

static int alloc(int64_t size, int64_t stack, int64_t live)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 10;
	rec.ev.op = MEMPROF_OP_ALLOC;
	rec.ev.process_id = 1;
	rec.ev.size_bytes = size;
	rec.ev.stack_id = stack;
	return mp_steps_feed(&st, &rec, live);
}

Test(steps, step_like_names)
{
	cr_assert(mp_steps_name_like("train_step"));
	cr_assert(mp_steps_name_like("ProfilerStep#3"));
	cr_assert(mp_steps_name_like("Iteration 4"));
	cr_assert(mp_steps_name_like("TrainIter"));
	cr_assert(mp_steps_name_like("Optimizer.step#AdamW.step"));
	cr_assert(mp_steps_name_like("STEP"));
	cr_assert_not(mp_steps_name_like("writer"));   /* wr-iter: inside a word */
	cr_assert_not(mp_steps_name_like("backstep")); /* inside a word */
	cr_assert_not(mp_steps_name_like("forward"));
	cr_assert_not(mp_steps_name_like(""));
}

Test(steps, top_level_name_wins_over_more_frequent_nested_one)
{
	int64_t starts[3], end = 0;
	int i, j;

	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "outer_iter", 1, 5), 1);
		starts[i] = seq;
		for (j = 0; j < 2; j++) {
			cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "inner.step", 1, 5), 1);
			cr_assert_eq(phase(MEMPROF_OP_PHASE_END, "inner.step", 1, 5), 1);
		}
		cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "forward", 1, 5), 0);
		cr_assert_eq(phase(MEMPROF_OP_PHASE_END, "forward", 1, 5), 0);
		cr_assert_eq(phase(MEMPROF_OP_PHASE_END, "outer_iter", 1, 5), 1);
		end = seq;
	}
	/* another thread's step-like phase is top level there, but begins once */
	phase(MEMPROF_OP_PHASE_BEGIN, "loader_step", 1, 6);
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_PHASE_NAME);
	cr_assert_str_eq(st.result.name, "outer_iter");
	cr_assert_eq(st.result.n_steps, 3);
	for (i = 0; i < 3; i++)
		cr_assert_eq(st.result.starts[i].seq, starts[i]);
	cr_assert_eq(st.result.last_end.seq, end);
	cr_assert_eq(st.n_cands, 3);
	cr_assert_eq(st.cands[1].n_begins, 6);
	cr_assert_eq(st.cands[1].n_top_level, 0);
	cr_assert(strstr(st.result.why, "3 times, 3 at the top level"));
}

Test(steps, step_option_numbered_names_and_other_processes)
{
	cr_assert_eq(mp_steps_init(&st, "ProfilerStep#", 0), 0);
	cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "ProfilerStep#1", 1, 1), 1);
	cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "ProfilerStep#1", 2, 1), 0); /* rank 2 */
	cr_assert_eq(phase(MEMPROF_OP_PHASE_END, "ProfilerStep#1", 1, 1), 1);
	cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "ProfilerStep#2", 1, 1), 1);
	cr_assert_eq(phase(MEMPROF_OP_PHASE_BEGIN, "ProfilerStepper", 1, 1), 0);
	cr_assert_eq(alloc(100, 1, 0), 0); /* no period search with --step */
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_PHASE);
	cr_assert_str_eq(st.result.name, "ProfilerStep#N");
	cr_assert_eq(st.result.n_steps, 2);
	cr_assert_eq(st.result.starts[1].seq, 4);
	cr_assert_eq(st.result.last_end.seq, 0); /* the second never ended */
	cr_assert_eq(st.cands[0].n_other_processes, 1);
	cr_assert(mp_steps_needed(&st, 1));
	cr_assert_not(mp_steps_needed(&st, 2));
	cr_assert_not(mp_steps_needed(&st, 3)); /* an end followed by another begin */
}

Test(steps, step_option_absent_name)
{
	cr_assert_eq(mp_steps_init(&st, "train", 0), 0);
	phase(MEMPROF_OP_PHASE_BEGIN, "trainer", 1, 1); /* not train and digits */
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_NONE);
	cr_assert_str_eq(st.result.why,
	                 "no steps found: no phase named 'train' begins in the trace (--step)");
}

/* init: 3 allocations; then n steps of [10, 20, 30, 20] with stacks 1, 2,
 * 3, 4 (the two 20s differ by stack); live bytes lowest before the 20 of
 * stack 2 (the step's second allocation), so the anchor is that one. */
static void periodic(int n_steps, int64_t *anchors)
{
	static const int64_t sizes[4] = {10, 20, 30, 20}, live[4] = {500, 100, 700, 900};
	int i, k;

	alloc(7, 70, 0);
	alloc(8, 80, 0);
	alloc(9, 90, 0);
	for (k = 0; k < n_steps; k++)
		for (i = 0; i < 4; i++) {
			alloc(sizes[i], i + 1, live[i]);
			if (i == 1)
				anchors[k] = seq;
		}
}

Test(steps, period_after_a_warm_up)
{
	int64_t anchors[6];
	size_t i;

	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	phase(MEMPROF_OP_PHASE_BEGIN, "iteration", 1, 1); /* step-like, once */
	periodic(6, anchors);
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_PERIOD);
	cr_assert_eq(st.period.period, 4);
	cr_assert_eq(st.period.start_index, 3);
	cr_assert_eq(st.period.anchor_size_bytes, 20);
	cr_assert_eq(st.period.anchor_stack_id, 2);
	cr_assert_eq(st.result.n_steps, 6);
	for (i = 0; i < 6; i++)
		cr_assert_eq(st.result.starts[i].seq, anchors[i], "step %zu", i);
	cr_assert_eq(st.result.last_end.seq, 0);
	cr_assert(strstr(st.result.why, "repeats every 4 allocations from allocation 4 on"));
}

Test(steps, prefix_fills_then_anchors_are_followed)
{
	int64_t anchors[10];
	int k;

	cr_assert_eq(mp_steps_init(&st, NULL, 16), 0);
	/* the first 16 allocations: kept (any may start a step) */
	alloc(7, 70, 0);
	alloc(8, 80, 0);
	alloc(9, 90, 0);
	for (k = 0; k < 10; k++) {
		int r[4];

		r[0] = alloc(10, 1, 500);
		r[1] = alloc(20, 2, 100);
		anchors[k] = seq;
		r[2] = alloc(30, 3, 700);
		r[3] = alloc(20, 4, 900);
		if (seq <= 16) {
			cr_assert(r[0] == 1 && r[1] == 1 && r[2] == 1);
		} else if (seq > 20) { /* searched at 16: only anchors now */
			cr_assert_eq(r[0], 0);
			cr_assert_eq(r[1], 1);
			cr_assert_eq(r[3], 0);
		}
	}
	cr_assert(st.period.done && st.period.found);
	cr_assert_eq(st.period.n_searched, 16);
	cr_assert(mp_steps_needed(&st, anchors[0]));
	cr_assert_not(mp_steps_needed(&st, anchors[0] + 1));
	cr_assert_not(mp_steps_needed(&st, 1));
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.n_steps, 10);
	cr_assert_eq(st.result.starts[9].seq, anchors[9]);
}

Test(steps, no_period_in_distinct_or_short_tails)
{
	int i;

	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	for (i = 0; i < 100; i++) /* distinct, then a short repeating tail */
		alloc(1000 + i, 1, 0);
	for (i = 0; i < 6; i++)
		alloc(i % 2 ? 5 : 6, 1, 0);
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_NONE);
	cr_assert(strstr(st.result.why, "the first 106 allocations of the first process and "
	                                "device repeat no sequence twice over a quarter of them"),
	          "%s", st.result.why);
}

/*
 * A one-step window of a forward pass: 22 layers, each allocating a kept
 * activation (1000 bytes) and a temporary (100 bytes).  The sequence repeats
 * every 2 allocations, but live bytes grow by 1000 a repeat, over a quarter of
 * the 1100 a repeat allocates: layers inside one step, not 22 steps.
 */
Test(steps, repeats_inside_one_step_are_not_steps)
{
	int64_t live = 5000;
	int k;

	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	alloc(7, 70, 0);
	for (k = 0; k < 22; k++) {
		alloc(1000, 1, live);
		alloc(100, 2, live + 1000);
		live += 1000; /* the temporary is freed, the activation kept */
	}
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_NONE, "found %zu steps", st.result.n_steps);
	cr_assert(strstr(st.result.why,
	                 "repeat every 2 allocations (22 times), but live bytes change "
	                 "by 1000 bytes a repeat, over a quarter of the 1100 bytes a "
	                 "repeat allocates: repeats inside one step (layers), not steps"),
	          "%s", st.result.why);
}

/* Steps that leak 5 bytes each (of the 80 a step allocates) are still steps. */
Test(steps, steps_that_leak_a_little_are_steps)
{
	static const int64_t sizes[4] = {10, 20, 30, 20}, live[4] = {500, 100, 700, 900};
	int i, k;

	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	for (k = 0; k < 8; k++)
		for (i = 0; i < 4; i++)
			alloc(sizes[i], i + 1, live[i] + 5 * k);
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_PERIOD, "%s", st.result.why);
	cr_assert_eq(st.result.n_steps, 8);
}

Test(steps, no_allocations_no_phases)
{
	cr_assert_eq(mp_steps_init(&st, NULL, 0), 0);
	cr_assert_eq(mp_steps_finish(&st), 0);
	cr_assert_eq(st.result.method, MP_STEPS_NONE);
	cr_assert(strstr(st.result.why, "the trace has no block-level allocations"));
	cr_assert_str_eq(mp_steps_method_name(MP_STEPS_PERIOD), "period");
}
