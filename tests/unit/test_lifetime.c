/*
 * tests/unit/test_lifetime.c - src/analysis/lifetime.c fed by hand: its
 * listener callbacks called directly with hand-built blocks and records,
 * each expected finding worked out in a comment; then random traces
 * against a brute-force reference.  This file defines its own
 * mp_memstate_stream_allocs and mp_memstate_foreach_live (a small fake
 * over the test's block table) instead of linking analysis/memstate.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/lifetime.h"
#include "util/error.h"

#define MAXB 4096
#define MAXS 64

/* --- the fake memory state ------------------------------------------------ */

static struct mp_memstate fake_ms;
static struct mp_mem_block blocks[MAXB];
static int live[MAXB]; /* 1 while the program has not freed the block */
static int n_blocks;
static struct {
	int64_t process;
	int32_t device;
	uint64_t stream;
	int64_t n;
} streams[MAXS];
static int n_streams;

static int64_t *stream_count(int64_t process, int32_t device, uint64_t stream)
{
	int i;

	for (i = 0; i < n_streams; i++)
		if (streams[i].process == process && streams[i].device == device &&
		    streams[i].stream == stream)
			return &streams[i].n;
	cr_assert_lt(n_streams, MAXS);
	streams[n_streams].process = process;
	streams[n_streams].device = device;
	streams[n_streams].stream = stream;
	streams[n_streams].n = 0;
	return &streams[n_streams++].n;
}

int64_t mp_memstate_stream_allocs(const struct mp_memstate *ms, int64_t process_id, int32_t device,
                                  uint64_t stream)
{
	cr_assert_eq(ms, &fake_ms);
	return *stream_count(process_id, device, stream);
}

int mp_memstate_foreach_live(const struct mp_memstate *ms,
                             int (*fn)(void *ctx, const struct mp_mem_block *b), void *ctx)
{
	int i, rc;

	cr_assert_eq(ms, &fake_ms);
	for (i = n_blocks - 1; i >= 0; i--) /* "no particular order": backwards */
		if (live[i] && (rc = fn(ctx, &blocks[i])) < 0)
			return rc;
	return 0;
}

/* --- feeding the listener --------------------------------------------------- */

static struct mp_lifetime lt;
static struct mp_mem_listener lis;
static struct memprof_stack stacks[MAXS];
static int64_t seq;

static void start(const struct mp_lifetime_opts *o)
{
	memset(blocks, 0, sizeof(blocks));
	memset(live, 0, sizeof(live));
	n_blocks = n_streams = 0;
	seq = 0;
	cr_assert_eq(mp_lifetime_init(&lt, o, &fake_ms), 0);
	lis = mp_lifetime_listener(&lt);
}

static void start_window(int64_t window_ns)
{
	struct mp_lifetime_opts o = {window_ns, 0.5};

	start(&o);
}

static void teardown(void)
{
	mp_lifetime_free(&lt);
}

TestSuite(lifetime, .fini = teardown);

static struct memprof_record record(int op, int64_t ts_ns)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = ts_ns;
	rec.ev.op = op;
	return rec;
}

/* An event that makes or ends no block (a phase, a segment). */
static void event(int64_t ts_ns)
{
	struct memprof_record rec = record(MEMPROF_OP_PHASE_BEGIN, ts_ns);

	cr_assert_eq(lis.on_event(lis.ctx, &rec, NULL, 0), 0);
}

/* Block number n (its alloc id) of a site on (process, device, stream). */
static void alloc_on(int n, int32_t device, int64_t process, uint64_t stream, int site,
                     int64_t size, int64_t ts_ns, int preexisting)
{
	struct memprof_record rec =
	        record(preexisting ? MEMPROF_OP_PREEXISTING : MEMPROF_OP_ALLOC, ts_ns);
	struct mp_mem_block *b = &blocks[n];

	cr_assert(n < MAXB && !live[n]);
	memset(b, 0, sizeof(*b));
	b->alloc_id = n;
	b->process_id = process;
	b->size_bytes = b->requested_bytes = size;
	b->alloc_ts_ns = ts_ns;
	b->alloc_seq = rec.ev.seq;
	b->stream = stream;
	b->device = device;
	b->preexisting = preexisting;
	b->stack_id = site;
	b->stack = site ? &stacks[site] : NULL;
	if (!preexisting)
		b->stream_ordinal = ++*stream_count(process, device, stream);
	live[n] = 1;
	if (n >= n_blocks)
		n_blocks = n + 1;
	rec.ev.alloc_id = n;
	rec.ev.size_bytes = size;
	rec.ev.device = device;
	cr_assert_eq(lis.on_alloc(lis.ctx, b, &rec), 0);
	cr_assert_eq(lis.on_event(lis.ctx, &rec, NULL, 0), 0);
}

/* Device 0, process 1, stream 0. */
static void alloc(int n, int site, int64_t size, int64_t ts_ns)
{
	alloc_on(n, 0, 1, 0, site, size, ts_ns, 0);
}

static void freeb(int n, int64_t ts_ns)
{
	struct memprof_record rec = record(MEMPROF_OP_FREE, ts_ns);

	cr_assert(live[n]);
	live[n] = 0;
	rec.ev.alloc_id = n;
	rec.ev.device = blocks[n].device;
	cr_assert_eq(lis.on_free(lis.ctx, &blocks[n], &rec), 0);
	cr_assert_eq(lis.on_event(lis.ctx, &rec, NULL, 0), 0);
}

static void end(void)
{
	cr_assert_eq(lis.on_end(lis.ctx), 0);
}

static const struct mp_lifetime_finding *find(enum mp_lifetime_kind k, int32_t device, int site,
                                              int64_t size)
{
	size_t n, i;
	const struct mp_lifetime_finding *f = mp_lifetime_findings(&lt, k, &n);

	for (i = 0; i < n; i++)
		if (f[i].device == device && f[i].stack_id == site &&
		    (k != MP_LIFETIME_REUSE || f[i].size_bytes == size))
			return &f[i];
	return NULL;
}

