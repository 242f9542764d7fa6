/*
 * tests/unit/test_backend_cuda.c - the cuda backend's own logic on a fake
 * driver (tests/unit/fake_libcuda.c, loaded through MEMPROF_LIBCUDA): what
 * it asks of the driver, on which streams, what it keeps and releases, how
 * it names failures.  Device memory is host memory in the fake, so bytes are
 * read directly.  The real GPU is tests/gpu/'s business.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "replay/backend.h"

#define MIB (1ull << 20)

struct fakecuda {
	int no_device;
	unsigned long long cap;
	int live_allocs, live_async, live_handles, live_streams, live_events, n_mapped;
	int n_set_access, n_ctx_sync, n_stream_sync, primary_retained;
	unsigned long long last_stream;
	unsigned int last_stream_flags;
	unsigned long long async_live_bytes, async_kept_bytes, release_threshold;
	int n_memset_async, n_copy_async, n_records;
};

static struct fakecuda *fc;
static struct mp_error err;
static struct mp_backend *be;
static const struct mp_backend_ops *ops = &mp_backend_cuda;

static void use_fake(void)
{
#ifndef HAVE_CUDA
	cr_skip_test("memprof was built without CUDA: no cuda backend to test");
#endif
	void *dl = dlopen(FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);

	cr_assert_not_null(dl, "%s", dlerror());
	fc = dlsym(dl, "fakecuda");
	cr_assert_not_null(fc);
	setenv("MEMPROF_LIBCUDA", FAKE_LIBCUDA, 1);
}

static void open_fake(void)
{
	struct mp_backend_options o = {.device = 0, .err = &err};

	use_fake();
	mp_err_clear(&err);
	cr_assert_eq(ops->open(&o, &be), 0, "%s", err.msg);
}

static unsigned char *at(uint64_t addr)
{
	return (unsigned char *)(uintptr_t)addr;
}

Test(cuda_fake, open_retains_and_close_releases_everything)
{
	struct memprof_region r;

	open_fake();
	cr_assert_eq(fc->primary_retained, 1);
	cr_assert_eq(fc->live_events, 2);
	cr_assert_eq(ops->reserve(be, 100, &r), 0);
	cr_assert_eq(ops->memset(be, r.addr, 1, 100, 5), 0);
	cr_assert_eq(fc->live_streams, 1);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fc->primary_retained, 0);
	cr_assert_eq(fc->live_events, 0);
	cr_assert_eq(fc->live_streams, 0);
}

Test(cuda_fake, memset_and_copy_run_on_the_trace_streams)
{
	struct memprof_region a, b, z;

	open_fake();
	cr_assert_eq(ops->reserve(be, 1000, &a), 0);
	cr_assert_eq(ops->reserve(be, 1000, &b), 0);
	cr_assert_eq(ops->reserve(be, 0, &z), 0); /* asks the driver for 1 byte, not 0 */
	cr_assert_eq(fc->live_allocs, 3);
	cr_assert_eq(ops->memset(be, a.addr, 0x7e, 1000, 0), 0);
	cr_assert_eq(fc->last_stream, 0); /* stream 0: the default stream */
	cr_assert_eq(fc->live_streams, 0);
	cr_assert_eq(at(a.addr)[999], 0x7e);
	cr_assert_eq(ops->copy(be, b.addr, a.addr, 1000, 5), 0);
	cr_assert_eq(at(b.addr)[0], 0x7e);
	cr_assert_neq(fc->last_stream, 0);
	cr_assert_eq(fc->live_streams, 1);
	cr_assert_eq(fc->last_stream_flags, 1); /* CU_STREAM_NON_BLOCKING */
	cr_assert_eq(ops->memset(be, a.addr, 0, 10, 5), 0);
	cr_assert_eq(fc->live_streams, 1); /* the same CUstream for the same trace stream */
	cr_assert_eq(ops->memset(be, a.addr, 0, 10, 6), 0);
	cr_assert_eq(fc->live_streams, 2);
	cr_assert_eq(ops->sync(be, 6), 0);
	cr_assert_eq(fc->n_stream_sync, 1);
	cr_assert_eq(ops->sync(be, 0), 0);
	cr_assert_geq(fc->n_ctx_sync, 1);
	cr_assert_eq(ops->release(be, &a) + ops->release(be, &b) + ops->release(be, &z), 0);
	cr_assert_eq(fc->live_allocs, 0);
	ops->close(be);
}

