/* alloc_pinned.cu - page-locked host memory in a known pattern (samples/cuda/README.md):
 * cudaMallocHost 1 MiB and 8 MiB, cudaHostAlloc 4 MiB (default flags) and 2 MiB (portable,
 * mapped), all freed with cudaFreeHost.  Host memory is not GPU memory: a memprof trace
 * skips it and counts the skipped records.  NVTX ranges around each phase.
 * Log format: sample_log.h. */
#include "sample_log.h"

static const char *const USAGE = "alloc_pinned";

static void *pinned_alloc(const char *api, uint64_t bytes, unsigned flags)
{
	void *p = NULL;

	if (!strcmp(api, "cudaMallocHost"))
		sample_check(cudaMallocHost(&p, bytes), "cudaMallocHost");
	else
		sample_check(cudaHostAlloc(&p, bytes, flags), "cudaHostAlloc");
	log_alloc(api, p, bytes, 0, "pinned");
	return p;
}

static void pinned_free(void *p)
{
	sample_check(cudaFreeHost(p), "cudaFreeHost");
	log_free("cudaFreeHost", p);
}

int main(int argc, char **argv)
{
	void *p[4], *dev = NULL;

	sample_name = "alloc_pinned";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_pinned", 0);
	phase_push("malloc-host");
	p[0] = pinned_alloc("cudaMallocHost", 1 * MIB, 0);
	p[1] = pinned_alloc("cudaMallocHost", 8 * MIB, 0);
	phase_pop("malloc-host");
	phase_push("host-alloc");
	p[2] = pinned_alloc("cudaHostAlloc", 4 * MIB, cudaHostAllocDefault);
	p[3] = pinned_alloc("cudaHostAlloc", 2 * MIB, cudaHostAllocPortable | cudaHostAllocMapped);
	sample_check(cudaHostGetDevicePointer(&dev, p[3], 0), "cudaHostGetDevicePointer");
	printf("memprof-sample note mapped host 0x%" PRIxPTR " is device 0x%" PRIxPTR "\n",
	       (uintptr_t)p[3], (uintptr_t)dev);
	phase_pop("host-alloc");
	phase_push("free-host");
	for (int i = 0; i < 4; i++)
		pinned_free(p[i]);
	phase_pop("free-host");
	sample_end(0);
	return 0;
}
