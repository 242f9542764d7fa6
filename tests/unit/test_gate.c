/*
 * tests/unit/test_gate.c - analysis/gate and the sentences of report/gate:
 * limits parsed exactly, the threshold arithmetic at, just below and just
 * above each limit, a trace's figures from a real analysis pass over a
 * CSV trace whose answers were worked out by hand, the comparison of two
 * traces (devices, call sites ranked by growth, pools), and the wording of
 * the results.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate.h"
#include "helpers.h"
#include "import/import.h"
#include "report/gate.h"
#include "store/store.h"

/* --- parsing limits -------------------------------------------------------- */

static struct mp_gate_limit parsed(int kind, const char *text)
{
	struct mp_gate_limit l;

	cr_assert_eq(mp_gate_limit_parse(kind, text, &l), 0, "'%s' should parse", text);
	return l;
}

static void refused(int kind, const char *text)
{
	struct mp_gate_limit l;

	cr_assert_eq(mp_gate_limit_parse(kind, text, &l), MP_EINVAL, "'%s' should be refused",
	             text ? text : "(none)");
}

Test(gate_limit, percent_and_bytes)
{
	struct mp_gate_limit l = parsed(MP_GATE_PEAK_INCREASE, "2%");

	cr_assert_eq(l.unit, MP_GATE_PERCENT);
	cr_assert_eq(l.value, INT64_C(2000000000));
	cr_assert_str_eq(l.text, "2%");
	cr_assert_eq(parsed(MP_GATE_PEAK_INCREASE, "2.5%").value, INT64_C(2500000000));
	cr_assert_eq(parsed(MP_GATE_PEAK_INCREASE, ".5%").value, INT64_C(500000000));
	cr_assert_eq(parsed(MP_GATE_PEAK_INCREASE, "0.000000001%").value, 1);
	cr_assert_eq(parsed(MP_GATE_POOL_INCREASE, "1000000%").value,
	             INT64_C(1000000) * MP_GATE_NANO);
	l = parsed(MP_GATE_RESERVED_INCREASE, "100MiB");
	cr_assert_eq(l.unit, MP_GATE_BYTES);
	cr_assert_eq(l.value, INT64_C(100) << 20);
	cr_assert_eq(parsed(MP_GATE_PEAK, "20GiB").value, INT64_C(20) << 30);
	cr_assert_eq(parsed(MP_GATE_LEAKED_BYTES, "0").value, 0);
	refused(MP_GATE_PEAK_INCREASE, "0.0000000001%"); /* 10 decimals */
	refused(MP_GATE_PEAK_INCREASE, "1000001%");
	refused(MP_GATE_PEAK_INCREASE, "-1%");
	refused(MP_GATE_PEAK_INCREASE, "%");
	refused(MP_GATE_PEAK_INCREASE, "2 %");
	refused(MP_GATE_PEAK_INCREASE, "two");
	refused(MP_GATE_PEAK_INCREASE, "");
	refused(MP_GATE_PEAK, "2%"); /* absolute budgets are sizes */
	/* a bare number where a percentage is as likely: refused, 0 excepted */
	refused(MP_GATE_PEAK_INCREASE, "2");
	refused(MP_GATE_RESERVED_INCREASE, "2.5");
	refused(MP_GATE_POOL_INCREASE, "100");
	cr_assert(mp_gate_limit_bare_number(MP_GATE_PEAK_INCREASE, "2"));
	cr_assert(!mp_gate_limit_bare_number(MP_GATE_PEAK_INCREASE, "2B"));
	cr_assert(!mp_gate_limit_bare_number(MP_GATE_PEAK, "2"));
	cr_assert_eq(parsed(MP_GATE_PEAK_INCREASE, "2B").value, 2);
	cr_assert_eq(parsed(MP_GATE_PEAK_INCREASE, "0").value, 0);
	cr_assert_eq(parsed(MP_GATE_PEAK, "4096").value, 4096);
	refused(MP_GATE_PEAK, "-5MiB");
}

