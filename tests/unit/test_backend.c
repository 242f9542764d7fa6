/*
 * tests/unit/test_backend.c - the replay backends and the cost model: the
 * host backend on real memory (checked with mincore and by touching pages),
 * the sim backend's synthetic ranges, the cuda backend failing cleanly on a
 * machine without a driver, and the cost model's shape and arithmetic.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "replay/backend.h"
#include "replay/cost_model.h"

#define MIB (1ull << 20)

static struct mp_error err;
static struct mp_backend *be;
static const struct mp_backend_ops *ops;

static void open_backend(const struct mp_backend_ops *o)
{
	struct mp_backend_options opts = {.device = 0, .err = &err};

	mp_err_clear(&err);
	ops = o;
	cr_assert_eq(ops->open(&opts, &be), 0, "%s: %s", ops->name, err.msg);
	cr_assert_not_null(be);
}

static unsigned char *ptr(uint64_t addr)
{
	return (unsigned char *)(uintptr_t)addr;
}

/* 1 when the kernel has no mapping at [addr, addr + n) (mincore fails with ENOMEM). */
static int unmapped(uint64_t addr, uint64_t n)
{
	unsigned char vec[4096];

	errno = 0;
	return mincore(ptr(addr), (size_t)n, vec) == -1 && errno == ENOMEM;
}

/* Resident pages of [addr, addr + n), n at most 4096 pages. */
static size_t resident_pages(uint64_t addr, uint64_t n)
{
	unsigned char vec[4096];
	size_t page = (size_t)sysconf(_SC_PAGESIZE), count = 0;

	cr_assert_eq(mincore(ptr(addr), (size_t)n, vec), 0);
	for (size_t i = 0; i < (n + page - 1) / page; i++)
		count += vec[i] & 1;
	return count;
}

Test(backend, table_finds_every_backend)
{
	cr_assert_eq(mp_backend_find("sim"), &mp_backend_sim);
	cr_assert_eq(mp_backend_find("host"), &mp_backend_host);
	cr_assert_eq(mp_backend_find("cuda"), &mp_backend_cuda);
	cr_assert_null(mp_backend_find("gpu"));
	cr_assert_eq(mp_backend_host.granularity_bytes, 2 * MIB);
	cr_assert_null(mp_backend_host.alloc_async);
	cr_assert_eq(mp_backend_host.measures_time, 0);
	cr_assert_eq(mp_backend_cuda.measures_time, 1);
}

Test(host, reserve_is_real_memory_and_release_unmaps_it)
{
	struct memprof_region r;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, 10000, &r), 0);
	cr_assert_neq(r.addr, 0);
	cr_assert_eq(r.addr % (uint64_t)sysconf(_SC_PAGESIZE), 0);
	cr_assert_eq(r.size_bytes, 10000);
	for (int i = 0; i < 10000; i++)
		ptr(r.addr)[i] = (unsigned char)(i * 13);
	for (int i = 0; i < 10000; i++)
		cr_assert_eq(ptr(r.addr)[i], (unsigned char)(i * 13));
	cr_assert_not(unmapped(r.addr, 10000));
	cr_assert_eq(ops->release(be, &r), 0);
	cr_assert(unmapped(r.addr, 10000));
	ops->close(be);
}

Test(host, memset_and_copy_do_the_work)
{
	struct memprof_region a, b;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, 8192, &a), 0);
	cr_assert_eq(ops->reserve(be, 8192, &b), 0);
	cr_assert_eq(ops->memset(be, a.addr + 100, 0xab, 1000, 0), 0);
	cr_assert_eq(ptr(a.addr)[99], 0);
	cr_assert_eq(ptr(a.addr)[100], 0xab);
	cr_assert_eq(ptr(a.addr)[1099], 0xab);
	cr_assert_eq(ptr(a.addr)[1100], 0);
	for (int i = 0; i < 4096; i++)
		ptr(a.addr)[i] = (unsigned char)(i * 7 + 1);
	cr_assert_eq(ops->copy(be, b.addr + 10, a.addr, 4096, 3), 0);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(ptr(b.addr)[10 + i], (unsigned char)(i * 7 + 1));
	cr_assert_eq(ptr(b.addr)[9], 0);
	/* overlapping, as a compacting pool moves a block down */
	cr_assert_eq(ops->copy(be, a.addr, a.addr + 1, 4095, 0), 0);
	for (int i = 0; i < 4095; i++)
		cr_assert_eq(ptr(a.addr)[i], (unsigned char)((i + 1) * 7 + 1));
	cr_assert_eq(ops->release(be, &a), 0);
	cr_assert_eq(ops->release(be, &b), 0);
	ops->close(be);
}

