/*
 * tests/unit/test_backend_cuda.c - the cuda backend's own logic on a fake
 * driver (tests/unit/fake_libcuda.c, loaded through MEMPROF_LIBCUDA): what
 * it asks of the driver, on which streams, what it keeps and releases, how
 * it names failures.  Device memory is host memory in the fake, so bytes are
 * read directly.  The collectives run on a fake NCCL (tests/unit/
 * fake_libnccl.c, MEMPROF_LIBNCCL) that records the calls memprof makes:
 * these tests check those calls (which init, which rank, size, id, buffer
 * and count), not NCCL.  The real GPU and NCCL are tests/gpu/'s business.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "replay/backend.h"
#include "replay/cuda_nccl_id.h"

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
	int n_devices;
	int same_uuid;
	int n_queries;
	int n_uuid_v1, n_uuid_v2, n_elapsed_v1, n_elapsed_v2;
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

struct fake_nccl_call {
	int kind;
	uintptr_t send, recv;
	size_t count;
	int datatype, op, rank;
	uintptr_t stream;
	int in_group;
};

struct fakenccl {
	int n_init, ndev, devlist[8];
	int n_destroy, group_depth, n_groups;
	int fail_init;
	int n_calls;
	struct fake_nccl_call calls[16];
	int n_unique_id, fail_unique_id;
	int n_init_rank, n_init_rank_config;
	int init_nranks, init_rank, config_blocking;
	unsigned int config_magic, config_version;
	size_t config_size;
	unsigned char init_id[128];
	int init_polls, init_hangs, async_fails;
	int n_abort, n_async_queries;
};

static struct fakenccl *use_fake_nccl(void)
{
	void *dl = dlopen(FAKE_LIBNCCL, RTLD_NOW | RTLD_LOCAL);
	struct fakenccl *fn;

	cr_assert_not_null(dl, "%s", dlerror());
	fn = dlsym(dl, "fakenccl");
	cr_assert_not_null(fn);
	setenv("MEMPROF_LIBNCCL", FAKE_LIBNCCL, 1);
	return fn;
}

/*
 * Two GPUs, world size 2, a 4 KiB buffer: two ranks, 2 KiB shards.  An
 * in-place all-gather: rank 0 sends buffer + 0 into the buffer, rank 1 its
 * own shard of its scratch; a reduce-scatter reduces each buffer into its
 * rank's shard; each in a group, rank 0 on the trace's stream, timed by the
 * fake's events (0.25 ms).
 */
Test(cuda_fake, collectives_run_in_place_over_the_shard_views)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns = 0;

	use_fake();
	fc->n_devices = 2;
	open_fake();
	fn = use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 3, &ns), 0, "%s",
	             err.msg);
	cr_assert_eq(ns, 250000);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_REDUCE_SCATTER, r.addr, 4096, 2, 3, &ns), 0,
	             "%s", err.msg);
	cr_assert_eq(fn->n_init, 1, "the communicators are made once");
	cr_assert_eq(fn->ndev, 2);
	cr_assert_eq(fn->devlist[0], 0);
	cr_assert_eq(fn->n_calls, 4);
	cr_assert_eq(fn->calls[0].kind, 1);
	cr_assert_eq(fn->calls[0].send, r.addr);
	cr_assert_eq(fn->calls[0].recv, r.addr);
	cr_assert_eq(fn->calls[0].count, 2048);
	cr_assert_neq(fn->calls[0].stream, 0, "trace stream 3, not the legacy default stream");
	cr_assert(fn->calls[0].in_group && fn->calls[1].in_group);
	cr_assert_eq(fn->calls[1].rank, 1);
	cr_assert_eq(fn->calls[1].send, fn->calls[1].recv + 2048);
	cr_assert_eq(fn->calls[2].kind, 2);
	cr_assert_eq(fn->calls[2].send, r.addr);
	cr_assert_eq(fn->calls[2].recv, r.addr);
	cr_assert_eq(fn->calls[2].count, 2048);
	cr_assert_eq(fn->calls[2].op, 0, "ncclSum");
	cr_assert_eq(fn->calls[2].stream, fn->calls[0].stream);
	cr_assert_eq(fn->n_groups, 2);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fn->n_destroy, 2);
	cr_assert_eq(fc->primary_retained, 0);
}

