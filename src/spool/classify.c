/*
 * spool/classify.c - the rules of spool/classify.h: a memory kind and an
 * event's flags say what its memory is, the same for the importer and for
 * record's live figures.
 */
#include "spool/classify.h"

static enum mp_spool_class of_kind(unsigned mem_kind, unsigned flags, int from_call,
                                   int torch_segments)
{
	switch (mem_kind) {
	case MP_MK_PAGEABLE:
	case MP_MK_PINNED:
		return MP_SPOOL_HOST;
	case MP_MK_DEVICE:
		return torch_segments && !(flags & MP_SE_ASYNC) ? MP_SPOOL_SEGMENT : MP_SPOOL_BLOCK;
	case MP_MK_ARRAY:
	case MP_MK_MANAGED:
	case MP_MK_DEVICE_STATIC:
	case MP_MK_MANAGED_STATIC:
		return MP_SPOOL_BLOCK;
	case MP_MK_UNKNOWN:
		if (!from_call)
			return MP_SPOOL_UNKNOWN;
		if (flags & MP_SE_HOST_MEMORY)
			return MP_SPOOL_HOST;
		if (flags & MP_SE_MANAGED)
			return MP_SPOOL_BLOCK;
		return of_kind(MP_MK_DEVICE, flags, 1, torch_segments);
	default:
		return MP_SPOOL_UNKNOWN;
	}
}

enum mp_spool_class mp_spool_classify(const struct mp_spool_event *e, int torch_segments)
{
	int record = e->kind == MP_SK_MEM_ALLOC || e->kind == MP_SK_MEM_FREE;

	return of_kind(e->mem_kind, e->flags, !record, torch_segments);
}

int mp_spool_is_pinned(const struct mp_spool_event *e)
{
	return e->mem_kind == MP_MK_PINNED ||
	       (e->mem_kind == MP_MK_UNKNOWN && (e->flags & MP_SE_HOST_MEMORY));
}

int mp_spool_call_failed(const struct mp_spool_event *e)
{
	return e->kind == MP_SK_API && e->extra != 0;
}

uint64_t mp_spool_handle_pack(const struct mp_spool_event *e)
{
	return (uint64_t)(e->device + 1) << 8 | e->mem_kind;
}

unsigned mp_spool_handle_kind(uint64_t packed)
{
	return (unsigned)(packed & 0xff);
}

int mp_spool_handle_host(uint64_t packed)
{
	return mp_spool_handle_kind(packed) == MP_MK_PINNED ||
	       mp_spool_handle_kind(packed) == MP_MK_PAGEABLE;
}

int32_t mp_spool_handle_device(uint64_t packed)
{
	return (int32_t)(packed >> 8) - 1;
}
