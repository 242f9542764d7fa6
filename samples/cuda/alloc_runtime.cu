/* alloc_runtime.cu - cudaMalloc and cudaFree in a known pattern (samples/cuda/README.md):
 * LIFO and FIFO frees over sizes from 1 KiB to 64 MiB, odd sizes, one size allocated and
 * freed four times (address reuse), one block leaked on purpose; NVTX ranges around each
 * phase.  --loop=N instead does N cudaMalloc/cudaFree pairs of 1 MiB without per-call
 * lines (for bench/record-overhead.sh).  Log format: sample_log.h. */
#include "sample_log.h"

static const char *const USAGE = "alloc_runtime [--loop=N]";

static void *rt_alloc(uint64_t bytes)
{
	void *p = NULL;
	char what[64];

	snprintf(what, sizeof what, "cudaMalloc(%" PRIu64 ")", bytes);
	sample_check(cudaMalloc(&p, bytes), what);
	log_alloc("cudaMalloc", p, bytes, 0, "device");
	return p;
}

static void rt_free(void *p)
{
	sample_check(cudaFree(p), "cudaFree");
	log_free("cudaFree", p);
}

/* 1 KiB, 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB; freed newest first. */
static void phase_lifo(void)
{
	static const uint64_t sizes[] = {1 * KIB, 4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB, 64 * MIB};
	void *p[6];

	phase_push("lifo");
	for (int i = 0; i < 6; i++)
		p[i] = rt_alloc(sizes[i]);
	for (int i = 5; i >= 0; i--)
		rt_free(p[i]);
	phase_pop("lifo");
}

/* 2 KiB, 8 KiB, 256 KiB, 4 MiB, 32 MiB; freed oldest first. */
static void phase_fifo(void)
{
	static const uint64_t sizes[] = {2 * KIB, 8 * KIB, 256 * KIB, 4 * MIB, 32 * MIB};
	void *p[5];

	phase_push("fifo");
	for (int i = 0; i < 5; i++)
		p[i] = rt_alloc(sizes[i]);
	for (int i = 0; i < 5; i++)
		rt_free(p[i]);
	phase_pop("fifo");
}

/* 1000 and 12345 bytes: sizes the driver rounds up. */
static void phase_odd(void)
{
	void *a, *b;

	phase_push("odd");
	a = rt_alloc(1000);
	b = rt_alloc(12345);
	rt_free(a);
	rt_free(b);
	phase_pop("odd");
}

/* 2 MiB allocated and freed four times: the driver may hand back the same address. */
static void phase_reuse(void)
{
	phase_push("reuse");
	for (int i = 0; i < 4; i++)
		rt_free(rt_alloc(2 * MIB));
	phase_pop("reuse");
}

static int run_loop(uint64_t n_pairs)
{
	int64_t t0, t1;

	phase_push("loop");
	t0 = sample_now_ns();
	for (uint64_t i = 0; i < n_pairs; i++) {
		void *p = NULL;
		sample_check(cudaMalloc(&p, MIB), "cudaMalloc(1048576)");
		sample_check(cudaFree(p), "cudaFree");
	}
	t1 = sample_now_ns();
	phase_pop("loop");
	printf("memprof-sample loop api=cudaMalloc,cudaFree pairs=%" PRIu64
	       " bytes=1048576 loop_ns=%" PRId64 " ns_per_pair=%.1f\n",
	       n_pairs, t1 - t0, n_pairs ? (double)(t1 - t0) / (double)n_pairs : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n_loop = 0;
	int loop = 0;

	sample_name = "alloc_runtime";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		if (sample_opt_u64(argv[i], "--loop", &n_loop))
			loop = 1;
		else
			sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_runtime", 0);
	if (loop) {
		run_loop(n_loop);
		sample_end(0);
		return 0;
	}
	phase_lifo();
	phase_fifo();
	phase_odd();
	phase_reuse();
	phase_push("leak");
	(void)rt_alloc(3 * MIB); /* never freed: the trace ends with it live */
	phase_pop("leak");
	sample_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	sample_end(1);
	return 0;
}
