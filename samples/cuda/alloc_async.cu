/* alloc_async.cu - the stream-ordered allocator in a known pattern (samples/cuda/README.md):
 * cudaMallocAsync/cudaFreeAsync on two streams through the device's default pool, one block
 * freed on the other stream than it was allocated on, then cudaMallocFromPoolAsync on a
 * pool made with cudaMemPoolCreate (trimmed, destroyed); NVTX ranges around each phase.
 * Log format: sample_log.h. */
#include "sample_log.h"

static const char *const USAGE = "alloc_async";

static void *async_alloc(uint64_t bytes, cudaStream_t s)
{
	void *p = NULL;

	sample_check(cudaMallocAsync(&p, bytes, s), "cudaMallocAsync");
	log_alloc("cudaMallocAsync", p, bytes, 0, "device");
	return p;
}

static void *pool_alloc(uint64_t bytes, cudaMemPool_t pool, cudaStream_t s)
{
	void *p = NULL;

	sample_check(cudaMallocFromPoolAsync(&p, bytes, pool, s), "cudaMallocFromPoolAsync");
	log_alloc("cudaMallocFromPoolAsync", p, bytes, 0, "device");
	return p;
}

static void async_free(void *p, cudaStream_t s)
{
	sample_check(cudaFreeAsync(p, s), "cudaFreeAsync");
	log_free("cudaFreeAsync", p);
}

/* Default pool: 4 x 1 MiB on stream A and 4 x 2 MiB on stream B, interleaved, each freed
 * on its own stream (B's newest first); then 512 KiB allocated on A and freed on B after
 * B waits for an event recorded on A. */
static void phase_default_pool(cudaStream_t a, cudaStream_t b)
{
	void *pa[4], *pb[4], *cross;
	cudaEvent_t ev;

	phase_push("default-pool");
	for (int i = 0; i < 4; i++) {
		pa[i] = async_alloc(1 * MIB, a);
		pb[i] = async_alloc(2 * MIB, b);
	}
	for (int i = 0; i < 4; i++) {
		async_free(pa[i], a);
		async_free(pb[3 - i], b);
	}
	cross = async_alloc(512 * KIB, a);
	sample_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
	sample_check(cudaEventRecord(ev, a), "cudaEventRecord");
	sample_check(cudaStreamWaitEvent(b, ev, 0), "cudaStreamWaitEvent");
	async_free(cross, b);
	sample_check(cudaStreamSynchronize(a), "cudaStreamSynchronize");
	sample_check(cudaStreamSynchronize(b), "cudaStreamSynchronize");
	sample_check(cudaEventDestroy(ev), "cudaEventDestroy");
	phase_pop("default-pool");
}

/* A created pool (release threshold: keep everything): 3 x 8 MiB on stream A, freed,
 * trimmed to 0, destroyed. */
static void phase_created_pool(cudaStream_t a)
{
	cudaMemPoolProps props;
	cudaMemPool_t pool;
	uint64_t keep_all = UINT64_MAX;
	void *p[3];

	phase_push("created-pool");
	memset(&props, 0, sizeof props);
	props.allocType = cudaMemAllocationTypePinned;
	props.handleTypes = cudaMemHandleTypeNone;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	sample_check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
	log_line("pool", "cudaMemPoolCreate", "handle=0x%" PRIxPTR " device=0", (uintptr_t)pool);
	sample_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all),
	             "cudaMemPoolSetAttribute");
	for (int i = 0; i < 3; i++)
		p[i] = pool_alloc(8 * MIB, pool, a);
	for (int i = 0; i < 3; i++)
		async_free(p[i], a);
	sample_check(cudaStreamSynchronize(a), "cudaStreamSynchronize");
	sample_check(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
	log_line("pooltrim", "cudaMemPoolTrimTo", "handle=0x%" PRIxPTR " keep=0", (uintptr_t)pool);
	sample_check(cudaMemPoolDestroy(pool), "cudaMemPoolDestroy");
	log_line("pooldestroy", "cudaMemPoolDestroy", "handle=0x%" PRIxPTR, (uintptr_t)pool);
	phase_pop("created-pool");
}

int main(int argc, char **argv)
{
	cudaStream_t a, b;

	sample_name = "alloc_async";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_async", 0);
	sample_check(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "cudaStreamCreate");
	sample_check(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "cudaStreamCreate");
	printf("memprof-sample streams a=0x%" PRIxPTR " b=0x%" PRIxPTR "\n", (uintptr_t)a,
	       (uintptr_t)b);
	phase_default_pool(a, b);
	phase_created_pool(a);
	sample_check(cudaStreamDestroy(a), "cudaStreamDestroy");
	sample_check(cudaStreamDestroy(b), "cudaStreamDestroy");
	sample_end(0);
	return 0;
}
