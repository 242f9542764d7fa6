/*
 * tests/unit/test_capture_callbacks.c - the API callbacks of the injected
 * library on hand-built CUpti_CallbackData and params structs: decoding of
 * allocation, free and VMM calls, out-of-memory, and the subscriber
 * callback itself writing to a real spool (a driver call nested in a
 * runtime call is skipped; dormant mode writes nothing; NVTX phases).
 */
#include <criterion/criterion.h>
#include <string.h>

#include <generated_nvtx_meta.h>

#include "capture/inject_internal.h"
#include "capture_helpers.h"

#define RT  CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static CUpti_CallbackData cb_data(CUpti_ApiCallbackSite site, const void *params, void *ret,
                                  uint32_t correlation)
{
	CUpti_CallbackData cb;
	memset(&cb, 0, sizeof cb);
	cb.callbackSite = site;
	cb.functionParams = params;
	cb.functionReturnValue = ret;
	cb.correlationId = correlation;
	return cb;
}

Test(capture_callbacks, cudaMalloc)
{
	void *ptr = (void *)0x7f0000100000;
	cudaMalloc_v3020_params p = {&ptr, 3u << 20};
	cudaError_t ret = cudaSuccess;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 42);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &cb, &ev),
	             1);
	cr_assert_eq(ev.kind, MP_SK_API);
	cr_assert_eq(ev.mem_kind, MP_MK_DEVICE);
	cr_assert_eq(ev.flags, 0);
	cr_assert_eq(ev.address, 0x7f0000100000ull);
	cr_assert_eq(ev.bytes, 3u << 20);
	cr_assert_eq(ev.extra, 0, "result");
	cr_assert_eq(ev.correlation, 42);
	cr_assert_eq(ev.device, -1, "left to the caller");
	cr_assert_eq(ev.stream, 0);
	/* ENTER is not decoded. */
	cb.callbackSite = CUPTI_API_ENTER;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &cb, &ev),
	             0);
	/* Nor is a call that is not ours, nor the same cbid in the other domain. */
	cb.callbackSite = CUPTI_API_EXIT;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &cb, &ev),
	             0);
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &cb, &ev),
	             0);
	const struct mp_api_desc *d = mp_api_lookup(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
	cr_assert_not_null(d);
	cr_assert_str_eq(d->name, "cudaMalloc");
}

Test(capture_callbacks, cudaFree)
{
	cudaFree_v3020_params p = {(void *)0x7f0000100000};
	cudaError_t ret = cudaSuccess;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 43);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_API);
	cr_assert_eq(ev.flags, MP_SE_FREE_CALL);
	cr_assert_eq(ev.address, 0x7f0000100000ull);
	cr_assert_eq(ev.bytes, 0);
	cr_assert_eq(ev.correlation, 43);
}

Test(capture_callbacks, cudaMallocAsync_and_ptsz)
{
	void *ptr = (void *)0x7f0000200000;
	cudaMallocAsync_v11020_params p = {&ptr, 4096, (cudaStream_t)0x5555};
	cudaError_t ret = cudaSuccess;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 44);
	struct mp_spool_event ev;
	cr_assert_eq(
	        mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &cb, &ev),
	        1);
	cr_assert_eq(ev.flags, MP_SE_ASYNC);
	cr_assert_eq(ev.address, 0x7f0000200000ull);
	cr_assert_eq(ev.bytes, 4096);
	cr_assert_eq(ev.stream, 0x5555);
	cudaFreeAsync_ptsz_v11020_params f = {(void *)0x7f0000200000, (cudaStream_t)0x6666};
	cb.functionParams = &f;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
	                                 &cb, &ev),
	             1);
	cr_assert_eq(ev.flags, MP_SE_ASYNC | MP_SE_FREE_CALL);
	cr_assert_eq(ev.stream, 0x6666);
	cr_assert_eq(ev.address, 0x7f0000200000ull);
}

Test(capture_callbacks, cudaMallocHost_managed_and_pitch)
{
	void *ptr = (void *)0x10000;
	cudaHostAlloc_v3020_params h = {&ptr, 1000, 4};
	cudaError_t ret = cudaSuccess;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &h, &ret, 1);
	struct mp_spool_event ev;
	cr_assert_eq(
	        mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, &cb, &ev), 1);
	cr_assert_eq(ev.mem_kind, MP_MK_PINNED);
	cr_assert_eq(ev.flags, MP_SE_HOST_MEMORY);
	cr_assert_eq(ev.bytes, 1000);
	cudaMallocManaged_v6000_params m = {&ptr, 2000, 1};
	cb.functionParams = &m;
	cr_assert_eq(
	        mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, &cb, &ev),
	        1);
	cr_assert_eq(ev.mem_kind, MP_MK_MANAGED);
	cr_assert_eq(ev.flags, MP_SE_MANAGED);
	size_t pitch = 512;
	cudaMallocPitch_v3020_params pp = {&ptr, &pitch, 500, 10};
	cb.functionParams = &pp;
	cr_assert_eq(
	        mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020, &cb, &ev),
	        1);
	cr_assert_eq(ev.bytes, 5120, "pitch x height");
}

