/*
 * replay/cost_model.c - the modelled cost of each backend call on an
 * H100-class GPU, for backends that cannot measure it (sim, host).  Each
 * figure says where it came from; where no published figure was found it
 * says it is an estimate and why.  memprof-replay(1), section COST MODEL,
 * prints the same table: change both together.  Pure and thread-safe.
 */
#include "replay/cost_model.h"

#define MIB2 (2ull << 20)

/*
 * A call costs fixed_ns, plus per_chunk_ns for every started 2 MiB chunk
 * (chunked calls), or for every whole 2 MiB past nothing (sized calls), plus
 * n_bytes / bytes_per_ns (calls that move or cover bytes).
 */
enum cost_shape { SHAPE_FIXED, SHAPE_SIZED, SHAPE_CHUNKED, SHAPE_BANDWIDTH };

struct cost_row {
	const char *name;
	enum cost_shape shape;
	uint64_t fixed_ns;
	uint64_t per_chunk_ns;
	uint64_t bytes_per_us; /* SHAPE_BANDWIDTH: bytes moved per microsecond */
};

/*
 * Sources, cited as [n] below:
 * [1] github.com/proteneer/timemachine pull request 1300, nsys "CUDA API
 *     Statistics" (GPU not named): cudaMalloc median 12,972 ns over 1,479
 *     calls; cudaFree median 9,766 ns over 1,483; cudaMemsetAsync median
 *     8,810 ns over 720.
 * [2] github.com/magnate3/linux-riscv-dev, nccl/gpu/shm/bench_vmm/README.md,
 *     VMM latency benchmark, 4,096 pages of 2 MiB, one thread.  Run on an
 *     A100 (84 GB free): cuMemAddressReserve(8 GB) 19 us, cuMemCreate avg
 *     193 us, cuMemMap 1.45 us, cuMemSetAccess 36 us, cuMemUnmap 25.6 us.
 *     Second run (25 GB free, GPU not named): cuMemAddressReserve 9 us,
 *     cuMemCreate 7.58 us, cuMemMap 1.05 us, cuMemSetAccess 20.8 us,
 *     cuMemUnmap 11.45 us.  We take the second run: a replay maps and
 *     unmaps the same physical memory over and over, and the first run's
 *     cuMemCreate looks like a first touch of fresh memory (an estimate of
 *     ours: the README does not say why the runs differ).
 * [3] github.com/JuliaGPU/CUDA.jl pull request 746, "Allocator timings" on
 *     the stream-ordered allocator (cudaMallocAsync): alloc 1.68 us and free
 *     1.19 us on average over 8.79 million calls (GPU not named); pull
 *     request 792 reports about 1 us for an 8-byte allocation.
 * [4] NVIDIA H100 Tensor Core GPU datasheet: H100 SXM HBM3 bandwidth
 *     3.35 TB/s.
 * [5] NVIDIA developer blog, "Using the NVIDIA CUDA Stream-Ordered Memory
 *     Allocator, Part 1" (2021): cudaFree synchronises the device, which
 *     cudaFreeAsync avoids; no per-call figures.
 */
