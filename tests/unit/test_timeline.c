/*
 * tests/unit/test_timeline.c - src/analysis/timeline.c fed device figures
 * directly through its listener, and src/report/timeline_csv.c: series
 * worked out by hand (every event kept, spikes, dips and peaks surviving a
 * downsampling), randomized series checked against a brute-force
 * reference, and the exact CSV text.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/timeline.h"
#include "report/timeline_csv.h"
#include "util/error.h"

static struct mp_timeline tl;
static struct mp_mem_listener lis;
static int64_t seq;

static void start(int64_t max_points)
{
	cr_assert_eq(mp_timeline_init(&tl, max_points), 0);
	lis = mp_timeline_listener(&tl);
	seq = 0;
}

static void teardown(void)
{
	mp_timeline_free(&tl);
}

TestSuite(timeline, .fini = teardown);

/* One event on device: its figures after the event; reserved -1 for
 * "no segment-level event yet".  ts_ns is 10 * seq unless given. */
static void feed_ts(int32_t device, int64_t ts_ns, int64_t live, int64_t requested,
                    int64_t reserved)
{
	struct memprof_record rec;
	struct mp_mem_device d;

	memset(&rec, 0, sizeof(rec));
	memset(&d, 0, sizeof(d));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = ts_ns;
	rec.ev.device = device;
	d.device = device;
	d.live_bytes = live;
	d.requested_bytes = requested;
	d.has_segments = reserved >= 0;
	d.reserved_bytes = reserved >= 0 ? reserved : 0;
	cr_assert_eq(lis.on_event(lis.ctx, &rec, &d, 0), 0);
}

static void feed(int32_t device, int64_t live, int64_t requested, int64_t reserved)
{
	feed_ts(device, (seq + 1) * 10, live, requested, reserved);
}

/* The kept rows of device, into a static array; returns their number. */
#define ROWS_CAP 100000
static struct mp_timeline_point rows[ROWS_CAP];

static int64_t rows_of(int32_t device)
{
	const struct mp_timeline_series *s = mp_timeline_series(&tl, device);
	int64_t n;

	cr_assert_not_null(s);
	n = mp_timeline_points(s, rows, ROWS_CAP);
	cr_assert_eq(n, mp_timeline_n_rows(s));
	cr_assert_leq(n, ROWS_CAP);
	return n;
}

static void assert_rows_are(int32_t device, const int64_t *want, int64_t n_want)
{
	int64_t i, n = rows_of(device);

	cr_assert_eq(n, n_want, "%lld rows, want %lld", (long long)n, (long long)n_want);
	for (i = 0; i < n; i++)
		cr_assert_eq(rows[i].n, want[i], "row %lld is event %lld, want %lld", (long long)i,
		             (long long)rows[i].n, (long long)want[i]);
}

Test(timeline, refuses_too_few_or_too_many_points)
{
	cr_assert_eq(mp_timeline_init(&tl, 15), MP_EINVAL);
	cr_assert_eq(mp_timeline_init(&tl, MP_TIMELINE_MAX_POINTS + 1), MP_EINVAL);
	cr_assert_eq(mp_timeline_init(&tl, 16), 0);
}

Test(timeline, fewer_events_than_points_keeps_every_event)
{
	int64_t i, want[16];

	start(16);
	for (i = 1; i <= 16; i++) {
		feed(0, i * 7 % 5, i % 3, -1);
		want[i - 1] = i;
	}
	assert_rows_are(0, want, 16);
	cr_assert_eq(mp_timeline_series(&tl, 0)->bucket_events, 1);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(rows[i].seq, i + 1);
		cr_assert_eq(rows[i].ts_ns, (i + 1) * 10);
		cr_assert_eq(rows[i].live_bytes, (i + 1) * 7 % 5);
		cr_assert_eq(rows[i].requested_bytes, (i + 1) % 3);
		cr_assert_eq(rows[i].reserved_bytes, -1);
	}
}

/*
 * Live bytes n (monotone), 17 events, 16 points.  Event 17 makes 17 rows:
 * W=2 gives 8 pairs of 2 rows + {17} = 17, still too many; W=4 gives
 * buckets 1-4, 5-8, 9-12, 13-16 of 2 rows each (first = min, last = max)
 * + {17}: 9 rows.
 */