Test(gate_limit, ratios_and_switches)
{
	struct mp_gate_limit l = parsed(MP_GATE_FREE_SHARE, "0.15");

	cr_assert_eq(l.unit, MP_GATE_RATIO);
	cr_assert_eq(l.value, 150000000);
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE_INCREASE, "1").value, MP_GATE_NANO);
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE, "0").value, 0);
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE, "0.123456789").value, 123456789);
	refused(MP_GATE_FREE_SHARE, "0.1234567891");
	refused(MP_GATE_FREE_SHARE, "1.1");
	/* a ratio is also taken as a percentage, exactly */
	l = parsed(MP_GATE_FREE_SHARE, "15%");
	cr_assert_eq(l.unit, MP_GATE_RATIO);
	cr_assert_eq(l.value, 150000000);
	cr_assert_str_eq(l.text, "15%");
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE_INCREASE, "2%").value, 20000000);
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE, "100%").value, MP_GATE_NANO);
	cr_assert_eq(parsed(MP_GATE_FREE_SHARE, "12.3456789%").value, 123456789);
	refused(MP_GATE_FREE_SHARE, "12.34567891%"); /* not exact in parts per 10^9 */
	refused(MP_GATE_FREE_SHARE, "100.1%");
	refused(MP_GATE_FREE_SHARE, "15");
	refused(MP_GATE_FREE_SHARE, NULL);
	l = parsed(MP_GATE_LEAKED_BLOCKS, NULL);
	cr_assert_eq(l.unit, MP_GATE_COUNT);
	cr_assert_eq(l.value, 0);
	cr_assert_eq(parsed(MP_GATE_OOMS, NULL).value, 0);
	refused(MP_GATE_OOMS, "1");
}

/* --- exact arithmetic -------------------------------------------------------- */

Test(gate_arith, percent_at_below_above)
{
	/* 1000 -> 1020 is exactly 2% (in floating point 20/1000*100 is not) */
	cr_assert_not(mp_gate_percent_exceeds(1000, 1020, INT64_C(2000000000)));
	cr_assert(mp_gate_percent_exceeds(1000, 1021, INT64_C(2000000000)));
	cr_assert_not(mp_gate_percent_exceeds(1000, 1019, INT64_C(2000000000)));
	cr_assert(mp_gate_percent_exceeds(1000, 1020, INT64_C(1999999999)));
	/* 3 -> 4 is 33.333...%: above 33.333333333%, below 33.333333334% */
	cr_assert(mp_gate_percent_exceeds(3, 4, INT64_C(33333333333)));
	cr_assert_not(mp_gate_percent_exceeds(3, 4, INT64_C(33333333334)));
	/* shrinking or no change never exceeds, even a 0% limit */
	cr_assert_not(mp_gate_percent_exceeds(1000, 1000, 0));
	cr_assert_not(mp_gate_percent_exceeds(1000, 10, 0));
	cr_assert(mp_gate_percent_exceeds(1000, 1001, 0));
	/* from 0: any growth exceeds every percentage, none does not */
	cr_assert(mp_gate_percent_exceeds(0, 1, INT64_C(1000000) * MP_GATE_NANO));
	cr_assert_not(mp_gate_percent_exceeds(0, 0, 0));
	/* large sizes do not overflow: 2^61 -> 2^62 is exactly 100% */
	cr_assert_not(mp_gate_percent_exceeds(INT64_C(1) << 61, INT64_C(1) << 62,
	                                      INT64_C(100) * MP_GATE_NANO));
	cr_assert(mp_gate_percent_exceeds(INT64_C(1) << 61, INT64_C(1) << 62,
	                                  INT64_C(100) * MP_GATE_NANO - 1));
}

