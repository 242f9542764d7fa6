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
 * Symbol names: the ABI version the CUDA headers memprof was built with map
 * each name to (cuda.h's "#define cuEventElapsedTime cuEventElapsedTime_v2"),
 * so the entry point called is the one whose prototype the code was compiled
 * against.  SYM_OR adds an older name tried when a driver predates the
 * header's, for calls whose old version has the same meaning here.
 */
#define MP_CU_STR(x)  #x
#define MP_CU_XSTR(x) MP_CU_STR(x)
#define SYM(field, fn)                                                                             \
	{                                                                                          \
		offsetof(struct mp_cu_api, field),                                                 \
		{                                                                                  \
			MP_CU_XSTR(fn), NULL                                                       \
		}                                                                                  \
	}
#define SYM_OR(field, fn, also)                                                                    \
	{                                                                                          \
		offsetof(struct mp_cu_api, field),                                                 \
		{                                                                                  \
			MP_CU_XSTR(fn), also                                                       \
		}                                                                                  \
	}
static const struct {
	size_t offset;
	const char *names[2];
} cu_symbols[] = {
        SYM(Init, cuInit),
        SYM(GetErrorName, cuGetErrorName),
        SYM(DeviceGetCount, cuDeviceGetCount),
        SYM(DeviceGet, cuDeviceGet),
        SYM_OR(DeviceGetUuid, cuDeviceGetUuid, "cuDeviceGetUuid"),
        SYM(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain),
        SYM(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease),
        SYM(CtxSetCurrent, cuCtxSetCurrent),
        SYM(CtxSynchronize, cuCtxSynchronize),
        SYM(MemAlloc, cuMemAlloc),
        SYM(MemFree, cuMemFree),
        SYM(MemsetD8Async, cuMemsetD8Async),
        SYM(MemsetD8, cuMemsetD8),
        SYM(MemsetD32, cuMemsetD32),
        SYM(MemcpyDtoDAsync, cuMemcpyDtoDAsync),
        SYM(MemcpyDtoH, cuMemcpyDtoH),
        SYM(MemAddressReserve, cuMemAddressReserve),
        SYM(MemAddressFree, cuMemAddressFree),
        SYM(MemCreate, cuMemCreate),
        SYM(MemRelease, cuMemRelease),
        SYM(MemMap, cuMemMap),
        SYM(MemUnmap, cuMemUnmap),
        SYM(MemSetAccess, cuMemSetAccess),
        SYM(MemGetAllocationGranularity, cuMemGetAllocationGranularity),
        SYM(MemAllocAsync, cuMemAllocAsync),
        SYM(MemFreeAsync, cuMemFreeAsync),
        SYM(DeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool),
        SYM(MemPoolGetAttribute, cuMemPoolGetAttribute),
        SYM(MemPoolSetAttribute, cuMemPoolSetAttribute),
        SYM(MemPoolTrimTo, cuMemPoolTrimTo),
        SYM(StreamCreate, cuStreamCreate),
        SYM(StreamDestroy, cuStreamDestroy),
        SYM(StreamSynchronize, cuStreamSynchronize),
        SYM(EventCreate, cuEventCreate),
        SYM(EventDestroy, cuEventDestroy),
        SYM(EventRecord, cuEventRecord),
        SYM(EventSynchronize, cuEventSynchronize),
        SYM(EventQuery, cuEventQuery),
        SYM_OR(EventElapsedTime, cuEventElapsedTime, "cuEventElapsedTime"),
};
#undef SYM
#undef SYM_OR

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
