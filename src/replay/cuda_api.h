/*
 * replay/cuda_api.h - the CUDA driver entry points memprof uses, resolved
 * at run time from libcuda.so.1 (or MEMPROF_LIBCUDA, for the fake driver
 * of the tests) and never linked, shared by the cuda backend and its
 * collectives (cuda_collective.c).  Only with HAVE_CUDA.
 */
#ifndef MP_REPLAY_CUDA_API_H
#define MP_REPLAY_CUDA_API_H

#include <stddef.h>

#include <cuda.h>

/* The driver entry points used, resolved by dlsym; never linked. */
struct mp_cu_api {
	CUresult (*Init)(unsigned int);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*MemsetD32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
	                              unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
	                      unsigned long long);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
	                   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
	                                        CUmemAllocationGranularity_flags);
	CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*DeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*MemPoolGetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
	CUresult (*MemPoolSetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
	CUresult (*MemPoolTrimTo)(CUmemoryPool, size_t);
	CUresult (*StreamCreate)(CUstream *, unsigned int);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned int);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventQuery)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
};
/* Filled in by mp_cu_probe; loaded once per process and never unloaded. */
extern struct mp_cu_api mp_cu;

/* Load, cuInit and count devices; 1, or 0 with why saying what is missing. */
int mp_cu_probe(char *why, size_t why_size, int *n_devices);
/* The CUresult's name ("CUDA_ERROR_OUT_OF_MEMORY"). */
const char *mp_cu_name(CUresult rc);

#endif
