/*
 * tests/unit/test_spool_classify.c - the one reading of a spool event's
 * memory (spool/classify.h) that the spool importer and record's live
 * figures share: blocks, PyTorch's segments, host memory, unknown kinds,
 * failed calls and VMM handles.
 */
#include <criterion/criterion.h>

#include "spool/classify.h"

static struct mp_spool_event ev(unsigned kind, unsigned mem_kind, unsigned flags)
{
	struct mp_spool_event e = {0};

	e.kind = kind;
	e.mem_kind = mem_kind;
	e.flags = flags;
	e.device = -1;
	return e;
}

Test(spool_classify, device_calls_are_segments_only_under_pytorch_and_not_async)
{
	struct mp_spool_event sync = ev(MP_SK_API, MP_MK_DEVICE, 0);
	struct mp_spool_event async = ev(MP_SK_API, MP_MK_DEVICE, MP_SE_ASYNC);

	cr_assert_eq(mp_spool_classify(&sync, 0), MP_SPOOL_BLOCK);
	cr_assert_eq(mp_spool_classify(&sync, 1), MP_SPOOL_SEGMENT);
	cr_assert_eq(mp_spool_classify(&async, 1), MP_SPOOL_BLOCK);
}

Test(spool_classify, host_kinds_are_host_and_managed_is_a_block)
{
	struct mp_spool_event pinned = ev(MP_SK_MEM_ALLOC, MP_MK_PINNED, 0);
	struct mp_spool_event pageable = ev(MP_SK_MEM_ALLOC, MP_MK_PAGEABLE, 0);
	struct mp_spool_event managed = ev(MP_SK_API, MP_MK_MANAGED, MP_SE_MANAGED);

	cr_assert_eq(mp_spool_classify(&pinned, 1), MP_SPOOL_HOST);
	cr_assert_eq(mp_spool_classify(&pageable, 0), MP_SPOOL_HOST);
	cr_assert_eq(mp_spool_classify(&managed, 1), MP_SPOOL_BLOCK);
	cr_assert(mp_spool_is_pinned(&pinned));
	cr_assert_not(mp_spool_is_pinned(&pageable));
}

Test(spool_classify, an_unknown_kind_is_read_from_a_calls_flags_never_from_a_record)
{
	struct mp_spool_event record = ev(MP_SK_MEM_ALLOC, MP_MK_UNKNOWN, 0);
	struct mp_spool_event host = ev(MP_SK_API, MP_MK_UNKNOWN, MP_SE_HOST_MEMORY);
	struct mp_spool_event managed = ev(MP_SK_PREEXISTING, MP_MK_UNKNOWN, MP_SE_MANAGED);
	struct mp_spool_event plain = ev(MP_SK_PREEXISTING, MP_MK_UNKNOWN, 0);
	struct mp_spool_event odd = ev(MP_SK_API, 99, 0);

	cr_assert_eq(mp_spool_classify(&record, 1), MP_SPOOL_UNKNOWN);
	cr_assert_eq(mp_spool_classify(&host, 1), MP_SPOOL_HOST);
	cr_assert(mp_spool_is_pinned(&host), "an unknown kind with the host flag is pinned");
	cr_assert_eq(mp_spool_classify(&managed, 1), MP_SPOOL_BLOCK);
	cr_assert_eq(mp_spool_classify(&plain, 1), MP_SPOOL_SEGMENT, "read as device memory");
	cr_assert_eq(mp_spool_classify(&odd, 0), MP_SPOOL_UNKNOWN);
}

Test(spool_classify, a_call_failed_when_its_result_is_not_zero)
{
	struct mp_spool_event call = ev(MP_SK_API, MP_MK_DEVICE, 0);
	struct mp_spool_event record = ev(MP_SK_MEM_ALLOC, MP_MK_DEVICE, 0);

	cr_assert_not(mp_spool_call_failed(&call));
	call.extra = 2; /* cudaErrorMemoryAllocation */
	cr_assert(mp_spool_call_failed(&call));
	record.extra = 7; /* a context id, not a result */
	cr_assert_not(mp_spool_call_failed(&record));
}

Test(spool_classify, a_vmm_handle_keeps_its_device_and_kind)
{
	struct mp_spool_event dev = ev(MP_SK_VMM_CREATE, MP_MK_DEVICE, 0);
	struct mp_spool_event host = ev(MP_SK_VMM_CREATE, MP_MK_PINNED, MP_SE_HOST_MEMORY);
	uint64_t h;

	dev.device = 3;
	h = mp_spool_handle_pack(&dev);
	cr_assert_eq(mp_spool_handle_device(h), 3);
	cr_assert_eq(mp_spool_handle_kind(h), MP_MK_DEVICE);
	cr_assert_not(mp_spool_handle_host(h));
	h = mp_spool_handle_pack(&host);
	cr_assert_eq(mp_spool_handle_device(h), -1);
	cr_assert(mp_spool_handle_host(h));
}
