/*
 * spool/classify.h - one reading of what a spool event's memory is, for the
 * spool importer (import/spool_events.c) and record's live figures
 * (live/state.c): a block, a caching allocator's segment, host memory or
 * unknown; whether a call failed; what a VMM handle was created on.
 * Pure: no I/O, no allocation.
 */
#ifndef MP_SPOOL_CLASSIFY_H
#define MP_SPOOL_CLASSIFY_H

#include <stdint.h>

#include "spool/format.h"

enum mp_spool_class {
	MP_SPOOL_BLOCK,   /* device (or managed, array) memory the program asked for */
	MP_SPOOL_SEGMENT, /* a segment of PyTorch's caching allocator (its cudaMalloc) */
	MP_SPOOL_HOST,    /* host memory: pinned or pageable */
	MP_SPOOL_UNKNOWN, /* a memory kind memprof does not know */
};

/*
 * The memory of e: a CUPTI memory record (MP_SK_MEM_*), an allocation call
 * (MP_SK_API) or an allocation live when recording began (MP_SK_PREEXISTING).
 * torch_segments: PyTorch's caching allocator was on (spool/labels.h), so a
 * synchronous device allocation is one of its segments.  A record of unknown
 * kind is unknown; a call's unknown kind is read from its flags.
 */
enum mp_spool_class mp_spool_classify(const struct mp_spool_event *e, int torch_segments);

/* Is e's memory pinned host memory (a buffer memprof keeps with its NUMA placement)? */
int mp_spool_is_pinned(const struct mp_spool_event *e);

/* Did the call e fail (an MP_SK_API event with a non-zero result)? */
int mp_spool_call_failed(const struct mp_spool_event *e);

/* The VMM handle of an MP_SK_VMM_CREATE event, packed: its device and memory kind. */
uint64_t mp_spool_handle_pack(const struct mp_spool_event *e);

/* Was the packed handle created on host memory (pinned or pageable)? */
int mp_spool_handle_host(uint64_t packed);

/* The memory kind (MP_MK_*) and device (-1 unknown) of a packed handle. */
unsigned mp_spool_handle_kind(uint64_t packed);
int32_t mp_spool_handle_device(uint64_t packed);

#endif