Test(gate_arith, ratio_nano)
{
	cr_assert_eq(mp_gate_ratio_nano(1, 2), 500000000);
	cr_assert_eq(mp_gate_ratio_nano(1, 3), 333333333);
	cr_assert_eq(mp_gate_ratio_nano(2, 3), 666666667); /* rounded to nearest */
	cr_assert_eq(mp_gate_ratio_nano(0, 5), 0);
	cr_assert_eq(mp_gate_ratio_nano(5, 5), MP_GATE_NANO);
	cr_assert_eq(mp_gate_ratio_nano(1, 0), -1);
	cr_assert_eq(mp_gate_ratio_nano(-1, 5), -1);
	cr_assert_eq(mp_gate_ratio_nano(INT64_C(1) << 62, (INT64_C(1) << 62) + 1), MP_GATE_NANO);
}

/* --- thresholds on hand-made figures --------------------------------------- */

static struct mp_gate_device dev(int32_t device, int64_t live, int reserved, int64_t res_bytes,
                                 int64_t free_share_nano)
{
	struct mp_gate_device d;

	memset(&d, 0, sizeof(d));
	d.device = device;
	d.peak_live_bytes = live;
	d.peak_live_seq = 1;
	d.reserved = reserved;
	d.peak_reserved_bytes = res_bytes;
	d.free_share_nano = free_share_nano;
	d.external_nano = free_share_nano;
	return d;
}

/* One limit checked on a diff of one device each side; returns the one result. */
static struct mp_gate_result check_one(struct mp_gate_device b, struct mp_gate_device h, int kind,
                                       const char *text, struct mp_gate_limit *lim)
{
	struct mp_gate_trace tb = {.devices = &b, .n_devices = 1};
	struct mp_gate_trace th = {.devices = &h, .n_devices = 1};
	struct mp_gate_diff d;
	struct mp_gate_result *r, out;
	ptrdiff_t n;

	*lim = parsed(kind, text);
	cr_assert_eq(mp_gate_diff(&d, &tb, &th), 0);
	r = mp_gate_check(&d, NULL, lim, 1, &n);
	cr_assert_eq(n, 1);
	out = r[0];
	free(r);
	mp_gate_diff_free(&d);
	return out;
}

static int outcome(struct mp_gate_device b, struct mp_gate_device h, int kind, const char *text)
{
	struct mp_gate_limit lim;

	return check_one(b, h, kind, text, &lim).outcome;
}

Test(gate_check, peak_increase_both_sides)
{
	struct mp_gate_device b = dev(0, 1000, MP_GATE_RESERVED_SEGMENTS, 2000, 0);
	struct mp_gate_device h = dev(0, 1100, MP_GATE_RESERVED_SEGMENTS, 2000, 0);
	struct mp_gate_limit lim;
	struct mp_gate_result r;

	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "100B"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "101B"), MP_GATE_PASS);
	r = check_one(b, h, MP_GATE_PEAK_INCREASE, "99B", &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	cr_assert_eq(r.over, 1.0);
	cr_assert_eq(r.delta, 100);
	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "10%"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "10.000000001%"), MP_GATE_PASS);
	r = check_one(b, h, MP_GATE_PEAK_INCREASE, "9.999999999%", &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	cr_assert_float_eq(r.figure, 10.0, 1e-12);
	cr_assert_float_eq(r.over, 1e-9, 1e-12);
	/* a fall passes a 0% limit */
	cr_assert_eq(outcome(h, b, MP_GATE_PEAK_INCREASE, "0%"), MP_GATE_PASS);
}