Test(timeline, one_event_past_the_limit_doubles_until_it_fits)
{
	static const int64_t want[] = {1, 4, 5, 8, 9, 12, 13, 16, 17};
	int64_t i;

	start(16);
	for (i = 1; i <= 17; i++)
		feed(0, i, i, -1);
	assert_rows_are(0, want, 9);
	cr_assert_eq(mp_timeline_series(&tl, 0)->bucket_events, 4);
}

/*
 * 40 events, 16 points, live 10 except a spike of 500 at event 7 and a dip
 * to 0 at event 12; requested half of live.  At event 17: W=2 gives 17
 * rows; W=4 gives 1-4 {1,4}, 5-8 {5,7,8}, 9-12 {9,12}, 13-16 {13,16},
 * {17}: 10 rows.  Buckets 17-20 .. 25-28 add 2 rows each; event 30 makes
 * 29-30 hold 2 rows: 9 + 2 + 2 + 2 + 2 = 17 > 16, so W=8: 1-8 {1,7,8},
 * 9-16 {9,12,16}, 17-24 {17,24}, 25-30 {25,30}: 10.  Then 25-32 {25,32}
 * and 33-40 {33,40}: 12 rows.
 */
Test(timeline, spike_and_dip_survive_downsampling)
{
	static const int64_t want[] = {1, 7, 8, 9, 12, 16, 17, 24, 25, 32, 33, 40};
	int64_t i, live;

	start(16);
	for (i = 1; i <= 40; i++) {
		live = i == 7 ? 500 : i == 12 ? 0 : 10;
		feed(0, live, live / 2, -1);
	}
	assert_rows_are(0, want, 12);
	cr_assert_eq(mp_timeline_series(&tl, 0)->bucket_events, 8);
	cr_assert_eq(rows[1].live_bytes, 500);
	cr_assert_eq(rows[1].requested_bytes, 250);
	cr_assert_eq(rows[1].seq, 7);
	cr_assert_eq(rows[1].ts_ns, 70);
	cr_assert_eq(rows[4].live_bytes, 0);
	cr_assert_eq(rows[4].seq, 12);
}

/*
 * 64 events, 16 points, live flat at 100; requested 50 but 90 at event 20;
 * reserved 200 but 1000 at event 45.  Only the requested and reserved
 * roles can keep those events.  W=4 from event 17 (2 rows per bucket:
 * first and last; 17-20 ends on its peak); event 33 closes 29-32 at 16
 * rows + {33} = 17, so W=8: 1-8, 9-16 {first,last}, 17-24 {17,20,24},
 * 25-32, {33}: 10.  33-40 adds 2, 41-48 {41,45,48} 3, 49-56 2 and 57
 * opens one more: 17, so W=16: 1-16 {1,16}, 17-32 {17,20,32}, 33-48
 * {33,45,48}, 49-57 {49,57}; the last ends as {49,64}: 10 rows.
 */
Test(timeline, requested_and_reserved_peaks_survive_flat_live)
{
	static const int64_t want[] = {1, 16, 17, 20, 32, 33, 45, 48, 49, 64};
	int64_t i;

	start(16);
	for (i = 1; i <= 64; i++)
		feed(0, 100, i == 20 ? 90 : 50, i == 45 ? 1000 : 200);
	assert_rows_are(0, want, 10);
	cr_assert_eq(mp_timeline_series(&tl, 0)->bucket_events, 16);
	cr_assert_eq(rows[3].requested_bytes, 90);
	cr_assert_eq(rows[6].reserved_bytes, 1000);
}

/* A maximum reached twice is kept with the first event reaching it. */
Test(timeline, peak_row_is_the_first_event_reaching_it)
{
	int64_t i, n, first = 0;

	start(16);
	for (i = 1; i <= 1000; i++)
		feed(0, i == 300 || i == 700 || i == 701 ? 1 << 20 : i % 17, 0, -1);
	n = rows_of(0);
	cr_assert_leq(n, 16);
	for (i = 0; i < n && !first; i++)
		if (rows[i].live_bytes == 1 << 20)
			first = rows[i].seq;
	cr_assert_eq(first, 300);
}