static size_t n_of(enum mp_lifetime_kind k)
{
	size_t n;

	mp_lifetime_findings(&lt, k, &n);
	return n;
}

static void expect(const struct mp_lifetime_finding *f, int64_t count, int64_t bytes,
                   int64_t first_seq)
{
	cr_assert_not_null(f);
	cr_assert_eq(f->count, count, "count %lld, expected %lld", (long long)f->count,
	             (long long)count);
	cr_assert_eq(f->bytes, bytes, "bytes %lld, expected %lld", (long long)f->bytes,
	             (long long)bytes);
	cr_assert_eq(f->first_seq, first_seq, "first_seq %lld, expected %lld",
	             (long long)f->first_seq, (long long)first_seq);
	cr_assert_eq(f->stack, f->stack_id ? &stacks[f->stack_id] : NULL);
}

static void expect_total(enum mp_lifetime_kind k, int64_t count, int64_t bytes)
{
	struct mp_lifetime_totals t;

	mp_lifetime_totals(&lt, &t);
	cr_assert_eq(t.kind[k].count, count, "%s total count %lld", mp_lifetime_kind_name(k),
	             (long long)t.kind[k].count);
	cr_assert_eq(t.kind[k].bytes, bytes, "%s total bytes %lld", mp_lifetime_kind_name(k),
	             (long long)t.kind[k].bytes);
}

/* --- hand-worked traces -------------------------------------------------------- */

Test(lifetime, one_trace_every_kind)
{
	start_window(1000);
	alloc(1, 1, 100, 0);    /* seq 1 */
	alloc(2, 2, 50, 100);   /* seq 2: an allocation on the stream after block 1's */
	freeb(1, 600);          /* seq 3: lifetime 600 <= 1000: churn by the window */
	alloc(3, 1, 100, 2000); /* seq 4 */
	freeb(3, 2300);         /* seq 5: lifetime 300: churn (both rules) */
	alloc(4, 1, 100, 5000); /* seq 6 */
	alloc(5, 2, 50, 5100);  /* seq 7: the last allocation on device 0 */
	freeb(4, 9000);         /* seq 8: 4000 > 1000 and block 5 came after it: not churn */
	freeb(2, 9500);         /* seq 9: lifetime 9400, not churn */
	event(10000);           /* seq 10: span 10000 - 0 */
	end();

	/* churn, site 1: blocks 1 and 3, 2 * 100 bytes, mean (600 + 300) / 2 = 450 */
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 2, 200, 1);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 450);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->site_allocs, 3);
	cr_assert_eq(n_of(MP_LIFETIME_CHURN), 1);
	/* reuse, site 1 size 100: blocks 1, 3, 4 live over seq [1,3), [4,5), [6,8):
	 * never two at once; one buffer saves 2 calls, 2 * 100 bytes */
	expect(find(MP_LIFETIME_REUSE, 0, 1, 100), 3, 200, 1);
	cr_assert_eq(find(MP_LIFETIME_REUSE, 0, 1, 100)->calls_saved, 2);
	cr_assert_eq(find(MP_LIFETIME_REUSE, 0, 1, 100)->size_bytes, 100);
	/* site 2 size 50: block 2 [2,9) and block 5 [7,end) overlap: not reuse */
	cr_assert_eq(n_of(MP_LIFETIME_REUSE), 1);
	/* leaks: block 5, 50 bytes at site 2 */
	expect(find(MP_LIFETIME_LEAK, 0, 2, 0), 1, 50, 7);
	cr_assert_eq(n_of(MP_LIFETIME_LEAK), 1);
	/* idle: after seq 7, blocks 4 (lifetime 4000) and 2 (9400) were freed;
	 * 0.5 * 10000 = 5000: only block 2 */
	expect(find(MP_LIFETIME_IDLE, 0, 2, 0), 1, 50, 2);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 0, 2, 0)->mean_lifetime_ns, 9400);
	cr_assert_eq(n_of(MP_LIFETIME_IDLE), 1);
	expect_total(MP_LIFETIME_LEAK, 1, 50);
	expect_total(MP_LIFETIME_CHURN, 2, 200);
	expect_total(MP_LIFETIME_REUSE, 3, 200);
	expect_total(MP_LIFETIME_IDLE, 1, 50);
}

/* on_alloc keeps the block's group in its tag, and on_free checks the tag
 * before it trusts it: a tag another listener wrote (here the group of
 * another block) must not move the churn to that block's site. */
Test(lifetime, a_wrong_tag_is_not_trusted)
{
	start_window(1000);
	alloc(0, 1, 100, 0);
	alloc(1, 2, 200, 0);
	cr_assert_neq(blocks[0].tag, 0);
	cr_assert_neq(blocks[0].tag, blocks[1].tag);
	blocks[0].tag = blocks[1].tag;
	freeb(0, 10);
	blocks[1].tag = 1u << 30; /* past the groups */
	freeb(1, 20);
	end();
	cr_assert_eq(n_of(MP_LIFETIME_CHURN), 2);
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 1, 100, 1);
	expect(find(MP_LIFETIME_CHURN, 0, 2, 0), 1, 200, 2);
}

Test(lifetime, window_boundary_is_inclusive)
{
	start_window(1000);
	alloc(1, 1, 8, 0);
	alloc(2, 2, 1, 10); /* breaks the stream rule for block 1 */
	freeb(1, 1000);     /* lifetime 1000 == window: churn (<=) */
	alloc(3, 1, 8, 2000);
	alloc(4, 2, 1, 2001);
	freeb(3, 3001); /* lifetime 1001 > window: not churn */
	end();
	/* site 1: block 1 only: 8 bytes, mean 1000; 2 allocations from the site */
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 1, 8, 1);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 1000);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->site_allocs, 2);
	cr_assert_eq(n_of(MP_LIFETIME_CHURN), 1);
}

