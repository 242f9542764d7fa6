/*
 * replay/backend_cuda.c - the cuda backend: a real GPU through the CUDA
 * driver API, loaded at run time with dlopen("libcuda.so.1") and never
 * linked (MEMPROF_LIBCUDA names another library: tests load a fake driver),
 * so memprof starts on a machine without a driver and says why the
 * backend is unusable.  Every driver failure is described with the call and
 * the CUresult's name.  It keeps no figures and enforces no capacity (the
 * engine does); it measures device time with events.  Not thread-safe.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/backend.h"

#ifndef HAVE_CUDA

#define NO_CUDA "memprof was built without CUDA"

int mp_backend_cuda_usable(char *why, size_t why_size)
{
	if (why && why_size)
		snprintf(why, why_size, "%s", NO_CUDA);
	return 0;
}

static int nocuda_open(const struct mp_backend_options *o, struct mp_backend **out)
{
	*out = NULL;
	return mp_err(o->err, MP_EINVAL, "%s", NO_CUDA);
}

static void nocuda_close(struct mp_backend *b)
{
	(void)b;
}

const struct mp_backend_ops mp_backend_cuda = {
        .name = "cuda",
        .measures_time = 1,
        .granularity_bytes = 2ull << 20,
        .open = nocuda_open,
        .close = nocuda_close,
};

#else /* HAVE_CUDA */

#include <dlfcn.h>
#include <time.h>

#include <cuda.h>

#include "replay/cuda_api.h"
#include "replay/cuda_collective.h"
#include "util/intmap.h"

#define CU_CHUNK        (2ull << 20)  /* map/unmap chunk: the host's granularity */
#define CU_PATTERN_EDGE (64ull << 10) /* --verify reads back the first and last 64 KiB */

int mp_backend_cuda_usable(char *why, size_t why_size)
{
	char buf[512];
	int n;

	if (mp_cu_probe(buf, sizeof buf, &n))
		return 1;
	if (why && why_size)
		snprintf(why, why_size, "%s", buf);
	return 0;
}

struct mp_backend {
	struct mp_error *err;
	const struct mp_rank_group *group; /* ranks in other processes (NCCL), or NULL */
	CUdevice dev;
	CUcontext ctx; /* dev's primary context */
	int ctx_retained;
	struct mp_cuda_coll *coll; /* NCCL communicators, made by the first collective */
	CUmemAllocationProp prop;  /* pinned device memory on dev, for cuMemCreate */
	CUmemAccessDesc access;    /* read-write from dev */
	struct mp_intmap chunks;   /* mapped chunk address -> CUmemGenericAllocationHandle */
	struct mp_intmap streams;  /* trace stream id -> CUstream */
	CUevent ev_begin, ev_end;
	int timing, timed_device; /* a span is open; a device op recorded its events */
	uint64_t t_begin_ns, op_host_ns;
	CUmemoryPool pool; /* the device's default pool (alloc_async), or NULL */
	int threshold_set;
	cuuint64_t threshold_old;
	unsigned char *readback; /* CU_PATTERN_EDGE bytes for check_pattern */
};

/* Describe a failed driver call; out of memory is the pool's to handle. */
static int cu_fail(struct mp_backend *b, const char *call, CUresult rc)
{
	int oom = rc == CUDA_ERROR_OUT_OF_MEMORY;

	mp_err(b->err, oom ? MP_ENOMEM : MP_EIO, "cuda backend: %s failed: %s", call,
	       mp_cu_name(rc));
	return oom ? MEMPROF_POOL_ENOMEM : MEMPROF_POOL_EFAULT;
}

