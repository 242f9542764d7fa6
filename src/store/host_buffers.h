/*
 * store/host_buffers.h - pinned host buffers and NUMA placement in a trace
 * (schema v3): the host_buffers and host_buffer_nodes tables and
 * devices.numa_node.  Writing (the importers) and reading (analysis, through
 * store/reader.h, which includes this header).  Every function returns 0 or
 * a negative MP_E* code with the message on the store handle.  Not
 * thread-safe, like the store.
 */
#ifndef MP_STORE_HOST_BUFFERS_H
#define MP_STORE_HOST_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "store/store.h"

/* Where some of a buffer's pages are. */
struct mp_host_buffer_node {
	int32_t node;
	int64_t bytes; /* the buffer's bytes on node (estimated from the pages sampled) */
	int64_t pages; /* pages sampled found there; 0: the node the allocation named */
};

/* A pinned host buffer (cudaMallocHost, cudaHostAlloc, host registration, cuMemCreate). */
struct mp_host_buffer {
	int64_t id; /* set by mp_store_add_host_buffer */
	int64_t process_id;
	int32_t device; /* of the context that pinned it, -1 unknown */
	uint64_t address;
	int64_t size_bytes;
	int64_t alloc_ts_ns;
	int64_t free_ts_ns; /* -1: still pinned at the end of the trace */
	int64_t api_id;     /* 0 none */
	int64_t stack_id;   /* 0 none */
	uint32_t thread;    /* 0 unknown */
	size_t n_nodes;     /* nodes holding pages of it; 0: placement unknown */
	const struct mp_host_buffer_node *nodes;
	/* Filled by mp_store_each_host_buffer only: */
	const char *api;                   /* NULL none */
	const struct memprof_stack *stack; /* NULL none */
};

/* Add b and its nodes; sets b->id.  api_id and stack_id come from the trace's writer. */
int mp_store_add_host_buffer(struct mp_store *s, struct mp_host_buffer *b);

/* The nearest host NUMA node of a process's device (devices.numa_node). */
int mp_store_set_device_node(struct mp_store *s, int64_t process_id, int32_t ordinal, int32_t node);

/*
 * Call fn for every host buffer in id order, with its nodes, API name and
 * call stack; everything it points to is valid during the call only.  Stops
 * and returns fn's value when it is not 0.
 */
int mp_store_each_host_buffer(struct mp_store *s,
                              int (*fn)(void *ctx, const struct mp_host_buffer *b), void *ctx);

/* A device row's nearest host node. */
struct mp_device_node {
	int64_t process_id;
	int32_t ordinal;
	int32_t node; /* -1 unknown */
};

/* Every device of the trace with its node, by process and ordinal (malloc'd; free it). */
int mp_store_device_nodes(struct mp_store *s, struct mp_device_node **out, size_t *n);

#endif