Test(cuda_fake, out_of_memory_is_enomem_named_by_its_cuResult)
{
	struct memprof_region r;

	open_fake();
	fc->cap = 4096;
	cr_assert_eq(ops->reserve(be, 8192, &r), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(err.code, MP_ENOMEM);
	cr_assert_str_eq(err.msg, "cuda backend: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY");
	cr_assert_eq(ops->alloc_async(be, 8192, 0, &r), MEMPROF_POOL_ENOMEM);
	cr_assert_str_eq(err.msg, "cuda backend: cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY");
	ops->close(be);
}

Test(cuda_fake, map_keeps_one_handle_per_chunk_and_unmap_releases_it)
{
	struct memprof_region va;

	open_fake();
	cr_assert_eq(ops->va_reserve(be, 6 * MIB, &va), 0);
	cr_assert_eq(va.addr % (2 * MIB), 0);
	cr_assert_eq(ops->map(be, &va, 0, 4 * MIB), 0);
	cr_assert_eq(fc->live_handles, 2);
	cr_assert_eq(fc->n_mapped, 2);
	cr_assert_eq(fc->n_set_access, 2);
	at(va.addr)[4 * MIB - 1] = 1; /* accessible */
	cr_assert_eq(ops->map(be, &va, 2 * MIB, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(err.msg, "already mapped") != NULL, "%s", err.msg);
	cr_assert_eq(fc->live_handles, 2);
	cr_assert_eq(ops->map(be, &va, 1, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->unmap(be, &va, 2 * MIB, 2 * MIB), 0);
	cr_assert_eq(fc->live_handles, 1);
	cr_assert_eq(fc->n_mapped, 1);
	cr_assert_eq(ops->unmap(be, &va, 2 * MIB, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(err.msg, "not mapped") != NULL, "%s", err.msg);
	cr_assert_eq(ops->va_release(be, &va), 0); /* with the first chunk still mapped */
	cr_assert_eq(fc->live_handles, 0);
	cr_assert_eq(fc->n_mapped, 0);
	ops->close(be);
}

Test(cuda_fake, a_chunk_left_mapped_is_released_at_close)
{
	struct memprof_region va;

	open_fake();
	cr_assert_eq(ops->va_reserve(be, 4 * MIB, &va), 0);
	cr_assert_eq(ops->map(be, &va, 0, 4 * MIB), 0);
	ops->close(be);
	cr_assert_eq(fc->live_handles, 0);
}

Test(cuda_fake, async_uses_the_default_pool_kept_warm_and_restores_it)
{
	struct memprof_region a, b;
	uint64_t held = 0;

	open_fake();
	cr_assert_eq(ops->alloc_async(be, 1000, 0, &a), 0);
	cr_assert_eq(fc->last_stream, 0);
	cr_assert_eq(fc->release_threshold, UINT64_MAX);
	cr_assert_eq(ops->alloc_async(be, 2000, 7, &b), 0);
	cr_assert_neq(fc->last_stream, 0);
	cr_assert_eq(ops->async_reserved(be, &held), 0);
	cr_assert_eq(held, 3000);
	cr_assert_eq(ops->free_async(be, &a, 3), 0);
	cr_assert_eq(fc->live_async, 1);
	cr_assert_eq(fc->live_streams, 2); /* 7 and 3 */
	cr_assert_eq(ops->async_reserved(be, &held), 0);
	cr_assert_eq(held, 3000); /* the pool keeps what was freed */
	cr_assert_eq(ops->free_async(be, &b, 7), 0);
	ops->close(be);
	cr_assert_eq(fc->async_kept_bytes, 0);  /* trimmed */
	cr_assert_eq(fc->release_threshold, 0); /* restored */
}

Test(cuda_fake, pattern_reads_back_the_first_and_last_64_kib)
{
	struct memprof_region r;
	const uint64_t n = 200 * 1024;

	open_fake();
	cr_assert_eq(ops->reserve(be, n, &r), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 9), 0);
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 9), 1);
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 10), 0);
	at(r.addr)[1000] ^= 1;
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 9), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 9), 0);
	at(r.addr)[n - 1] ^= 1;
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 9), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 9), 0);
	at(r.addr)[100 * 1024] ^= 1; /* the middle is written but not read back */
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 9), 1);
	/* an odd address and size: bytes past the last whole word, and a 4-aligned body */
	cr_assert_eq(ops->fill_pattern(be, r.addr + 1, 1001, 4), 0);
	cr_assert_eq(ops->check_pattern(be, r.addr + 1, 1001, 4), 1);
	at(r.addr + 1)[1000] ^= 1;
	cr_assert_eq(ops->check_pattern(be, r.addr + 1, 1001, 4), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, 1003, 4), 0);
	cr_assert_eq(ops->check_pattern(be, r.addr, 1003, 4), 1);
	at(r.addr)[1002] ^= 1;
	cr_assert_eq(ops->check_pattern(be, r.addr, 1003, 4), 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, a_timed_span_adds_the_device_time_of_the_work_it_enqueued)
{
	struct memprof_region r;
	uint64_t host_only = 0, with_device = 0;

	open_fake();
	cr_assert_eq(ops->time_begin(be), 0);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->time_end(be, &host_only), 0);
	cr_assert_lt(host_only, 250000); /* no device work: no event time */
	cr_assert_eq(ops->time_begin(be), 0);
	cr_assert_eq(ops->memset(be, r.addr, 0, 4096, 4), 0);
	cr_assert_eq(ops->time_end(be, &with_device), 0);
	cr_assert_geq(with_device, 250000); /* the fake's 0.25 ms between the events */
	cr_assert_eq(fc->n_records, 2);
	cr_assert_eq(ops->time_end(be, &with_device), MEMPROF_POOL_EINVAL);
	ops->memset(be, r.addr, 0, 4096, 4); /* outside a span: no events */
	cr_assert_eq(fc->n_records, 2);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, no_device_and_a_wrong_ordinal_are_named)
{
	struct mp_backend_options o = {.device = 1, .err = &err};
	char why[256];

	use_fake();
	cr_assert_eq(mp_backend_cuda_usable(why, sizeof why), 1);
	cr_assert_lt(ops->open(&o, &be), 0);
	cr_assert_null(be);
	cr_assert_str_eq(err.msg, "no CUDA device 1: this machine has 1 (0 to 0)");
	fc->no_device = 1;
	cr_assert_eq(mp_backend_cuda_usable(why, sizeof why), 0);
	cr_assert_str_eq(why, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
	o.device = 0;
	cr_assert_lt(ops->open(&o, &be), 0);
	cr_assert_str_eq(err.msg, why);
}

Test(cuda_fake, a_library_without_the_entry_points_is_too_old)
{
	char why[256];

#ifndef HAVE_CUDA
	cr_skip_test("memprof was built without CUDA");
#endif
	setenv("MEMPROF_LIBCUDA", "libm.so.6", 1);
	cr_assert_eq(mp_backend_cuda_usable(why, sizeof why), 0);
	cr_assert_str_eq(why, "the NVIDIA driver is too old: libm.so.6 has no cuInit (CUDA 11.2 or "
	                      "newer is needed)");
}