Test(gate_check, growth_from_zero)
{
	struct mp_gate_device b = dev(0, 0, MP_GATE_RESERVED_SEGMENTS, 0, -1);
	struct mp_gate_device h = dev(0, 1, MP_GATE_RESERVED_SEGMENTS, 0, -1);
	struct mp_gate_limit lim;
	struct mp_gate_result r = check_one(b, h, MP_GATE_PEAK_INCREASE, "1000000%", &lim);
	char text[300];

	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	cr_assert(isinf(r.figure));
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 0 grew from 0 B to 1 B, over "
	                       "--max-peak-increase=1000000% by an unbounded share (any growth "
	                       "from 0 exceeds a percentage)");
	cr_assert_eq(outcome(b, b, MP_GATE_PEAK_INCREASE, "0%"), MP_GATE_PASS);
	/* a byte limit is plain arithmetic from 0 too */
	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "1B"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_PEAK_INCREASE, "0"), MP_GATE_EXCEEDED);
}

Test(gate_check, reserved_increase_needs_comparable_figures)
{
	struct mp_gate_device b = dev(0, 10, MP_GATE_RESERVED_SEGMENTS, 1000, 0);
	struct mp_gate_device h = dev(0, 10, MP_GATE_RESERVED_SEGMENTS, 1500, 0);
	struct mp_gate_device m = dev(0, 10, MP_GATE_RESERVED_MODELLED, 1500, 0);
	struct mp_gate_device u = dev(0, 10, MP_GATE_RESERVED_UNKNOWN, -1, -1);
	struct mp_gate_limit lim;
	struct mp_gate_result r;

	cr_assert_eq(outcome(b, h, MP_GATE_RESERVED_INCREASE, "50%"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_RESERVED_INCREASE, "49.999999999%"), MP_GATE_EXCEEDED);
	cr_assert_eq(outcome(b, h, MP_GATE_RESERVED_INCREASE, "500B"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_RESERVED_INCREASE, "499B"), MP_GATE_EXCEEDED);
	r = check_one(b, m, MP_GATE_RESERVED_INCREASE, "1%", &lim);
	cr_assert_eq(r.outcome, MP_GATE_NOT_CHECKED);
	cr_assert(r.modelled);
	cr_assert(strstr(r.why, "address-space model"));
	cr_assert_eq(outcome(b, u, MP_GATE_RESERVED_INCREASE, "1%"), MP_GATE_NOT_CHECKED);
	/* both modelled: compared, and said to be modelled */
	r = check_one(m, m, MP_GATE_RESERVED_INCREASE, "0%", &lim);
	cr_assert_eq(r.outcome, MP_GATE_PASS);
	cr_assert(r.modelled);
}

Test(gate_check, fragmentation_both_sides)
{
	/* 0.1 -> 0.15 is 0.05 points exactly; in floating point 0.15 - 0.1 is not */
	struct mp_gate_device b = dev(0, 10, MP_GATE_RESERVED_SEGMENTS, 1000, 100000000);
	struct mp_gate_device h = dev(0, 10, MP_GATE_RESERVED_SEGMENTS, 1000, 150000000);
	struct mp_gate_limit lim;
	struct mp_gate_result r;
	char text[300];

	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE_INCREASE, "0.05"), MP_GATE_PASS);
	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE_INCREASE, "0.050000001"), MP_GATE_PASS);
	r = check_one(b, h, MP_GATE_FREE_SHARE_INCREASE, "0.049999999", &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "free share on device 0 rose 0.05 (0.1 to 0.15), over "
	                       "--max-free-share-increase=0.049999999 by 0.000000001");
	/* 0.7 -> 0.8 (0.1 points; 0.8 - 0.7 > 0.1 in floating point) */
	b.free_share_nano = 700000000, h.free_share_nano = 800000000;
	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE_INCREASE, "0.1"), MP_GATE_PASS);
	/* absolute, on HEAD */
	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE, "0.8"), MP_GATE_PASS);
	r = check_one(b, h, MP_GATE_FREE_SHARE, "0.799999999", &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "free share on device 0 is 0.8, over --max-free-share=0.799999999 by "
	                       "0.000000001");
	h.free_share_nano = -1;
	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE, "0.5"), MP_GATE_NOT_CHECKED);
	cr_assert_eq(outcome(b, h, MP_GATE_FREE_SHARE_INCREASE, "0.5"), MP_GATE_NOT_CHECKED);
}

