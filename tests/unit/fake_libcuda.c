/*
 * tests/unit/fake_libcuda.c - a fake CUDA driver for unit-testing the cuda
 * backend without a GPU (loaded through MEMPROF_LIBCUDA).  It exports the
 * driver entry points the backend resolves, with the driver's C ABI but its
 * own plain types (no cuda.h), over host memory: device pointers are host
 * pointers, so a test can read "device" bytes.  Counters and knobs are in
 * struct fakecuda, reached with dlsym("fakecuda").  Not thread-safe.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long dptr_t;

#define OK               0
#define E_INVALID_VALUE  1
#define E_OUT_OF_MEMORY  2
#define E_NO_DEVICE      100
#define E_INVALID_DEVICE 101
#define CHUNK            (2ull << 20)

struct fakecuda {
	int no_device;          /* cuInit answers CUDA_ERROR_NO_DEVICE */
	unsigned long long cap; /* cuMemAlloc/cuMemAllocAsync beyond it: out of memory */
	int live_allocs, live_async, live_handles, live_streams, live_events, n_mapped;
	int n_set_access, n_ctx_sync, n_stream_sync, primary_retained;
	unsigned long long last_stream; /* of the last async op */
	unsigned int last_stream_flags;
	unsigned long long async_live_bytes, async_kept_bytes, release_threshold;
	int n_memset_async, n_copy_async, n_records;
	int n_devices; /* cuDeviceGetCount; 0 means 1 */
	int same_uuid; /* cuDeviceGetUuid gives every device one UUID */
	int n_queries; /* cuEventQuery */
	/* Calls of the entry points whose CUDA 13 headers name a _v2 (cuda.h's #defines). */
	int n_uuid_v1, n_uuid_v2, n_elapsed_v1, n_elapsed_v2;
};

struct fakecuda fakecuda = {.cap = 1ull << 30};
static uintptr_t next_handle = 1, next_stream = 0x1000;

#define API __attribute__((visibility("default")))
/* Declared here only to satisfy -Wmissing-prototypes: the ABI is the driver's. */
#define DECL(ret, name, args)                                                                      \
	API ret name args;                                                                         \
	ret name args

DECL(CUresult, cuInit, (unsigned int flags))
{
	(void)flags;
	return fakecuda.no_device ? E_NO_DEVICE : OK;
}

DECL(CUresult, cuGetErrorName, (CUresult rc, const char **s))
{
	*s = rc == OK                 ? "CUDA_SUCCESS"
	     : rc == E_INVALID_VALUE  ? "CUDA_ERROR_INVALID_VALUE"
	     : rc == E_OUT_OF_MEMORY  ? "CUDA_ERROR_OUT_OF_MEMORY"
	     : rc == E_NO_DEVICE      ? "CUDA_ERROR_NO_DEVICE"
	     : rc == E_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE"
	                              : "CUDA_ERROR_UNKNOWN";
	return OK;
}

DECL(CUresult, cuDeviceGetCount, (int *n))
{
	*n = fakecuda.n_devices ? fakecuda.n_devices : 1;
	return OK;
}

DECL(CUresult, cuDeviceGet, (int *dev, int ordinal))
{
	*dev = ordinal;
	return ordinal >= 0 && ordinal < (fakecuda.n_devices ? fakecuda.n_devices : 1)
	               ? OK
	               : E_INVALID_DEVICE;
}

/*
 * A UUID per ordinal (byte 0 the ordinal), unless same_uuid: every device
 * the same GPU.  FAKECUDA_UUID_PER_PROCESS=1 puts the pid in bytes 1-4: each
 * process its own GPUs, as CUDA_VISIBLE_DEVICES per rank does.
 */
static CUresult device_uuid(unsigned char *uuid, int dev);

DECL(CUresult, cuDeviceGetUuid, (unsigned char *uuid, int dev))
{
	fakecuda.n_uuid_v1++;
	return device_uuid(uuid, dev);
}

DECL(CUresult, cuDeviceGetUuid_v2, (unsigned char *uuid, int dev))
{
	fakecuda.n_uuid_v2++;
	return device_uuid(uuid, dev);
}

static CUresult device_uuid(unsigned char *uuid, int dev)
{
	const char *per_process = getenv("FAKECUDA_UUID_PER_PROCESS");
	uint32_t pid = (uint32_t)getpid();

	memset(uuid, 0xab, 16);
	uuid[0] = (unsigned char)(fakecuda.same_uuid ? 0 : dev);
	if (per_process && *per_process == '1')
		memcpy(uuid + 1, &pid, sizeof pid);
	return OK;
}

