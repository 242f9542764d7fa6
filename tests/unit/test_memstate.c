/*
 * tests/unit/test_memstate.c - src/analysis/memstate.c fed records directly:
 * peak live bytes overall and per device, unmatched frees, per-process ids,
 * free_requested against free, reserved bytes, pre-existing pending blocks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "analysis/memstate.h"

static struct mp_memstate sum;
static struct mp_consumer c;
static int64_t seq;

static void setup(void)
{
	mp_memstate_init(&sum);
	c = mp_memstate_consumer(&sum);
	seq = 0;
}

static void teardown(void)
{
	mp_memstate_free(&sum);
}

TestSuite(memstate, .init = setup, .fini = teardown);

static void feed(int op, int64_t id, int64_t size, int32_t device, int64_t process)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 10;
	rec.ev.op = op;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.device = device;
	rec.ev.process_id = process;
	cr_assert_eq(c.on_record(c.ctx, &rec), 0);
}

Test(memstate, peak_is_the_highest_live_sum)
{
	feed(MEMPROF_OP_ALLOC, 1, 100, 0, 1);
	feed(MEMPROF_OP_ALLOC, 2, 300, 0, 1);
	feed(MEMPROF_OP_FREE, 1, 0, 0, 1);
	feed(MEMPROF_OP_ALLOC, 3, 150, 0, 1); /* 450: the peak */
	feed(MEMPROF_OP_FREE, 2, 0, 0, 1);
	feed(MEMPROF_OP_PREEXISTING, 4, 10, 0, 1);
	feed(MEMPROF_OP_RESERVE, 9, 1 << 20, 0, 1); /* segments are not live bytes */
	c.on_end(c.ctx);
	cr_assert_eq(sum.live_peak.bytes, 450);
	cr_assert_eq(sum.live_peak.seq, 4);
	cr_assert_eq(sum.live_peak.ts_ns, 40);
	cr_assert_eq(sum.live_bytes, 160);
	cr_assert_eq(sum.n_live_at_end, 2);
	cr_assert_eq(sum.n_events, 7);
	cr_assert_eq(sum.n_by_op[MEMPROF_OP_ALLOC], 3);
}

Test(memstate, free_is_charged_to_the_device_of_its_alloc)
{
	feed(MEMPROF_OP_ALLOC, 1, 100, 1, 1);
	feed(MEMPROF_OP_FREE, 1, 0, 0, 1); /* the free's record says device 0 */
	feed(MEMPROF_OP_ALLOC, 2, 100, 1, 1);
	feed(MEMPROF_OP_ALLOC, 3, 10, 0, 1);
	c.on_end(c.ctx);
	cr_assert_eq(sum.n_devices, 2);
	cr_assert_eq(sum.devices[0].device, 1);
	cr_assert_eq(sum.devices[0].live_peak.bytes, 100);
	cr_assert_eq(sum.devices[0].live_bytes, 100);
	cr_assert_eq(sum.devices[1].device, 0);
	cr_assert_eq(sum.devices[1].live_peak.bytes, 10);
	cr_assert_eq(sum.devices[1].live_bytes, 10);
}

Test(memstate, refuses_sizes_it_cannot_count)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = 1;
	rec.ev.op = MEMPROF_OP_ALLOC;
	rec.ev.alloc_id = 1;
	rec.ev.size_bytes = 1LL << 56;
	cr_assert_eq(c.on_record(c.ctx, &rec), MP_EFORMAT);
	cr_assert_eq(sum.oversized_seq, 1);
}

Test(memstate, ids_are_per_process_and_unmatched_frees_counted)
{
	feed(MEMPROF_OP_ALLOC, 1, 100, 0, 1);
	feed(MEMPROF_OP_ALLOC, 1, 200, 0, 2);
	feed(MEMPROF_OP_FREE, 1, 0, 0, 2);
	feed(MEMPROF_OP_FREE, 1, 0, 0, 3);
	c.on_end(c.ctx);
	cr_assert_eq(sum.live_peak.bytes, 300);
	cr_assert_eq(sum.live_bytes, 100);
	cr_assert_eq(sum.n_unmatched_frees, 1);
	cr_assert_eq(sum.n_live_at_end, 1);
}

static void feed_req(int op, int64_t id, int64_t size, int64_t requested)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 10;
	rec.ev.op = op;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.requested_bytes = requested;
	rec.ev.process_id = 1;
	cr_assert_eq(c.on_record(c.ctx, &rec), 0);
}

