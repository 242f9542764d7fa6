/*
 * tests/unit/test_frag_series.c - src/analysis/frag_series.c (and the
 * mp_frag_now accessor of analysis/frag) fed through a real memory state
 * and fragmentation analysis: a series worked out by hand (every event
 * kept), the maxima of a 200000-event device surviving a downsampling to
 * 16 rows, the bound on rows and memory, devices kept apart, and unknown
 * figures before any segment or address.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/frag.h"
#include "analysis/frag_series.h"
#include "analysis/memstate.h"
#include "util/error.h"

static struct mp_memstate ms;
static struct mp_frag frag;
static struct mp_frag_series fs;
static struct mp_consumer cons;
static int64_t seq;

static void start(int64_t max_points)
{
	struct mp_mem_listener lf, ls;

	mp_memstate_init(&ms);
	mp_frag_init(&frag, &ms, 4096);
	cr_assert_eq(mp_frag_series_init(&fs, &frag, max_points), 0);
	lf = mp_frag_listener(&frag);
	ls = mp_frag_series_listener(&fs);
	cr_assert_eq(mp_memstate_listen(&ms, &lf), 0);
	cr_assert_eq(mp_memstate_listen(&ms, &ls), 0);
	cons = mp_memstate_consumer(&ms);
	seq = 0;
}

static void teardown(void)
{
	mp_frag_series_free(&fs);
	mp_frag_free(&frag);
	mp_memstate_free(&ms);
}

TestSuite(frag_series, .fini = teardown);

static void ev(int64_t ts, int op, int32_t device, int64_t id, int64_t size, uint64_t addr)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = ts;
	rec.ev.op = op;
	rec.ev.device = device;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.requested_bytes = size;
	rec.ev.address = addr;
	rec.ev.device_free_bytes = -1;
	rec.ev.process_id = 1;
	cr_assert_eq(cons.on_record(cons.ctx, &rec), 0);
}

#define ROWS_CAP 64

struct rows {
	struct mp_frag_series_point p[ROWS_CAP];
	int n;
};

static int keep_row(void *ctx, const struct mp_frag_series_point *p)
{
	struct rows *r = ctx;

	cr_assert_lt(r->n, ROWS_CAP);
	r->p[r->n++] = *p;
	return 0;
}

static void rows_of(int32_t device, struct rows *r)
{
	const struct mp_frag_series_device *d = mp_frag_series_device(&fs, device);

	cr_assert_not_null(d);
	r->n = 0;
	cr_assert_eq(mp_frag_series_foreach(d, keep_row, r), 0);
	cr_assert_eq(r->n, mp_frag_series_n_rows(d));
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-12;
}

/* The events of tests/cli/data/analyze-segments.csv: one segment of 1000
 * bytes at 4096; the figures worked out there. */
Test(frag_series, known_answers_every_event_kept)
{
	static const double share[] = {1.0, 0.9, 0.7, 0.4, 0.6, 0.6, 0.55, 0.65};
	const double ext[] = {0, 0, 0, 0.25, 0.5, 0.5, 1 - 300.0 / 550, 1 - 300.0 / 650};
	static const int64_t largest[] = {1000, 900, 700, 300, 300, 300, 300, 300};
	struct rows r;
	int i;

	start(16);
	ev(0, MEMPROF_OP_RESERVE, 0, 1, 1000, 4096);
	ev(10, MEMPROF_OP_ALLOC, 0, 1, 100, 4096);
	ev(20, MEMPROF_OP_ALLOC, 0, 2, 200, 4196);
	ev(30, MEMPROF_OP_ALLOC, 0, 3, 300, 4496);
	ev(40, MEMPROF_OP_FREE, 0, 2, 200, 4196);
	ev(50, MEMPROF_OP_OOM, 0, 0, 500, 0);
	ev(60, MEMPROF_OP_ALLOC, 0, 4, 50, 4196);
	ev(100, MEMPROF_OP_FREE, 0, 1, 100, 4096);
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	rows_of(0, &r);
	cr_assert_eq(r.n, 8);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(r.p[i].n, i + 1);
		cr_assert_eq(r.p[i].seq, i + 1);
		cr_assert_eq(r.p[i].reserved_bytes, 1000);
		cr_assert_eq(r.p[i].largest_free_bytes, largest[i], "row %d", i);
		cr_assert(near(r.p[i].free_share, share[i]), "row %d: share %g", i,
		          r.p[i].free_share);
		cr_assert(near(r.p[i].ext_ratio, ext[i]), "row %d: ext %g", i, r.p[i].ext_ratio);
	}
	cr_assert_eq(r.p[7].ts_ns, 100);
}

/* One segment of 1000000 bytes; block A (1000 bytes at its start) stays
 * live but for one event, where the free share is 1 (its unique maximum).
 * Block B (1000 bytes) comes and goes in the first 300000 bytes, so the
 * external ratio stays below 0.3 but at one event, where B splits the free
 * bytes in two holes of 498500 and 499500: 1 - 499500 / 998000.  Share 1
 * happens first at the reserve, then once mid-trace (A freed). */
