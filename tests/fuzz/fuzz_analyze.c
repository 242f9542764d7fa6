/*
 * tests/fuzz/fuzz_analyze.c - fuzz target for 'memprof analyze' past the
 * reader: any bytes become a stream of events (any operation, ids that
 * collide, sizes up to the limit, overlapping addresses, timestamps going
 * back) fed to the memory state and every analysis, then rendered as text
 * and JSON.  A trace database holds whatever a user wrote into it, so the
 * analyses must never crash, hang or leak on any event sequence.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/attribution.h"
#include "analysis/frag.h"
#include "analysis/lifetime.h"
#include "analysis/memstate.h"
#include "analysis/timeline.h"
#include "report/analyze_out.h"
#include "report/timeline_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EVENT_BYTES 16

static const struct memprof_frame frames[] = {
        {"fwd", "model.py", 10}, {"main", "train.py", 5}, {"torch::unwind::unwind()", "??", 0}};
static const struct memprof_stack stacks[] = {{2, frames}, {1, frames + 1}, {3, frames}};
static const char *const phases[] = {"forward", "backward"};

static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* One event from 16 bytes. */
static void decode(const uint8_t *p, int64_t seq, int64_t *ts, struct memprof_record *rec)
{
	struct memprof_event *ev = &rec->ev;
	int shift = p[6] % 40;

	memset(rec, 0, sizeof(*rec));
	ev->seq = seq;
	*ts += (int16_t)get(p + 14, 2); /* may go back */
	ev->ts_ns = *ts;
	ev->op = MEMPROF_OP_MIN + p[0] % (MEMPROF_OP_MAX - MEMPROF_OP_MIN + 1);
	ev->device = p[1] % 3;
	ev->process_id = 1 + p[2] % 2;
	ev->stream = p[3] % 3;
	ev->alloc_id = (int64_t)get(p + 4, 2) % 48;
	ev->size_bytes = (int64_t)(get(p + 7, 2) << shift) & ((INT64_C(1) << 57) - 1);
	ev->requested_bytes = ev->size_bytes - (int64_t)(p[9] % 16);
	ev->address = (get(p + 10, 3) % 8192) << (p[13] % 24);
	ev->device_free_bytes = p[9] & 1 ? -1 : (int64_t)p[13] << 20;
	ev->stack_id = p[3] % 4;
	rec->stack = ev->stack_id ? &stacks[ev->stack_id - 1] : NULL;
	ev->phase_id = p[2] % 3;
	rec->phase = ev->phase_id ? phases[ev->phase_id - 1] : NULL;
}

static void run(const uint8_t *data, size_t size)
{
	static struct mp_memstate ms;
	static struct mp_frag frag;
	static struct mp_attribution attr;
	static struct mp_lifetime life;
	static struct mp_timeline tl;
	struct mp_mem_listener ls[4];
	struct mp_consumer c;
	struct memprof_record rec;
	struct mp_analysis a;
	int64_t ts = 0, seq = 0;
	size_t off;
	int i, rc = 0;
	FILE *null = fopen("/dev/null", "w");

	if (!null)
		return;
	mp_memstate_init(&ms);
	mp_frag_init(&frag, &ms, UINT64_C(1) << (data[0] % 24));
	mp_attribution_init(&attr, &ms, (1u << MP_ATTR_KINDS) - 1, data[1] % 3, data[2] * 100);
	mp_lifetime_init(&life, NULL, &ms);
	mp_timeline_init(&tl, MP_TIMELINE_MIN_POINTS);
	ls[0] = mp_frag_listener(&frag);
	ls[1] = mp_attribution_listener(&attr);
	ls[2] = mp_lifetime_listener(&life);
	ls[3] = mp_timeline_listener(&tl);
	for (i = 0; i < 4; i++)
		mp_memstate_listen(&ms, &ls[i]);
	c = mp_memstate_consumer(&ms);
	for (off = 3; rc == 0 && off + EVENT_BYTES <= size; off += EVENT_BYTES) {
		decode(data + off, ++seq, &ts, &rec);
		rc = c.on_record(c.ctx, &rec);
	}
	if (rc == 0 && c.on_end(c.ctx) == 0) {
		memset(&a, 0, sizeof(a));
		a.path = "fuzz.db";
		a.device = data[1] & 1 ? -1 : data[1] % 3;
		a.top = 4;
		a.opts.kinds = (1u << MP_ATTR_KINDS) - 1;
		a.opts.at = attr.at;
		a.opts.granularity = frag.granularity;
		a.ms = &ms;
		a.frag = &frag;
		a.attr = &attr;
		a.life = &life;
		mp_analyze_print_text(null, &a);
		if (mp_analyze_print_json(null, &a) < 0 || mp_timeline_csv_write(null, &tl, -1) < 0)
			abort();
	} else if (rc != MP_EFORMAT && rc != MP_ENOMEM && rc != 0) {
		abort(); /* only oversized sums or memory may stop a run */
	}
	mp_timeline_free(&tl);
	mp_lifetime_free(&life);
	mp_attribution_free(&attr);
	mp_frag_free(&frag);
	mp_memstate_free(&ms);
	fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 3)
		run(data, size);
	return 0;
}
