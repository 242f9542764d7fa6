/* sample_driver.h - driver API entry points for the samples that call cu* functions
 * (alloc_driver.cu, alloc_vmm.cu), fetched at run time through the runtime's
 * cudaGetDriverEntryPointByVersion, so the binaries link no libcuda and start (and fail
 * cleanly) without a driver.  Call after sample_begin, which made device 0's primary
 * context current. */
#ifndef MEMPROF_SAMPLE_DRIVER_H
#define MEMPROF_SAMPLE_DRIVER_H

#include "sample_log.h"
#include <cudaTypedefs.h>

/* The CUDA version whose ABI of each function we ask for. */
#define SAMPLE_DRIVER_ABI 12000

static PFN_cuGetErrorName_v6000 drv_error_name;

/* Fetch SYMBOL into *fn or die naming it. */
static inline void drv_load(const char *symbol, void **fn)
{
	cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
	cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, SAMPLE_DRIVER_ABI,
	                                                  cudaEnableDefault, &q);

	if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn)
		sample_die("no driver entry point %s (%s, query result %d)", symbol,
		           cudaGetErrorName(e), (int)q);
}

#define DRV_LOAD(var, symbol) drv_load(symbol, (void **)&(var))

/* Fail on a driver error, naming the call and the CUresult. */
static inline void drv_check(CUresult r, const char *what)
{
	const char *name = NULL;

	if (r == CUDA_SUCCESS)
		return;
	if (!drv_error_name)
		DRV_LOAD(drv_error_name, "cuGetErrorName");
	if (drv_error_name(r, &name) != CUDA_SUCCESS || !name)
		name = "unknown CUresult";
	sample_die("%s failed: %s (%d)", what, name, (int)r);
}

#endif
