/*
 * capture/api_table.c - the allocation, free and VMM APIs the callbacks
 * record: for each runtime/driver cbid, its name, what it makes, and how to
 * decode its params struct (generated_cuda_runtime_api_meta.h,
 * generated_cuda_meta.h) into a spool event.  No CUPTI calls, no state.
 */
#include <string.h>

#include <cupti.h>

#include "capture/inject_internal.h"

#define RT  CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static uint64_t u64_of_ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* The pointer an allocation wrote into *slot, 0 when it failed or there is no slot. */
static uint64_t out_ptr(void *const *slot, int ok)
{
	return ok && slot ? u64_of_ptr(*slot) : 0;
}

static uint64_t out_devptr(const CUdeviceptr *slot, int ok)
{
	return ok && slot ? (uint64_t)*slot : 0;
}

/* --- runtime ------------------------------------------------------------------ */

static void dec_cudaMalloc(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMalloc_v3020_params *p = params;
	ev->address = out_ptr(p->devPtr, ok);
	ev->bytes = p->size;
}

static void dec_cudaMallocManaged(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocManaged_v6000_params *p = params;
	ev->address = out_ptr(p->devPtr, ok);
	ev->bytes = p->size;
	ev->extra2 = p->flags;
}

static void dec_cudaMallocHost(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocHost_v3020_params *p = params;
	ev->address = out_ptr(p->ptr, ok);
	ev->bytes = p->size;
}

static void dec_cudaHostAlloc(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaHostAlloc_v3020_params *p = params;
	ev->address = out_ptr(p->pHost, ok);
	ev->bytes = p->size;
	ev->extra2 = p->flags;
}

/* Registering pins memory the caller has: its address is the one passed in. */
static void dec_cudaHostRegister(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaHostRegister_v4000_params *p = params;
	ev->address = ok ? u64_of_ptr(p->ptr) : 0;
	ev->bytes = p->size;
	ev->extra2 = p->flags;
}

static void dec_cudaHostUnregister(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaHostUnregister_v4000_params *p = params;
	ev->address = u64_of_ptr(p->ptr);
}

static void dec_cudaMallocAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocAsync_v11020_params *p = params;
	ev->address = out_ptr(p->devPtr, ok);
	ev->bytes = p->size;
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cudaMallocAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocAsync_ptsz_v11020_params *p = params;
	ev->address = out_ptr(p->devPtr, ok);
	ev->bytes = p->size;
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cudaMallocFromPoolAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocFromPoolAsync_v11020_params *p = params;
	ev->address = out_ptr(p->ptr, ok);
	ev->bytes = p->size;
	ev->stream = u64_of_ptr(p->stream);
	ev->extra2 = u64_of_ptr(p->memPool);
}

static void dec_cudaMallocFromPoolAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocFromPoolAsync_ptsz_v11020_params *p = params;
	ev->address = out_ptr(p->ptr, ok);
	ev->bytes = p->size;
	ev->stream = u64_of_ptr(p->stream);
	ev->extra2 = u64_of_ptr(p->memPool);
}

static void dec_cudaMallocPitch(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocPitch_v3020_params *p = params;
	ev->address = out_ptr(p->devPtr, ok);
	/* The pitch is only known once the call made it. */
	ev->bytes =
	        ok && p->pitch ? (uint64_t)*p->pitch * p->height : (uint64_t)p->width * p->height;
}

static void dec_cudaMalloc3D(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMalloc3D_v3020_params *p = params;
	uint64_t h = p->extent.height ? p->extent.height : 1;
	uint64_t d = p->extent.depth ? p->extent.depth : 1;
	if (ok && p->pitchedDevPtr) {
		ev->address = u64_of_ptr(p->pitchedDevPtr->ptr);
		ev->bytes = (uint64_t)p->pitchedDevPtr->pitch * h * d;
	} else {
		ev->bytes = (uint64_t)p->extent.width * h * d;
	}
}

static void dec_cudaMallocArray(const void *params, int ok, struct mp_spool_event *ev)
{
	const cudaMallocArray_v3020_params *p = params;
	uint64_t elem_bits = 0;
	if (p->desc)
		elem_bits = (uint64_t)p->desc->x + p->desc->y + p->desc->z + p->desc->w;
	uint64_t h = p->height ? p->height : 1;
	/* The array handle stands for its address; the size is the elements' (no padding). */
	ev->address = ok && p->array ? u64_of_ptr(*p->array) : 0;
	ev->bytes = (uint64_t)p->width * h * (elem_bits / 8);
	ev->extra2 = p->flags;
}

