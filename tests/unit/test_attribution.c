/*
 * tests/unit/test_attribution.c - src/analysis/attribution.c through a
 * real memory state: the groups of every kind (stack, phase, stream, size
 * class, api) at each device's live peak, at the first OOM and at a time,
 * hand-worked; and randomized runs against totals recomputed from the
 * blocks live at the chosen moment.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attribution.h"
#include "analysis/memstate.h"

#define ALL_KINDS 0x1fu

static struct mp_memstate ms;
static struct mp_attribution attr;
static struct mp_consumer cons;
static struct memprof_stack stacks[8];
static const char *names[] = {"fwd", "bwd", "opt", "cudaMalloc", "cudaMallocAsync"};
static int64_t seq;
static int started;

static void start(int at, int64_t at_ts_ns)
{
	struct mp_mem_listener l;

	mp_memstate_init(&ms);
	mp_attribution_init(&attr, &ms, ALL_KINDS, at, at_ts_ns);
	l = mp_attribution_listener(&attr);
	cr_assert_eq(mp_memstate_listen(&ms, &l), 0);
	cons = mp_memstate_consumer(&ms);
	seq = 0;
	started = 1;
}

static void teardown(void)
{
	if (!started)
		return;
	mp_attribution_free(&attr);
	mp_memstate_free(&ms);
	started = 0;
}

TestSuite(attribution, .fini = teardown);

/* An event; stack, phase and api ids index stacks and names (-1: none). */
static void ev(int op, int32_t device, int64_t id, int64_t size, int64_t stack, int64_t phase,
               uint64_t stream, int64_t api)
{
	struct memprof_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.seq = ++seq;
	rec.ev.ts_ns = seq * 100;
	rec.ev.op = op;
	rec.ev.device = device;
	rec.ev.alloc_id = id;
	rec.ev.size_bytes = size;
	rec.ev.requested_bytes = size - size / 4;
	rec.ev.address = 0x1000 * (uint64_t)id;
	rec.ev.process_id = 1;
	rec.ev.stream = stream;
	rec.ev.stack_id = stack;
	rec.ev.phase_id = phase;
	rec.ev.api_id = api;
	rec.stack = stack >= 0 ? &stacks[stack] : NULL;
	rec.phase = phase >= 0 ? names[phase] : NULL;
	rec.api = api >= 0 ? names[api] : NULL;
	cr_assert_eq(cons.on_record(cons.ctx, &rec), 0);
}

static void alloc(int32_t device, int64_t id, int64_t size, int64_t stack, int64_t phase,
                  uint64_t stream, int64_t api)
{
	ev(MEMPROF_OP_ALLOC, device, id, size, stack, phase, stream, api);
}

static void release(int32_t device, int64_t id)
{
	ev(MEMPROF_OP_FREE, device, id, 0, -1, -1, 0, -1);
}

/* Group key of kind on device: its count, bytes and requested bytes
 * (0 0 0 when absent). */
static void expect(int32_t device, int kind, int64_t key, int64_t count, int64_t bytes,
                   int64_t requested)
{
	const struct mp_attr_device *d = mp_attribution_device(&attr, device);
	struct mp_attr_group *g;
	ptrdiff_t n, i;

	cr_assert(d, "device %d", device);
	g = mp_attribution_groups(d, kind, &n);
	cr_assert_geq(n, 0);
	for (i = 0; i < n && g[i].key != key; i++)
		;
	if (count == 0) {
		cr_assert_eq(i, n, "device %d kind %d key %lld: absent", device, kind,
		             (long long)key);
	} else {
		cr_assert_lt(i, n, "device %d kind %d key %lld", device, kind, (long long)key);
		cr_assert_eq(g[i].count, count, "device %d kind %d key %lld", device, kind,
		             (long long)key);
		cr_assert_eq(g[i].bytes, bytes);
		cr_assert_eq(g[i].requested_bytes, requested);
		if (kind == MP_ATTR_STACK)
			cr_assert_eq(g[i].stack, &stacks[key]);
		if (kind == MP_ATTR_PHASE || kind == MP_ATTR_API)
			cr_assert_str_eq(g[i].name, names[key]);
	}
	free(g);
}