Test(lifetime, churn_by_no_allocation_on_the_same_stream)
{
	start_window(1000);
	alloc_on(1, 0, 1, 7, 1, 64, 0, 0);  /* seq 1: stream 7's first */
	alloc_on(2, 0, 1, 8, 2, 32, 10, 0); /* another stream */
	alloc_on(3, 1, 1, 7, 3, 16, 20, 0); /* stream 7 of another device */
	alloc_on(4, 0, 2, 7, 4, 4, 30, 0);  /* stream 7 of another process */
	event(500000000);
	freeb(1, 1000000000); /* lifetime 1e9, but nothing else on (1, 0, 7): churn */
	alloc_on(5, 0, 1, 7, 1, 64, 2000000000, 0); /* seq 7 */
	alloc_on(6, 0, 1, 7, 5, 2, 2000000001, 0);  /* after block 5 on its stream */
	freeb(5, 3000000000);                       /* lifetime 1e9: not churn */
	end();
	/* site 1: block 1 only: 64 bytes, mean 1e9; site_allocs 2 (blocks 1 and 5) */
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 1, 64, 1);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 1000000000);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->site_allocs, 2);
	cr_assert_eq(n_of(MP_LIFETIME_CHURN), 1);
}

Test(lifetime, overlapping_lifetimes_are_not_reuse)
{
	start_window(0);
	alloc(1, 1, 64, 0); /* size 64: blocks 1 and 2 overlap */
	alloc(2, 1, 64, 1);
	freeb(1, 2);
	freeb(2, 3);
	alloc(3, 1, 128, 4); /* size 128: blocks 3, 4, 5 one after another */
	freeb(3, 5);
	alloc(4, 1, 128, 6);
	freeb(4, 7);
	alloc(5, 1, 128, 8); /* never freed: still only one at a time */
	alloc(6, 2, 128, 9); /* another site: its own group of one */
	freeb(6, 10);
	alloc_on(7, 1, 1, 0, 1, 128, 11, 0); /* another device: its own group of one */
	end();
	/* size 128 at site 1 on device 0: 3 allocations, (3 - 1) * 128 = 256 bytes */
	expect(find(MP_LIFETIME_REUSE, 0, 1, 128), 3, 256, 5);
	cr_assert_eq(find(MP_LIFETIME_REUSE, 0, 1, 128)->calls_saved, 2);
	cr_assert_eq(find(MP_LIFETIME_REUSE, 0, 1, 128)->site_allocs, 5);
	cr_assert_eq(n_of(MP_LIFETIME_REUSE), 1);
}

Test(lifetime, preexisting_blocks_are_neither_reuse_nor_churn)
{
	start_window(1000);
	alloc_on(1, 0, 1, 0, 1, 64, 0, 1); /* preexisting, same key as blocks 2 and 3 */
	alloc(2, 1, 64, 10);
	freeb(2, 20);
	alloc(3, 1, 64, 30);
	freeb(3, 40);
	freeb(1, 50); /* lifetime from the trace's start 50: short, but not churn */
	end();
	/* reuse: blocks 2 and 3 only (1 overlaps both, but it is not an allocation
	 * seen): 2 allocations, 64 bytes; churn: blocks 2 and 3, 128 bytes */
	expect(find(MP_LIFETIME_REUSE, 0, 1, 64), 2, 64, 2);
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 2, 128, 2);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 10);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->site_allocs, 2);
}

Test(lifetime, teardown_frees_long_and_short)
{
	start_window(0);
	event(0);                             /* seq 1: the first ts */
	alloc(1, 1, 1000, 0);                 /* seq 2 */
	alloc(2, 4, 5, 100);                  /* seq 3 */
	alloc_on(3, 1, 1, 0, 1, 7, 200, 0);   /* seq 4: device 1's only (and last) allocation */
	alloc(4, 2, 10, 800);                 /* seq 5 */
	freeb(2, 850);                        /* long (750) but before the last allocation */
	alloc(5, 3, 20, 900);                 /* seq 7: device 0's last allocation */
	freeb(4, 930);                        /* lifetime 130: short */
	freeb(1, 940);                        /* lifetime 940: long */
	alloc_on(6, 0, 1, 0, 5, 300, 955, 1); /* preexisting: not an allocation */
	freeb(6, 990);                        /* preexisting: lifetime from ts 0: 990 */
	freeb(3, 1000);                       /* device 1: lifetime 800 */
	end();
	/* span 1000 - 0; least lifetime 0.5 * 1000 = 500 */
	expect(find(MP_LIFETIME_IDLE, 0, 1, 0), 1, 1000, 2);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 0, 1, 0)->mean_lifetime_ns, 940);
	expect(find(MP_LIFETIME_IDLE, 0, 5, 0), 1, 300, 10);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 0, 5, 0)->mean_lifetime_ns, 990);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 0, 5, 0)->site_allocs, 0);
	expect(find(MP_LIFETIME_IDLE, 1, 1, 0), 1, 7, 4);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 1, 1, 0)->mean_lifetime_ns, 800);
	cr_assert_eq(n_of(MP_LIFETIME_IDLE), 3);
	/* sorted by bytes: 1000, 300, 7 */
	cr_assert_eq(mp_lifetime_findings(&lt, MP_LIFETIME_IDLE, &(size_t){0})[1].stack_id, 5);
	expect_total(MP_LIFETIME_IDLE, 3, 1307);
	/* leaks: block 5 */
	expect(find(MP_LIFETIME_LEAK, 0, 3, 0), 1, 20, 7);

	struct mp_lifetime_totals t;
	mp_lifetime_device_totals(&lt, 0, &t);
	cr_assert_eq(t.kind[MP_LIFETIME_IDLE].count, 2);
	cr_assert_eq(t.kind[MP_LIFETIME_IDLE].bytes, 1300);
	mp_lifetime_device_totals(&lt, 1, &t);
	cr_assert_eq(t.kind[MP_LIFETIME_IDLE].bytes, 7);
	cr_assert_eq(t.kind[MP_LIFETIME_LEAK].count, 0);
	mp_lifetime_device_totals(&lt, 9, &t);
	cr_assert_eq(t.kind[MP_LIFETIME_IDLE].count, 0);
}