static void dec_cudaFree(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaFree_v3020_params *p = params;
	ev->address = u64_of_ptr(p->devPtr);
}

static void dec_cudaFreeHost(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaFreeHost_v3020_params *p = params;
	ev->address = u64_of_ptr(p->ptr);
}

static void dec_cudaFreeAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaFreeAsync_v11020_params *p = params;
	ev->address = u64_of_ptr(p->devPtr);
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cudaFreeAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaFreeAsync_ptsz_v11020_params *p = params;
	ev->address = u64_of_ptr(p->devPtr);
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cudaFreeArray(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cudaFreeArray_v3020_params *p = params;
	ev->address = u64_of_ptr(p->array);
}

/* --- driver ------------------------------------------------------------------- */

static void dec_cuMemAlloc_v2(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAlloc_v2_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
}

static void dec_cuMemAllocPitch_v2(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocPitch_v2_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = ok && p->pPitch ? (uint64_t)*p->pPitch * p->Height
	                            : (uint64_t)p->WidthInBytes * p->Height;
}

static void dec_cuMemAllocManaged(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocManaged_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
	ev->extra2 = p->flags;
}

static void dec_cuMemAllocHost_v2(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocHost_v2_params *p = params;
	ev->address = out_ptr(p->pp, ok);
	ev->bytes = p->bytesize;
}

static void dec_cuMemHostAlloc(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemHostAlloc_params *p = params;
	ev->address = out_ptr(p->pp, ok);
	ev->bytes = p->bytesize;
	ev->extra2 = p->Flags;
}

static void dec_cuMemHostRegister_v2(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemHostRegister_v2_params *p = params;
	ev->address = ok ? u64_of_ptr(p->p) : 0;
	ev->bytes = p->bytesize;
	ev->extra2 = p->Flags;
}

static void dec_cuMemHostUnregister(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemHostUnregister_params *p = params;
	ev->address = u64_of_ptr(p->p);
}

static void dec_cuMemAllocAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocAsync_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cuMemAllocAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocAsync_ptsz_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cuMemAllocFromPoolAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocFromPoolAsync_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
	ev->stream = u64_of_ptr(p->hStream);
	ev->extra2 = u64_of_ptr(p->pool);
}

static void dec_cuMemAllocFromPoolAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAllocFromPoolAsync_ptsz_params *p = params;
	ev->address = out_devptr(p->dptr, ok);
	ev->bytes = p->bytesize;
	ev->stream = u64_of_ptr(p->hStream);
	ev->extra2 = u64_of_ptr(p->pool);
}

static void dec_cuMemFree_v2(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemFree_v2_params *p = params;
	ev->address = p->dptr;
}

static void dec_cuMemFreeHost(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemFreeHost_params *p = params;
	ev->address = u64_of_ptr(p->p);
}

static void dec_cuMemFreeAsync(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemFreeAsync_params *p = params;
	ev->address = p->dptr;
	ev->stream = u64_of_ptr(p->hStream);
}

static void dec_cuMemFreeAsync_ptsz(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemFreeAsync_ptsz_params *p = params;
	ev->address = p->dptr;
	ev->stream = u64_of_ptr(p->hStream);
}

/* --- driver VMM ------------------------------------------------------------ */

static void dec_cuMemAddressReserve(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemAddressReserve_params *p = params;
	ev->address = out_devptr(p->ptr, ok);
	ev->bytes = p->size;
	ev->extra = p->alignment;
	ev->extra2 = p->addr;
}

static void dec_cuMemAddressFree(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemAddressFree_params *p = params;
	ev->address = p->ptr;
	ev->bytes = p->size;
}

static void dec_cuMemCreate(const void *params, int ok, struct mp_spool_event *ev)
{
	const cuMemCreate_params *p = params;
	ev->bytes = p->size;
	ev->extra = ok && p->handle ? (uint64_t)*p->handle : 0;
	if (!p->prop)
		return;
	if (p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
		ev->mem_kind = MP_MK_DEVICE;
		ev->device = p->prop->location.id;
	} else {
		ev->mem_kind = MP_MK_PINNED;
		ev->flags |= MP_SE_HOST_MEMORY;
	}
}

static void dec_cuMemRelease(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemRelease_params *p = params;
	ev->extra = (uint64_t)p->handle;
}

static void dec_cuMemMap(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemMap_params *p = params;
	ev->address = p->ptr;
	ev->bytes = p->size;
	ev->extra = (uint64_t)p->handle;
	ev->extra2 = p->offset;
}

static void dec_cuMemUnmap(const void *params, int ok, struct mp_spool_event *ev)
{
	(void)ok;
	const cuMemUnmap_params *p = params;
	ev->address = p->ptr;
	ev->bytes = p->size;
}