static const struct cost_row cost_table[MP_COST_N_CALLS] = {
        /*
         * cudaMalloc: 13 us [1], plus, an estimate, 8.6 us for every whole
         * 2 MiB: the driver creates and maps the pages as cuMemCreate and
         * cuMemMap do (7.58 + 1.05 us per 2 MiB [2]); no published figure by
         * size was found.
         */
        [MP_COST_RESERVE] = {"cudaMalloc", SHAPE_SIZED, 13000, 8630, 0},
        /*
         * cudaFree: 9.8 us [1], plus its device synchronisation [5] as
         * cudaStreamSynchronize below (2 us: an idle device, since a replay
         * has no kernels to wait for), plus, an estimate, 11.45 us per whole
         * 2 MiB unmapped (cuMemUnmap [2]).
         */
        [MP_COST_RELEASE] = {"cudaFree", SHAPE_SIZED, 9800 + 2000, 11450, 0},
        /* cuMemAddressReserve: 19 us for 8 GB on an A100 [2] (9 us in the second run). */
        [MP_COST_VA_RESERVE] = {"cuMemAddressReserve", SHAPE_FIXED, 19000, 0, 0},
        /*
         * cuMemAddressFree: an estimate, 10 us: no published figure was found;
         * taken as the order of cuMemAddressReserve (address-space bookkeeping only).
         */
        [MP_COST_VA_RELEASE] = {"cuMemAddressFree", SHAPE_FIXED, 10000, 0, 0},
        /* Per 2 MiB chunk: cuMemCreate 7.58 + cuMemMap 1.05 + cuMemSetAccess 20.8 us [2]. */
        [MP_COST_MAP] = {"cuMemCreate+cuMemMap+cuMemSetAccess", SHAPE_CHUNKED, 0, 29430, 0},
        /*
         * Per 2 MiB chunk: cuMemUnmap 11.45 us [2] plus cuMemRelease, an
         * estimate of 5 us: no published figure was found.
         */
        [MP_COST_UNMAP] = {"cuMemUnmap+cuMemRelease", SHAPE_CHUNKED, 0, 16450, 0},
        /* cudaMallocAsync from a warm pool: 1.7 us [3]. */
        [MP_COST_ALLOC_ASYNC] = {"cudaMallocAsync", SHAPE_FIXED, 1700, 0, 0},
        /* cudaFreeAsync: 1.2 us [3]. */
        [MP_COST_FREE_ASYNC] = {"cudaFreeAsync", SHAPE_FIXED, 1200, 0, 0},
        /*
         * cudaMemsetAsync: 8.8 us to issue [1], plus the bytes written at
         * 3.0 TB/s: 90% of 3.35 TB/s [4] (the 90% is an estimate of what a
         * streaming write reaches).
         */
        [MP_COST_MEMSET] = {"cudaMemsetAsync", SHAPE_BANDWIDTH, 8800, 0, 3000000},
        /*
         * cudaMemcpyAsync device to device: an estimate of 8.8 us to issue (as
         * cudaMemsetAsync [1]; no published figure was found), plus the bytes
         * at 1.5 TB/s: each byte is read and written, so half of the 3.0 TB/s
         * streaming rate above [4].
         */
        [MP_COST_COPY] = {"cudaMemcpyAsync", SHAPE_BANDWIDTH, 8800, 0, 1500000},
        /*
         * cudaStreamSynchronize / cudaDeviceSynchronize of an idle device: an
         * estimate of 2 us (a round trip to the device); no published figure
         * was found.  Waiting for real kernels cannot be modelled from a trace.
         */
        [MP_COST_SYNC] = {"cudaStreamSynchronize", SHAPE_FIXED, 2000, 0, 0},
};

uint64_t mp_cost_ns(enum mp_cost_call call, uint64_t n_bytes)
{
	const struct cost_row *r;
	uint64_t n_chunks;

	if ((unsigned)call >= MP_COST_N_CALLS)
		return 0;
	r = &cost_table[call];
	switch (r->shape) {
	case SHAPE_SIZED:
		return r->fixed_ns + (n_bytes / MIB2) * r->per_chunk_ns;
	case SHAPE_CHUNKED:
		n_chunks = n_bytes / MIB2 + (n_bytes % MIB2 != 0);
		return r->fixed_ns + (n_chunks ? n_chunks : 1) * r->per_chunk_ns;
	case SHAPE_BANDWIDTH:
		/* n_bytes / (bytes_per_us / 1000) ns, without overflow for any n_bytes */
		return r->fixed_ns + n_bytes / r->bytes_per_us * 1000 +
		       n_bytes % r->bytes_per_us * 1000 / r->bytes_per_us;
	case SHAPE_FIXED:
		break;
	}
	return r->fixed_ns;
}

const char *mp_cost_call_name(enum mp_cost_call call)
{
	if ((unsigned)call >= MP_COST_N_CALLS)
		return "unknown";
	return cost_table[call].name;
}