Test(lifetime, idle_share_is_an_option)
{
	struct mp_lifetime_opts o = {0, 0.9};

	start(&o);
	alloc(1, 1, 10, 0);
	alloc(2, 2, 20, 100);
	alloc(3, 3, 40, 150); /* the last allocation */
	freeb(1, 950);        /* 950 >= 0.9 * 1000: idle */
	freeb(2, 1000);       /* 900 >= 900: idle (>=) */
	freeb(3, 1000);       /* 850 < 900 */
	end();
	expect(find(MP_LIFETIME_IDLE, 0, 1, 0), 1, 10, 1);
	expect(find(MP_LIFETIME_IDLE, 0, 2, 0), 1, 20, 2);
	cr_assert_eq(n_of(MP_LIFETIME_IDLE), 2);
}

Test(lifetime, preexisting_blocks_are_never_leaks)
{
	start_window(1000);
	alloc_on(1, 0, 1, 0, 1, 500, 0, 1); /* preexisting, live at the end */
	alloc_on(2, 1, 1, 0, 1, 30, 0, 1);  /* preexisting on device 1, live at the end */
	alloc_on(3, 0, 1, 0, 2, 70, 0, 1);  /* preexisting, freed */
	alloc(4, 1, 20, 5);                 /* seq 4 */
	freeb(3, 6);
	end();
	expect(find(MP_LIFETIME_LEAK, 0, 1, 0), 1, 20, 4);
	cr_assert_eq(find(MP_LIFETIME_LEAK, 0, 1, 0)->site_allocs, 1);
	cr_assert_eq(n_of(MP_LIFETIME_LEAK), 1);
	cr_assert_eq(n_of(MP_LIFETIME_CHURN), 0, "a preexisting block is never churn");
	expect_total(MP_LIFETIME_LEAK, 1, 20);

	struct mp_lifetime_totals t;
	mp_lifetime_totals(&lt, &t);
	cr_assert_eq(t.preexisting_live_at_end.count, 2);
	cr_assert_eq(t.preexisting_live_at_end.bytes, 530);
	mp_lifetime_device_totals(&lt, 1, &t);
	cr_assert_eq(t.preexisting_live_at_end.count, 1);
	cr_assert_eq(t.preexisting_live_at_end.bytes, 30);
}

Test(lifetime, empty_trace)
{
	struct mp_lifetime_totals t;
	size_t n = 7;
	int k;

	start(NULL);
	cr_assert_null(mp_lifetime_findings(&lt, MP_LIFETIME_LEAK, &n), "nothing before on_end");
	cr_assert_eq(n, 0);
	end();
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		cr_assert_eq(n_of(k), 0);
	mp_lifetime_totals(&lt, &t);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		cr_assert(t.kind[k].count == 0 && t.kind[k].bytes == 0);
	cr_assert_eq(t.preexisting_live_at_end.count, 0);
}

Test(lifetime, events_out_of_time_order)
{
	start_window(0);
	alloc(1, 1, 10, 1000); /* seq 1, the first ts */
	alloc(2, 2, 20, 3000); /* seq 2: breaks the stream rule for block 1 */
	freeb(1, 500);         /* lifetime max(0, 500 - 1000) = 0 <= 0: churn */
	freeb(2, 4000);        /* lifetime 1000 < 0.5 * (4000 - 1000): not idle */
	end();
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 1, 10, 1);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 0);
	/* block 2 freed before the next allocation on its stream: churn too */
	expect(find(MP_LIFETIME_CHURN, 0, 2, 0), 1, 20, 2);
	cr_assert_eq(n_of(MP_LIFETIME_IDLE), 0);
}

Test(lifetime, span_going_backwards_gives_no_idle)
{
	start_window(0);
	alloc(1, 1, 10, 5000);
	freeb(1, 100); /* last ts 100 < first ts 5000: span 0, no idle block */
	end();
	cr_assert_eq(n_of(MP_LIFETIME_IDLE), 0);
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 1, 10, 1);
}

Test(lifetime, zero_size_blocks_count_with_no_bytes)
{
	start_window(1000);
	alloc(1, 1, 0, 0);
	freeb(1, 1);
	alloc(2, 1, 0, 2);
	freeb(2, 3);
	alloc(3, 2, 5, 4);
	freeb(3, 5);
	alloc(4, 2, 5, 6);
	freeb(4, 7);
	end();
	/* churn: site 2 (10 bytes) first, then site 1 (2 blocks, 0 bytes) */
	expect(mp_lifetime_findings(&lt, MP_LIFETIME_CHURN, &(size_t){0}), 2, 10, 5);
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 2, 0, 1);
	expect(find(MP_LIFETIME_REUSE, 0, 1, 0), 2, 0, 1);
	expect(find(MP_LIFETIME_REUSE, 0, 2, 5), 2, 5, 5);
}

Test(lifetime, findings_sorted_bytes_count_stack_device)
{
	const struct mp_lifetime_finding *f;
	size_t n;

	start(NULL);
	alloc(1, 3, 100, 0); /* site 3: 100 bytes, 1 block */
	alloc(2, 2, 50, 0);  /* site 2: 100 bytes, 2 blocks */
	alloc(3, 2, 50, 0);
	alloc(4, 1, 60, 0); /* site 1: 100 bytes, 2 blocks */
	alloc(5, 1, 40, 0);
	alloc_on(6, 1, 1, 0, 1, 100, 0, 0); /* site 1 on device 1: 100 bytes, 2 blocks */
	alloc_on(7, 1, 1, 0, 1, 0, 0, 0);
	alloc(8, 4, 200, 0); /* site 4: 200 bytes */
	alloc(9, 0, 1, 0);   /* no stack: 1 byte */
	end();
	f = mp_lifetime_findings(&lt, MP_LIFETIME_LEAK, &n);
	cr_assert_eq(n, 6);
	cr_assert(f[0].stack_id == 4 && f[0].bytes == 200);
	cr_assert(f[1].stack_id == 1 && f[1].device == 0 && f[1].count == 2);
	cr_assert(f[2].stack_id == 1 && f[2].device == 1 && f[2].count == 2);
	cr_assert(f[3].stack_id == 2 && f[3].count == 2);
	cr_assert(f[4].stack_id == 3 && f[4].count == 1);
	cr_assert(f[5].stack_id == 0 && f[5].bytes == 1 && f[5].stack == NULL);
	expect_total(MP_LIFETIME_LEAK, 9, 601); /* 200 + 4 * 100 + 1 */
}

