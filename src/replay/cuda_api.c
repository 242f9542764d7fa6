/*
 * replay/cuda_api.c - loads the CUDA driver at run time and resolves the
 * entry points of cuda_api.h, saying exactly what is missing when it
 * cannot (no driver, no device, a driver too old).
 */
#ifdef HAVE_CUDA

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/cuda_api.h"

/*
 * Symbol names: the oldest ABI version with the semantics used, present in
 * every driver since CUDA 11.2 (the stream-ordered allocator); a second name
 * is tried when the first is missing.
 */
static const struct {
	size_t offset;
	const char *names[2];
} cu_symbols[] = {
        {offsetof(struct mp_cu_api, Init), {"cuInit"}},
        {offsetof(struct mp_cu_api, GetErrorName), {"cuGetErrorName"}},
        {offsetof(struct mp_cu_api, DeviceGetCount), {"cuDeviceGetCount"}},
        {offsetof(struct mp_cu_api, DeviceGet), {"cuDeviceGet"}},
        {offsetof(struct mp_cu_api, DeviceGetUuid), {"cuDeviceGetUuid", "cuDeviceGetUuid_v2"}},
        {offsetof(struct mp_cu_api, DevicePrimaryCtxRetain), {"cuDevicePrimaryCtxRetain"}},
        {offsetof(struct mp_cu_api, DevicePrimaryCtxRelease), {"cuDevicePrimaryCtxRelease_v2"}},
        {offsetof(struct mp_cu_api, CtxSetCurrent), {"cuCtxSetCurrent"}},
        {offsetof(struct mp_cu_api, CtxSynchronize), {"cuCtxSynchronize"}},
        {offsetof(struct mp_cu_api, MemAlloc), {"cuMemAlloc_v2"}},
        {offsetof(struct mp_cu_api, MemFree), {"cuMemFree_v2"}},
        {offsetof(struct mp_cu_api, MemsetD8Async), {"cuMemsetD8Async"}},
        {offsetof(struct mp_cu_api, MemsetD8), {"cuMemsetD8_v2"}},
        {offsetof(struct mp_cu_api, MemsetD32), {"cuMemsetD32_v2"}},
        {offsetof(struct mp_cu_api, MemcpyDtoDAsync), {"cuMemcpyDtoDAsync_v2"}},
        {offsetof(struct mp_cu_api, MemcpyDtoH), {"cuMemcpyDtoH_v2"}},
        {offsetof(struct mp_cu_api, MemAddressReserve), {"cuMemAddressReserve"}},
        {offsetof(struct mp_cu_api, MemAddressFree), {"cuMemAddressFree"}},
        {offsetof(struct mp_cu_api, MemCreate), {"cuMemCreate"}},
        {offsetof(struct mp_cu_api, MemRelease), {"cuMemRelease"}},
        {offsetof(struct mp_cu_api, MemMap), {"cuMemMap"}},
        {offsetof(struct mp_cu_api, MemUnmap), {"cuMemUnmap"}},
        {offsetof(struct mp_cu_api, MemSetAccess), {"cuMemSetAccess"}},
        {offsetof(struct mp_cu_api, MemGetAllocationGranularity),
         {"cuMemGetAllocationGranularity"}},
        {offsetof(struct mp_cu_api, MemAllocAsync), {"cuMemAllocAsync"}},
        {offsetof(struct mp_cu_api, MemFreeAsync), {"cuMemFreeAsync"}},
        {offsetof(struct mp_cu_api, DeviceGetDefaultMemPool), {"cuDeviceGetDefaultMemPool"}},
        {offsetof(struct mp_cu_api, MemPoolGetAttribute), {"cuMemPoolGetAttribute"}},
        {offsetof(struct mp_cu_api, MemPoolSetAttribute), {"cuMemPoolSetAttribute"}},
        {offsetof(struct mp_cu_api, MemPoolTrimTo), {"cuMemPoolTrimTo"}},
        {offsetof(struct mp_cu_api, StreamCreate), {"cuStreamCreate"}},
        {offsetof(struct mp_cu_api, StreamDestroy), {"cuStreamDestroy_v2"}},
        {offsetof(struct mp_cu_api, StreamSynchronize), {"cuStreamSynchronize"}},
        {offsetof(struct mp_cu_api, EventCreate), {"cuEventCreate"}},
        {offsetof(struct mp_cu_api, EventDestroy), {"cuEventDestroy_v2"}},
        {offsetof(struct mp_cu_api, EventRecord), {"cuEventRecord"}},
        {offsetof(struct mp_cu_api, EventSynchronize), {"cuEventSynchronize"}},
        {offsetof(struct mp_cu_api, EventQuery), {"cuEventQuery"}},
        {offsetof(struct mp_cu_api, EventElapsedTime),
         {"cuEventElapsedTime", "cuEventElapsedTime_v2"}},
};

