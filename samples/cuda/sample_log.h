/* sample_log.h - what the allocation samples (alloc_*.cu, nccl_comm.cu) share: the log
 * format every sample prints on stdout ("memprof-sample VERB key=value ...", one line per
 * call; samples/cuda/README.md), NVTX phase helpers that log their ranges too, the clean
 * failure without a driver ("NAME: no CUDA driver: ..." on stderr, exit 1) and small
 * option parsing.  Header only, C-style, for nvcc; tests/gpu/check_sample_log.py reads
 * the log. */
#ifndef MEMPROF_SAMPLE_LOG_H
#define MEMPROF_SAMPLE_LOG_H

#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define SAMPLE_HAVE_NVTX3 1
#endif
#endif

#define MIB (1024ull * 1024ull)
#define KIB 1024ull

static const char *sample_name = "sample";

/* Totals printed by the "end" line. */
static uint64_t sample_n_allocs, sample_n_frees, sample_alloc_bytes, sample_n_maps,
        sample_n_unmaps;

static inline void sample_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", sample_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	exit(1);
}

/* Fail on a runtime error, naming the call. */
static inline void sample_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess)
		sample_die("%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static inline int64_t sample_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The first CUDA call of every sample: without a driver (cudaErrorInsufficientDriver,
 * cudaErrorNoDevice, cudaErrorStubLibrary, ...) print one line and exit 1 before
 * allocating anything.  Then make device 0 current with a primary context, without
 * cudaFree(0), which would be a free call in the trace.  Prints the "begin" line;
 * extra_allowed says the trace may hold allocations the sample did not make (NCCL's).
 */
static inline void sample_begin(const char *name, int extra_allowed)
{
	int n_devices = 0;
	cudaError_t e;

	sample_name = name;
	e = cudaGetDeviceCount(&n_devices);
	if (e == cudaErrorNoDevice || (e == cudaSuccess && n_devices == 0))
		sample_die("no CUDA device: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
	if (e != cudaSuccess)
		sample_die("no CUDA driver: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
	sample_check(cudaInitDevice(0, 0, 0), "cudaInitDevice(0)");
	sample_check(cudaSetDevice(0), "cudaSetDevice(0)");
	printf("memprof-sample begin sample=%s pid=%ld devices=%d extra=%s\n", name, (long)getpid(),
	       n_devices, extra_allowed ? "allowed" : "none");
}

static inline void sample_end(uint64_t n_leaked)
{
	printf("memprof-sample end sample=%s allocs=%" PRIu64 " frees=%" PRIu64
	       " alloc_bytes=%" PRIu64 " maps=%" PRIu64 " unmaps=%" PRIu64 " leaked=%" PRIu64 "\n",
	       sample_name, sample_n_allocs, sample_n_frees, sample_alloc_bytes, sample_n_maps,
	       sample_n_unmaps, n_leaked);
	fflush(stdout);
}

/* kind: device, managed or pinned (host memory the trace skips). */
static inline void log_alloc(const char *api, const void *ptr, uint64_t bytes, int device,
                      const char *kind)
{
	sample_n_allocs++;
	sample_alloc_bytes += bytes;
	printf("memprof-sample alloc api=%s ptr=0x%" PRIxPTR " bytes=%" PRIu64 " device=%d kind=%s\n",
	       api, (uintptr_t)ptr, bytes, device, kind);
}

static inline void log_free(const char *api, const void *ptr)
{
	sample_n_frees++;
	printf("memprof-sample free api=%s ptr=0x%" PRIxPTR "\n", api, (uintptr_t)ptr);
}

/* A line with free-form key=value fields after the verb and api (VMM calls, pools). */
static inline void log_line(const char *verb, const char *api, const char *fmt, ...)
{
	va_list ap;

	if (!strcmp(verb, "map"))
		sample_n_maps++;
	else if (!strcmp(verb, "unmap"))
		sample_n_unmaps++;
	printf("memprof-sample %s api=%s ", verb, api);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* NVTX ranges around phases; the log holds them too ("push name=X", "pop name=X"). */
static inline void phase_push(const char *name)
{
#ifdef SAMPLE_HAVE_NVTX3
	nvtxRangePushA(name);
#endif
	printf("memprof-sample push name=%s\n", name);
}

static inline void phase_pop(const char *name)
{
#ifdef SAMPLE_HAVE_NVTX3
	nvtxRangePop();
#endif
	printf("memprof-sample pop name=%s\n", name);
}

/* --NAME=N: a positive integer option; exit 2 (usage) on anything else. */
static inline int sample_opt_u64(const char *arg, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	char *end;

	if (strncmp(arg, name, n) || arg[n] != '=')
		return 0;
	*out = strtoull(arg + n + 1, &end, 10);
	if (end == arg + n + 1 || *end || arg[n + 1] == '-') {
		fprintf(stderr, "%s: %s wants a whole number, not '%s'\n", sample_name, name,
		        arg + n + 1);
		exit(2);
	}
	return 1;
}

static inline void sample_usage_error(const char *arg, const char *usage)
{
	fprintf(stderr, "%s: unknown option '%s'\nusage: %s\n", sample_name, arg, usage);
	exit(2);
}

#endif