Test(timeline, devices_are_separate_and_listed_ascending)
{
	int32_t devs[MP_TIMELINE_MAX_DEVICES];
	int64_t i;

	start(16);
	for (i = 0; i < 100; i++)
		feed(5, i, i, -1);
	feed(2, 42, 40, 64);
	cr_assert_eq(mp_timeline_devices(&tl, devs), 2);
	cr_assert_eq(devs[0], 2);
	cr_assert_eq(devs[1], 5);
	cr_assert_eq(rows_of(2), 1);
	cr_assert_eq(rows[0].seq, 101);
	cr_assert_eq(rows[0].n, 1);
	cr_assert_eq(rows[0].reserved_bytes, 64);
	cr_assert_eq(mp_timeline_series(&tl, 5)->n_events, 100);
	cr_assert_null(mp_timeline_series(&tl, 3));
}

Test(timeline, events_without_device_figures_and_past_64_devices_are_ignored)
{
	struct memprof_record rec;
	int32_t i;

	start(16);
	memset(&rec, 0, sizeof(rec));
	cr_assert_eq(lis.on_event(lis.ctx, &rec, NULL, 0), 0);
	cr_assert_eq(tl.n_series, 0);
	for (i = 0; i <= MP_TIMELINE_MAX_DEVICES; i++)
		feed(100 - i, 1, 1, -1);
	cr_assert_eq(tl.n_series, MP_TIMELINE_MAX_DEVICES);
	cr_assert_eq(tl.devices_truncated, 1);
	cr_assert_not_null(mp_timeline_series(&tl, 100 - MP_TIMELINE_MAX_DEVICES + 1));
	cr_assert_null(mp_timeline_series(&tl, 100 - MP_TIMELINE_MAX_DEVICES));
}

/* ---- randomized series against a brute-force reference ---------------- */

static uint64_t rng;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define N_RAND_DEVICES 3
static const int32_t rand_devices[N_RAND_DEVICES] = {7, 0, 3};

struct truth {
	struct mp_timeline_point *p; /* p[n - 1]: the state after event n */
	int64_t n, cap;
	int64_t live, requested, reserved, ts_ns, segments_from;
	int64_t spike; /* to take back at the next step */
};

/* Advance one device's state: allocations and frees of 1 MiB multiples
 * (so equal values recur), rare one-event spikes and deep dips, requested
 * below live, reserved known from a random event on, ts sometimes going
 * backwards. */
static void step(struct truth *tr)
{
	uint64_t r = next_rand();
	int64_t mib = INT64_C(1) << 20, amount = (int64_t)(r >> 40) % 64 * mib;

	if (tr->spike) {
		tr->live -= tr->spike;
		tr->spike = 0;
	} else if (r % 1000 == 0) {
		tr->spike = (INT64_C(1) << 36) + amount; /* one event high */
		tr->live += tr->spike;
	} else if (r % 1000 == 1)
		tr->live /= 16;
	else if (r % 2)
		tr->live = tr->live > amount ? tr->live - amount : 0;
	else
		tr->live += amount;
	tr->requested = tr->live - tr->live / (int64_t)(2 + (r >> 20) % 8);
	if (tr->n + 1 >= tr->segments_from && (tr->reserved < tr->live || (r >> 12) % 64 == 0))
		tr->reserved = tr->live + (int64_t)((r >> 30) % 4) * 2 * mib;
	tr->ts_ns += (r >> 8) % 16 == 0 ? -(int64_t)((r >> 16) % 500) : (int64_t)((r >> 16) % 1000);
}

static void record(struct truth *tr, int32_t device)
{
	struct mp_timeline_point *p;
	int64_t reserved = tr->n + 1 >= tr->segments_from ? tr->reserved : -1;

	if (tr->n == tr->cap) {
		tr->cap = tr->cap ? tr->cap * 2 : 4096;
		tr->p = realloc(tr->p, (size_t)tr->cap * sizeof(*tr->p));
		cr_assert_not_null(tr->p);
	}
	feed_ts(device, tr->ts_ns, tr->live, tr->requested, reserved);
	p = &tr->p[tr->n];
	p->n = ++tr->n;
	p->seq = seq;
	p->ts_ns = tr->ts_ns;
	p->live_bytes = tr->live;
	p->requested_bytes = tr->requested;
	p->reserved_bytes = reserved;
}