Test(attribution, every_kind_at_each_devices_peak)
{
	start(MP_ATTR_AT_PEAK, 0);
	alloc(0, 1, 1000, 0, 0, 7, 3);
	alloc(0, 2, 3000, 1, 0, 7, 3);
	alloc(1, 3, 64, 0, 1, 9, 4);
	alloc(0, 4, 1024, 0, 1, 8, 4); /* device 0's peak: 5024 bytes */
	alloc(1, 5, 100, 2, 2, 9, 3);  /* device 1's peak: 164 bytes */
	release(0, 2);
	release(1, 3);
	alloc(0, 6, 2000, 2, 2, 7, 3); /* 4024: below the peak */
	cr_assert_eq(cons.on_end(cons.ctx), 0);

	expect(0, MP_ATTR_STACK, 0, 2, 2024, 750 + 768);
	expect(0, MP_ATTR_STACK, 1, 1, 3000, 2250);
	expect(0, MP_ATTR_STACK, 2, 0, 0, 0); /* allocated after the peak */
	expect(0, MP_ATTR_PHASE, 0, 2, 4000, 3000);
	expect(0, MP_ATTR_PHASE, 1, 1, 1024, 768);
	expect(0, MP_ATTR_STREAM, 7, 2, 4000, 3000);
	expect(0, MP_ATTR_STREAM, 8, 1, 1024, 768);
	expect(0, MP_ATTR_SIZE, 10, 1, 1000, 750); /* [512, 1024) */
	expect(0, MP_ATTR_SIZE, 11, 1, 1024, 768); /* [1024, 2048) */
	expect(0, MP_ATTR_SIZE, 12, 1, 3000, 2250);
	expect(0, MP_ATTR_API, 3, 2, 4000, 3000);
	expect(0, MP_ATTR_API, 4, 1, 1024, 768);

	expect(1, MP_ATTR_STACK, 0, 1, 64, 48);
	expect(1, MP_ATTR_STACK, 2, 1, 100, 75);
	expect(1, MP_ATTR_PHASE, 1, 1, 64, 48);
	expect(1, MP_ATTR_STREAM, 9, 2, 164, 123);
	expect(1, MP_ATTR_SIZE, 7, 2, 164, 123); /* 64 and 100: [64, 128) */
	expect(1, MP_ATTR_API, 3, 1, 100, 75);
	expect(1, MP_ATTR_API, 4, 1, 64, 48);
}

Test(attribution, at_the_first_oom_and_at_a_time)
{
	start(MP_ATTR_AT_OOM, 0);
	alloc(0, 1, 4096, 1, 0, 7, 3);
	alloc(0, 2, 512, 1, 0, 7, 3);
	release(0, 1);
	ev(MEMPROF_OP_OOM, 0, 0, 1 << 20, 1, 0, 7, 3); /* the moment: block 2 alone */
	alloc(0, 3, 8192, 1, 0, 7, 3);
	ev(MEMPROF_OP_OOM, 0, 0, 1 << 20, 1, 0, 7, 3); /* not the first */
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	expect(0, MP_ATTR_STACK, 1, 1, 512, 384);
	expect(0, MP_ATTR_SIZE, 10, 1, 512, 384);
	teardown();

	start(MP_ATTR_AT_TIME, 250); /* after event 2 (ts 200), before event 3 */
	alloc(0, 1, 4096, 1, 0, 7, 3);
	alloc(0, 2, 512, 2, 1, 8, 4);
	release(0, 1);
	cr_assert_eq(cons.on_end(cons.ctx), 0);
	expect(0, MP_ATTR_STACK, 1, 1, 4096, 3072);
	expect(0, MP_ATTR_STACK, 2, 1, 512, 384);
	expect(0, MP_ATTR_STREAM, 8, 1, 512, 384);
}

/* Random allocations and frees on three devices: at each device's peak,
 * every kind's groups sum what the blocks live then hold, key by key. */
#define RB 64

struct rblock {
	int live;
	int32_t device;
	int64_t size, stack, phase, api;
	uint64_t stream;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static int64_t key_of(const struct rblock *b, int kind)
{
	switch (kind) {
	case MP_ATTR_STACK:
		return b->stack;
	case MP_ATTR_PHASE:
		return b->phase;
	case MP_ATTR_STREAM:
		return (int64_t)b->stream;
	case MP_ATTR_SIZE:
		return mp_attr_size_class(b->size);
	default:
		return b->api;
	}
}

Test(attribution, random_runs_match_the_live_blocks_at_each_peak)
{
	static struct rblock b[RB], at_peak[3][RB];
	int64_t live[3], peak[3];
	int step, i, d, k, run;

	for (run = 0; run < 4; run++) {
		start(MP_ATTR_AT_PEAK, 0);
		memset(b, 0, sizeof(b));
		memset(live, 0, sizeof(live));
		memset(peak, 0, sizeof(peak));
		for (step = 0; step < 3000; step++) {
			i = (int)rnd(RB);
			if (b[i].live) {
				release(b[i].device, i + 1);
				b[i].live = 0;
				live[b[i].device] -= b[i].size;
				continue;
			}
			b[i].live = 1;
			b[i].device = (int32_t)rnd(3);
			b[i].size = 1 + (int64_t)rnd(1u << rnd(20));
			b[i].stack = (int64_t)rnd(8);
			b[i].phase = (int64_t)rnd(3);
			b[i].stream = rnd(4);
			b[i].api = 3 + (int64_t)rnd(2);
			alloc(b[i].device, i + 1, b[i].size, b[i].stack, b[i].phase, b[i].stream,
			      b[i].api);
			d = b[i].device;
			if ((live[d] += b[i].size) > peak[d]) {
				peak[d] = live[d];
				memcpy(at_peak[d], b, sizeof(b));
			}
		}
		cr_assert_eq(cons.on_end(cons.ctx), 0);
		for (d = 0; d < 3; d++)
			for (k = 0; k < MP_ATTR_KINDS; k++)
				for (i = 0; i < RB; i++) {
					const struct rblock *w = &at_peak[d][i];
					int64_t key = key_of(w, k), c = 0, by = 0, rq = 0;
					int j;

					if (!w->live || w->device != d)
						continue;
					for (j = 0; j < RB; j++) {
						const struct rblock *o = &at_peak[d][j];

						if (o->live && o->device == d &&
						    key_of(o, k) == key) {
							c++;
							by += o->size;
							rq += o->size - o->size / 4;
						}
					}
					expect(d, k, key, c, by, rq);
				}
		teardown();
	}
}