/* One absolute limit on one trace of one device. */
static struct mp_gate_result check_abs(struct mp_gate_device h, int kind, const char *text,
                                       struct mp_gate_limit *lim)
{
	struct mp_gate_trace t = {.devices = &h, .n_devices = 1};
	struct mp_gate_result *r, out;
	ptrdiff_t n;

	*lim = parsed(kind, text);
	r = mp_gate_check(NULL, &t, lim, 1, &n);
	cr_assert_eq(n, 1);
	out = r[0];
	free(r);
	return out;
}

static int abs_outcome(struct mp_gate_device h, int kind, const char *text)
{
	struct mp_gate_limit lim;

	return check_abs(h, kind, text, &lim).outcome;
}

Test(gate_check, budgets_both_sides)
{
	struct mp_gate_device h = dev(3, 2048, MP_GATE_RESERVED_SEGMENTS, 4096, 250000000);
	struct mp_gate_device clean = h;
	struct mp_gate_limit lim;
	struct mp_gate_result r;
	char text[300];

	h.leaked_bytes = 100, h.leaked_blocks = 2, h.n_ooms = 1;
	cr_assert_eq(abs_outcome(h, MP_GATE_PEAK, "2KiB"), MP_GATE_PASS);
	cr_assert_eq(abs_outcome(h, MP_GATE_PEAK, "2049"), MP_GATE_PASS);
	r = check_abs(h, MP_GATE_PEAK, "2047", &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 3 is 2.00 KiB, over --max-peak=2047 by 1 B");
	cr_assert_eq(abs_outcome(h, MP_GATE_RESERVED, "4096"), MP_GATE_PASS);
	cr_assert_eq(abs_outcome(h, MP_GATE_RESERVED, "4095"), MP_GATE_EXCEEDED);
	cr_assert_eq(abs_outcome(h, MP_GATE_FREE_SHARE, "0.25"), MP_GATE_PASS);
	cr_assert_eq(abs_outcome(h, MP_GATE_FREE_SHARE, "0.249999999"), MP_GATE_EXCEEDED);
	cr_assert_eq(abs_outcome(h, MP_GATE_LEAKED_BYTES, "100"), MP_GATE_PASS);
	cr_assert_eq(abs_outcome(h, MP_GATE_LEAKED_BYTES, "99"), MP_GATE_EXCEEDED);
	r = check_abs(h, MP_GATE_LEAKED_BLOCKS, NULL, &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "leaked blocks on device 3: 2 blocks, over --no-leaks by 2 blocks");
	r = check_abs(h, MP_GATE_OOMS, NULL, &lim);
	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "OOMs on device 3: 1, over --no-oom by 1");
	cr_assert_eq(abs_outcome(clean, MP_GATE_LEAKED_BLOCKS, NULL), MP_GATE_PASS);
	cr_assert_eq(abs_outcome(clean, MP_GATE_OOMS, NULL), MP_GATE_PASS);
	h.reserved = MP_GATE_RESERVED_UNKNOWN;
	cr_assert_eq(abs_outcome(h, MP_GATE_RESERVED, "1"), MP_GATE_NOT_CHECKED);
}

Test(gate_check, sentences)
{
	struct mp_gate_device b = dev(0, 800 << 20, MP_GATE_RESERVED_SEGMENTS, 0, 0);
	struct mp_gate_device h = dev(0, 824 << 20, MP_GATE_RESERVED_SEGMENTS, 0, 0);
	struct mp_gate_limit lim;
	struct mp_gate_result r = check_one(b, h, MP_GATE_PEAK_INCREASE, "2%", &lim);
	char text[300];

	cr_assert_eq(r.outcome, MP_GATE_EXCEEDED);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 0 grew 3% (+24.0 MiB), over "
	                       "--max-peak-increase=2% by 1 point");
	r = check_one(b, h, MP_GATE_PEAK_INCREASE, "3%", &lim);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 0 grew 3% (+24.0 MiB), within "
	                       "--max-peak-increase=3%");
	r = check_one(b, h, MP_GATE_PEAK_INCREASE, "16MiB", &lim);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 0 grew 24.0 MiB (+3%), over "
	                       "--max-peak-increase=16MiB by 8.00 MiB");
	r = check_one(h, b, MP_GATE_PEAK_INCREASE, "1%", &lim);
	mp_gate_result_text(text, sizeof(text), &r);
	cr_assert_str_eq(text, "peak live on device 0 fell 2.91% (-24.0 MiB), within "
	                       "--max-peak-increase=1%");
}

