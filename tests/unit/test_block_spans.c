/*
 * tests/unit/test_block_spans.c - src/analysis/block_spans.c (and its
 * merged series, src/analysis/span_merged.c) fed blocks directly through
 * its listener: with a limit it keeps exactly the largest blocks (ties to
 * the earlier), in order of allocation, its memory bounded by the limit;
 * the merged series is exact when nothing is merged after the fact, and
 * otherwise never below the true highest nor above it by more than the
 * blocks merged after the fact at that bucket; without a limit every block
 * is kept as before.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/block_spans.h"

#define N_ALLOCS 3000
#define N_EVENTS (2 * N_ALLOCS)

struct blk {
	int64_t size, a_seq, f_seq; /* f_seq 0: never freed */
};

/* A trace: allocation i at seq a_seq, freed at f_seq; ts = 7 * seq + 100. */
static struct blk tr[N_ALLOCS];
static int64_t ev_blk[N_EVENTS + 1]; /* seq -> block (+1 alloc, -1 free), 0 none */

static int64_t ts_of(int64_t seq)
{
	return 7 * seq + 100;
}

/* sizes: 0 random, 1 non-increasing (ties in threes) */
static void make_trace(int sizes, unsigned seed)
{
	int64_t seq = 1;
	int live[N_ALLOCS], n_live = 0, i;

	srand(seed);
	memset(ev_blk, 0, sizeof(ev_blk));
	for (i = 0; i < N_ALLOCS; i++) {
		tr[i].size = sizes ? 100000 - i / 3 * 10 : 512 * (1 + rand() % 64);
		tr[i].a_seq = seq;
		tr[i].f_seq = 0;
		ev_blk[seq++] = i + 1;
		live[n_live++] = i;
		if (n_live > 40 || (n_live && rand() % 3 == 0)) {
			int k = rand() % n_live, j = live[k];

			live[k] = live[--n_live];
			tr[j].f_seq = seq;
			ev_blk[seq++] = -(j + 1);
		}
	}
}

static void feed(struct mp_block_spans *s)
{
	struct mp_mem_listener l = mp_block_spans_listener(s);
	int64_t seq;

	for (seq = 1; seq <= N_EVENTS; seq++) {
		struct memprof_record rec;
		struct mp_mem_block b;
		int64_t k = ev_blk[seq];

		if (!k)
			continue;
		memset(&rec, 0, sizeof(rec));
		memset(&b, 0, sizeof(b));
		rec.ev.seq = seq;
		rec.ev.ts_ns = ts_of(seq);
		rec.ev.op = k > 0 ? MEMPROF_OP_ALLOC : MEMPROF_OP_FREE;
		b.key = (uint64_t)(k > 0 ? k : -k) * 977;
		b.size_bytes = b.requested_bytes = tr[(k > 0 ? k : -k) - 1].size;
		b.address = b.key * 4096;
		if (k > 0)
			cr_assert_eq(l.on_alloc(l.ctx, &b, &rec), 0);
		else {
			cr_assert_eq(l.on_free(l.ctx, &b, &rec), 0);
			cr_assert_eq(l.on_release(l.ctx, &b, &rec), 0);
		}
		cr_assert_eq(l.on_event(l.ctx, &rec, NULL, 0), 0);
	}
	cr_assert_eq(l.on_end(l.ctx), 0);
}

/* Block j is better than i: larger, or as large and earlier. */
static int better(int j, int i)
{
	return tr[j].size > tr[i].size || (tr[j].size == tr[i].size && j < i);
}

/* kept[i]: in the final kept set; direct[i]: merged at its allocation. */
static void expected_sets(size_t max, char *kept, char *direct)
{
	int i, j;

	for (i = 0; i < N_ALLOCS; i++) {
		size_t ahead = 0, before = 0;

		for (j = 0; j < N_ALLOCS; j++) {
			ahead += better(j, i);
			before += j < i && better(j, i);
		}
		kept[i] = ahead < max;
		direct[i] = before >= max;
	}
}

/* The merged blocks' live bytes at seq x (after its event), on the seq axis. */
static double merged_level(const char *kept, int64_t x)
{
	double level = 0;
	int i;

	for (i = 0; i < N_ALLOCS; i++)
		if (!kept[i] && tr[i].a_seq <= x && (!tr[i].f_seq || x < tr[i].f_seq))
			level += (double)tr[i].size;
	return level;
}