Test(capture_callbacks, cuMemAlloc_v2)
{
	CUdeviceptr dptr = 0x7f0000300000;
	cuMemAlloc_v2_params p = {&dptr, 8192};
	CUresult ret = CUDA_SUCCESS;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 45);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_API);
	cr_assert_eq(ev.flags, MP_SE_FROM_DRIVER);
	cr_assert_eq(ev.mem_kind, MP_MK_DEVICE);
	cr_assert_eq(ev.address, 0x7f0000300000ull);
	cr_assert_eq(ev.bytes, 8192);
	cr_assert_str_eq(mp_api_lookup(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)->name,
	                 "cuMemAlloc_v2");
}

Test(capture_callbacks, cuMemCreate_device_and_host)
{
	CUmemGenericAllocationHandle h = 0xfeed;
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 3;
	cuMemCreate_params p = {&h, 2u << 20, &prop, 0};
	CUresult ret = CUDA_SUCCESS;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 46);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_VMM_CREATE);
	cr_assert_eq(ev.extra, 0xfeed, "handle");
	cr_assert_eq(ev.bytes, 2u << 20);
	cr_assert_eq(ev.device, 3);
	cr_assert_eq(ev.mem_kind, MP_MK_DEVICE);
	cr_assert_eq(ev.flags, MP_SE_FROM_DRIVER);
	prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
	prop.location.id = 0;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &cb, &ev), 1);
	cr_assert_eq(ev.mem_kind, MP_MK_PINNED);
	cr_assert_eq(ev.device, -1);
	cr_assert_eq(ev.flags, MP_SE_FROM_DRIVER | MP_SE_HOST_MEMORY);
	/* Out of memory: an OOM event with the size asked. */
	ret = CUDA_ERROR_OUT_OF_MEMORY;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_OOM);
	cr_assert_eq(ev.bytes, 2u << 20);
	cr_assert_eq(ev.extra, CUDA_ERROR_OUT_OF_MEMORY);
}

Test(capture_callbacks, cuMemMap_cuMemUnmap_reserve)
{
	cuMemMap_params m = {0x7f4000000000ull, 4u << 20, 0, 0xfeed, 0};
	CUresult ret = CUDA_SUCCESS;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &m, &ret, 47);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_VMM_MAP);
	cr_assert_eq(ev.address, 0x7f4000000000ull);
	cr_assert_eq(ev.bytes, 4u << 20);
	cr_assert_eq(ev.extra, 0xfeed);
	cr_assert_eq(ev.extra2, 0, "offset");
	cuMemUnmap_params u = {0x7f4000000000ull, 4u << 20};
	cb.functionParams = &u;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_VMM_UNMAP);
	cr_assert_eq(ev.address, 0x7f4000000000ull);
	cr_assert_eq(ev.bytes, 4u << 20);
	CUdeviceptr va = 0x7f5000000000ull;
	cuMemAddressReserve_params r = {&va, 1ull << 30, 0, 0, 0};
	cb.functionParams = &r;
	cr_assert_eq(
	        mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_VMM_RESERVE);
	cr_assert_eq(ev.address, 0x7f5000000000ull);
	cr_assert_eq(ev.bytes, 1ull << 30);
	/* A VMM call that failed did nothing: no event. */
	ret = CUDA_ERROR_INVALID_VALUE;
	cb.functionParams = &m;
	cr_assert_eq(mp_callbacks_decode(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &cb, &ev), 0);
}

