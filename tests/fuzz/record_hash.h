/*
 * tests/fuzz/record_hash.h - a hash of everything a record carries (its
 * stack by depth), for fuzz targets that check two ways of reading a trace
 * hand over the same records.
 */
#ifndef MP_TESTS_FUZZ_RECORD_HASH_H
#define MP_TESTS_FUZZ_RECORD_HASH_H

#include <stdint.h>

#include "memprof/trace.h"

#define FUZZ_HASH_START 14695981039346656037u

static inline uint64_t fuzz_record_hash(uint64_t h, const struct memprof_record *rec)
{
	const struct memprof_event *e = &rec->ev;
	const int64_t v[] = {e->seq,
	                     e->ts_ns,
	                     e->op,
	                     e->alloc_id,
	                     e->size_bytes,
	                     e->requested_bytes,
	                     (int64_t)e->address,
	                     e->device_free_bytes,
	                     e->device,
	                     e->process_id,
	                     (int64_t)e->stream,
	                     e->phase_id,
	                     e->stack_id,
	                     e->api_id,
	                     e->thread,
	                     e->duration_ns,
	                     rec->pid,
	                     rec->stack ? (int64_t)rec->stack->n_frames : -1};
	const char *names[] = {rec->phase ? rec->phase : "\1", rec->api ? rec->api : "\1"};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = (h ^ (uint64_t)v[i]) * 1099511628211u;
	for (i = 0; i < 2; i++)
		for (const char *c = names[i]; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211u;
	return h;
}

/* A consumer's on_record: h[0] the hash so far, h[1] the records. */
static inline int fuzz_hash_record(void *ctx, const struct memprof_record *rec)
{
	uint64_t *h = ctx;

	h[0] = fuzz_record_hash(h[0], rec);
	h[1]++;
	return 0;
}

#endif