Test(host, map_makes_chunks_usable_and_unmap_gives_them_back)
{
	struct memprof_region va;
	uint64_t chunk;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->va_reserve(be, 8 * MIB, &va), 0);
	cr_assert_eq(va.addr % (2 * MIB), 0);
	cr_assert_eq(resident_pages(va.addr, 8 * MIB), 0);
	chunk = va.addr + 2 * MIB;
	cr_assert_eq(ops->map(be, &va, 2 * MIB, 4 * MIB), 0);
	memset(ptr(chunk), 0x5a, 4 * MIB);
	cr_assert_eq(ptr(chunk)[4 * MIB - 1], 0x5a);
	cr_assert_geq(resident_pages(chunk, 4 * MIB), 1);
	cr_assert_eq(ops->unmap(be, &va, 2 * MIB, 2 * MIB), 0);
	cr_assert_eq(resident_pages(chunk, 2 * MIB), 0);
	cr_assert_eq(ptr(chunk + 2 * MIB)[0], 0x5a); /* the other chunk is still mapped */
	/* mapped again, the chunk is fresh zeroed memory: the old pages were given back */
	cr_assert_eq(ops->map(be, &va, 2 * MIB, 2 * MIB), 0);
	cr_assert_eq(ptr(chunk)[0], 0);
	cr_assert_eq(ptr(chunk)[2 * MIB - 1], 0);
	cr_assert_eq(ops->unmap(be, &va, 2 * MIB, 4 * MIB), 0);
	cr_assert_eq(ops->va_release(be, &va), 0);
	cr_assert(unmapped(va.addr, 8 * MIB));
	ops->close(be);
}

Test(host, unmapped_chunk_faults_on_access, .signal = SIGSEGV)
{
	struct memprof_region va;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->va_reserve(be, 4 * MIB, &va), 0);
	cr_assert_eq(ops->map(be, &va, 0, 2 * MIB), 0);
	ptr(va.addr)[0] = 1;
	cr_assert_eq(ops->unmap(be, &va, 0, 2 * MIB), 0);
	signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler: the test expects the signal */
	*(volatile unsigned char *)ptr(va.addr) = 2; /* PROT_NONE again: SIGSEGV */
}

Test(host, bad_map_ranges_are_refused_with_a_reason)
{
	struct memprof_region va;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->va_reserve(be, 4 * MIB, &va), 0);
	cr_assert_eq(ops->map(be, &va, 4096, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert(strstr(err.msg, "2 MiB-aligned") != NULL, "%s", err.msg);
	cr_assert_eq(ops->map(be, &va, 2 * MIB, 4 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->map(be, &va, 0, 3 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->va_release(be, &va), 0);
	ops->close(be);
}

Test(host, impossible_reservation_is_enomem_with_the_cause)
{
	struct memprof_region r;
	struct memprof_region bogus = {.addr = 0, .size_bytes = 10, .token = 4096};

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, 1ull << 62, &r), MEMPROF_POOL_ENOMEM);
	cr_assert_eq(err.code, MP_ENOMEM);
	cr_assert(strstr(err.msg, "mmap") != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, strerror(ENOMEM)) != NULL, "%s", err.msg);
	cr_assert_eq(ops->release(be, &bogus), MEMPROF_POOL_EINVAL);
	ops->close(be);
}

/* A small block, at an odd address: overwrites at its first, middle and last byte are caught. */
Test(host, pattern_catches_overwrites_of_a_small_block)
{
	struct memprof_region r;
	const uint64_t n = 4096 + 5;
	const uint64_t at[] = {0, n / 2, n - 1};
	uint64_t blk;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, 3 * 4096, &r), 0);
	blk = r.addr + 3;
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		cr_assert_eq(ops->fill_pattern(be, blk, n, 42), 0);
		cr_assert_eq(ops->check_pattern(be, blk, n, 42), 1);
		ptr(blk)[at[i]] ^= 0x01;
		cr_assert_eq(ops->check_pattern(be, blk, n, 42), 0, "overwrite at %llu missed",
		             (unsigned long long)at[i]);
	}
	/* the bytes around the block were left alone */
	cr_assert_eq(ptr(r.addr)[2], 0);
	cr_assert_eq(ptr(blk)[n], 0);
	ops->close(be);
}