Test(memstate, free_requested_ends_life_free_ends_activity)
{
	feed(MEMPROF_OP_RESERVE, 100, 4096, 0, 1);
	feed_req(MEMPROF_OP_ALLOC, 1, 1024, 1000);
	feed_req(MEMPROF_OP_ALLOC, 2, 2048, 2000); /* live 3072: the peak */
	feed_req(MEMPROF_OP_FREE_REQUESTED, 1, 0, 0);
	feed_req(MEMPROF_OP_ALLOC, 3, 512, 500); /* live 2560, active 3584 */
	feed_req(MEMPROF_OP_FREE_REQUESTED, 2, 0, 0);
	feed_req(MEMPROF_OP_FREE, 2, 0, 0); /* live 512, active 1536 */
	c.on_end(c.ctx);
	cr_assert_eq(sum.devices[0].live_peak.bytes, 3072);
	cr_assert_eq(sum.devices[0].live_peak.seq, 3);
	cr_assert_eq(sum.devices[0].live_bytes, 512);
	cr_assert_eq(sum.devices[0].requested_bytes, 500);
	cr_assert_eq(sum.devices[0].active_bytes, 1536, "block 1 is freed but not yet reusable");
	cr_assert_eq(sum.devices[0].reserved_bytes, 4096);
	cr_assert_eq(sum.n_live_at_end, 1, "pending block 1 is not live");
}

Test(memstate, reserved_bytes_from_reserve_release_map_unmap)
{
	feed(MEMPROF_OP_RESERVE, 1, 1000, 0, 1);
	feed(MEMPROF_OP_MAP, 2, 500, 0, 1);      /* 1500 */
	feed(MEMPROF_OP_RESERVE, 3, 2000, 0, 1); /* 3500: the peak */
	feed(MEMPROF_OP_RELEASE, 1, 0, 0, 1);    /* takes back its reserve's 1000 */
	feed(MEMPROF_OP_UNMAP, 4, 200, 0, 1);    /* 2300 */
	feed(MEMPROF_OP_RELEASE, 77, 0, 0, 1);   /* unknown: no change */
	c.on_end(c.ctx);
	cr_assert(sum.devices[0].has_segments);
	cr_assert_eq(sum.devices[0].reserved_peak.bytes, 3500);
	cr_assert_eq(sum.devices[0].reserved_peak.seq, 3);
	cr_assert_eq(sum.devices[0].reserved_bytes, 2300);
}

Test(memstate, a_preexisting_block_already_freed_never_was_live)
{
	feed_req(MEMPROF_OP_PREEXISTING, 1, 1 << 20, 1 << 20);
	feed_req(MEMPROF_OP_FREE_REQUESTED, 1, 0, 0); /* pending at the window start */
	feed_req(MEMPROF_OP_PREEXISTING, 2, 100, 100);
	feed_req(MEMPROF_OP_FREE, 1, 0, 0);
	c.on_end(c.ctx);
	cr_assert_eq(sum.live_peak.bytes, 100, "the pending block must not make a peak");
	cr_assert_eq(sum.devices[0].live_peak.bytes, 100);
	cr_assert_eq(sum.devices[0].live_peak.seq, 3);
}

Test(memstate, a_preexisting_block_at_the_end_counts)
{
	feed_req(MEMPROF_OP_PREEXISTING, 1, 300, 300);
	c.on_end(c.ctx);
	cr_assert_eq(sum.live_peak.bytes, 300, "the deferred check runs at the end");
}

Test(memstate, sums_beyond_2_to_62_are_refused_not_overflowed)
{
	struct memprof_record rec;
	int i, rc = 0;

	for (i = 1; i <= 80 && rc == 0; i++) { /* 80 * 2^56 - 80 > 2^62 */
		memset(&rec, 0, sizeof(rec));
		rec.ev.seq = ++seq;
		rec.ev.op = MEMPROF_OP_ALLOC;
		rec.ev.alloc_id = i;
		rec.ev.size_bytes = (INT64_C(1) << 56) - 1;
		rec.ev.process_id = 1;
		rc = c.on_record(c.ctx, &rec);
	}
	cr_assert_eq(rc, MP_EFORMAT);
	cr_assert_eq(sum.oversized_seq, 65, "the 65th allocation passes 2^62");
}

/* A listener that writes what it was told, one letter per call:
 * a = on_alloc, f = on_free, e = on_event (with the changes as a digit). */
static char told[256];

static int told_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *r)
{
	(void)ctx;
	(void)r;
	snprintf(told + strlen(told), sizeof(told) - strlen(told), "a%lld",
	         (long long)b->stream_ordinal);
	return 0;
}

static int told_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *r)
{
	(void)ctx;
	(void)r;
	snprintf(told + strlen(told), sizeof(told) - strlen(told), "f%lld", (long long)b->alloc_id);
	return 0;
}

static int told_event(void *ctx, const struct memprof_record *r, const struct mp_mem_device *d,
                      unsigned changes)
{
	(void)ctx;
	(void)r;
	(void)d;
	snprintf(told + strlen(told), sizeof(told) - strlen(told), "e%u ", changes);
	return 0;
}

/* p = prefetch before an alloc (p-) or before the free of a block (p and its id) */
static void told_prefetch(void *ctx, const struct memprof_record *r, const struct mp_mem_block *b)
{
	(void)ctx;
	(void)r;
	if (b)
		snprintf(told + strlen(told), sizeof(told) - strlen(told), "p%lld",
		         (long long)b->alloc_id);
	else
		snprintf(told + strlen(told), sizeof(told) - strlen(told), "p-");
}