Test(lifetime, options_are_checked)
{
	struct mp_lifetime_opts o = {-1, 0.5};

	cr_assert_eq(mp_lifetime_init(&lt, &o, &fake_ms), MP_EINVAL);
	mp_lifetime_free(&lt);
	o.churn_window_ns = 0;
	o.idle_min_share = 1.5;
	cr_assert_eq(mp_lifetime_init(&lt, &o, &fake_ms), MP_EINVAL);
	mp_lifetime_free(&lt);
	o.idle_min_share = NAN;
	cr_assert_eq(mp_lifetime_init(&lt, &o, &fake_ms), MP_EINVAL);
	mp_lifetime_free(&lt);
	o.idle_min_share = 0.5;
	o.keep = -1;
	cr_assert_eq(mp_lifetime_init(&lt, &o, &fake_ms), MP_EINVAL);
	mp_lifetime_free(&lt);
	o.keep = 0;
	o.spill_max_pages = -1;
	cr_assert_eq(mp_lifetime_init(&lt, &o, &fake_ms), MP_EINVAL);
	mp_lifetime_free(&lt);
	cr_assert_eq(mp_lifetime_init(&lt, NULL, &fake_ms), 0);
	cr_assert_eq(lt.max_groups, MP_LIFETIME_MAX_GROUPS);
	cr_assert_eq(lt.opts.churn_window_ns, 1000000);
	cr_assert_eq(lt.opts.idle_min_share, 0.5);
	cr_assert_str_eq(mp_lifetime_kind_name(MP_LIFETIME_REUSE), "reuse");
}

Test(lifetime, huge_values_saturate_and_means_stay_exact)
{
	const int64_t big = 1LL << 55, life = 6917529027641081856LL; /* 1.5 * 2^62 */
	int i;

	start_window(0);
	for (i = 0; i < 300; i++) { /* one at a time, each freed 1 ns later */
		alloc(i, 1, big, 2 * i);
		freeb(i, 2 * i + 1);
	}
	for (i = 300; i < 304; i++)
		alloc(i, 2, 8, 1000);
	alloc(304, 3, 1, 1001); /* the last allocation */
	for (i = 300; i < 304; i++)
		freeb(i, 1000 + life);
	end();
	/* churn: 300 * 2^55 = 1.17 * 2^63: saturates; mean lifetime 1 */
	expect(find(MP_LIFETIME_CHURN, 0, 1, 0), 300, INT64_MAX, 1);
	cr_assert_eq(find(MP_LIFETIME_CHURN, 0, 1, 0)->mean_lifetime_ns, 1);
	/* reuse: 299 * 2^55 saturates too */
	expect(find(MP_LIFETIME_REUSE, 0, 1, big), 300, INT64_MAX, 1);
	cr_assert_eq(find(MP_LIFETIME_REUSE, 0, 1, big)->calls_saved, 299);
	expect_total(MP_LIFETIME_CHURN, 300, INT64_MAX);
	/* idle: 4 lifetimes of 1.5 * 2^62 sum to 6 * 2^62, past 2^64; the mean is exact */
	expect(find(MP_LIFETIME_IDLE, 0, 2, 0), 4, 32, 601);
	cr_assert_eq(find(MP_LIFETIME_IDLE, 0, 2, 0)->mean_lifetime_ns, life);
}

/* --- random traces against a brute-force reference ------------------------------ */

#define R_DEVS  3
#define R_SITES 6
#define R_SIZES 4
static const int64_t r_sizes[R_SIZES] = {0, 16, 32, 64};

static struct {
	int pre, size_i;
	int64_t alloc_seq, alloc_ts, free_seq, free_ts; /* free_seq 0: never freed */
} rb[MAXB];
static int64_t r_ts[4 * MAXB]; /* by seq */
static uint64_t r_state;

static uint64_t rnd(uint64_t n)
{
	r_state ^= r_state << 13;
	r_state ^= r_state >> 7;
	r_state ^= r_state << 17;
	return r_state % n;
}

static int r_size_index(int64_t size)
{
	int i;

	for (i = 0; i < R_SIZES; i++)
		if (r_sizes[i] == size)
			return i;
	return -1;
}

/* A random trace: returns the number of blocks. */
static int random_trace(int n_steps)
{
	int64_t ts = 1000;
	int n = 0, i, k, n_live = 0;

	for (i = 0; i < n_steps && n < MAXB; i++) {
		int r = (int)rnd(100);

		ts += rnd(10) == 0 ? -(int64_t)rnd(3000) : (int64_t)rnd(2000);
		if (r < 45 || (i < 20 && r < 60)) {
			/* preexisting: most early ones, a few later */
			int pre = r >= 45 || rnd(30) == 0;

			alloc_on(n, (int32_t)rnd(R_DEVS), 1 + (int64_t)rnd(2), rnd(3),
			         (int)rnd(R_SITES), r_sizes[rnd(R_SIZES)], ts, pre);
			rb[n].pre = pre;
			rb[n].size_i = r_size_index(blocks[n].size_bytes);
			rb[n].alloc_seq = seq;
			rb[n].alloc_ts = ts;
			rb[n].free_seq = 0;
			n++;
			n_live++;
		} else if (r < 90 && n_live > 0) {
			do
				k = (int)rnd((uint64_t)n);
			while (!live[k]);
			freeb(k, ts);
			rb[k].free_seq = seq;
			rb[k].free_ts = ts;
			n_live--;
		} else {
			event(ts);
		}
		r_ts[seq] = ts;
	}
	end();
	return n;
}