Test(capture_callbacks, failed_cudaMalloc_is_oom)
{
	void *ptr = (void *)0xdeadbeef; /* whatever the call left there is not read */
	cudaMalloc_v3020_params p = {&ptr, 80ull << 30};
	cudaError_t ret = cudaErrorMemoryAllocation;
	CUpti_CallbackData cb = cb_data(CUPTI_API_EXIT, &p, &ret, 48);
	struct mp_spool_event ev;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &cb, &ev),
	             1);
	cr_assert_eq(ev.kind, MP_SK_OOM);
	cr_assert_eq(ev.bytes, 80ull << 30);
	cr_assert_eq(ev.address, 0);
	cr_assert_eq(ev.extra, 2);
	cr_assert_eq(ev.correlation, 48);
	/* Another failure is an API event carrying its result. */
	ret = cudaErrorInvalidValue;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &cb, &ev),
	             1);
	cr_assert_eq(ev.kind, MP_SK_API);
	cr_assert_eq(ev.extra, (uint64_t)cudaErrorInvalidValue);
	cr_assert_eq(ev.address, 0);
	/* A free that failed is no OOM whatever its code. */
	cudaFree_v3020_params f = {(void *)0x1000};
	cb.functionParams = &f;
	ret = cudaErrorMemoryAllocation;
	cr_assert_eq(mp_callbacks_decode(RT, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, &cb, &ev), 1);
	cr_assert_eq(ev.kind, MP_SK_API);
}

Test(capture_callbacks, table_names_are_unique_and_every_entry_decodes)
{
	size_t n;
	const struct mp_api_desc *t = mp_api_table(&n);
	cr_assert_geq(n, 35);
	for (size_t i = 0; i < n; i++) {
		cr_assert_not_null(t[i].decode, "%s", t[i].name);
		cr_assert_eq(mp_api_lookup(t[i].domain, t[i].cbid), &t[i], "%s", t[i].name);
		for (size_t j = i + 1; j < n; j++)
			cr_assert(strcmp(t[i].name, t[j].name) != 0, "%s twice", t[i].name);
	}
}

/* --- the subscriber callback on a real spool ------------------------------------ */

static char dir[256], path[512];
static struct mp_spool_writer *w;

static void call(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	mp_callbacks_handler(NULL, d, cbid, cb);
}

static void read_back(struct th_spool *s)
{
	mp_capture_set_for_test(NULL, MP_CAPTURE_OFF);
	cr_assert_eq(mp_spool_writer_close(w, mp_capture_now(), 0), 0);
	th_read_spool(path, s);
	cr_assert_null(s->error, "%s", s->error);
}

static void setup_spool(void)
{
	th_tmpdir(dir, sizeof dir);
	w = th_open_writer(dir, path, sizeof path);
}

static void teardown_spool(void)
{
	th_rmdir(dir);
}

Test(capture_callbacks, nested_driver_call_is_skipped, .init = setup_spool, .fini = teardown_spool)
{
	mp_capture_set_for_test(w, MP_CAPTURE_RECORDING);
	void *ptr = (void *)0x7f0000400000;
	cudaMalloc_v3020_params rp = {&ptr, 1u << 20};
	cudaError_t rret = cudaSuccess;
	CUdeviceptr dptr = 0x7f0000400000;
	cuMemAlloc_v2_params dp = {&dptr, 1u << 20};
	CUresult dret = CUDA_SUCCESS;

	CUpti_CallbackData r_in = cb_data(CUPTI_API_ENTER, &rp, NULL, 100);
	CUpti_CallbackData d_in = cb_data(CUPTI_API_ENTER, &dp, NULL, 101);
	CUpti_CallbackData d_out = cb_data(CUPTI_API_EXIT, &dp, &dret, 101);
	CUpti_CallbackData r_out = cb_data(CUPTI_API_EXIT, &rp, &rret, 100);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &r_in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d_in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d_out);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &r_out);

	/* The same driver call on its own is recorded. */
	dptr = 0x7f0000500000;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d_in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &d_out);

	uint64_t n_live = 0, live_bytes = 0;
	mp_live_totals(&n_live, &live_bytes);
	cr_assert_eq(n_live, 2);
	cr_assert_eq(live_bytes, 2u << 20);

	struct th_spool s;
	read_back(&s);
	cr_assert_eq(s.n_events, 2);
	cr_assert_eq(s.events[0].kind, MP_SK_API);
	cr_assert_str_eq(th_str(&s, s.events[0].name), "cudaMalloc");
	cr_assert_eq(s.events[0].correlation, 100);
	cr_assert_eq(s.events[0].address, 0x7f0000400000ull);
	cr_assert_eq(s.events[0].thread, mp_capture_thread_id());
	cr_assert_gt(s.events[0].ts_ns, 0);
	cr_assert_geq(s.events[0].duration_ns, 0);
	cr_assert_eq(s.events[0].flags, 0);
	cr_assert_str_eq(th_str(&s, s.events[1].name), "cuMemAlloc_v2");
	cr_assert_eq(s.events[1].flags, MP_SE_FROM_DRIVER);
	cr_assert_eq(s.events[1].address, 0x7f0000500000ull);
	th_free_spool(&s);
}