/* Checks the seq axis's series against the true highest per bucket. */
static void check_series(const struct mp_span_merged *m, const char *kept, const char *direct,
                         int exact)
{
	static double v[MP_SPAN_BUCKETS + 1];
	size_t n = mp_span_merged_values(m, v), b;
	int i;

	cr_assert_leq(n, MP_SPAN_BUCKETS + 1);
	cr_assert_eq(m->origin, 1, "the series starts at the first event");
	for (b = 0; b + 1 < n; b++) {
		int64_t lo = m->origin + (int64_t)b * m->width, hi = lo + m->width, x;
		double best = lo > 1 ? merged_level(kept, lo - 1) : 0, slack = 0; /* carried in */

		for (x = lo; x < hi && x <= N_EVENTS; x++) {
			double l = merged_level(kept, x);
			best = l > best ? l : best;
		}
		for (i = 0; i < N_ALLOCS; i++) /* merged after the fact, touching this bucket */
			if (!kept[i] && !direct[i] && tr[i].a_seq < hi &&
			    (!tr[i].f_seq || tr[i].f_seq >= lo))
				slack += 2 * (double)tr[i].size;
		if (exact)
			cr_assert_eq(v[b], best, "bucket %zu: %g, the true highest is %g", b, v[b],
			             best);
		cr_assert_geq(v[b], best, "bucket %zu: %g below the true highest %g", b, v[b],
		              best);
		cr_assert_leq(v[b], best + slack, "bucket %zu: %g over %g + %g", b, v[b], best,
		              slack);
	}
	cr_assert_eq(v[n - 1], merged_level(kept, N_EVENTS),
	             "the last value is the level at the end");
}

static void check_kept(const struct mp_block_spans_device *d, const char *kept, size_t max)
{
	size_t k = 0;
	int i;

	cr_assert_eq(d->n_total, N_ALLOCS);
	cr_assert_eq(d->n_blocks, max);
	cr_assert_leq(d->cap_blocks, 2 * max + 64, "memory follows the limit, not the trace");
	for (i = 0; i < N_ALLOCS; i++) {
		if (!kept[i])
			continue;
		cr_assert_lt(k, d->n_blocks);
		cr_assert_eq(d->blocks[k].alloc_seq, tr[i].a_seq, "kept block %zu is allocation %d",
		             k, i);
		cr_assert_eq(d->blocks[k].size_bytes, tr[i].size);
		cr_assert_eq(d->blocks[k].free_seq, tr[i].f_seq ? tr[i].f_seq : MP_SPAN_OPEN);
		cr_assert_eq(d->blocks[k].free_ts_ns,
		             tr[i].f_seq ? ts_of(tr[i].f_seq) : MP_SPAN_OPEN);
		k++;
	}
}

static void run(int sizes, unsigned seed, size_t max)
{
	static char kept[N_ALLOCS], direct[N_ALLOCS];
	struct mp_block_spans s;
	const struct mp_block_spans_device *d;

	make_trace(sizes, seed);
	mp_block_spans_init(&s);
	mp_block_spans_limit(&s, max);
	feed(&s);
	cr_assert_not_null(d = mp_block_spans_device(&s, 0));
	expected_sets(max, kept, direct);
	check_kept(d, kept, max);
	cr_assert_not_null(d->by_seq);
	cr_assert_not_null(d->by_time);
	cr_assert_eq(d->by_time->origin, ts_of(1));
	check_series(d->by_seq, kept, direct, sizes == 1);
	mp_block_spans_free(&s);
}

Test(block_spans, keeps_the_largest_and_merges_exactly_in_stream_order)
{
	run(1, 1, 100); /* sizes only fall: nothing is merged after the fact */
}

Test(block_spans, merged_after_the_fact_bounded_both_ways)
{
	run(0, 2, 100);
	run(0, 3, 7);
}

Test(block_spans, limit_zero_merges_every_block)
{
	run(0, 4, 0);
}

Test(block_spans, without_a_limit_every_block_is_kept_in_order)
{
	struct mp_block_spans s;
	const struct mp_block_spans_device *d;
	int i;

	make_trace(0, 5);
	mp_block_spans_init(&s);
	feed(&s);
	cr_assert_not_null(d = mp_block_spans_device(&s, 0));
	cr_assert_eq(d->n_blocks, N_ALLOCS);
	cr_assert_eq(d->n_total, N_ALLOCS);
	cr_assert_null(d->by_seq, "nothing merged");
	for (i = 0; i < N_ALLOCS; i++)
		cr_assert_eq(d->blocks[i].alloc_seq, tr[i].a_seq);
	mp_block_spans_free(&s);
}

Test(span_merged, buckets_double_and_stay_bounded)
{
	static struct mp_span_merged m;
	static double v[MP_SPAN_BUCKETS + 1];
	size_t n;

	mp_span_merged_init(&m);
	mp_span_merged_change(&m, 1000, 5);
	mp_span_merged_change(&m, 1001, -5);
	mp_span_merged_change(&m, 1000 + 10 * MP_SPAN_BUCKETS, 3); /* coarsens to width 16 */
	mp_span_merged_add_life(&m, 1002, 1003, 7);
	n = mp_span_merged_values(&m, v);
	cr_assert_eq(m.width, 16);
	cr_assert_leq(n, MP_SPAN_BUCKETS + 1);
	cr_assert_eq(v[0], 12, "the highest in bucket 0 (5) plus the life added (7)");
	cr_assert_eq(v[1], 0);
	cr_assert_eq(v[n - 2], 3);
	cr_assert_eq(v[n - 1], 3, "the level now");
	mp_span_merged_change(&m, INT64_MAX, -3); /* far away: coarsens, never overflows */
	n = mp_span_merged_values(&m, v);
	cr_assert_leq(n, MP_SPAN_BUCKETS + 1);
	cr_assert_eq(v[n - 1], 0);
}