Test(host, pattern_depends_on_the_tag_and_repeats_every_word)
{
	struct memprof_region r;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, 4096, &r), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, 4096, 7), 0);
	for (int i = 8; i < 4096; i++)
		cr_assert_eq(ptr(r.addr)[i], ptr(r.addr)[i % 8]);
	cr_assert_eq(ops->check_pattern(be, r.addr, 4096, 8), 0); /* another block's tag */
	cr_assert_eq(ops->check_pattern(be, r.addr, 4096, 7), 1);
	ops->close(be);
}

/* Larger than 1 MiB: the first and last 64 KiB and one word every 4 KiB are checked. */
Test(host, pattern_samples_a_large_block_as_documented)
{
	struct memprof_region r;
	const uint64_t n = 4 * MIB + 100;
	const uint64_t word = 64 * 1024 + 10 * 4096;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, n, &r), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 99), 0);
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 99), 1);
	ptr(r.addr)[n - 1] ^= 0xff; /* last byte */
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 99), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 99), 0);
	ptr(r.addr)[64 * 1024 - 1] ^= 0xff; /* end of the first 64 KiB */
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 99), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 99), 0);
	ptr(r.addr)[word + 7] ^= 0xff; /* inside a sampled word in the middle */
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 99), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, n, 99), 0);
	ptr(r.addr)[word + 100] ^= 0xff; /* between samples: not checked, as documented */
	cr_assert_eq(ops->check_pattern(be, r.addr, n, 99), 1);
	cr_assert_eq(ptr(r.addr)[word + 8], 0); /* and never written */
	ops->close(be);
}

Test(host, a_block_of_1_mib_is_patterned_whole)
{
	struct memprof_region r;

	open_backend(&mp_backend_host);
	cr_assert_eq(ops->reserve(be, MIB, &r), 0);
	cr_assert_eq(ops->fill_pattern(be, r.addr, MIB, 5), 0);
	ptr(r.addr)[MIB / 2 + 100] ^= 0x10;
	cr_assert_eq(ops->check_pattern(be, r.addr, MIB, 5), 0);
	ops->close(be);
}

Test(sim, synthetic_ranges_step_back_and_never_overlap)
{
	struct memprof_region a, b, c, va;

	open_backend(&mp_backend_sim);
	cr_assert_eq(ops->reserve(be, 1000, &a), 0);
	cr_assert_eq(ops->reserve(be, 3000, &b), 0);
	cr_assert_geq(a.addr, 1ull << 40);
	cr_assert_eq(a.addr % 512, 0);
	cr_assert_eq(b.addr % 512, 0);
	cr_assert_geq(b.addr, a.addr + 1000);
	cr_assert_eq(ops->release(be, &b), 0);
	cr_assert_eq(ops->reserve(be, 3000, &c), 0);
	cr_assert_eq(c.addr, b.addr); /* the newest range was given back: reused */
	cr_assert_eq(ops->va_reserve(be, 8 * MIB, &va), 0);
	cr_assert_eq(va.addr % (2 * MIB), 0);
	cr_assert_eq(ops->map(be, &va, 2 * MIB, 2 * MIB), 0);
	cr_assert_eq(ops->map(be, &va, 4096, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->map(be, &va, 8 * MIB, 2 * MIB), MEMPROF_POOL_EINVAL);
	cr_assert_eq(ops->memset(be, a.addr, 0, 1000, 0), 0); /* never dereferenced */
	cr_assert_null(ops->fill_pattern);
	cr_assert_null(ops->alloc_async);
	ops->close(be);
}

Test(cuda, without_a_driver_it_says_so_and_does_not_open)
{
	struct mp_backend_options opts = {.device = 0, .err = &err};
	char why[512] = "";
	void *dl = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (dl) {
		dlclose(dl);
		cr_skip_test("libcuda.so.1 loads here: see tests/gpu/ for the GPU tests");
	}
	cr_assert_eq(mp_backend_cuda_usable(why, sizeof why), 0);
#ifdef HAVE_CUDA
	cr_assert(strncmp(why, "no NVIDIA driver found (libcuda.so.1: ", 38) == 0, "%s", why);
#else
	cr_assert_str_eq(why, "memprof was built without CUDA");
#endif
	mp_err_clear(&err);
	be = (struct mp_backend *)&err; /* must be cleared */
	cr_assert_lt(mp_backend_cuda.open(&opts, &be), 0);
	cr_assert_null(be);
	cr_assert_lt(err.code, 0);
	cr_assert_str_eq(err.msg, why);
	/* asking twice gives the same answer, and a tiny buffer is not overrun */
	cr_assert_eq(mp_backend_cuda_usable(why, 8), 0);
	cr_assert_eq(strlen(why), 7);
}

Test(cost, every_call_has_a_distinct_name_and_a_cost)
{
	for (int i = 0; i < MP_COST_N_CALLS; i++) {
		const char *name = mp_cost_call_name((enum mp_cost_call)i);

		cr_assert(name && *name && strcmp(name, "unknown") != 0, "call %d", i);
		cr_assert_gt(mp_cost_ns((enum mp_cost_call)i, 0), 0, "%s costs nothing", name);
		for (int k = 0; k < i; k++)
			cr_assert_str_neq(name, mp_cost_call_name((enum mp_cost_call)k));
	}
	cr_assert_str_eq(mp_cost_call_name(MP_COST_RESERVE), "cudaMalloc");
	cr_assert_str_eq(mp_cost_call_name(MP_COST_N_CALLS), "unknown");
	cr_assert_eq(mp_cost_ns(MP_COST_N_CALLS, 100), 0);
}

Test(cost, memset_and_copy_grow_with_bytes)
{
	const uint64_t sizes[] = {0,       1,          4096,        MIB,
	                          2 * MIB, 1ull << 30, 64ull << 30, UINT64_MAX / 2};
	const enum mp_cost_call calls[] = {MP_COST_MEMSET,  MP_COST_COPY, MP_COST_RESERVE,
	                                   MP_COST_RELEASE, MP_COST_MAP,  MP_COST_UNMAP};

	for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++)
		for (size_t i = 1; i < sizeof sizes / sizeof sizes[0]; i++)
			cr_assert_geq(mp_cost_ns(calls[c], sizes[i]),
			              mp_cost_ns(calls[c], sizes[i - 1]), "%s at %llu bytes",
			              mp_cost_call_name(calls[c]), (unsigned long long)sizes[i]);
	cr_assert_gt(mp_cost_ns(MP_COST_MEMSET, 1ull << 30), mp_cost_ns(MP_COST_MEMSET, MIB));
	cr_assert_gt(mp_cost_ns(MP_COST_COPY, 1ull << 30), mp_cost_ns(MP_COST_COPY, MIB));
}

