/* alloc_driver.cu - the driver API's cuMemAlloc, cuMemAllocPitch and cuMemFree in a known
 * pattern (samples/cuda/README.md): 512 KiB, 1 MiB and 10 MiB plus one pitched 2-D block,
 * freed in the order 1 MiB, pitched, 512 KiB, 10 MiB; NVTX ranges around each phase.
 * The entry points come from cudaGetDriverEntryPointByVersion (sample_driver.h): no
 * libcuda link.  Log format: sample_log.h. */
#include "sample_driver.h"

static const char *const USAGE = "alloc_driver";

static PFN_cuMemAlloc_v3020 p_cuMemAlloc;
static PFN_cuMemAllocPitch_v3020 p_cuMemAllocPitch;
static PFN_cuMemFree_v3020 p_cuMemFree;

static CUdeviceptr drv_alloc(uint64_t bytes)
{
	CUdeviceptr p = 0;

	drv_check(p_cuMemAlloc(&p, bytes), "cuMemAlloc");
	log_alloc("cuMemAlloc", (void *)(uintptr_t)p, bytes, 0, "device");
	return p;
}

/* A 2-D block of HEIGHT rows of WIDTH bytes; the driver picks the pitch (row stride), so
 * the block holds pitch * height bytes: logged as bytes, width * height as requested. */
static CUdeviceptr drv_alloc_pitch(uint64_t width, uint64_t height)
{
	CUdeviceptr p = 0;
	size_t pitch = 0;

	drv_check(p_cuMemAllocPitch(&p, &pitch, width, height, 4), "cuMemAllocPitch");
	sample_n_allocs++;
	sample_alloc_bytes += (uint64_t)pitch * height;
	printf("memprof-sample alloc api=cuMemAllocPitch ptr=0x%" PRIxPTR " bytes=%" PRIu64
	       " device=0 kind=device requested=%" PRIu64 " pitch=%zu width=%" PRIu64
	       " height=%" PRIu64 "\n",
	       (uintptr_t)p, (uint64_t)pitch * height, width * height, pitch, width, height);
	return p;
}

static void drv_free(CUdeviceptr p)
{
	drv_check(p_cuMemFree(p), "cuMemFree");
	log_free("cuMemFree", (void *)(uintptr_t)p);
}

int main(int argc, char **argv)
{
	CUdeviceptr a, b, c, pitched;

	sample_name = "alloc_driver";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_driver", 0);
	DRV_LOAD(p_cuMemAlloc, "cuMemAlloc");
	DRV_LOAD(p_cuMemAllocPitch, "cuMemAllocPitch");
	DRV_LOAD(p_cuMemFree, "cuMemFree");
	phase_push("allocate");
	a = drv_alloc(512 * KIB);
	b = drv_alloc(1 * MIB);
	c = drv_alloc(10 * MIB);
	pitched = drv_alloc_pitch(1000, 100);
	phase_pop("allocate");
	phase_push("free");
	drv_free(b);
	drv_free(pitched);
	drv_free(a);
	drv_free(c);
	phase_pop("free");
	sample_end(0);
	return 0;
}