Test(capture_callbacks, dormant_keeps_the_live_table_only, .init = setup_spool,
     .fini = teardown_spool)
{
	mp_capture_set_for_test(w, MP_CAPTURE_DORMANT);
	CUdeviceptr dptr = 0x7f0000600000;
	cuMemAlloc_v2_params dp = {&dptr, 4096};
	CUresult ret = CUDA_SUCCESS;
	CUpti_CallbackData in = cb_data(CUPTI_API_ENTER, &dp, NULL, 1);
	CUpti_CallbackData out = cb_data(CUPTI_API_EXIT, &dp, &ret, 1);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &out);
	uint64_t n_live = 0, live_bytes = 0;
	mp_live_totals(&n_live, &live_bytes);
	cr_assert_eq(n_live, 1);
	cr_assert_eq(live_bytes, 4096);
	cuMemFree_v2_params fp = {0x7f0000600000};
	CUpti_CallbackData fin = cb_data(CUPTI_API_ENTER, &fp, NULL, 2);
	CUpti_CallbackData fout = cb_data(CUPTI_API_EXIT, &fp, &ret, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &fin);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &fout);
	mp_live_totals(&n_live, &live_bytes);
	cr_assert_eq(n_live, 0);
	struct th_spool s;
	read_back(&s);
	cr_assert_eq(s.n_events, 0, "dormant wrote %zu events", s.n_events);
	th_free_spool(&s);
}

Test(capture_callbacks, nvtx_ranges_stamp_allocations, .init = setup_spool, .fini = teardown_spool)
{
	mp_capture_set_for_test(w, MP_CAPTURE_RECORDING);
	nvtxRangePushA_params push = {"forward"};
	CUpti_NvtxData nd = {"nvtxRangePushA", &push, NULL};
	call(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, (const void *)&nd);
	nvtxEventAttributes_t attr;
	memset(&attr, 0, sizeof attr);
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
	attr.message.ascii = "attention";
	nvtxRangePushEx_params pushex = {&attr};
	CUpti_NvtxData nd2 = {"nvtxRangePushEx", &pushex, NULL};
	call(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushEx, (const void *)&nd2);

	void *ptr = (void *)0x7f0000700000;
	cudaMalloc_v3020_params rp = {&ptr, 512};
	cudaError_t ret = cudaSuccess;
	CUpti_CallbackData in = cb_data(CUPTI_API_ENTER, &rp, NULL, 7);
	CUpti_CallbackData out = cb_data(CUPTI_API_EXIT, &rp, &ret, 7);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &in);
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &out);

	nvtxRangePop_params pop = {NULL};
	CUpti_NvtxData nd3 = {"nvtxRangePop", &pop, NULL};
	call(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, (const void *)&nd3);
	cr_assert_neq(mp_phase_current(), 0, "'forward' still open");
	call(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, (const void *)&nd3);
	cr_assert_eq(mp_phase_current(), 0);
	/* A pop with nothing open (pushed before the library) writes nothing. */
	call(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, (const void *)&nd3);

	struct th_spool s;
	read_back(&s);
	cr_assert_eq(s.n_events, 5);
	cr_assert_eq(s.events[0].kind, MP_SK_PHASE_PUSH);
	cr_assert_str_eq(th_str(&s, s.events[0].name), "forward");
	cr_assert_eq(s.events[1].kind, MP_SK_PHASE_PUSH);
	cr_assert_str_eq(th_str(&s, s.events[1].name), "attention");
	cr_assert_eq(s.events[2].kind, MP_SK_API);
	cr_assert_str_eq(th_str(&s, s.events[2].phase), "attention");
	cr_assert_eq(s.events[3].kind, MP_SK_PHASE_POP);
	cr_assert_str_eq(th_str(&s, s.events[3].name), "attention");
	cr_assert_str_eq(th_str(&s, s.events[3].phase), "forward", "phase after the pop");
	cr_assert_eq(s.events[4].kind, MP_SK_PHASE_POP);
	cr_assert_str_eq(th_str(&s, s.events[4].name), "forward");
	th_free_spool(&s);
}

/* --- control: start, stop, mark, status (what 'memprof attach' drives) ---------- */