static int count_block(void *ctx, const struct mp_mem_block *b)
{
	*(int64_t *)ctx += b->size_bytes;
	return 0;
}

Test(memstate, listeners_hear_blocks_then_events_in_order)
{
	struct mp_mem_listener l = {
	        .on_alloc = told_alloc, .on_free = told_free, .on_event = told_event};
	int64_t live = 0;

	told[0] = '\0';
	cr_assert_eq(mp_memstate_listen(&sum, &l), 0);
	feed(MEMPROF_OP_ALLOC, 1, 100, 0, 1);        /* a new live peak (requested is 0) */
	feed(MEMPROF_OP_ALLOC, 2, 50, 0, 1);         /* the 2nd allocation of stream 0 */
	feed(MEMPROF_OP_FREE_REQUESTED, 1, 0, 0, 1); /* the program's free */
	feed(MEMPROF_OP_FREE, 1, 0, 0, 1);           /* the allocator's: no on_free */
	feed(MEMPROF_OP_FREE, 42, 0, 0, 1);          /* unmatched: an event only */
	feed(MEMPROF_OP_RESERVE, 7, 4096, 0, 1);     /* reserved peak: 4 */
	cr_assert_str_eq(told, "a1e1 a2e1 f1e0 e0 e0 e4 ");
	cr_assert_eq(mp_memstate_stream_allocs(&sum, 1, 0, 0), 2);
	cr_assert_eq(mp_memstate_stream_allocs(&sum, 1, 0, 9), 0);
	mp_memstate_foreach_live(&sum, count_block, &live);
	cr_assert_eq(live, 50); /* block 2 only */
	cr_assert_eq(sum.n_unmatched_frees, 1);
}

/* The prefetch hint comes before each on_alloc (no block yet) and before
 * each on_free (its block), never for an event that makes or ends no life. */
Test(memstate, prefetch_comes_before_alloc_and_free)
{
	struct mp_mem_listener l = {.on_alloc = told_alloc,
	                            .on_free = told_free,
	                            .on_event = told_event,
	                            .prefetch = told_prefetch};

	told[0] = '\0';
	cr_assert_eq(mp_memstate_listen(&sum, &l), 0);
	feed(MEMPROF_OP_ALLOC, 1, 100, 0, 1);
	feed(MEMPROF_OP_FREE_REQUESTED, 1, 0, 0, 1);
	feed(MEMPROF_OP_FREE, 1, 0, 0, 1); /* the allocator's: no on_free, no hint */
	feed(MEMPROF_OP_FREE, 42, 0, 0, 1);
	cr_assert_str_eq(told, "p-a1e1 p1f1e0 e0 e0 ");
}

Test(memstate, timestamps_going_back_are_counted)
{
	struct memprof_record rec;
	int64_t ts[] = {10, 30, 20, 40, 5};
	int i;

	for (i = 0; i < 5; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.ev.seq = i + 1;
		rec.ev.ts_ns = ts[i];
		rec.ev.op = MEMPROF_OP_PHASE_BEGIN;
		cr_assert_eq(c.on_record(c.ctx, &rec), 0);
	}
	c.on_end(c.ctx);
	cr_assert_eq(sum.n_out_of_order, 2);
	cr_assert_eq(sum.first_ts_ns, 10);
	cr_assert_eq(sum.last_ts_ns, 5);
}

/* Each (process, device, stream) counts its own allocations, whether the
 * streams are few (compared one by one) or many (past
 * MP_MEM_STREAMS_SCANNED, through the hash map), checked against counts
 * kept here. */
Test(memstate, stream_ordinals_count_per_stream_few_or_many)
{
	enum { N = 3 * MP_MEM_STREAMS_SCANNED };
	int64_t want[N] = {0}, id = 0;
	int i, round;

	for (round = 0; round < 3; round++)
		for (i = 0; i < N; i += 1 + round) {
			struct memprof_record rec;

			memset(&rec, 0, sizeof(rec));
			rec.ev.seq = ++seq;
			rec.ev.op = MEMPROF_OP_ALLOC;
			rec.ev.alloc_id = ++id;
			rec.ev.size_bytes = 8;
			rec.ev.device = i % 2;
			rec.ev.process_id = 1 + i % 3;
			rec.ev.stream = (uint64_t)i * 0x1000;
			cr_assert_eq(c.on_record(c.ctx, &rec), 0);
			want[i]++;
			cr_assert_eq(mp_memstate_stream_allocs(&sum, 1 + i % 3, i % 2,
			                                       (uint64_t)i * 0x1000),
			             want[i]);
		}
	for (i = 0; i < N; i++) {
		cr_assert_eq(
		        mp_memstate_stream_allocs(&sum, 1 + i % 3, i % 2, (uint64_t)i * 0x1000),
		        want[i], "stream %d", i);
		cr_assert_eq(
		        mp_memstate_stream_allocs(&sum, 2 + i % 3, i % 2, (uint64_t)i * 0x1000), 0);
	}
}
