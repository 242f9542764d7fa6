/*
 * import/spool.h - the spool importer's two halves (internal): spool.c reads
 * a whole spool and writes its process, devices and meta; spool_events.c
 * turns its events into trace events.
 */
#ifndef MP_IMPORT_SPOOL_H
#define MP_IMPORT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "capture/spool_reader.h"
#include "import/import.h"
#include "import/symbols.h"

/* One spool, read whole: events are copied (the reader keeps the string,
 * stack and module tables they refer to). */
struct mp_spool_in {
	struct mp_import_ctx *c;
	struct mp_spool_reader *r;
	struct mp_spool_event *events;
	size_t n_events, cap_events;
	struct mp_spool_meta *meta;
	size_t n_meta, cap_meta;
	struct mp_spool_device *devices;
	size_t n_devices, cap_devices;
	int64_t process_id;     /* its row in the trace */
	int torch_segments;     /* PyTorch's caching allocator was on: cudaMalloc = segments */
	struct mp_symbols *sym; /* NULL when the spool has no stacks */
	/* counted while converting, written to meta by spool.c */
	int64_t n_dropped_events; /* the sum of DROPPED events' counts */
	int64_t n_vmm_reserve, n_vmm_address_free, n_vmm_create, n_vmm_release;
	int64_t n_tool_frames; /* leading frames dropped (profiler, driver) */
	uint32_t disabled_why; /* string id of the first DISABLED event's reason */
};

/* A string of the spool's table, NUL-terminated copy in buf (cut to fit); "" when absent. */
const char *mp_spool_text(const struct mp_spool_in *in, uint32_t id, char *buf, size_t size);

/* Write in's events to the trace; returns 0 or a negative MP_E* code with
 * in->c->err filled. */
int mp_spool_convert(struct mp_spool_in *in);

#endif
