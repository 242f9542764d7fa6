/* alloc_managed.cu - cudaMallocManaged in a known pattern (samples/cuda/README.md): three
 * managed blocks (1 MiB and 16 MiB attached globally, 4 KiB attached to the host), each
 * written from the host, then freed in the order 16 MiB, 4 KiB, 1 MiB; NVTX ranges around
 * each phase.  Log format: sample_log.h. */
#include "sample_log.h"

static const char *const USAGE = "alloc_managed";

static void *managed_alloc(uint64_t bytes, unsigned flags)
{
	void *p = NULL;

	sample_check(cudaMallocManaged(&p, bytes, flags), "cudaMallocManaged");
	log_alloc("cudaMallocManaged", p, bytes, 0, "managed");
	return p;
}

static void managed_free(void *p)
{
	sample_check(cudaFree(p), "cudaFree");
	log_free("cudaFree", p);
}

int main(int argc, char **argv)
{
	void *a, *b, *c;

	sample_name = "alloc_managed";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_managed", 0);
	phase_push("allocate");
	a = managed_alloc(1 * MIB, cudaMemAttachGlobal);
	b = managed_alloc(16 * MIB, cudaMemAttachGlobal);
	c = managed_alloc(4 * KIB, cudaMemAttachHost);
	phase_pop("allocate");
	phase_push("touch");
	memset(a, 1, 1 * MIB);
	memset(b, 2, 16 * MIB);
	memset(c, 3, 4 * KIB);
	sample_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	phase_pop("touch");
	phase_push("free");
	managed_free(b);
	managed_free(c);
	managed_free(a);
	phase_pop("free");
	sample_end(0);
	return 0;
}