/*
 * One GPU: NCCL would have one rank, and a collective on one rank copies a
 * buffer onto itself.  That is no collective: not supported here, NCCL is not
 * even initialised, and nothing is counted as run.
 */
Test(cuda_fake, one_gpu_runs_no_collective)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns = 7;

	open_fake();
	fn = use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 4, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(ns, 0);
	cr_assert_eq(fn->n_init, 0, "NCCL was not initialised for one rank");
	cr_assert_eq(fn->n_calls, 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

/*
 * Three GPUs, world size 2: two ranks (the replay's device and one more,
 * which gets a scratch buffer of its own); rank 1 sends its own shard, at
 * scratch + 2 KiB.  Device 2 is not used.
 */
Test(cuda_fake, ranks_are_one_per_gpu_up_to_the_world_size)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns = 0;

	use_fake();
	fc->n_devices = 3;
	open_fake();
	fn = use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns), 0, "%s",
	             err.msg);
	cr_assert_eq(fn->ndev, 2);
	cr_assert_eq(fn->devlist[0], 0);
	cr_assert_eq(fn->devlist[1], 1);
	cr_assert_eq(fn->n_calls, 2);
	cr_assert_eq(fn->calls[0].send, r.addr);
	cr_assert_eq(fn->calls[0].count, 2048);
	cr_assert_eq(fn->calls[1].rank, 1);
	cr_assert_neq(fn->calls[1].recv, r.addr, "rank 1 works on its scratch buffer");
	cr_assert_eq(fn->calls[1].send, fn->calls[1].recv + 2048);
	cr_assert_eq(fc->live_allocs, 2, "the buffer and rank 1's scratch");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fc->live_allocs, 0, "the scratch is freed at close");
	cr_assert_eq(fc->primary_retained, 0);
	cr_assert_eq(fn->n_destroy, 2);
}

/*
 * A failed ncclCommInitAll keeps nothing (rank 1's context and stream, the
 * events): the next collective initialises again and runs with real
 * communicators, instead of counting ranks whose communicators were never made.
 */
Test(cuda_fake, a_failed_init_is_undone_and_retried)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns = 0;
	int retained, streams, events;

	use_fake();
	fc->n_devices = 2;
	open_fake();
	fn = use_fake_nccl();
	fn->fail_init = 1;
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	retained = fc->primary_retained;
	streams = fc->live_streams;
	events = fc->live_events;
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert(strstr(err.msg, "ncclCommInitAll failed"), "%s", err.msg);
	cr_assert_eq(fc->primary_retained, retained, "rank 1's context is released");
	cr_assert_eq(fc->live_streams, streams, "rank 1's stream is destroyed");
	cr_assert_eq(fc->live_events, events, "the timing events are destroyed");
	cr_assert_eq(fn->n_calls, 0, "no collective ran without communicators");
	fn->fail_init = 0;
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns), 0, "%s",
	             err.msg);
	cr_assert_eq(fn->n_init, 1, "initialised again on the next collective");
	cr_assert_eq(fn->ndev, 2);
	cr_assert_eq(fn->n_calls, 2);
	cr_assert_eq(ns, 250000);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fn->n_destroy, 2);
	cr_assert_eq(fc->primary_retained, 0);
}