DECL(CUresult, cuDevicePrimaryCtxRetain, (void **ctx, int dev))
{
	(void)dev;
	*ctx = &fakecuda;
	fakecuda.primary_retained++;
	return OK;
}

DECL(CUresult, cuDevicePrimaryCtxRelease_v2, (int dev))
{
	(void)dev;
	fakecuda.primary_retained--;
	return OK;
}

DECL(CUresult, cuCtxSetCurrent, (void *ctx))
{
	return ctx ? OK : E_INVALID_VALUE;
}

DECL(CUresult, cuCtxSynchronize, (void))
{
	fakecuda.n_ctx_sync++;
	return OK;
}

DECL(CUresult, cuMemAlloc_v2, (dptr_t * p, size_t n))
{
	void *m;

	if (n == 0)
		return E_INVALID_VALUE; /* as the driver: the backend must ask for at least 1 */
	if (n > fakecuda.cap || !(m = aligned_alloc(256, (n + 255) / 256 * 256)))
		return E_OUT_OF_MEMORY;
	*p = (dptr_t)(uintptr_t)m;
	fakecuda.live_allocs++;
	return OK;
}

DECL(CUresult, cuMemFree_v2, (dptr_t p))
{
	free((void *)(uintptr_t)p);
	fakecuda.live_allocs--;
	return OK;
}

DECL(CUresult, cuMemsetD8Async, (dptr_t p, unsigned char v, size_t n, void *stream))
{
	memset((void *)(uintptr_t)p, v, n);
	fakecuda.last_stream = (unsigned long long)(uintptr_t)stream;
	fakecuda.n_memset_async++;
	return OK;
}

DECL(CUresult, cuMemsetD8_v2, (dptr_t p, unsigned char v, size_t n))
{
	memset((void *)(uintptr_t)p, v, n);
	return OK;
}

DECL(CUresult, cuMemsetD32_v2, (dptr_t p, unsigned int v, size_t n))
{
	if (p % 4)
		return E_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		memcpy((char *)(uintptr_t)p + 4 * i, &v, 4);
	return OK;
}

DECL(CUresult, cuMemcpyDtoDAsync_v2, (dptr_t dst, dptr_t src, size_t n, void *stream))
{
	memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
	fakecuda.last_stream = (unsigned long long)(uintptr_t)stream;
	fakecuda.n_copy_async++;
	return OK;
}

DECL(CUresult, cuMemcpyDtoH_v2, (void *dst, dptr_t src, size_t n))
{
	memcpy(dst, (void *)(uintptr_t)src, n);
	return OK;
}

DECL(CUresult, cuMemAddressReserve,
     (dptr_t * p, size_t size, size_t align, dptr_t addr, unsigned long long flags))
{
	void *m;
	uintptr_t a;

	if (addr || flags || !align || size % CHUNK)
		return E_INVALID_VALUE;
	m = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return E_OUT_OF_MEMORY;
	a = ((uintptr_t)m + align - 1) / align * align;
	*p = (dptr_t)a; /* the slack stays mapped: a fake may leak address space */
	return OK;
}

DECL(CUresult, cuMemAddressFree, (dptr_t p, size_t size))
{
	return munmap((void *)(uintptr_t)p, size) == 0 ? OK : E_INVALID_VALUE;
}

DECL(CUresult, cuMemCreate,
     (unsigned long long *h, size_t size, const void *prop, unsigned long long flags))
{
	if (!prop || flags || size % CHUNK)
		return E_INVALID_VALUE;
	*h = next_handle++;
	fakecuda.live_handles++;
	return OK;
}

DECL(CUresult, cuMemRelease, (unsigned long long h))
{
	if (!h)
		return E_INVALID_VALUE;
	fakecuda.live_handles--;
	return OK;
}

DECL(CUresult, cuMemMap,
     (dptr_t p, size_t size, size_t off, unsigned long long h, unsigned long long flags))
{
	if (!p || !h || off || flags || size % CHUNK)
		return E_INVALID_VALUE;
	fakecuda.n_mapped++;
	return OK;
}

DECL(CUresult, cuMemUnmap, (dptr_t p, size_t size))
{
	void *m = (void *)(uintptr_t)p;

	madvise(m, size, MADV_DONTNEED);
	mprotect(m, size, PROT_NONE);
	fakecuda.n_mapped--;
	return OK;
}

