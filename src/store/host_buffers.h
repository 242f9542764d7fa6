/*
 * store/host_buffers.h - pinned host buffers and NUMA placement in a trace
 * (schema v3): the host_buffers and host_buffer_nodes tables and
 * devices.numa_node: the writing side (the importers).  The types and the
 * reading side are in store/reader.h, beside the event stream.  Every
 * function returns 0 or a negative MP_E* code with the message on the store
 * handle.  Not thread-safe, like the store.
 */
#ifndef MP_STORE_HOST_BUFFERS_H
#define MP_STORE_HOST_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "store/reader.h"
#include "store/store.h"

/* Add b and its nodes; sets b->id.  api_id and stack_id come from the trace's writer. */
int mp_store_add_host_buffer(struct mp_store *s, struct mp_host_buffer *b);

/* The nearest host NUMA node of a process's device (devices.numa_node). */
int mp_store_set_device_node(struct mp_store *s, int64_t process_id, int32_t ordinal, int32_t node);

#endif