/* The CUDA 13 headers map cuEventElapsedTime and cuDeviceGetUuid to their _v2: those are called. */
Test(cuda_fake, the_entry_points_are_the_versions_the_headers_name)
{
	struct memprof_region r;
	uint64_t ns = 0;

	open_fake();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->time_begin(be), 0, "%s", err.msg);
	cr_assert_eq(ops->memset(be, r.addr, 0, 4096, 0), 0, "%s", err.msg);
	cr_assert_eq(ops->time_end(be, &ns), 0, "%s", err.msg);
	cr_assert_geq(ns, 250000, "the host time of the call plus the fake's 0.25 ms");
	cr_assert_gt(fc->n_elapsed_v2, 0, "cuEventElapsedTime_v2 was called");
	cr_assert_eq(fc->n_elapsed_v1, 0, "the v1 entry point was not");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, collectives_without_nccl_are_not_supported)
{
	struct memprof_region r;
	uint64_t ns = 7;

	open_fake();
	setenv("MEMPROF_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 4, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(ns, 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, a_failing_nccl_is_named)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns;

	use_fake();
	fc->n_devices = 2;
	open_fake();
	fn = use_fake_nccl();
	fn->fail_init = 1;
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 4, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert(strstr(err.msg, "ncclCommInitAll failed: unhandled cuda error"), "%s", err.msg);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

/*
 * 'replay --mpi': the calls memprof makes to a fake NCCL as one rank of a
 * group whose other ranks are played by the test's allreduce_max (the
 * launcher's round): by default each peer is on a GPU of its own.
 */
enum peers { PEERS_OWN_GPUS, PEERS_SAME_GPU, PEER_WITHOUT_NCCL, LAUNCHER_FAILS };

static struct {
	enum peers mode;
	int n_rounds, n_values;
} launcher;

/* v[r] is rank r's GPU key, v[size] the worst verdict (cuda_collective_group.c). */
static int fake_allreduce_max(void *ctx, int64_t *v, int n)
{
	struct mp_rank_group *g = ctx;

	launcher.n_rounds++;
	launcher.n_values = n;
	if (launcher.mode == LAUNCHER_FAILS)
		return -1;
	for (int i = 0; i < g->size; i++)
		if (i != g->rank)
			v[i] = launcher.mode == PEERS_SAME_GPU ? v[g->rank] : 1000 + i;
	if (launcher.mode == PEER_WITHOUT_NCCL && v[g->size] < 1)
		v[g->size] = 1;
	return 0;
}

static struct mp_rank_group group;

/* Rank `rank` of `size` on GPU `gpu` of n_gpus; the id rank 0 made. */
static void open_in_group(int rank, int size, int gpu, int n_gpus, enum peers mode)
{
	struct mp_backend_options o = {.device = gpu, .err = &err, .group = &group};

	use_fake();
	fc->n_devices = n_gpus;
	group = (struct mp_rank_group){.rank = rank,
	                               .size = size,
	                               .local_rank = rank,
	                               .allreduce_max = fake_allreduce_max,
	                               .ctx = &group,
	                               .have_nccl_id = 1};
	for (int i = 0; i < MP_NCCL_UNIQUE_ID_BYTES; i++)
		group.nccl_id[i] = (unsigned char)(255 - i);
	launcher.mode = mode;
	launcher.n_rounds = 0;
	mp_err_clear(&err);
	cr_assert_eq(ops->open(&o, &be), 0, "%s", err.msg);
}

/*
 * Rank 1 of 2 on GPU 1, a 4 KiB buffer: one ncclCommInitRankConfig (rank
 * 1, 2 ranks, the group's id, non-blocking, polled until it is ready),
 * never ncclCommInitAll; each collective in place on the real buffer with
 * the 2 KiB shard of rank 1 at buffer + 2 KiB, on the trace's stream,
 * outside any NCCL group; the ranks compare GPUs once.
 */
Test(cuda_fake, a_group_rank_inits_with_its_rank_and_the_id_and_runs_on_its_own_buffer)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns = 0;

	open_in_group(1, 2, 1, 2, PEERS_OWN_GPUS);
	fn = use_fake_nccl();
	fn->init_polls = 3;
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 8, 3, &ns), 0, "%s",
	             err.msg);
	cr_assert_eq(ns, 250000);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_REDUCE_SCATTER, r.addr, 4096, 8, 3, &ns), 0,
	             "%s", err.msg);
	cr_assert_eq(fn->n_init, 0, "never ncclCommInitAll in a group");
	cr_assert_eq(fn->n_init_rank_config, 1, "one communicator for the backend");
	cr_assert_eq(fn->init_nranks, 2);
	cr_assert_eq(fn->init_rank, 1);
	cr_assert_eq(memcmp(fn->init_id, group.nccl_id, MP_NCCL_UNIQUE_ID_BYTES), 0);
	cr_assert_eq(fn->config_blocking, 0, "non-blocking, so that it can time out");
	cr_assert_eq(fn->config_magic, 0xcafebeefu);
	cr_assert_eq(fn->config_version, 21400u);
	cr_assert_geq(fn->n_async_queries, 4, "polled until it left ncclInProgress");
	cr_assert_eq(launcher.n_rounds, 1, "the GPUs are compared once");
	cr_assert_eq(launcher.n_values, 3, "a key per rank and the verdict");
	cr_assert_eq(fn->n_calls, 2);
	cr_assert_eq(fn->calls[0].kind, 1);
	cr_assert_eq(fn->calls[0].send, r.addr + 2048, "rank 1's shard");
	cr_assert_eq(fn->calls[0].recv, r.addr, "in place on the real buffer");
	cr_assert_eq(fn->calls[0].count, 2048, "the shard's bytes (int8)");
	cr_assert_eq(fn->calls[0].datatype, 0, "ncclInt8");
	cr_assert_neq(fn->calls[0].stream, 0, "trace stream 3, not the legacy default stream");
	cr_assert(!fn->calls[0].in_group && !fn->calls[1].in_group);
	cr_assert_eq(fn->calls[1].kind, 2);
	cr_assert_eq(fn->calls[1].send, r.addr);
	cr_assert_eq(fn->calls[1].recv, r.addr + 2048);
	cr_assert_eq(fn->calls[1].count, 2048);
	cr_assert_eq(fn->calls[1].op, 0, "ncclSum");
	cr_assert_eq(fn->calls[1].stream, fn->calls[0].stream);
	cr_assert_eq(fc->live_allocs, 1, "no scratch buffer: only the replay's");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fn->n_destroy, 1);
	cr_assert_eq(fn->n_abort, 0);
	cr_assert_eq(fc->primary_retained, 0);
	cr_assert_eq(fc->live_events, 0);
}