static int64_t ref_life(int64_t from, int64_t to)
{
	return to > from ? to - from : 0;
}

/* No allocation on block i's (process, device, stream) between its alloc and free. */
static int ref_stream_quiet(int n, int i)
{
	int j;

	for (j = 0; j < n; j++)
		if (j != i && !rb[j].pre && rb[j].alloc_seq > rb[i].alloc_seq &&
		    rb[j].alloc_seq < rb[i].free_seq &&
		    blocks[j].process_id == blocks[i].process_id &&
		    blocks[j].device == blocks[i].device && blocks[j].stream == blocks[i].stream)
			return 0;
	return 1;
}

static int ref_overlap(int i, int j)
{
	int64_t end_i = rb[i].free_seq ? rb[i].free_seq : INT64_MAX;
	int64_t end_j = rb[j].free_seq ? rb[j].free_seq : INT64_MAX;

	return rb[i].alloc_seq < end_j && rb[j].alloc_seq < end_i;
}

struct ref_acc {
	int64_t count, bytes, first_seq, life_sum;
};

static void ref_add(struct ref_acc *a, int i, int64_t life)
{
	if (a->count == 0 || rb[i].alloc_seq < a->first_seq)
		a->first_seq = rb[i].alloc_seq;
	a->count++;
	a->bytes += blocks[i].size_bytes;
	a->life_sum += life;
}

static int cmp_ref(const void *pa, const void *pb)
{
	const struct mp_lifetime_finding *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->size_bytes < b->size_bytes ? -1 : a->size_bytes > b->size_bytes;
}

static void check_kind(enum mp_lifetime_kind k, struct mp_lifetime_finding *want, size_t n_want)
{
	size_t n, i;
	const struct mp_lifetime_finding *got = mp_lifetime_findings(&lt, k, &n);

	qsort(want, n_want, sizeof(*want), cmp_ref);
	cr_assert_eq(n, n_want, "%s: %zu findings, expected %zu", mp_lifetime_kind_name(k), n,
	             n_want);
	for (i = 0; i < n; i++) {
		const struct mp_lifetime_finding *g = &got[i], *w = &want[i];

		cr_assert(
		        g->kind == k && g->device == w->device && g->stack_id == w->stack_id &&
		                g->count == w->count && g->bytes == w->bytes &&
		                g->first_seq == w->first_seq && g->site_allocs == w->site_allocs &&
		                g->mean_lifetime_ns == w->mean_lifetime_ns &&
		                g->size_bytes == w->size_bytes && g->calls_saved == w->calls_saved,
		        "%s #%zu: device %d site %lld count %lld/%lld bytes %lld/%lld seq "
		        "%lld/%lld "
		        "allocs %lld/%lld mean %lld/%lld",
		        mp_lifetime_kind_name(k), i, (int)g->device, (long long)g->stack_id,
		        (long long)g->count, (long long)w->count, (long long)g->bytes,
		        (long long)w->bytes, (long long)g->first_seq, (long long)w->first_seq,
		        (long long)g->site_allocs, (long long)w->site_allocs,
		        (long long)g->mean_lifetime_ns, (long long)w->mean_lifetime_ns);
	}
}

static struct mp_lifetime_finding ref_finding(enum mp_lifetime_kind k, int d, int s,
                                              const struct ref_acc *a, int64_t site_allocs)
{
	struct mp_lifetime_finding f;

	memset(&f, 0, sizeof(f));
	f.kind = k;
	f.device = d;
	f.stack_id = s;
	f.count = a->count;
	f.bytes = a->bytes;
	f.first_seq = a->first_seq;
	f.site_allocs = site_allocs;
	if (k == MP_LIFETIME_CHURN || k == MP_LIFETIME_IDLE)
		f.mean_lifetime_ns = a->life_sum / a->count;
	return f;
}

static void check_reference(int n, int64_t window_ns, double share)
{
	static struct ref_acc acc[3][R_DEVS][R_SITES]; /* leak, churn, idle */
	static struct mp_lifetime_finding want[MP_LIFETIME_N_KINDS][R_DEVS * R_SITES * R_SIZES];
	size_t n_want[MP_LIFETIME_N_KINDS] = {0};
	int64_t allocs[R_DEVS][R_SITES] = {{0}}, last_alloc[R_DEVS] = {0};
	int64_t span = ref_life(r_ts[1], r_ts[seq]);
	int i, j, d, s, z;

	memset(acc, 0, sizeof(acc));
	for (i = 0; i < n; i++)
		if (!rb[i].pre) {
			allocs[blocks[i].device][blocks[i].stack_id]++;
			if (rb[i].alloc_seq > last_alloc[blocks[i].device])
				last_alloc[blocks[i].device] = rb[i].alloc_seq;
		}
	for (i = 0; i < n; i++) {
		d = blocks[i].device;
		s = (int)blocks[i].stack_id;
		int64_t life = ref_life(rb[i].pre ? r_ts[1] : rb[i].alloc_ts, rb[i].free_ts);

		if (!rb[i].free_seq) {
			if (!rb[i].pre)
				ref_add(&acc[0][d][s], i, 0);
			continue;
		}
		if (!rb[i].pre && (life <= window_ns || ref_stream_quiet(n, i)))
			ref_add(&acc[1][d][s], i, life);
		if (rb[i].free_seq > last_alloc[d] && span > 0 &&
		    (double)life >= share * (double)span)
			ref_add(&acc[2][d][s], i, life);
	}
	for (d = 0; d < R_DEVS; d++)
		for (s = 0; s < R_SITES; s++) {
			static const enum mp_lifetime_kind kinds[3] = {
			        MP_LIFETIME_LEAK, MP_LIFETIME_CHURN, MP_LIFETIME_IDLE};

			for (j = 0; j < 3; j++)
				if (acc[j][d][s].count)
					want[kinds[j]][n_want[kinds[j]]++] = ref_finding(
					        kinds[j], d, s, &acc[j][d][s], allocs[d][s]);
			for (z = 0; z < R_SIZES; z++) {
				struct ref_acc a = {0, 0, 0, 0};
				int overlap = 0, k;

				for (i = 0; i < n; i++) {
					if (rb[i].pre || blocks[i].device != d ||
					    blocks[i].stack_id != s || rb[i].size_i != z)
						continue;
					for (k = 0; k < i; k++)
						if (!rb[k].pre && blocks[k].device == d &&
						    blocks[k].stack_id == s && rb[k].size_i == z &&
						    ref_overlap(i, k))
							overlap = 1;
					ref_add(&a, i, 0);
				}
				if (a.count < 2 || overlap)
					continue;
				a.bytes = (a.count - 1) * r_sizes[z];
				struct mp_lifetime_finding *f =
				        &want[MP_LIFETIME_REUSE][n_want[MP_LIFETIME_REUSE]++];
				*f = ref_finding(MP_LIFETIME_REUSE, d, s, &a, allocs[d][s]);
				f->size_bytes = r_sizes[z];
				f->calls_saved = a.count - 1;
			}
		}
	for (i = 0; i < MP_LIFETIME_N_KINDS; i++)
		check_kind(i, want[i], n_want[i]);
}