/* Loaded once per process and never unloaded: the driver keeps threads alive. */
struct mp_cu_api mp_cu;
static void *cu_dl;

/* Load libcuda.so.1 and resolve every entry point; on failure why says what is missing. */
static int cu_load(char *why, size_t why_size)
{
	const char *lib = getenv("MEMPROF_LIBCUDA"); /* tests load a fake driver */
	void *dl;
	const char *e;

	if (!lib || !*lib)
		lib = "libcuda.so.1";

	if (cu_dl)
		return 1;
	dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		e = dlerror();
		if (e && strncmp(e, lib, strlen(lib)) == 0 && e[strlen(lib)] == ':')
			e += strlen(lib) + 1 + (e[strlen(lib) + 1] == ' ');
		snprintf(why, why_size, "no NVIDIA driver found (%s: %s)", lib,
		         e ? e : "not found");
		return 0;
	}
	for (size_t i = 0; i < sizeof cu_symbols / sizeof cu_symbols[0]; i++) {
		void *sym = NULL;

		for (size_t k = 0; k < 2 && !sym && cu_symbols[i].names[k]; k++)
			sym = dlsym(dl, cu_symbols[i].names[k]);
		if (!sym) {
			snprintf(why, why_size,
			         "the NVIDIA driver is too old: %s has no %s (CUDA 11.2 or newer "
			         "is needed)",
			         lib, cu_symbols[i].names[0]);
			dlclose(dl);
			return 0;
		}
		memcpy((char *)&mp_cu + cu_symbols[i].offset, &sym, sizeof sym);
	}
	cu_dl = dl;
	return 1;
}

const char *mp_cu_name(CUresult rc)
{
	const char *s = NULL;

	if (!mp_cu.GetErrorName || mp_cu.GetErrorName(rc, &s) != CUDA_SUCCESS || !s)
		return "an unknown CUresult";
	return s;
}

/* Load, cuInit and count devices; on 0, why says what is missing. */
int mp_cu_probe(char *why, size_t why_size, int *n_devices)
{
	CUresult rc;

	*n_devices = 0;
	if (!cu_load(why, why_size))
		return 0;
	rc = mp_cu.Init(0);
	if (rc == CUDA_ERROR_NO_DEVICE) {
		snprintf(why, why_size, "no CUDA device (cuInit: %s)", mp_cu_name(rc));
		return 0;
	}
	if (rc != CUDA_SUCCESS) {
		snprintf(why, why_size, "cuInit failed: %s", mp_cu_name(rc));
		return 0;
	}
	rc = mp_cu.DeviceGetCount(n_devices);
	if (rc != CUDA_SUCCESS) {
		snprintf(why, why_size, "cuDeviceGetCount failed: %s", mp_cu_name(rc));
		return 0;
	}
	if (*n_devices < 1) {
		snprintf(why, why_size, "no CUDA device");
		return 0;
	}
	return 1;
}

#else
typedef int mp_cuda_api_unused; /* ISO C: a translation unit is not empty */
#endif /* HAVE_CUDA */