Test(cost, bandwidth_arithmetic)
{
	/* memset: 8.8 us + bytes at 3.0 TB/s; copy: 8.8 us + bytes at 1.5 TB/s */
	double gib = 1073741824.0;
	double memset_ns = 8800 + gib / 3.0e12 * 1e9, copy_ns = 8800 + gib / 1.5e12 * 1e9;

	cr_assert_leq(
	        llabs((long long)mp_cost_ns(MP_COST_MEMSET, 1ull << 30) - (long long)memset_ns), 1);
	cr_assert_leq(llabs((long long)mp_cost_ns(MP_COST_COPY, 1ull << 30) - (long long)copy_ns),
	              1);
	/* a copy moves each byte twice (read and write): twice the memset's byte time */
	cr_assert_leq(llabs((long long)(mp_cost_ns(MP_COST_COPY, 1ull << 30) - 8800) -
	                    2 * (long long)(mp_cost_ns(MP_COST_MEMSET, 1ull << 30) - 8800)),
	              2);
}

Test(cost, map_is_per_started_chunk_and_free_includes_the_sync)
{
	uint64_t chunk = mp_cost_ns(MP_COST_MAP, 2 * MIB);

	cr_assert_eq(mp_cost_ns(MP_COST_MAP, 1), chunk);
	cr_assert_eq(mp_cost_ns(MP_COST_MAP, 0), chunk);
	cr_assert_eq(mp_cost_ns(MP_COST_MAP, 2 * MIB + 1), 2 * chunk);
	cr_assert_eq(mp_cost_ns(MP_COST_MAP, 20 * MIB), 10 * chunk);
	cr_assert_eq(mp_cost_ns(MP_COST_UNMAP, 20 * MIB), 10 * mp_cost_ns(MP_COST_UNMAP, 1));
	cr_assert_gt(mp_cost_ns(MP_COST_RELEASE, 0), mp_cost_ns(MP_COST_SYNC, 0));
	/* the reason the async pool exists: a warm cudaMallocAsync beats cudaMalloc */
	cr_assert_lt(mp_cost_ns(MP_COST_ALLOC_ASYNC, MIB), mp_cost_ns(MP_COST_RESERVE, MIB));
	cr_assert_lt(mp_cost_ns(MP_COST_FREE_ASYNC, MIB), mp_cost_ns(MP_COST_RELEASE, MIB));
}