/* --- the comparison ------------------------------------------------------- */

static struct mp_gate_site site(const char *key, int64_t bytes)
{
	struct mp_gate_site s = {.key = (char *)key,
	                         .name = (char *)key,
	                         .file = (char *)"",
	                         .n_stacks = 1,
	                         .bytes = bytes,
	                         .blocks = 1};

	return s;
}

Test(gate_diff, devices_sites_and_pools)
{
	struct mp_gate_site bs[] = {site("a", 100), site("b", 50), site("c", 30), site("same", 7)};
	struct mp_gate_site hs[] = {site("a", 400), site("same", 7), site("d", 200), site("c", 10)};
	struct mp_gate_device bd[] = {dev(0, 1, 0, -1, -1), dev(1, 1, 0, -1, -1)};
	struct mp_gate_device hd[] = {dev(0, 1, 0, -1, -1), dev(2, 1, 0, -1, -1)};
	struct mp_gate_pool bp[] = {{0, "caching", "sim", 1, 100, 10, 0, 0},
	                            {0, "direct", "sim", 2, 100, 10, 0, 0}};
	struct mp_gate_pool hp[] = {{0, "caching", "sim", 1, 110, 10, 1, 0},
	                            {0, "planned", "sim", 3, 90, 5, 0, 0}};
	struct mp_gate_trace tb = {.devices = bd, .n_devices = 2, .pools = bp, .n_pools = 2};
	struct mp_gate_trace th = {.devices = hd, .n_devices = 2, .pools = hp, .n_pools = 2};
	const struct mp_gate_device_change *c;
	struct mp_gate_limit lim = parsed(MP_GATE_POOL_INCREASE, "10%");
	struct mp_gate_result *r;
	struct mp_gate_diff d;
	ptrdiff_t n;

	bd[0].sites = bs, bd[0].n_sites = 4;
	hd[0].sites = hs, hd[0].n_sites = 4;
	cr_assert_eq(mp_gate_diff(&d, &tb, &th), 0);
	cr_assert_eq(d.n_devices, 3);
	c = &d.devices[0];
	cr_assert(c->base && c->head && c->device == 0);
	cr_assert(d.devices[1].base && !d.devices[1].head && d.devices[1].device == 1);
	cr_assert(!d.devices[2].base && d.devices[2].head && d.devices[2].device == 2);
	/* a +300, d +200 (new), c -20, b -50 (gone); "same" is left out */
	cr_assert_eq(c->n_sites, 4);
	cr_assert_str_eq(c->sites[0].head->key, "a");
	cr_assert_eq(c->sites[0].delta_bytes, 300);
	cr_assert_str_eq(c->sites[1].head->key, "d");
	cr_assert_null(c->sites[1].base);
	cr_assert_eq(c->sites[2].delta_bytes, -20);
	cr_assert_str_eq(c->sites[3].base->key, "b");
	cr_assert_null(c->sites[3].head);
	cr_assert_eq(c->sites[3].delta_bytes, -50);
	/* pools: caching in both (times modelled vs measured: not comparable),
	 * direct only in BASE, planned only in HEAD */
	cr_assert_eq(d.n_pools, 3);
	cr_assert(d.pools[0].base && d.pools[0].head);
	cr_assert_not(d.pools[0].times_comparable);
	cr_assert(d.pools[1].base && !d.pools[1].head);
	cr_assert(!d.pools[2].base && d.pools[2].head);
	/* only caching is checked; 100 -> 110 is exactly 10% */
	r = mp_gate_check(&d, NULL, &lim, 1, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(r[0].outcome, MP_GATE_PASS);
	cr_assert_str_eq(r[0].head_pool->pool, "caching");
	free(r);
	lim = parsed(MP_GATE_POOL_INCREASE, "9.999999999%");
	r = mp_gate_check(&d, NULL, &lim, 1, &n);
	cr_assert_eq(r[0].outcome, MP_GATE_EXCEEDED);
	free(r);
	/* increases skip devices in one trace; --max-free-share takes every HEAD device */
	lim = parsed(MP_GATE_PEAK_INCREASE, "0%");
	r = mp_gate_check(&d, NULL, &lim, 1, &n);
	cr_assert_eq(n, 1);
	free(r);
	lim = parsed(MP_GATE_FREE_SHARE, "0.5");
	r = mp_gate_check(&d, NULL, &lim, 1, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(r[0].device, 0);
	cr_assert_eq(r[1].device, 2);
	cr_assert_eq(r[1].outcome, MP_GATE_NOT_CHECKED);
	free(r);
	mp_gate_diff_free(&d);
}

/* --- figures from a real pass ------------------------------------------------ */

/* tests/cli/data/analyze-segments.csv (answers in tests/cli/analyze.sh),
 * with a second function at another line of fwd's file folded into one
 * site, and device 1 without segments (address-space model). */
static const char *const csv =
        "ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,thread,"
        "stack\n"
        "0,reserve,1,1000,1000,0x1000,0,0,5,,cudaMalloc,,,\n"
        "10,alloc,1,100,90,0x1000,0,7,5,forward,,,,train@/a/x/train.py:5;fwd@/a/x/model.py:10\n"
        "20,alloc,2,200,200,0x1064,0,7,5,forward,,,,train@/a/x/train.py:5;mlp@/a/x/model.py:20\n"
        "30,alloc,3,300,250,0x1190,0,9,5,backward,,,,train@/a/x/train.py:5;fwd@/b/x/model.py:30\n"
        "40,free,2,200,200,0x1064,0,7,5,,,,,\n"
        "50,oom,0,0,500,0x0,0,7,5,,,12345,,\n"
        "60,alloc,4,50,50,0x1064,0,7,5,,,,,train@train.py:5;fwd@model.py:10\n"
        "100,free,1,100,90,0x1000,0,7,5,,,,,\n"
        "200,alloc,11,1000,1000,0x2000,1,0,6,,,,,\n"
        "210,alloc,12,1000,900,0x23e8,1,0,6,,,,,\n"
        "220,alloc,13,5000,5000,0x5000,1,0,6,,,,,\n"
        "230,free,12,1000,900,0x23e8,1,0,6,,,,,\n";

static void load(struct mp_gate_trace *t, int32_t device)
{
	char *dir = th_mkdtemp(), *in = th_path(dir, "t.csv"), *db = th_path(dir, "t.db");
	struct mp_import_opts io = {.tool_version = "test"};
	struct mp_import_stats st;
	struct mp_pass_opts po;
	struct mp_pass *p = calloc(1, sizeof(*p));
	struct mp_error err;
	struct mp_store *s;
	struct mp_reader *r;

	th_write(in, csv);
	cr_assert_eq(mp_import_files((const char *const[]){in}, 1, db, &io, &st, &err), 0, "%s",
	             err.msg);
	cr_assert_eq(mp_store_open(&s, db, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	mp_pass_opts_default(&po);
	po.granularity = 4096;
	po.kinds = 1u << MP_ATTR_STACK;
	cr_assert_eq(mp_pass_init(p, &po), 0);
	cr_assert_eq(mp_pass_attach(p, r), 0);
	cr_assert_eq(mp_reader_run(r), 0);
	cr_assert_eq(mp_gate_trace_from_pass(t, p, "t.db", "csv", device), 0);
	mp_reader_close(r);
	mp_pass_free(p);
	free(p);
	mp_store_close(s);
	th_rmdir(dir);
	free(in);
	free(db);
}

Test(gate_figures, from_a_pass)
{
	struct mp_gate_trace t;
	const struct mp_gate_device *d0, *d1;
	char text[200];

	load(&t, -1);
	cr_assert_eq(t.n_devices, 2);
	d0 = mp_gate_trace_device(&t, 0);
	cr_assert_eq(d0->peak_live_bytes, 600);
	cr_assert_eq(d0->peak_live_seq, 4);
	cr_assert_eq(d0->reserved, MP_GATE_RESERVED_SEGMENTS);
	/* the reserved peak is reached at event 1, the segment empty; its
	 * fragmentation is taken when it holds the most: the live peak, event 4
	 * (600 live, holes of 300 and 100) */
	cr_assert_eq(d0->peak_reserved_bytes, 1000);
	cr_assert_eq(d0->peak_reserved_seq, 1);
	cr_assert_eq(d0->free_in_reserved_bytes, 400);
	cr_assert_eq(d0->free_share_nano, mp_gate_ratio_nano(400, 1000));
	cr_assert_eq(d0->external_nano, MP_GATE_NANO - mp_gate_ratio_nano(300, 400));
	cr_assert_eq(d0->leaked_bytes, 350);
	cr_assert_eq(d0->leaked_blocks, 2);
	cr_assert_eq(d0->n_ooms, 1);
	/* at the live peak: fwd@x/model.py 400 (lines 10 and 30, two checkouts
	 * /a and /b: one site), mlp@x/model.py 200 */
	cr_assert_eq(d0->n_sites, 2);
	cr_assert_str_eq(d0->sites[0].key, "fwd@x/model.py");
	cr_assert_eq(d0->sites[0].bytes, 400);
	cr_assert_eq(d0->sites[0].blocks, 2);
	cr_assert_eq(d0->sites[0].n_stacks, 2);
	cr_assert_eq(d0->sites[0].line, 30); /* of the larger group */
	/* every line folded in, ascending (issue 22, item 10) */
	cr_assert_str_eq(mp_gate_site_text(text, sizeof(text), &d0->sites[0], 0),
	                 "fwd (x/model.py:10,30)");
	cr_assert_str_eq(d0->sites[1].key, "mlp@x/model.py");
	cr_assert_eq(d0->sites[1].bytes, 200);
	/* device 1: modelled; 4 KiB granules: after x3 (the live peak, 7000
	 * live) reserved 12288, free 5288, largest hole 3192 */
	d1 = mp_gate_trace_device(&t, 1);
	cr_assert_eq(d1->reserved, MP_GATE_RESERVED_MODELLED);
	cr_assert_eq(d1->peak_live_bytes, 7000);
	cr_assert_eq(d1->peak_reserved_bytes, 12288);
	cr_assert_eq(d1->free_in_reserved_bytes, 5288);
	cr_assert_eq(d1->free_share_nano, mp_gate_ratio_nano(5288, 12288));
	cr_assert_eq(d1->external_nano, MP_GATE_NANO - mp_gate_ratio_nano(3192, 5288));
	cr_assert_eq(d1->leaked_blocks, 2);
	cr_assert_eq(d1->n_sites, 1);
	cr_assert_str_eq(d1->sites[0].key, "(no call stack)");
	cr_assert_eq(d1->sites[0].bytes, 7000);
	mp_gate_trace_free(&t);
	load(&t, 1);
	cr_assert_eq(t.n_devices, 1);
	cr_assert_eq(t.devices[0].device, 1);
	mp_gate_trace_free(&t);
}