/* The random traces with a table of max_groups groups (0: the default). */
static int64_t random_rounds(size_t max_groups)
{
	static const int64_t windows[] = {0, 500, 3000};
	static const double shares[] = {0.0, 0.1, 0.5};
	int64_t spilled = 0;
	int round;

	for (round = 0; round < 60; round++) {
		int64_t window = windows[round % 3];
		double share = shares[(round / 3) % 3];
		struct mp_lifetime_opts o = {.churn_window_ns = window, .idle_min_share = share};
		int n;

		o.max_groups = max_groups ? max_groups + (size_t)round % 3 : 0;
		r_state = 0x9e3779b97f4a7c15ULL + (uint64_t)round * 7919;
		start(&o);
		n = random_trace(50 + round * 20);
		check_reference(n, window, share);
		spilled += lt.n_spilled;
		mp_lifetime_free(&lt);
	}
	start(NULL); /* for the suite's teardown */
	return spilled;
}

Test(lifetime, random_traces_match_brute_force)
{
	cr_assert_eq(random_rounds(0), 0);
}

/* The same traces with 1 to 3 groups in memory: most of them spilled and
 * brought back, the findings still those of the brute force. */
Test(lifetime, random_traces_spilled_match_brute_force)
{
	cr_assert_gt(random_rounds(1), 1000);
}

/* --- groups spilled out of memory ------------------------------------------------ */

/* Allocate and free n blocks of sizes no other block has, at site 2: each
 * a group of one allocation, which pushes the idle groups out of a small
 * table. */
static void fillers(int *next, int n, int64_t *ts)
{
	int i;

	for (i = 0; i < n; i++, (*next)++, *ts += 10) {
		alloc(*next, 2, 100000 + *next, *ts);
		freeb(*next, *ts + 5);
	}
}

/* Site 1: size 100 shared before a spill, reused after it; size 200 shared
 * while a block stays live through the spills; size 300 reused across one. */
static void spill_scenario(size_t max_groups)
{
	struct mp_lifetime_opts o = {.churn_window_ns = 0, .idle_min_share = 0.5};
	int64_t ts = 0;
	int next = 100;

	o.max_groups = max_groups;
	start(&o);
	alloc(1, 1, 100, ts += 10); /* seq 1 */
	alloc(2, 1, 100, ts += 10); /* two of size 100 live at once */
	freeb(1, ts += 10);
	freeb(2, ts += 10);
	alloc(3, 1, 300, ts += 10); /* seq 5: the first of size 300 */
	freeb(3, ts += 10);
	alloc(4, 1, 200, ts += 10); /* live through the fillers */
	fillers(&next, 8, &ts);
	alloc(5, 1, 100, ts += 10); /* size 100 again: one at a time now */
	freeb(5, ts += 10);
	alloc(6, 1, 100, ts += 10);
	freeb(6, ts += 10);
	alloc(7, 1, 200, ts += 10); /* while block 4 is still live */
	freeb(7, ts += 10);
	freeb(4, ts += 10);
	fillers(&next, 8, &ts);
	alloc(8, 1, 300, ts += 10);
	freeb(8, ts += 10);
	alloc(9, 3, 8, ts += 10); /* the last allocation */
	end();
}

/* A copy of the findings of kind k, without the stack pointers. */
static size_t copy_findings(enum mp_lifetime_kind k, struct mp_lifetime_finding *out, size_t max)
{
	size_t n, i;
	const struct mp_lifetime_finding *f = mp_lifetime_findings(&lt, k, &n);

	cr_assert_leq(n, max);
	for (i = 0; i < n; i++) {
		out[i] = f[i];
		out[i].stack = NULL;
	}
	return n;
}