Test(capture_callbacks, dormant_start_mark_stop, .init = setup_spool, .fini = teardown_spool)
{
	char msg[256], status[512];
	mp_capture_set_for_test(w, MP_CAPTURE_DORMANT);
	/* Made while dormant: in the live table, no event. */
	CUdeviceptr dptr = 0x7f0000800000;
	cuMemAlloc_v2_params dp = {&dptr, 1000};
	CUresult ret = CUDA_SUCCESS;
	CUpti_CallbackData in = cb_data(CUPTI_API_ENTER, &dp, NULL, 1);
	CUpti_CallbackData out = cb_data(CUPTI_API_EXIT, &dp, &ret, 1);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &out);
	/* A mapping made while dormant: it must come back as a mapping, not a block. */
	cuMemMap_params mp = {0x7f4000000000ull, 2u << 20, 0, 0xfeed, 0};
	CUpti_CallbackData map_in = cb_data(CUPTI_API_ENTER, &mp, NULL, 2);
	CUpti_CallbackData map_out = cb_data(CUPTI_API_EXIT, &mp, &ret, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &map_in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &map_out);
	cr_assert_eq(mp_capture_mark("too early", msg, sizeof msg), -1);
	cr_assert(strstr(msg, "dormant"), "%s", msg);
	cr_assert_eq(mp_capture_stop(msg, sizeof msg), -1);
	mp_capture_status(status, sizeof status);
	cr_assert(strstr(status, "mode=dormant "), "%s", status);
	cr_assert(strstr(status, "live_allocations=2 live_bytes=2098152"), "%s", status);

	cr_assert_eq(mp_capture_start(msg, sizeof msg), 0, "%s", msg);
	cr_assert_eq(mp_capture_mode(), MP_CAPTURE_RECORDING);
	cr_assert_eq(mp_capture_start(msg, sizeof msg), -1, "twice");
	cr_assert_eq(mp_capture_mark("step 10", msg, sizeof msg), 0, "%s", msg);
	dptr = 0x7f0000900000;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &in);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &out);
	cr_assert_eq(mp_capture_stop(msg, sizeof msg), 0, "%s", msg);
	cr_assert_eq(mp_capture_mode(), MP_CAPTURE_DORMANT);
	mp_capture_status(status, sizeof status);
	cr_assert(strstr(status, "live_allocations=3 live_bytes=2099152"), "%s", status);
	cr_assert(strstr(status, " events=6 dropped=0 "), "%s", status);

	struct th_spool s;
	read_back(&s);
	cr_assert_eq(s.n_events, 6);
	cr_assert_eq(s.events[0].kind, MP_SK_WINDOW_START);
	/* the live table's order is the hash map's: find each preexisting entry by address */
	int block = s.events[1].address == 0x7f0000800000ull ? 1 : 2, map = 3 - block;
	cr_assert_eq(s.events[block].kind, MP_SK_PREEXISTING);
	cr_assert_eq(s.events[block].address, 0x7f0000800000ull);
	cr_assert_eq(s.events[block].bytes, 1000);
	cr_assert_eq(s.events[block].flags & MP_SE_MAPPING, 0);
	cr_assert_str_eq(th_str(&s, s.events[block].name), "cuMemAlloc_v2");
	cr_assert_eq(s.events[map].kind, MP_SK_PREEXISTING);
	cr_assert_eq(s.events[map].address, 0x7f4000000000ull);
	cr_assert_eq(s.events[map].bytes, 2u << 20);
	cr_assert_neq(s.events[map].flags & MP_SE_MAPPING, 0);
	cr_assert_eq(s.events[3].kind, MP_SK_MARK);
	cr_assert_str_eq(th_str(&s, s.events[3].name), "step 10");
	cr_assert_eq(s.events[4].kind, MP_SK_API);
	cr_assert_eq(s.events[4].address, 0x7f0000900000ull);
	cr_assert_eq(s.events[5].kind, MP_SK_WINDOW_STOP);
	th_free_spool(&s);
}

/* --- stacks: sampled one call in N, depth capped ------------------------------------ */

Test(capture_callbacks, sampled_stacks, .init = setup_spool, .fini = teardown_spool)
{
	mp_stacks_init(MP_STACKS_SAMPLED, 3, 2);
	uint32_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = mp_stacks_capture(w);
	/* The test program is "the library" here: what is left are libcriterion's and libc's
	 * frames. */
	cr_assert_neq(ids[0], 0);
	cr_assert_eq(ids[1], 0);
	cr_assert_eq(ids[2], 0);
	cr_assert_neq(ids[3], 0);
	cr_assert_eq(ids[4], 0);
	cr_assert_eq(ids[0], ids[3], "same call site, same stack id");
	mp_stacks_init(MP_STACKS_OFF, 1, 2);
	cr_assert_eq(mp_stacks_capture(w), 0);
	struct th_spool s;
	read_back(&s);
	cr_assert_lt(ids[0], s.n_stacks);
	cr_assert_geq(s.stack_depths[ids[0]], 1);
	cr_assert_leq(s.stack_depths[ids[0]], 2);
	th_free_spool(&s);
}