#define CU_CALL(b, call, args)                                                                     \
	do {                                                                                       \
		CUresult rc_ = mp_cu.call args;                                                    \
		if (rc_ != CUDA_SUCCESS)                                                           \
			return cu_fail((b), "cu" #call, rc_);                                      \
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t round_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

/* Unmap and release every mapped chunk in [from, to) (va_release, close, a failed map). */
static void release_chunks(struct mp_backend *b, uint64_t from, uint64_t to)
{
	uint64_t *found = b->chunks.n ? malloc(b->chunks.n * sizeof *found) : NULL;
	size_t n_found = 0;

	if (!found)
		return;
	for (size_t i = 0; i < b->chunks.cap; i++)
		if (b->chunks.used[i] && b->chunks.keys[i] >= from && b->chunks.keys[i] < to)
			found[n_found++] = b->chunks.keys[i];
	for (size_t i = 0; i < n_found; i++) {
		uint64_t h = 0;

		mp_intmap_get(&b->chunks, found[i], &h);
		mp_cu.MemUnmap((CUdeviceptr)found[i], CU_CHUNK);
		mp_cu.MemRelease((CUmemGenericAllocationHandle)h);
		mp_intmap_del(&b->chunks, found[i]);
	}
	free(found);
}

static void cuda_close(struct mp_backend *b)
{
	if (!b)
		return;
	if (b->ctx_retained) {
		mp_cu.CtxSynchronize();
		mp_cuda_collective_free(b->coll);
		release_chunks(b, 0, UINT64_MAX);
		for (size_t i = 0; i < b->streams.cap; i++)
			if (b->streams.used[i])
				mp_cu.StreamDestroy((CUstream)(uintptr_t)b->streams.vals[i]);
		if (b->pool && b->threshold_set) {
			mp_cu.MemPoolTrimTo(b->pool, 0);
			mp_cu.MemPoolSetAttribute(b->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
			                          &b->threshold_old);
		}
		if (b->ev_begin)
			mp_cu.EventDestroy(b->ev_begin);
		if (b->ev_end)
			mp_cu.EventDestroy(b->ev_end);
		mp_cu.DevicePrimaryCtxRelease(b->dev);
	}
	mp_intmap_free(&b->chunks);
	mp_intmap_free(&b->streams);
	free(b->readback);
	free(b);
}

/* The device's context, events, and what it supports: VMM chunks of CU_CHUNK, a default pool. */
static int cuda_setup(struct mp_backend *b, int device)
{
	size_t gran = 0;

	CU_CALL(b, DeviceGet, (&b->dev, device));
	CU_CALL(b, DevicePrimaryCtxRetain, (&b->ctx, b->dev));
	b->ctx_retained = 1;
	CU_CALL(b, CtxSetCurrent, (b->ctx));
	CU_CALL(b, EventCreate, (&b->ev_begin, CU_EVENT_DEFAULT));
	CU_CALL(b, EventCreate, (&b->ev_end, CU_EVENT_DEFAULT));
	b->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	b->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	b->prop.location.id = b->dev;
	b->access.location = b->prop.location;
	b->access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	/* Without virtual memory support map and friends say so; the rest still works. */
	if (mp_cu.MemGetAllocationGranularity(&gran, &b->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
	            CUDA_SUCCESS ||
	    !gran || CU_CHUNK % gran)
		b->prop.type = CU_MEM_ALLOCATION_TYPE_INVALID;
	if (mp_cu.DeviceGetDefaultMemPool(&b->pool, b->dev) != CUDA_SUCCESS)
		b->pool = NULL;
	return MEMPROF_POOL_OK;
}

static int cuda_open(const struct mp_backend_options *o, struct mp_backend **out)
{
	char why[512];
	int n = 0;
	struct mp_backend *b;

	*out = NULL;
	if (!mp_cu_probe(why, sizeof why, &n))
		return mp_err(o->err, MP_EIO, "%s", why);
	if (o->device < 0 || o->device >= n)
		return mp_err(o->err, MP_EINVAL, "no CUDA device %d: this machine has %d (0 to %d)",
		              o->device, n, n - 1);
	b = calloc(1, sizeof *b);
	if (!b)
		return mp_err(o->err, MP_ENOMEM, "out of memory");
	b->err = o->err;
	b->group = o->group;
	mp_intmap_init(&b->chunks);
	mp_intmap_init(&b->streams);
	b->readback = malloc(CU_PATTERN_EDGE);
	if (!b->readback) {
		cuda_close(b);
		return mp_err(o->err, MP_ENOMEM, "out of memory");
	}
	if (cuda_setup(b, o->device) != MEMPROF_POOL_OK) {
		int code = o->err && o->err->code ? o->err->code : MP_EIO;

		cuda_close(b);
		return code;
	}
	*out = b;
	return 0;
}

/* The CUstream of a trace stream, created on first use; 0 is the legacy default stream. */
static int stream_of(struct mp_backend *b, uint64_t id, CUstream *out)
{
	uint64_t v;
	CUstream s;

	*out = NULL;
	if (id == 0)
		return MEMPROF_POOL_OK;
	if (mp_intmap_get(&b->streams, id, &v)) {
		*out = (CUstream)(uintptr_t)v;
		return MEMPROF_POOL_OK;
	}
	CU_CALL(b, StreamCreate, (&s, CU_STREAM_NON_BLOCKING));
	if (mp_intmap_put(&b->streams, id, (uint64_t)(uintptr_t)s) != 0) {
		mp_cu.StreamDestroy(s);
		mp_err(b->err, MP_ENOMEM, "out of memory");
		return MEMPROF_POOL_EFAULT;
	}
	*out = s;
	return MEMPROF_POOL_OK;
}

static int cuda_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	CUdeviceptr p = 0;

	CU_CALL(b, MemAlloc, (&p, (size_t)(size ? size : 1)));
	out->addr = (uint64_t)p;
	out->size_bytes = size;
	out->token = 0;
	return MEMPROF_POOL_OK;
}

static int cuda_release(struct mp_backend *b, const struct memprof_region *r)
{
	CU_CALL(b, MemFree, ((CUdeviceptr)r->addr));
	return MEMPROF_POOL_OK;
}

/* Inside an open timed span, a device op is bracketed by events on its stream. */
static int op_begin(struct mp_backend *b, CUstream s)
{
	if (!b->timing)
		return MEMPROF_POOL_OK;
	CU_CALL(b, EventRecord, (b->ev_begin, s));
	b->op_host_ns = now_ns();
	return MEMPROF_POOL_OK;
}

static int op_end(struct mp_backend *b, CUstream s)
{
	if (!b->timing)
		return MEMPROF_POOL_OK;
	b->op_host_ns = now_ns() - b->op_host_ns;
	CU_CALL(b, EventRecord, (b->ev_end, s));
	b->timed_device = 1;
	return MEMPROF_POOL_OK;
}

static int cuda_memset(struct mp_backend *b, uint64_t addr, int value, uint64_t n, uint64_t stream)
{
	CUstream s;
	int rc = stream_of(b, stream, &s);

	if (rc == MEMPROF_POOL_OK)
		rc = op_begin(b, s);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	CU_CALL(b, MemsetD8Async, ((CUdeviceptr)addr, (unsigned char)value, (size_t)n, s));
	return op_end(b, s);
}

static int cuda_copy(struct mp_backend *b, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	CUstream s;
	int rc = stream_of(b, stream, &s);

	if (rc == MEMPROF_POOL_OK)
		rc = op_begin(b, s);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	CU_CALL(b, MemcpyDtoDAsync, ((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)n, s));
	return op_end(b, s);
}

static int no_vmm(struct mp_backend *b)
{
	if (b->prop.type != CU_MEM_ALLOCATION_TYPE_INVALID)
		return 0;
	mp_err(b->err, MP_EINVAL,
	       "cuda backend: this device has no virtual memory management in 2 MiB chunks "
	       "(cuMemGetAllocationGranularity)");
	return 1;
}

static int cuda_va_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	CUdeviceptr p = 0;
	uint64_t len = round_up(size ? size : 1, CU_CHUNK);

	if (no_vmm(b))
		return MEMPROF_POOL_ENOTSUP;
	CU_CALL(b, MemAddressReserve, (&p, (size_t)len, (size_t)CU_CHUNK, 0, 0));
	out->addr = (uint64_t)p;
	out->size_bytes = size;
	out->token = len;
	return MEMPROF_POOL_OK;
}

static int cuda_va_release(struct mp_backend *b, const struct memprof_region *va)
{
	release_chunks(b, va->addr, va->addr + va->token);
	CU_CALL(b, MemAddressFree, ((CUdeviceptr)va->addr, (size_t)va->token));
	return MEMPROF_POOL_OK;
}

static int chunk_ok(struct mp_backend *b, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	if (!va->addr || off % CU_CHUNK || n % CU_CHUNK || n > va->size_bytes ||
	    off > va->size_bytes - n) {
		mp_err(b->err, MP_EINVAL,
		       "cuda backend: map/unmap of [%llu, +%llu) is not 2 MiB-aligned inside the "
		       "%llu-byte range",
		       (unsigned long long)off, (unsigned long long)n,
		       (unsigned long long)va->size_bytes);
		return 0;
	}
	return 1;
}

/* One physical chunk at addr: create, map, grant access, and remember its handle. */
static int map_chunk(struct mp_backend *b, uint64_t addr)
{
	CUmemGenericAllocationHandle h;
	CUresult rc;
	const char *call = "cuMemMap";

	if (mp_intmap_get(&b->chunks, addr, NULL)) {
		mp_err(b->err, MP_EINVAL, "cuda backend: the chunk at 0x%llx is already mapped",
		       (unsigned long long)addr);
		return MEMPROF_POOL_EINVAL;
	}
	CU_CALL(b, MemCreate, (&h, (size_t)CU_CHUNK, &b->prop, 0));
	rc = mp_cu.MemMap((CUdeviceptr)addr, CU_CHUNK, 0, h, 0);
	if (rc == CUDA_SUCCESS) {
		call = "cuMemSetAccess";
		rc = mp_cu.MemSetAccess((CUdeviceptr)addr, CU_CHUNK, &b->access, 1);
		if (rc != CUDA_SUCCESS)
			mp_cu.MemUnmap((CUdeviceptr)addr, CU_CHUNK);
	}
	if (rc != CUDA_SUCCESS) {
		mp_cu.MemRelease(h);
		return cu_fail(b, call, rc);
	}
	if (mp_intmap_put(&b->chunks, addr, (uint64_t)h) != 0) {
		mp_cu.MemUnmap((CUdeviceptr)addr, CU_CHUNK);
		mp_cu.MemRelease(h);
		mp_err(b->err, MP_ENOMEM, "out of memory");
		return MEMPROF_POOL_EFAULT;
	}
	return MEMPROF_POOL_OK;
}

static int unmap_chunk(struct mp_backend *b, uint64_t addr)
{
	uint64_t h;

	if (!mp_intmap_get(&b->chunks, addr, &h)) {
		mp_err(b->err, MP_EINVAL, "cuda backend: unmap of the chunk at 0x%llx: not mapped",
		       (unsigned long long)addr);
		return MEMPROF_POOL_EINVAL;
	}
	CU_CALL(b, MemUnmap, ((CUdeviceptr)addr, (size_t)CU_CHUNK));
	mp_intmap_del(&b->chunks, addr);
	CU_CALL(b, MemRelease, ((CUmemGenericAllocationHandle)h));
	return MEMPROF_POOL_OK;
}

static int cuda_map(struct mp_backend *b, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	if (no_vmm(b))
		return MEMPROF_POOL_ENOTSUP;
	if (!chunk_ok(b, va, off, n))
		return MEMPROF_POOL_EINVAL;
	for (uint64_t done = 0; done < n; done += CU_CHUNK) {
		int rc = map_chunk(b, va->addr + off + done);

		if (rc != MEMPROF_POOL_OK) {
			release_chunks(b, va->addr + off, va->addr + off + done);
			return rc;
		}
	}
	return MEMPROF_POOL_OK;
}

static int cuda_unmap(struct mp_backend *b, const struct memprof_region *va, uint64_t off,
                      uint64_t n)
{
	if (no_vmm(b))
		return MEMPROF_POOL_ENOTSUP;
	if (!chunk_ok(b, va, off, n))
		return MEMPROF_POOL_EINVAL;
	for (uint64_t done = 0; done < n; done += CU_CHUNK) {
		int rc = unmap_chunk(b, va->addr + off + done);

		if (rc != MEMPROF_POOL_OK)
			return rc;
	}
	return MEMPROF_POOL_OK;
}

/*
 * The default pool keeps what is freed (release threshold UINT64_MAX), as
 * PyTorch's cudaMallocAsync backend sets it; close trims it and restores it.
 */
static int pool_ready(struct mp_backend *b)
{
	cuuint64_t keep_all = UINT64_MAX;

	if (!b->pool) {
		mp_err(b->err, MP_EINVAL,
		       "cuda backend: this device has no stream-ordered memory pool "
		       "(cuDeviceGetDefaultMemPool failed)");
		return MEMPROF_POOL_ENOTSUP;
	}
	if (b->threshold_set)
		return MEMPROF_POOL_OK;
	CU_CALL(b, MemPoolGetAttribute,
	        (b->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &b->threshold_old));
	CU_CALL(b, MemPoolSetAttribute, (b->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all));
	b->threshold_set = 1;
	return MEMPROF_POOL_OK;
}

static int cuda_alloc_async(struct mp_backend *b, uint64_t size, uint64_t stream,
                            struct memprof_region *out)
{
	CUstream s;
	CUdeviceptr p = 0;
	int rc = pool_ready(b);

	if (rc == MEMPROF_POOL_OK)
		rc = stream_of(b, stream, &s);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	CU_CALL(b, MemAllocAsync, (&p, (size_t)(size ? size : 1), s));
	out->addr = (uint64_t)p;
	out->size_bytes = size;
	out->token = stream;
	return MEMPROF_POOL_OK;
}

static int cuda_free_async(struct mp_backend *b, const struct memprof_region *r, uint64_t stream)
{
	CUstream s;
	int rc = stream_of(b, stream, &s);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	CU_CALL(b, MemFreeAsync, ((CUdeviceptr)r->addr, s));
	return MEMPROF_POOL_OK;
}

static int cuda_sync(struct mp_backend *b, uint64_t stream)
{
	CUstream s;
	int rc;

	if (stream == 0) {
		CU_CALL(b, CtxSynchronize, ());
		return MEMPROF_POOL_OK;
	}
	rc = stream_of(b, stream, &s);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	CU_CALL(b, StreamSynchronize, (s));
	return MEMPROF_POOL_OK;
}

/*
 * --verify: a 32-bit word from tag over the whole block (cuMemsetD32; the
 * bytes past the last whole word, or every byte of a block not 4-aligned,
 * get the word's low byte), read back at its first and last 64 KiB.
 */
static uint32_t pattern_word(uint64_t tag)
{
	uint64_t z = tag + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)(z ^ (z >> 32));
}