Test(lifetime, spilled_groups_give_the_same_findings)
{
	static struct mp_lifetime_finding want[MP_LIFETIME_N_KINDS][64], got[64];
	size_t n_want[MP_LIFETIME_N_KINDS], i, j;
	struct mp_lifetime_totals t_want, t_got;
	int k;

	spill_scenario(0);
	cr_assert_eq(lt.n_spilled, 0);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		n_want[k] = copy_findings(k, want[k], 64);
	mp_lifetime_totals(&lt, &t_want);
	/* only size 300 is a reuse candidate: 100 and 200 had two live at once */
	cr_assert_eq(n_want[MP_LIFETIME_REUSE], 1);
	cr_assert_eq(want[MP_LIFETIME_REUSE][0].size_bytes, 300);
	cr_assert_eq(want[MP_LIFETIME_REUSE][0].count, 2);
	cr_assert_eq(want[MP_LIFETIME_REUSE][0].first_seq, 5);
	cr_assert_eq(want[MP_LIFETIME_REUSE][0].site_allocs, 8);
	for (i = 1; i <= 4; i++) {
		mp_lifetime_free(&lt);
		spill_scenario(i);
		cr_assert_gt(lt.n_spilled, 0, "table of %zu: nothing spilled", i);
		for (k = 0; k < MP_LIFETIME_N_KINDS; k++) {
			size_t n = copy_findings(k, got, 64);

			cr_assert_eq(n, n_want[k], "table of %zu, %s: %zu findings, not %zu", i,
			             mp_lifetime_kind_name(k), n, n_want[k]);
			for (j = 0; j < n; j++)
				cr_assert(got[j].kind == want[k][j].kind &&
				                  got[j].device == want[k][j].device &&
				                  got[j].stack_id == want[k][j].stack_id &&
				                  got[j].count == want[k][j].count &&
				                  got[j].bytes == want[k][j].bytes &&
				                  got[j].first_seq == want[k][j].first_seq &&
				                  got[j].site_allocs == want[k][j].site_allocs &&
				                  got[j].mean_lifetime_ns ==
				                          want[k][j].mean_lifetime_ns &&
				                  got[j].size_bytes == want[k][j].size_bytes &&
				                  got[j].calls_saved == want[k][j].calls_saved,
				          "table of %zu, %s #%zu differs", i,
				          mp_lifetime_kind_name(k), j);
		}
		mp_lifetime_totals(&lt, &t_got);
		cr_assert(memcmp(&t_got, &t_want, sizeof(t_got)) == 0, "table of %zu: totals", i);
	}
}

Test(lifetime, the_bound_comes_from_the_environment)
{
	setenv("MEMPROF_LIFETIME_MAX_GROUPS", "3", 1);
	setenv("MEMPROF_LIFETIME_SPILL_PAGES", "7", 1);
	start(NULL);
	cr_assert_eq(lt.max_groups, 3);
	cr_assert_eq(lt.opts.spill_max_pages, 7);
	mp_lifetime_free(&lt);
	setenv("MEMPROF_LIFETIME_MAX_GROUPS", "0", 1); /* not a bound: the default */
	setenv("MEMPROF_LIFETIME_SPILL_PAGES", "x", 1);
	start(NULL);
	cr_assert_eq(lt.max_groups, MP_LIFETIME_MAX_GROUPS);
	cr_assert_eq(lt.opts.spill_max_pages, 0);
	unsetenv("MEMPROF_LIFETIME_MAX_GROUPS");
	unsetenv("MEMPROF_LIFETIME_SPILL_PAGES");
}

Test(lifetime, a_full_spill_database_is_an_error)
{
	struct mp_lifetime_opts o = {.churn_window_ns = 0, .idle_min_share = 0.5};
	int i, rc = 0;

	o.max_groups = 4;
	o.spill_max_pages = 2; /* the schema's two pages, then full */
	start(&o);
	cr_assert_null(mp_lifetime_error(&lt));
	for (i = 0; i < 2000 && rc == 0; i++) {
		struct memprof_record rec = record(MEMPROF_OP_ALLOC, i);

		blocks[i].size_bytes = 1000 + i;
		blocks[i].stack_id = 1;
		blocks[i].alloc_seq = rec.ev.seq;
		rc = lis.on_alloc(lis.ctx, &blocks[i], &rec);
		if (rc == 0) {
			rec = record(MEMPROF_OP_FREE, i);
			cr_assert_eq(lis.on_free(lis.ctx, &blocks[i], &rec), 0);
		}
	}
	cr_assert_eq(rc, MP_EFULL, "rc %d after %d allocations", rc, i);
	cr_assert_eq(lt.error, MP_EFULL);
	cr_assert_not_null(mp_lifetime_error(&lt));
	cr_assert(strstr(mp_lifetime_error(&lt), "cannot write the lifetime groups to a "
	                                         "temporary database: database or disk is full"),
	          "%s", mp_lifetime_error(&lt));
}

Test(lifetime, keep_trims_findings_but_totals_count_all)
{
	struct mp_lifetime_opts o = {.churn_window_ns = 0, .idle_min_share = 0.5};
	struct mp_lifetime_totals t;
	const struct mp_lifetime_finding *f;
	size_t n;
	int i;

	o.keep = 2;
	start(&o);
	for (i = 0; i < 5; i++) /* device 0: reuse of sizes 10..50, twice each */
		alloc(i, 1, 10 * (i + 1), 10 * i);
	for (i = 0; i < 5; i++)
		freeb(i, 100 + i);
	for (i = 0; i < 5; i++) {
		alloc(10 + i, 1, 10 * (i + 1), 200 + 10 * i);
		freeb(10 + i, 201 + 10 * i);
	}
	alloc_on(20, 1, 1, 0, 1, 7, 300, 0); /* device 1: one reuse of 7 bytes */
	freeb(20, 301);
	alloc_on(21, 1, 1, 0, 1, 7, 302, 0);
	freeb(21, 303);
	end();
	f = mp_lifetime_findings(&lt, MP_LIFETIME_REUSE, &n);
	cr_assert_eq(n, 3); /* the first 2 of device 0, the 1 of device 1 */
	cr_assert(f[0].device == 0 && f[0].size_bytes == 50);
	cr_assert(f[1].device == 0 && f[1].size_bytes == 40);
	cr_assert(f[2].device == 1 && f[2].size_bytes == 7);
	mp_lifetime_device_totals(&lt, 0, &t);
	cr_assert_eq(t.kind[MP_LIFETIME_REUSE].n_findings, 5);
	cr_assert_eq(t.kind[MP_LIFETIME_REUSE].count, 10);
	cr_assert_eq(t.kind[MP_LIFETIME_REUSE].bytes, 150);
	mp_lifetime_totals(&lt, &t);
	cr_assert_eq(t.kind[MP_LIFETIME_REUSE].n_findings, 6);
	cr_assert_eq(t.kind[MP_LIFETIME_REUSE].bytes, 157);
	f = mp_lifetime_findings(&lt, MP_LIFETIME_CHURN, &n);
	cr_assert_eq(n, 2); /* one site per device, under the keep */
}
