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
#include "store/host_buffers.h"
#include "util/intmap.h"

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
	int windowed;           /* started dormant, or stopped: a window (util/trace_window.h) */
	struct mp_symbols *sym; /* NULL when the spool has no stacks */
	/* counted while converting, written to meta by spool.c */
	int64_t n_dropped_events; /* the sum of DROPPED events' counts */
	int64_t n_vmm_reserve, n_vmm_address_free, n_vmm_create, n_vmm_release;
	int64_t n_tool_frames;  /* leading frames dropped (profiler, driver) */
	uint32_t disabled_why;  /* string id of the first DISABLED event's reason */
	int64_t n_host_buffers; /* pinned host buffers written (host_buffers table) */
};

/* A string of the spool's table, NUL-terminated copy in buf (cut to fit); "" when absent. */
const char *mp_spool_text(const struct mp_spool_in *in, uint32_t id, char *buf, size_t size);

/* Write in's events to the trace; returns 0 or a negative MP_E* code with
 * in->c->err filled. */
int mp_spool_convert(struct mp_spool_in *in);

/* --- spool_host.c: pinned host buffers, kept out of the events ------------------- */

struct mp_spool_host_buf {
	struct mp_host_buffer b;
	struct mp_host_buffer_node *nodes;
	size_t n_nodes, cap_nodes;
	uint64_t handle; /* cuMemCreate's, 0 none */
};

/* The pinned host buffers of one spool, written when its conversion ends. */
struct mp_spool_host {
	struct mp_spool_host_buf *bufs;
	size_t n, cap;
	struct mp_intmap live;    /* address -> index + 1 of the buffer pinned there now */
	struct mp_intmap by_corr; /* correlation -> index + 1 */
	struct mp_intmap handles; /* cuMemCreate handle -> index + 1, until released */
};

void mp_spool_host_init(struct mp_spool_host *h);
void mp_spool_host_free(struct mp_spool_host *h);
/*
 * A buffer pinned (b: process, device, address, size, alloc_ts_ns, api,
 * stack, thread; free_ts_ns is set here) by the call of correlation corr;
 * handle: cuMemCreate's (address 0 until mapped), else 0.  One already
 * pinned at that address that was not seen unpinned ends here.  0 or MP_ENOMEM.
 */
int mp_spool_host_open(struct mp_spool_host *h, const struct mp_host_buffer *b, uint32_t corr,
                       uint64_t handle);
/* Unpinned at ts: 1 when a buffer was pinned at address (or had handle), else 0. */
int mp_spool_host_close(struct mp_spool_host *h, uint64_t address, int64_t ts);
int mp_spool_host_release(struct mp_spool_host *h, uint64_t handle, int64_t ts);
/* cuMemMap of handle at va: 1 when handle is a host buffer's (its address is then va). */
int mp_spool_host_mapped(struct mp_spool_host *h, uint64_t handle, uint64_t va);
/* A HOST_NUMA event: 1 when its buffer was found (by correlation, else address), 0 not; MP_ENOMEM.
 */
int mp_spool_host_numa(struct mp_spool_host *h, const struct mp_spool_event *e);
/* Write every buffer to s; returns how many, or a negative MP_E* code. */
int64_t mp_spool_host_write(struct mp_spool_host *h, struct mp_store *s);

#endif