static uint64_t pattern_body(uint64_t addr, uint64_t n)
{
	return addr % 4 ? 0 : n / 4 * 4;
}

static unsigned char pattern_byte(uint32_t word, uint64_t body, uint64_t k)
{
	return (unsigned char)(k < body ? word >> (8 * (k % 4)) : word);
}

static int cuda_fill_pattern(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t tag)
{
	uint32_t word = pattern_word(tag);
	uint64_t body = pattern_body(addr, n);

	CU_CALL(b, CtxSynchronize, ()); /* the block may come from another stream */
	if (body)
		CU_CALL(b, MemsetD32, ((CUdeviceptr)addr, word, (size_t)(body / 4)));
	if (n > body)
		CU_CALL(b, MemsetD8,
		        ((CUdeviceptr)(addr + body), (unsigned char)word, (size_t)(n - body)));
	CU_CALL(b, CtxSynchronize, ());
	return MEMPROF_POOL_OK;
}

/* Compare block bytes [from, from + len), len <= CU_PATTERN_EDGE: 1 intact, 0 not, <0 error. */
static int compare_part(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t from,
                        uint64_t len, uint32_t word)
{
	uint64_t body = pattern_body(addr, n);

	CU_CALL(b, MemcpyDtoH, (b->readback, (CUdeviceptr)(addr + from), (size_t)len));
	for (uint64_t i = 0; i < len; i++)
		if (b->readback[i] != pattern_byte(word, body, from + i))
			return 0;
	return 1;
}