Test(cuda_fake, the_unique_id_comes_from_ncclGetUniqueId)
{
	unsigned char id[MP_NCCL_UNIQUE_ID_BYTES] = {0};
	struct fakenccl *fn = use_fake_nccl();

#ifndef HAVE_CUDA
	cr_skip_test("memprof was built without CUDA");
#endif
	mp_err_clear(&err);
	cr_assert_eq(mp_cuda_nccl_unique_id(id, &err), 0, "%s", err.msg);
	cr_assert_eq(fn->n_unique_id, 1);
	for (int i = 0; i < MP_NCCL_UNIQUE_ID_BYTES; i++)
		cr_assert_eq(id[i], (unsigned char)(i * 7 + 1), "byte %d", i);
	fn->fail_unique_id = 1;
	cr_assert_eq(mp_cuda_nccl_unique_id(id, &err), MP_EIO);
	cr_assert(strstr(err.msg, "ncclGetUniqueId failed: unhandled system error"), "%s", err.msg);
}

Test(cuda_fake, no_unique_id_without_nccl)
{
	unsigned char id[MP_NCCL_UNIQUE_ID_BYTES];

#ifndef HAVE_CUDA
	cr_skip_test("memprof was built without CUDA");
#endif
	setenv("MEMPROF_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	mp_err_clear(&err);
	cr_assert_eq(mp_cuda_nccl_unique_id(id, &err), MP_EIO);
	cr_assert(strstr(err.msg, "no NCCL unique id: NCCL not found (/nonexistent/libnccl.so.2"),
	          "%s", err.msg);
}

/* Without NCCL here the rank still takes part in the round, then all skip. */
Test(cuda_fake, a_group_without_nccl_skips_the_collectives_on_every_rank)
{
	struct memprof_region r;
	uint64_t ns = 7;

	open_in_group(0, 2, 0, 2, PEERS_OWN_GPUS);
	setenv("MEMPROF_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(ns, 0);
	cr_assert_eq(launcher.n_rounds, 1, "it told the others");
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(launcher.n_rounds, 1, "once: the verdict is kept");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, a_peer_without_nccl_or_no_id_skips_the_collectives_here_too)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns;

	open_in_group(0, 2, 0, 2, PEER_WITHOUT_NCCL);
	fn = use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(fn->n_init_rank_config + fn->n_init_rank, 0, "no init to wait in");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);

	open_in_group(1, 2, 1, 2, PEERS_OWN_GPUS);
	group.have_nccl_id = 0; /* rank 0 could not make one */
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_ENOTSUP);
	cr_assert_eq(fn->n_init_rank_config + fn->n_init_rank, 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, a_failed_init_rank_is_named_with_ncclS_message_and_aborted)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns;

	open_in_group(0, 2, 0, 2, PEERS_OWN_GPUS);
	fn = use_fake_nccl();
	fn->fail_init = 1;
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert_str_eq(err.msg, "cuda backend: ncclCommInitRankConfig failed: unhandled cuda "
	                          "error (NCCL: Cuda failure 'out of memory')");
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT, "a failed communicator is not used again");
	cr_assert_eq(fn->n_calls, 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fn->n_abort, 1, "a failed communicator is aborted, not destroyed");
	cr_assert_eq(fn->n_destroy, 0);
}