/* The earliest event of p[from..to) (0-based) with the largest (sign 1) or
 * smallest (sign -1) value of field. */
static int64_t extreme(const struct mp_timeline_point *p, int64_t from, int64_t to, size_t field,
                       int sign)
{
	int64_t i, best = from;

	for (i = from + 1; i < to; i++) {
		int64_t v = *(const int64_t *)((const char *)&p[i] + field);
		int64_t b = *(const int64_t *)((const char *)&p[best] + field);

		if (sign > 0 ? v > b : v < b)
			best = i;
	}
	return p[best].n;
}

static int has_event(const struct mp_timeline_point *r, int64_t n_rows, int64_t n)
{
	int64_t lo = 0, hi = n_rows;

	while (lo < hi) {
		int64_t mid = (lo + hi) / 2;

		if (r[mid].n < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n_rows && r[lo].n == n;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The rows of each bucket are exactly its roles' events. */
static void check_buckets(const struct truth *tr, const struct mp_timeline_point *r, int64_t n_rows,
                          int64_t width)
{
	int64_t from, k = 0;

	for (from = 0; from < tr->n; from += width) {
		int64_t to = from + width < tr->n ? from + width : tr->n, want[6];
		int i, n_want = 0;

		want[0] = from + 1;
		want[1] = to;
		want[2] = extreme(tr->p, from, to, offsetof(struct mp_timeline_point, live_bytes),
		                  -1);
		want[3] =
		        extreme(tr->p, from, to, offsetof(struct mp_timeline_point, live_bytes), 1);
		want[4] = extreme(tr->p, from, to,
		                  offsetof(struct mp_timeline_point, requested_bytes), 1);
		want[5] = extreme(tr->p, from, to,
		                  offsetof(struct mp_timeline_point, reserved_bytes), 1);
		qsort(want, 6, sizeof(want[0]), cmp_i64);
		for (i = 0; i < 6; i++) {
			if (i && want[i] == want[i - 1])
				continue;
			n_want++;
			cr_assert(k < n_rows && r[k].n == want[i],
			          "bucket %lld-%lld (W=%lld): row %lld is event %lld, want %lld",
			          (long long)from + 1, (long long)to, (long long)width,
			          (long long)k, (long long)(k < n_rows ? r[k].n : -1),
			          (long long)want[i]);
			k++;
		}
		cr_assert(n_want >= 1);
	}
	cr_assert_eq(k, n_rows, "rows outside every bucket");
}

static void check_device(const struct truth *tr, int32_t device, int64_t max_points)
{
	const struct mp_timeline_series *s = mp_timeline_series(&tl, device);
	size_t fields[3] = {offsetof(struct mp_timeline_point, live_bytes),
	                    offsetof(struct mp_timeline_point, requested_bytes),
	                    offsetof(struct mp_timeline_point, reserved_bytes)};
	int64_t i, n = rows_of(device);
	int f;

	cr_assert_eq(s->n_events, tr->n);
	cr_assert_leq(n, max_points);
	if (tr->n <= max_points)
		cr_assert_eq(n, tr->n, "every event is kept when they fit");
	for (i = 0; i < n; i++) {
		const struct mp_timeline_point *want = &tr->p[rows[i].n - 1];

		cr_assert(i == 0 || (rows[i].seq > rows[i - 1].seq && rows[i].n > rows[i - 1].n),
		          "rows %lld and %lld out of order", (long long)i - 1, (long long)i);
		cr_assert(memcmp(&rows[i], want, sizeof(*want)) == 0,
		          "row %lld (seq %lld) is not the state after its event", (long long)i,
		          (long long)rows[i].seq);
	}
	for (f = 0; f < 3; f++) {
		int64_t peak = extreme(tr->p, 0, tr->n, fields[f], 1);

		cr_assert(has_event(rows, n, peak), "the peak of column %d (event %lld) is lost", f,
		          (long long)peak);
	}
	check_buckets(tr, rows, n, s->bucket_events);
}

static void random_run(uint64_t seed, int64_t n_events, int64_t max_points)
{
	struct truth tr[N_RAND_DEVICES];
	int64_t i;
	int d;

	start(max_points);
	rng = seed;
	memset(tr, 0, sizeof(tr));
	for (d = 0; d < N_RAND_DEVICES; d++)
		tr[d].segments_from = (int64_t)(next_rand() % 5000);
	tr[0].ts_ns = tr[1].ts_ns = tr[2].ts_ns = 1000000;
	for (i = 0; i < n_events; i++) {
		uint64_t r = next_rand() % 1000;

		/* device 3 is rare: about n_events / 1000 events */
		d = r == 0 ? 2 : r % 3 ? 0 : 1;
		step(&tr[d]);
		record(&tr[d], rand_devices[d]);
	}
	for (d = 0; d < N_RAND_DEVICES; d++) {
		if (tr[d].n)
			check_device(&tr[d], rand_devices[d], max_points);
		free(tr[d].p);
	}
}

Test(timeline, random_1e5_events_16_points)
{
	random_run(0x9e3779b97f4a7c15ULL, 100000, 16);
}

Test(timeline, random_1e5_events_default_points)
{
	random_run(12345, 100000, MP_TIMELINE_DEFAULT_POINTS);
}

Test(timeline, random_1e6_events_1000_points)
{
	random_run(0xdeadbeefcafef00dULL, 1000000, 1000);
}

Test(timeline, random_1e6_events_default_points)
{
	random_run(42, 1000000, MP_TIMELINE_DEFAULT_POINTS);
}

Test(timeline, random_1e5_events_more_points_than_events_on_a_device)
{
	random_run(777, 100000, 70000); /* device 0 ~66000 events: all kept */
}

/* ---- CSV ----------------------------------------------------------------- */

static char *csv_of(int device_or_minus1)
{
	FILE *f = tmpfile();
	static char buf[4096];
	size_t n;

	cr_assert_not_null(f);
	cr_assert_eq(mp_timeline_csv_write(f, &tl, device_or_minus1), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Device 1 has no segment-level event until seq 4: reserved is empty
 * before it.  Device 0 comes first although its event came later; seq 2's
 * timestamp goes backwards and is written as recorded. */
Test(timeline, csv_exact_text)
{
	start(16);
	feed_ts(1, 100, 10, 8, -1);
	feed_ts(1, 90, 0, 0, -1);
	feed_ts(0, 120, 4096, 4000, 8192);
	feed_ts(1, 130, 20, 16, 2097152);
	cr_assert_str_eq(csv_of(MP_TIMELINE_ALL_DEVICES),
	                 "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n"
	                 "0,120,3,4096,4000,8192\n"
	                 "1,100,1,10,8,\n"
	                 "1,90,2,0,0,\n"
	                 "1,130,4,20,16,2097152\n");
	cr_assert_str_eq(csv_of(1), "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n"
	                            "1,100,1,10,8,\n"
	                            "1,90,2,0,0,\n"
	                            "1,130,4,20,16,2097152\n");
	cr_assert_str_eq(csv_of(0), "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n"
	                            "0,120,3,4096,4000,8192\n");
	cr_assert_str_eq(csv_of(5), "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n");
}

Test(timeline, csv_of_an_empty_timeline_is_the_header)
{
	start(16);
	cr_assert_str_eq(csv_of(MP_TIMELINE_ALL_DEVICES),
	                 "device,ts_ns,seq,live_bytes,requested_bytes,reserved_bytes\n");
}

Test(timeline, csv_write_error_is_eio)
{
	FILE *f = fopen("/dev/full", "w");
	int64_t i;

	if (!f)
		cr_skip_test("no /dev/full");
	start(16);
	for (i = 0; i < 10; i++)
		feed(0, i, i, i);
	cr_assert_eq(mp_timeline_csv_write(f, &tl, MP_TIMELINE_ALL_DEVICES), MP_EIO);
	fclose(f);
}
