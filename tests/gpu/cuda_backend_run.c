/*
 * tests/gpu/cuda_backend_run.c - every operation of the cuda backend on a
 * real GPU, checked by reading device memory back: reserve, memset, copy,
 * virtual ranges with mapped chunks, stream-ordered allocation on several
 * streams, --verify patterns, event timing, out-of-memory.  Prints TAP;
 * exits 77 with the reason when no GPU is usable, 1 when a check fails.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/backend.h"

#define MIB (1ull << 20)

static const struct mp_backend_ops *ops = &mp_backend_cuda;
static struct mp_backend *be;
static struct mp_error err;
static int n_checks, n_failed;

static void check(int ok, const char *what)
{
	n_checks++;
	if (!ok)
		n_failed++;
	printf("%s %d - %s%s%s\n", ok ? "ok" : "not ok", n_checks, what, ok ? "" : ": ",
	       ok ? "" : err.msg);
}

static void test_reserve_memset_copy(void)
{
	struct memprof_region a, b, tiny;

	check(ops->reserve(be, 4 * MIB, &a) == 0, "cuMemAlloc 4 MiB");
	check(ops->reserve(be, 4 * MIB, &b) == 0, "cuMemAlloc another 4 MiB");
	check(ops->fill_pattern(be, a.addr, 4 * MIB, 11) == 0, "fill a pattern (cuMemsetD32)");
	check(ops->check_pattern(be, a.addr, 4 * MIB, 11) == 1, "the pattern reads back intact");
	check(ops->check_pattern(be, a.addr, 4 * MIB, 12) == 0, "another tag's pattern does not");
	check(ops->copy(be, b.addr, a.addr, 4 * MIB, 0) == 0 && ops->sync(be, 0) == 0,
	      "cuMemcpyDtoDAsync 4 MiB");
	check(ops->check_pattern(be, b.addr, 4 * MIB, 11) == 1, "the copy carried the bytes");
	check(ops->memset(be, b.addr + 100, 0, 1, 7) == 0 && ops->sync(be, 7) == 0,
	      "cuMemsetD8Async one byte on stream 7");
	check(ops->check_pattern(be, b.addr, 4 * MIB, 11) == 0, "that overwrite is caught");
	check(ops->fill_pattern(be, a.addr + 3, 1001, 5) == 0 &&
	              ops->check_pattern(be, a.addr + 3, 1001, 5) == 1,
	      "a pattern at an odd address and size");
	check(ops->reserve(be, 0, &tiny) == 0 && ops->memset(be, tiny.addr, 9, 1, 0) == 0 &&
	              ops->copy(be, tiny.addr, a.addr, 1, 0) == 0 && ops->sync(be, 0) == 0 &&
	              ops->release(be, &tiny) == 0,
	      "a 0-byte reservation still gets an address to memset and copy into");
	check(ops->release(be, &a) == 0 && ops->release(be, &b) == 0, "cuMemFree");
}

static void test_virtual_memory(void)
{
	struct memprof_region va;

	check(ops->va_reserve(be, 16 * MIB, &va) == 0, "cuMemAddressReserve 16 MiB");
	check(va.addr % (2 * MIB) == 0, "the range is 2 MiB-aligned");
	check(ops->map(be, &va, 2 * MIB, 6 * MIB) == 0, "map 3 chunks (cuMemCreate+Map+SetAccess)");
	check(ops->fill_pattern(be, va.addr + 2 * MIB, 6 * MIB, 3) == 0 &&
	              ops->check_pattern(be, va.addr + 2 * MIB, 6 * MIB, 3) == 1,
	      "mapped chunks hold a pattern");
	check(ops->map(be, &va, 4 * MIB, 2 * MIB) == MEMPROF_POOL_EINVAL,
	      "mapping a mapped chunk again is refused");
	check(ops->map(be, &va, 4096, 2 * MIB) == MEMPROF_POOL_EINVAL,
	      "a misaligned map is refused");
	check(ops->unmap(be, &va, 4 * MIB, 2 * MIB) == 0, "unmap the middle chunk");
	check(ops->map(be, &va, 4 * MIB, 2 * MIB) == 0, "and map it again");
	check(ops->va_release(be, &va) == 0, "cuMemAddressFree with chunks still mapped");
}

static void test_stream_ordered(void)
{
	struct memprof_region r[3];
	uint64_t held = 0;

	check(ops->alloc_async(be, 8 * MIB, 0, &r[0]) == 0,
	      "cuMemAllocAsync on the default stream");
	check(ops->alloc_async(be, 8 * MIB, 5, &r[1]) == 0, "cuMemAllocAsync on stream 5");
	check(ops->alloc_async(be, 3 * MIB, 9, &r[2]) == 0, "cuMemAllocAsync on stream 9");
	check(ops->sync(be, 0) == 0, "cuCtxSynchronize");
	check(ops->async_reserved(be, &held) == 0 && held >= 19 * MIB,
	      "the default pool holds at least what is live");
	check(ops->fill_pattern(be, r[1].addr, 8 * MIB, 8) == 0 &&
	              ops->check_pattern(be, r[1].addr, 8 * MIB, 8) == 1,
	      "stream-ordered memory holds a pattern");
	check(ops->free_async(be, &r[0], 0) == 0, "cuMemFreeAsync on the stream it came from");
	check(ops->free_async(be, &r[1], 3) == 0, "cuMemFreeAsync on another stream");
	check(ops->free_async(be, &r[2], 9) == 0 && ops->sync(be, 0) == 0, "all freed");
	check(ops->async_reserved(be, &held) == 0 && held >= 8 * MIB,
	      "the pool keeps freed memory (release threshold raised)");
}

static void test_timing_and_oom(void)
{
	struct memprof_region a, huge;
	uint64_t small_ns = 0, big_ns = 0;

	check(ops->reserve(be, 512 * MIB, &a) == 0, "cuMemAlloc 512 MiB");
	check(ops->time_begin(be) == 0 && ops->memset(be, a.addr, 1, MIB, 0) == 0 &&
	              ops->time_end(be, &small_ns) == 0 && small_ns > 0,
	      "a timed 1 MiB memset");
	check(ops->time_begin(be) == 0 && ops->memset(be, a.addr, 1, 512 * MIB, 4) == 0 &&
	              ops->time_end(be, &big_ns) == 0 && big_ns > small_ns,
	      "a timed 512 MiB memset takes longer");
	printf("# memset 1 MiB: %" PRIu64 " ns, 512 MiB: %" PRIu64 " ns (%.0f GB/s)\n", small_ns,
	       big_ns, 512.0 * MIB / (double)big_ns);
	check(ops->release(be, &a) == 0, "cuMemFree 512 MiB");
	check(ops->reserve(be, 1ull << 50, &huge) == MEMPROF_POOL_ENOMEM &&
	              strstr(err.msg, "CUDA_ERROR_OUT_OF_MEMORY") != NULL,
	      "1 PiB is out of memory, named by its CUresult");
}

int main(void)
{
	struct mp_backend_options o = {.device = 0, .err = &err};
	char why[512];

	if (!mp_backend_cuda_usable(why, sizeof why)) {
		printf("1..0 # SKIP no usable GPU: %s\n", why);
		return 77;
	}
	if (ops->open(&o, &be) != 0) {
		printf("Bail out! cuda backend: %s\n", err.msg);
		return 1;
	}
	test_reserve_memset_copy();
	test_virtual_memory();
	test_stream_ordered();
	test_timing_and_oom();
	ops->close(be);
	printf("1..%d\n", n_checks);
	return n_failed ? 1 : 0;
}