/* A peer that never arrives: the init is given up after MEMPROF_NCCL_TIMEOUT. */
Test(cuda_fake, an_init_no_peer_joins_times_out_instead_of_hanging, .timeout = 20)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns;

	open_in_group(1, 2, 1, 2, PEERS_OWN_GPUS);
	fn = use_fake_nccl();
	fn->init_hangs = 1;
	setenv("MEMPROF_NCCL_TIMEOUT", "0.2", 1);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert(strstr(err.msg, "ncclCommInitRankConfig (rank 1 of 2): not every rank joined "
	                          "within 0.2 s (MEMPROF_NCCL_TIMEOUT)"),
	          "%s", err.msg);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
	cr_assert_eq(fn->n_abort, 1);
	unsetenv("MEMPROF_NCCL_TIMEOUT");
}

/* Two ranks on one GPU: said before NCCL is asked, the same on every rank. */
Test(cuda_fake, two_ranks_on_one_gpu_are_named_before_nccl_is_asked)
{
	struct fakenccl *fn;
	struct memprof_region r;
	uint64_t ns;

	open_in_group(1, 2, 0, 1, PEERS_SAME_GPU);
	fn = use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert_str_eq(err.msg,
	                 "cuda backend: ranks 0 and 1 are on the same GPU (GPU 0, "
	                 "GPU-00ababab-abab-abab-abab-abababababab): NCCL needs a GPU of its own "
	                 "for each rank (rank 1, local rank 1, sees 1 GPU here): run at most as "
	                 "many ranks per host as it has GPUs");
	cr_assert_eq(fn->n_init_rank_config + fn->n_init_rank + fn->n_init, 0);
	cr_assert_gt(fc->n_uuid_v2, 0, "cuDeviceGetUuid_v2, as the CUDA 13 headers name it");
	cr_assert_eq(fc->n_uuid_v1, 0);
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}

Test(cuda_fake, a_failing_launcher_or_uneven_shards_fail_the_collective)
{
	struct memprof_region r;
	uint64_t ns;

	open_in_group(0, 2, 0, 2, LAUNCHER_FAILS);
	use_fake_nccl();
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 2, 0, &ns),
	             MEMPROF_POOL_EFAULT);
	cr_assert_str_eq(err.msg, "cuda backend: the ranks could not compare their GPUs");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);

	open_in_group(0, 3, 0, 3, PEERS_OWN_GPUS);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->collective(be, MEMPROF_POOL_ALL_GATHER, r.addr, 4096, 3, 0, &ns),
	             MEMPROF_POOL_EINVAL);
	cr_assert(strstr(err.msg, "a 4096-byte collective does not split into 3 equal shards"),
	          "%s", err.msg);
	cr_assert_eq(launcher.n_rounds, 0, "refused the same on every rank, before any round");
	cr_assert_eq(ops->release(be, &r), 0);
	ops->close(be);
}