static int cuda_check_pattern(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t tag)
{
	uint32_t word = pattern_word(tag);
	uint64_t head = n < CU_PATTERN_EDGE ? n : CU_PATTERN_EDGE;
	uint64_t tail = n - head > head ? n - CU_PATTERN_EDGE : head;
	int rc;

	CU_CALL(b, CtxSynchronize, ());
	if (head && (rc = compare_part(b, addr, n, 0, head, word)) != 1)
		return rc;
	if (n > tail && (rc = compare_part(b, addr, n, tail, n - tail, word)) != 1)
		return rc;
	return 1;
}

static int cuda_time_begin(struct mp_backend *b)
{
	b->timing = 1;
	b->timed_device = 0;
	b->t_begin_ns = now_ns();
	return MEMPROF_POOL_OK;
}

/*
 * The span's time: the host time of the call, plus, when it enqueued device
 * work (memset, copy), that work's device time between its events.
 */
static int cuda_time_end(struct mp_backend *b, uint64_t *elapsed_ns)
{
	uint64_t host_ns = now_ns() - b->t_begin_ns;
	float ms = 0;

	*elapsed_ns = 0;
	if (!b->timing) {
		mp_err(b->err, MP_EINVAL, "cuda backend: time_end without time_begin");
		return MEMPROF_POOL_EINVAL;
	}
	b->timing = 0;
	if (b->timed_device) {
		host_ns = b->op_host_ns;
		CU_CALL(b, EventSynchronize, (b->ev_end));
		CU_CALL(b, EventElapsedTime, (&ms, b->ev_begin, b->ev_end));
	}
	*elapsed_ns = host_ns + (ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0);
	return MEMPROF_POOL_OK;
}