/* --- the table ----------------------------------------------------------------- */

#define A         MP_API_ALLOC
#define F         MP_API_FREE
#define O         MP_API_OTHER
#define ASYNC     MP_SE_ASYNC
#define HOST      MP_SE_HOST_MEMORY
#define MANAGED   MP_SE_MANAGED
#define FREE      MP_SE_FREE_CALL
#define CB_RT(n)  CUPTI_RUNTIME_TRACE_CBID_##n
#define CB_DRV(n) CUPTI_DRIVER_TRACE_CBID_##n

static const struct mp_api_desc api_table[] = {
        {RT, CB_RT(cudaMalloc_v3020), "cudaMalloc", MP_SK_API, A, MP_MK_DEVICE, 0, dec_cudaMalloc},
        {RT, CB_RT(cudaMallocPitch_v3020), "cudaMallocPitch", MP_SK_API, A, MP_MK_DEVICE, 0,
         dec_cudaMallocPitch},
        {RT, CB_RT(cudaMalloc3D_v3020), "cudaMalloc3D", MP_SK_API, A, MP_MK_DEVICE, 0,
         dec_cudaMalloc3D},
        {RT, CB_RT(cudaMallocManaged_v6000), "cudaMallocManaged", MP_SK_API, A, MP_MK_MANAGED,
         MANAGED, dec_cudaMallocManaged},
        {RT, CB_RT(cudaMallocHost_v3020), "cudaMallocHost", MP_SK_API, A, MP_MK_PINNED, HOST,
         dec_cudaMallocHost},
        {RT, CB_RT(cudaHostAlloc_v3020), "cudaHostAlloc", MP_SK_API, A, MP_MK_PINNED, HOST,
         dec_cudaHostAlloc},
        {RT, CB_RT(cudaHostRegister_v4000), "cudaHostRegister", MP_SK_API, A, MP_MK_PINNED, HOST,
         dec_cudaHostRegister},
        {RT, CB_RT(cudaHostUnregister_v4000), "cudaHostUnregister", MP_SK_API, F, MP_MK_PINNED,
         FREE | HOST, dec_cudaHostUnregister},
        {RT, CB_RT(cudaMallocAsync_v11020), "cudaMallocAsync", MP_SK_API, A, MP_MK_DEVICE, ASYNC,
         dec_cudaMallocAsync},
        {RT, CB_RT(cudaMallocAsync_ptsz_v11020), "cudaMallocAsync_ptsz", MP_SK_API, A, MP_MK_DEVICE,
         ASYNC, dec_cudaMallocAsync_ptsz},
        {RT, CB_RT(cudaMallocFromPoolAsync_v11020), "cudaMallocFromPoolAsync", MP_SK_API, A,
         MP_MK_DEVICE, ASYNC, dec_cudaMallocFromPoolAsync},
        {RT, CB_RT(cudaMallocFromPoolAsync_ptsz_v11020), "cudaMallocFromPoolAsync_ptsz", MP_SK_API,
         A, MP_MK_DEVICE, ASYNC, dec_cudaMallocFromPoolAsync_ptsz},
        {RT, CB_RT(cudaMallocArray_v3020), "cudaMallocArray", MP_SK_API, A, MP_MK_ARRAY, 0,
         dec_cudaMallocArray},
        {RT, CB_RT(cudaFree_v3020), "cudaFree", MP_SK_API, F, MP_MK_UNKNOWN, FREE, dec_cudaFree},
        {RT, CB_RT(cudaFreeHost_v3020), "cudaFreeHost", MP_SK_API, F, MP_MK_PINNED, FREE | HOST,
         dec_cudaFreeHost},
        {RT, CB_RT(cudaFreeAsync_v11020), "cudaFreeAsync", MP_SK_API, F, MP_MK_DEVICE, FREE | ASYNC,
         dec_cudaFreeAsync},
        {RT, CB_RT(cudaFreeAsync_ptsz_v11020), "cudaFreeAsync_ptsz", MP_SK_API, F, MP_MK_DEVICE,
         FREE | ASYNC, dec_cudaFreeAsync_ptsz},
        {RT, CB_RT(cudaFreeArray_v3020), "cudaFreeArray", MP_SK_API, F, MP_MK_ARRAY, FREE,
         dec_cudaFreeArray},

        {DRV, CB_DRV(cuMemAlloc_v2), "cuMemAlloc_v2", MP_SK_API, A, MP_MK_DEVICE, 0,
         dec_cuMemAlloc_v2},
        {DRV, CB_DRV(cuMemAllocPitch_v2), "cuMemAllocPitch_v2", MP_SK_API, A, MP_MK_DEVICE, 0,
         dec_cuMemAllocPitch_v2},
        {DRV, CB_DRV(cuMemAllocManaged), "cuMemAllocManaged", MP_SK_API, A, MP_MK_MANAGED, MANAGED,
         dec_cuMemAllocManaged},
        {DRV, CB_DRV(cuMemAllocHost_v2), "cuMemAllocHost_v2", MP_SK_API, A, MP_MK_PINNED, HOST,
         dec_cuMemAllocHost_v2},
        {DRV, CB_DRV(cuMemHostAlloc), "cuMemHostAlloc", MP_SK_API, A, MP_MK_PINNED, HOST,
         dec_cuMemHostAlloc},
        {DRV, CB_DRV(cuMemHostRegister_v2), "cuMemHostRegister_v2", MP_SK_API, A, MP_MK_PINNED,
         HOST, dec_cuMemHostRegister_v2},
        {DRV, CB_DRV(cuMemHostUnregister), "cuMemHostUnregister", MP_SK_API, F, MP_MK_PINNED,
         FREE | HOST, dec_cuMemHostUnregister},
        {DRV, CB_DRV(cuMemAllocAsync), "cuMemAllocAsync", MP_SK_API, A, MP_MK_DEVICE, ASYNC,
         dec_cuMemAllocAsync},
        {DRV, CB_DRV(cuMemAllocAsync_ptsz), "cuMemAllocAsync_ptsz", MP_SK_API, A, MP_MK_DEVICE,
         ASYNC, dec_cuMemAllocAsync_ptsz},
        {DRV, CB_DRV(cuMemAllocFromPoolAsync), "cuMemAllocFromPoolAsync", MP_SK_API, A,
         MP_MK_DEVICE, ASYNC, dec_cuMemAllocFromPoolAsync},
        {DRV, CB_DRV(cuMemAllocFromPoolAsync_ptsz), "cuMemAllocFromPoolAsync_ptsz", MP_SK_API, A,
         MP_MK_DEVICE, ASYNC, dec_cuMemAllocFromPoolAsync_ptsz},
        {DRV, CB_DRV(cuMemFree_v2), "cuMemFree_v2", MP_SK_API, F, MP_MK_UNKNOWN, FREE,
         dec_cuMemFree_v2},
        {DRV, CB_DRV(cuMemFreeHost), "cuMemFreeHost", MP_SK_API, F, MP_MK_PINNED, FREE | HOST,
         dec_cuMemFreeHost},
        {DRV, CB_DRV(cuMemFreeAsync), "cuMemFreeAsync", MP_SK_API, F, MP_MK_DEVICE, FREE | ASYNC,
         dec_cuMemFreeAsync},
        {DRV, CB_DRV(cuMemFreeAsync_ptsz), "cuMemFreeAsync_ptsz", MP_SK_API, F, MP_MK_DEVICE,
         FREE | ASYNC, dec_cuMemFreeAsync_ptsz},

        {DRV, CB_DRV(cuMemAddressReserve), "cuMemAddressReserve", MP_SK_VMM_RESERVE, O,
         MP_MK_UNKNOWN, 0, dec_cuMemAddressReserve},
        {DRV, CB_DRV(cuMemAddressFree), "cuMemAddressFree", MP_SK_VMM_FREE, O, MP_MK_UNKNOWN, 0,
         dec_cuMemAddressFree},
        {DRV, CB_DRV(cuMemCreate), "cuMemCreate", MP_SK_VMM_CREATE, A, MP_MK_DEVICE, 0,
         dec_cuMemCreate},
        {DRV, CB_DRV(cuMemRelease), "cuMemRelease", MP_SK_VMM_RELEASE, O, MP_MK_UNKNOWN, 0,
         dec_cuMemRelease},
        {DRV, CB_DRV(cuMemMap), "cuMemMap", MP_SK_VMM_MAP, O, MP_MK_DEVICE, 0, dec_cuMemMap},
        {DRV, CB_DRV(cuMemUnmap), "cuMemUnmap", MP_SK_VMM_UNMAP, O, MP_MK_UNKNOWN, 0,
         dec_cuMemUnmap},
};

const struct mp_api_desc *mp_api_table(size_t *n_out)
{
	*n_out = sizeof api_table / sizeof api_table[0];
	return api_table;
}

const struct mp_api_desc *mp_api_lookup(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof api_table / sizeof api_table[0]; i++)
		if (api_table[i].cbid == cbid && api_table[i].domain == domain)
			return &api_table[i];
	return NULL;
}