DECL(CUresult, cuMemSetAccess, (dptr_t p, size_t size, const void *desc, size_t count))
{
	if (!desc || count != 1)
		return E_INVALID_VALUE;
	fakecuda.n_set_access++;
	return mprotect((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE) == 0 ? OK
	                                                                         : E_INVALID_VALUE;
}

DECL(CUresult, cuMemGetAllocationGranularity, (size_t * g, const void *prop, int option))
{
	(void)prop, (void)option;
	*g = CHUNK;
	return OK;
}

/* Async blocks carry their size in a 256-byte header, for the pool's figures. */
DECL(CUresult, cuMemAllocAsync, (dptr_t * p, size_t n, void *stream))
{
	char *m;

	if (n == 0)
		return E_INVALID_VALUE;
	if (n > fakecuda.cap || !(m = aligned_alloc(256, 256 + (n + 255) / 256 * 256)))
		return E_OUT_OF_MEMORY;
	memcpy(m, &n, sizeof n);
	*p = (dptr_t)(uintptr_t)(m + 256);
	fakecuda.live_async++;
	fakecuda.async_live_bytes += n;
	fakecuda.last_stream = (unsigned long long)(uintptr_t)stream;
	return OK;
}

DECL(CUresult, cuMemFreeAsync, (dptr_t p, void *stream))
{
	char *m = (char *)(uintptr_t)p - 256;
	size_t n;

	memcpy(&n, m, sizeof n);
	free(m);
	fakecuda.live_async--;
	fakecuda.async_live_bytes -= n;
	if (fakecuda.release_threshold == UINT64_MAX)
		fakecuda.async_kept_bytes += n;
	fakecuda.last_stream = (unsigned long long)(uintptr_t)stream;
	return OK;
}

DECL(CUresult, cuDeviceGetDefaultMemPool, (void **pool, int dev))
{
	(void)dev;
	*pool = &fakecuda.async_live_bytes;
	return OK;
}

/* Attributes: 4 RELEASE_THRESHOLD, 5 RESERVED_MEM_CURRENT (enum CUmemPool_attribute). */
DECL(CUresult, cuMemPoolGetAttribute, (void *pool, int attr, void *value))
{
	unsigned long long v;

	if (!pool)
		return E_INVALID_VALUE;
	if (attr == 4)
		v = fakecuda.release_threshold;
	else if (attr == 5)
		v = fakecuda.async_live_bytes + fakecuda.async_kept_bytes;
	else
		return E_INVALID_VALUE;
	memcpy(value, &v, sizeof v);
	return OK;
}

DECL(CUresult, cuMemPoolSetAttribute, (void *pool, int attr, void *value))
{
	if (!pool || attr != 4)
		return E_INVALID_VALUE;
	memcpy(&fakecuda.release_threshold, value, sizeof fakecuda.release_threshold);
	return OK;
}

DECL(CUresult, cuMemPoolTrimTo, (void *pool, size_t keep))
{
	(void)pool, (void)keep;
	fakecuda.async_kept_bytes = 0;
	return OK;
}

DECL(CUresult, cuStreamCreate, (void **s, unsigned int flags))
{
	*s = (void *)next_stream++;
	fakecuda.last_stream_flags = flags;
	fakecuda.live_streams++;
	return OK;
}

DECL(CUresult, cuStreamDestroy_v2, (void *s))
{
	(void)s;
	fakecuda.live_streams--;
	return OK;
}

DECL(CUresult, cuStreamSynchronize, (void *s))
{
	fakecuda.last_stream = (unsigned long long)(uintptr_t)s;
	fakecuda.n_stream_sync++;
	return OK;
}

DECL(CUresult, cuEventCreate, (void **e, unsigned int flags))
{
	(void)flags;
	*e = malloc(1);
	fakecuda.live_events++;
	return OK;
}

DECL(CUresult, cuEventDestroy_v2, (void *e))
{
	free(e);
	fakecuda.live_events--;
	return OK;
}

DECL(CUresult, cuEventRecord, (void *e, void *s))
{
	(void)e;
	fakecuda.last_stream = (unsigned long long)(uintptr_t)s;
	fakecuda.n_records++;
	return OK;
}

DECL(CUresult, cuEventQuery, (void *e))
{
	fakecuda.n_queries++;
	return e ? OK : E_INVALID_VALUE;
}

DECL(CUresult, cuEventSynchronize, (void *e))
{
	return e ? OK : E_INVALID_VALUE;
}

/* Every timed span lasts 0.25 ms on the fake device. */
DECL(CUresult, cuEventElapsedTime, (float *ms, void *a, void *b))
{
	fakecuda.n_elapsed_v1++;
	*ms = 0.25f;
	return a && b ? OK : E_INVALID_VALUE;
}

DECL(CUresult, cuEventElapsedTime_v2, (float *ms, void *a, void *b))
{
	fakecuda.n_elapsed_v2++;
	*ms = 0.25f;
	return a && b ? OK : E_INVALID_VALUE;
}