static int cuda_async_reserved(struct mp_backend *b, uint64_t *bytes)
{
	cuuint64_t v = 0;

	*bytes = 0;
	if (!b->pool)
		return MEMPROF_POOL_ENOTSUP;
	CU_CALL(b, MemPoolGetAttribute, (b->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
	*bytes = (uint64_t)v;
	return MEMPROF_POOL_OK;
}

static int cuda_collective(struct mp_backend *b, int kind, uint64_t addr, uint64_t n_bytes,
                           uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns)
{
	struct mp_cuda_coll_where w = {.dev = b->dev, .ctx = b->ctx, .group = b->group};

	/* With a group the call goes on even so: the other ranks wait for this one's word. */
	w.local_rc = stream_of(b, stream, &w.stream);
	if (w.local_rc != MEMPROF_POOL_OK && !b->group) {
		*elapsed_ns = 0;
		return w.local_rc;
	}
	return mp_cuda_collective(&b->coll, &w, kind, addr, n_bytes, world_size, elapsed_ns,
	                          b->err);
}

const struct mp_backend_ops mp_backend_cuda = {
        .name = "cuda",
        .measures_time = 1,
        .granularity_bytes = CU_CHUNK,
        .open = cuda_open,
        .close = cuda_close,
        .reserve = cuda_reserve,
        .release = cuda_release,
        .memset = cuda_memset,
        .copy = cuda_copy,
        .va_reserve = cuda_va_reserve,
        .va_release = cuda_va_release,
        .map = cuda_map,
        .unmap = cuda_unmap,
        .alloc_async = cuda_alloc_async,
        .free_async = cuda_free_async,
        .sync = cuda_sync,
        .fill_pattern = cuda_fill_pattern,
        .check_pattern = cuda_check_pattern,
        .time_begin = cuda_time_begin,
        .time_end = cuda_time_end,
        .async_reserved = cuda_async_reserved,
        .collective = cuda_collective,
};

#endif /* HAVE_CUDA */