Test(frag_series, maxima_survive_heavy_downsampling)
{
	const int64_t seg = 1 << 20, base = 1000000, n = 100000;
	int64_t i, share_seq = 0, ext_seq = 0, ts = 0;
	const struct mp_frag_series_device *d;
	struct rows r;
	double max_share = -1, max_ext = -1;
	int k;

	start(16);
	ev(ts++, MEMPROF_OP_RESERVE, 0, 1, base, seg);
	ev(ts++, MEMPROF_OP_ALLOC, 0, 1, 1000, seg);
	for (i = 0; i < n; i++) {
		uint64_t at = (uint64_t)(seg + 1000 + (i * 7919) % 290000);

		if (i == 61234) { /* holes [1000, 499500) and [500500, 1000000) */
			at = (uint64_t)(seg + 499500);
			ext_seq = seq + 1;
		}
		ev(ts++, MEMPROF_OP_ALLOC, 0, 2, 1000, at);
		ev(ts++, MEMPROF_OP_FREE, 0, 2, 1000, at);
		if (i == 80000) { /* past event 131072: not in the bucket of event 1 */
			ev(ts++, MEMPROF_OP_FREE, 0, 1, 1000, seg);
			share_seq = seq;
			ev(ts++, MEMPROF_OP_ALLOC, 0, 1, 1000, seg);
		}
	}
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	d = mp_frag_series_device(&fs, 0);
	cr_assert_eq(d->n_events, 2 + 2 * n + 2);
	cr_assert_gt(d->bucket_events, 1000);
	cr_assert_leq(d->cap_buckets, 16 + 1, "memory bounded by the points");
	rows_of(0, &r);
	cr_assert_leq(r.n, 16);
	cr_assert_eq(r.p[0].n, 1, "the first event is kept");
	cr_assert_eq(r.p[r.n - 1].n, d->n_events, "the last event is kept");
	for (k = 0; k < r.n; k++) {
		if (k)
			cr_assert_gt(r.p[k].n, r.p[k - 1].n);
		if (r.p[k].free_share > max_share)
			max_share = r.p[k].free_share;
		if (r.p[k].ext_ratio > max_ext)
			max_ext = r.p[k].ext_ratio;
	}
	cr_assert(near(max_share, 1.0), "max share %g", max_share);
	cr_assert(near(max_ext, 1 - 499500.0 / 998000), "max ext %g", max_ext);
	for (k = 0; k < r.n && !near(r.p[k].free_share, 1.0); k++)
		;
	cr_assert_eq(r.p[k].seq, 1, "share 1 first at the reserve");
	for (k = 0; k < r.n && r.p[k].ext_ratio != max_ext; k++)
		;
	cr_assert_eq(r.p[k].seq, ext_seq, "the external ratio's peak keeps its event");
	/* share 1 again mid-trace: the highest of its bucket, so kept */
	for (k = 0; k < r.n && r.p[k].seq != share_seq; k++)
		;
	cr_assert_lt(k, r.n, "the bucket maximum at event %lld is kept", (long long)share_seq);
	cr_assert(near(r.p[k].free_share, 1.0));
}

/* Device 2 has no address and no segment: its figures stay unknown.  Device
 * 0, in the address-space model (4 KiB granules), is kept apart. */
Test(frag_series, devices_apart_and_unknown_figures)
{
	struct rows r;
	int i;

	start(16);
	ev(0, MEMPROF_OP_ALLOC, 2, 1, 100, 0);
	ev(1, MEMPROF_OP_ALLOC, 0, 1, 1000, 8192);
	ev(2, MEMPROF_OP_ALLOC, 2, 2, 100, 0);
	ev(3, MEMPROF_OP_ALLOC, 0, 2, 1000, 9192 + 1000);
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	rows_of(2, &r);
	cr_assert_eq(r.n, 2);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(r.p[i].reserved_bytes, -1);
		cr_assert(r.p[i].free_share < 0 && r.p[i].ext_ratio < 0);
	}
	rows_of(0, &r);
	cr_assert_eq(r.n, 2);
	cr_assert_eq(r.p[0].seq, 2);
	cr_assert_eq(r.p[1].seq, 4);
	/* one granule [8192, 12288): 4096 reserved, 3096 free, one hole */
	cr_assert_eq(r.p[0].reserved_bytes, 4096);
	cr_assert(near(r.p[0].free_share, 3096.0 / 4096));
	cr_assert(near(r.p[0].ext_ratio, 0));
	/* the second block at [10192, 11192): holes of 1000 and 1096 */
	cr_assert_eq(r.p[1].free_bytes, 2096);
	cr_assert_eq(r.p[1].largest_free_bytes, 1096);
	cr_assert(near(r.p[1].ext_ratio, 1 - 1096.0 / 2096));
	cr_assert_null(mp_frag_series_device(&fs, 1));
}
