/*
 * tests/unit/test_phase_spans.c - src/analysis/phase_spans.c fed phase
 * events directly through its listener: nesting per thread, ends without a
 * begin, phases open at the end, spans of no device, and the bound on
 * spans kept (pairwise merging that keeps a shared name).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/phase_spans.h"

/* phase_spans fed phase events directly */
static struct mp_phase_spans ps;
static struct mp_mem_listener pl;

static void phase(int op, int64_t ts, int32_t device, int64_t thread, int64_t id, const char *name)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.op = op;
	rec.ev.ts_ns = ts;
	rec.ev.device = device;
	rec.ev.thread = thread;
	rec.ev.process_id = 1;
	rec.ev.phase_id = id;
	rec.phase = name;
	cr_assert_eq(pl.on_event(pl.ctx, &rec, NULL, 0), 0);
}

static void phases_start(size_t max)
{
	mp_phase_spans_init(&ps, max);
	pl = mp_phase_spans_listener(&ps);
}

static void phases_end(void)
{
	mp_phase_spans_free(&ps);
}

Test(phase_spans, nesting_threads_unmatched_and_open, .fini = phases_end)
{
	const struct mp_phase_device *d;

	phases_start(0);
	phase(MEMPROF_OP_PHASE_BEGIN, 10, 0, 1, 1, "step");
	phase(MEMPROF_OP_PHASE_BEGIN, 12, 0, 1, 2, "forward"); /* nested */
	phase(MEMPROF_OP_PHASE_BEGIN, 13, 0, 2, 3, "loader");  /* other thread: top */
	phase(MEMPROF_OP_PHASE_END, 15, 0, 1, 2, "forward");
	phase(MEMPROF_OP_PHASE_END, 16, 0, 1, 9, "nothing"); /* unmatched */
	phase(MEMPROF_OP_PHASE_END, 20, 0, 1, 1, "step");
	phase(MEMPROF_OP_PHASE_BEGIN, 30, -1, 1, 4, "nvtx"); /* no device */
	phase(MEMPROF_OP_PHASE_BEGIN, 40, 0, 1, 1, "step");  /* open at the end */
	phase(MEMPROF_OP_ALLOC, 50, 0, 1, 0, NULL);
	cr_assert_eq(pl.on_end(pl.ctx), 0);
	d = mp_phase_spans_device(&ps, 0);
	cr_assert_not_null(d);
	cr_assert_eq(d->n_phases, 3);
	cr_assert_eq(d->n_spans, 3);
	cr_assert_eq(d->n_unmatched_ends, 1);
	cr_assert_eq(d->n_open_at_end, 2);
	cr_assert_str_eq(d->spans[0].name, "step");
	cr_assert_eq(d->spans[0].begin_ts_ns, 10);
	cr_assert_eq(d->spans[0].end_ts_ns, 20);
	/* open at the end: loader (thread 2) and the second step, to ts 50 */
	cr_assert_str_eq(d->spans[1].name, "loader");
	cr_assert_eq(d->spans[1].end_ts_ns, 50);
	cr_assert_str_eq(d->spans[2].name, "step");
	cr_assert_eq(d->spans[2].begin_ts_ns, 40);
	d = mp_phase_spans_device(&ps, -1);
	cr_assert_not_null(d);
	cr_assert_eq(d->n_spans, 1);
	cr_assert_str_eq(d->spans[0].name, "nvtx");
}

Test(phase_spans, bounded_by_pairwise_merging, .fini = phases_end)
{
	const struct mp_phase_device *d;
	int64_t i, covered = 0;

	phases_start(8);
	for (i = 0; i < 100; i++) {
		phase(MEMPROF_OP_PHASE_BEGIN, 10 * i, 0, 1, 1 + i % 2, i % 2 ? "b" : "a");
		phase(MEMPROF_OP_PHASE_END, 10 * i + 5, 0, 1, 1 + i % 2, i % 2 ? "b" : "a");
	}
	cr_assert_eq(pl.on_end(pl.ctx), 0);
	d = mp_phase_spans_device(&ps, 0);
	cr_assert_eq(d->n_phases, 100);
	cr_assert_leq(d->n_spans, 8);
	cr_assert_leq(d->cap_spans, 8);
	for (i = 0; i < (int64_t)d->n_spans; i++) {
		covered += d->spans[i].n_phases;
		if (d->spans[i].n_phases > 1)
			cr_assert_null(d->spans[i].name, "a and b merged: several names");
		if (i)
			cr_assert_geq(d->spans[i].begin_ts_ns, d->spans[i - 1].end_ts_ns);
	}
	cr_assert_eq(covered, 100);
	cr_assert_eq(d->spans[0].begin_ts_ns, 0);
	cr_assert_eq(d->spans[d->n_spans - 1].end_ts_ns, 995);
}

Test(phase_spans, merged_spans_of_one_name_keep_it, .fini = phases_end)
{
	const struct mp_phase_device *d;
	int64_t i;

	phases_start(4);
	for (i = 0; i < 10; i++) {
		phase(MEMPROF_OP_PHASE_BEGIN, 10 * i, 3, 1, 7, "step");
		phase(MEMPROF_OP_PHASE_END, 10 * i + 5, 3, 1, 7, "step");
	}
	cr_assert_eq(pl.on_end(pl.ctx), 0);
	d = mp_phase_spans_device(&ps, 3);
	cr_assert_leq(d->n_spans, 4);
	for (i = 0; i < (int64_t)d->n_spans; i++)
		cr_assert_str_eq(d->spans[i].name, "step");
	cr_assert_null(mp_phase_spans_device(&ps, 0));
}
