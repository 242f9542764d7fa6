/*
 * replay/backend_host.c - the host backend: real host memory, so a pool's
 * addresses are exercised on real bytes.  Reservations are anonymous private
 * mappings (MAP_NORESERVE), virtual ranges are PROT_NONE mappings whose
 * 2 MiB chunks map makes readable and writable and unmap gives back.  It
 * keeps no figures and enforces no capacity (the engine does both).  It does
 * not model time: that is the cost model's job.  Under 'replay --mpi' it
 * runs the pools' collectives for real across the ranks' host buffers
 * (through group->host_collective), timed on this host's clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "replay/backend.h"

#define HOST_GRANULARITY (2ull << 20)
/* --verify: blocks up to this size are patterned whole ... */
#define HOST_PATTERN_WHOLE (1ull << 20)
/* ... larger ones at their first and last 64 KiB and one word every 4 KiB between. */
#define HOST_PATTERN_EDGE   (64ull << 10)
#define HOST_PATTERN_STRIDE 4096ull
#define HOST_PATTERN_WORD   8ull

struct mp_backend {
	struct mp_error *err;
	const struct mp_rank_group *group; /* replay --mpi, or NULL */
	uint64_t page_bytes;
	unsigned char tmpl[HOST_PATTERN_STRIDE]; /* the pattern of the current tag, one period */
	uint64_t tmpl_tag;
	int tmpl_valid;
};

static int host_open(const struct mp_backend_options *o, struct mp_backend **out)
{
	struct mp_backend *b = calloc(1, sizeof *b);
	long page = sysconf(_SC_PAGESIZE);

	*out = NULL;
	if (!b)
		return mp_err(o->err, MP_ENOMEM, "out of memory");
	b->err = o->err;
	b->group = o->group;
	b->page_bytes = page > 0 ? (uint64_t)page : 4096;
	*out = b;
	return 0;
}

static void host_close(struct mp_backend *b)
{
	free(b);
}

static uint64_t round_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

static void *to_ptr(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

/* Describe a failed system call; ENOMEM is the pool's to handle, anything else a fault. */
static int sys_fail(struct mp_backend *b, const char *call, uint64_t n_bytes)
{
	int e = errno;

	mp_err(b->err, e == ENOMEM ? MP_ENOMEM : MP_EIO,
	       "host backend: %s of %llu bytes failed: %s", call, (unsigned long long)n_bytes,
	       strerror(e));
	return e == ENOMEM ? MEMPROF_POOL_ENOMEM : MEMPROF_POOL_EFAULT;
}

static int host_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	uint64_t len = round_up(size ? size : 1, b->page_bytes);
	void *p;

	if (len < size || len > SIZE_MAX) {
		errno = ENOMEM;
		return sys_fail(b, "mmap", size);
	}
	p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return sys_fail(b, "mmap", size);
	out->addr = (uint64_t)(uintptr_t)p;
	out->size_bytes = size;
	out->token = len;
	return MEMPROF_POOL_OK;
}

static int host_release(struct mp_backend *b, const struct memprof_region *r)
{
	if (!r->addr || !r->token || r->token % b->page_bytes || r->addr % b->page_bytes) {
		mp_err(b->err, MP_EINVAL, "host backend: release of a region it did not hand out");
		return MEMPROF_POOL_EINVAL;
	}
	if (munmap(to_ptr(r->addr), (size_t)r->token) != 0)
		return sys_fail(b, "munmap", r->token);
	return MEMPROF_POOL_OK;
}

static int host_memset(struct mp_backend *b, uint64_t addr, int value, uint64_t n, uint64_t stream)
{
	(void)b, (void)stream;
	if (n)
		memset(to_ptr(addr), value, (size_t)n);
	return MEMPROF_POOL_OK;
}

static int host_copy(struct mp_backend *b, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	(void)b, (void)stream;
	if (n)
		memmove(to_ptr(dst), to_ptr(src), (size_t)n);
	return MEMPROF_POOL_OK;
}

/* Address space only, aligned to the granularity, so chunks are 2 MiB-aligned too. */
static int host_va_reserve(struct mp_backend *b, uint64_t size, struct memprof_region *out)
{
	uint64_t len = round_up(size ? size : 1, HOST_GRANULARITY), span = len + HOST_GRANULARITY;
	uint64_t base, start;
	void *p;

	if (len < size || span < len || span > SIZE_MAX) {
		errno = ENOMEM;
		return sys_fail(b, "mmap (address space)", size);
	}
	p = mmap(NULL, (size_t)span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return sys_fail(b, "mmap (address space)", size);
	base = (uint64_t)(uintptr_t)p;
	start = round_up(base, HOST_GRANULARITY);
	if (start > base)
		munmap(p, (size_t)(start - base));
	if (base + span > start + len)
		munmap(to_ptr(start + len), (size_t)(base + span - start - len));
	out->addr = start;
	out->size_bytes = size;
	out->token = len;
	return MEMPROF_POOL_OK;
}

static int chunk_ok(struct mp_backend *b, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	if (!va->addr || off % HOST_GRANULARITY || n % HOST_GRANULARITY || n > va->size_bytes ||
	    off > va->size_bytes - n || off + n > va->token) {
		mp_err(b->err, MP_EINVAL,
		       "host backend: map/unmap of [%llu, +%llu) is not 2 MiB-aligned inside the "
		       "%llu-byte range",
		       (unsigned long long)off, (unsigned long long)n,
		       (unsigned long long)va->size_bytes);
		return 0;
	}
	return 1;
}

static int host_map(struct mp_backend *b, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	if (!chunk_ok(b, va, off, n))
		return MEMPROF_POOL_EINVAL;
	if (n && mprotect(to_ptr(va->addr + off), (size_t)n, PROT_READ | PROT_WRITE) != 0)
		return sys_fail(b, "mprotect", n);
	return MEMPROF_POOL_OK;
}

static int host_unmap(struct mp_backend *b, const struct memprof_region *va, uint64_t off,
                      uint64_t n)
{
	void *p = to_ptr(va->addr + off);

	if (!chunk_ok(b, va, off, n))
		return MEMPROF_POOL_EINVAL;
	if (!n)
		return MEMPROF_POOL_OK;
	if (madvise(p, (size_t)n, MADV_DONTNEED) != 0)
		return sys_fail(b, "madvise", n);
	if (mprotect(p, (size_t)n, PROT_NONE) != 0)
		return sys_fail(b, "mprotect", n);
	return MEMPROF_POOL_OK;
}

static int host_va_release(struct mp_backend *b, const struct memprof_region *va)
{
	if (!va->addr || !va->token || va->addr % HOST_GRANULARITY) {
		mp_err(b->err, MP_EINVAL, "host backend: release of a range it did not hand out");
		return MEMPROF_POOL_EINVAL;
	}
	if (munmap(to_ptr(va->addr), (size_t)va->token) != 0)
		return sys_fail(b, "munmap", va->token);
	return MEMPROF_POOL_OK;
}

static int host_sync(struct mp_backend *b, uint64_t stream)
{
	(void)b, (void)stream;
	return MEMPROF_POOL_OK;
}

/* The tag's 64-bit word (splitmix64), laid out byte by byte over one 4 KiB period. */
static const unsigned char *pattern_of(struct mp_backend *b, uint64_t tag)
{
	uint64_t z = tag + 0x9e3779b97f4a7c15ull;

	if (b->tmpl_valid && b->tmpl_tag == tag)
		return b->tmpl;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	for (size_t i = 0; i < HOST_PATTERN_STRIDE; i++)
		b->tmpl[i] = (unsigned char)(z >> (8 * (i % HOST_PATTERN_WORD)));
	b->tmpl_tag = tag;
	b->tmpl_valid = 1;
	return b->tmpl;
}

/* Write (check == 0) or compare (check == 1) the pattern over block bytes [from, to). */
static int pattern_range(unsigned char *base, uint64_t from, uint64_t to, const unsigned char *tmpl,
                         int check)
{
	while (from < to) {
		uint64_t off = from % HOST_PATTERN_STRIDE, len = HOST_PATTERN_STRIDE - off;

		if (len > to - from)
			len = to - from;
		if (!check)
			memcpy(base + from, tmpl + off, (size_t)len);
		else if (memcmp(base + from, tmpl + off, (size_t)len) != 0)
			return 0;
		from += len;
	}
	return 1;
}

/* The sampled parts of an n-byte block, in order; returns 1 when all compared equal. */
static int pattern_walk(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t tag, int check)
{
	unsigned char *base = to_ptr(addr);
	const unsigned char *tmpl = pattern_of(b, tag);
	uint64_t tail;

	if (n <= HOST_PATTERN_WHOLE)
		return pattern_range(base, 0, n, tmpl, check);
	tail = n - HOST_PATTERN_EDGE;
	if (!pattern_range(base, 0, HOST_PATTERN_EDGE, tmpl, check) ||
	    !pattern_range(base, tail, n, tmpl, check))
		return 0;
	for (uint64_t off = HOST_PATTERN_EDGE; off + HOST_PATTERN_WORD <= tail;
	     off += HOST_PATTERN_STRIDE)
		if (!pattern_range(base, off, off + HOST_PATTERN_WORD, tmpl, check))
			return 0;
	return 1;
}

static int host_fill_pattern(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t tag)
{
	pattern_walk(b, addr, n, tag, 0);
	return MEMPROF_POOL_OK;
}

static int host_check_pattern(struct mp_backend *b, uint64_t addr, uint64_t n, uint64_t tag)
{
	return pattern_walk(b, addr, n, tag, 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Across the ranks of the group only (one process has no one to exchange
 * with): the buffer is split into one shard per rank, whatever world_size
 * the pool laid it out for; a buffer that does not split evenly, or whose
 * shards pass 2 GiB (an MPI count), is ENOTSUP on every rank alike.  The
 * time is the host's wall time of the exchange.
 */
static int host_collective(struct mp_backend *b, int kind, uint64_t addr, uint64_t n_bytes,
                           uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns)
{
	const struct mp_rank_group *g = b->group;
	uint64_t t0;

	(void)world_size, (void)stream;
	if (!g || !g->host_collective || g->size < 1 || n_bytes % (uint64_t)g->size ||
	    n_bytes / (uint64_t)g->size > INT32_MAX)
		return MEMPROF_POOL_ENOTSUP;
	t0 = now_ns();
	if (g->host_collective(g->ctx, kind, to_ptr(addr), n_bytes) < 0) {
		mp_err(b->err, MP_EIO,
		       "host backend: the %s over %llu bytes across %d ranks failed",
		       kind == MEMPROF_POOL_ALL_GATHER ? "all-gather" : "reduce-scatter",
		       (unsigned long long)n_bytes, g->size);
		return MEMPROF_POOL_EFAULT;
	}
	if (elapsed_ns)
		*elapsed_ns = now_ns() - t0;
	return MEMPROF_POOL_OK;
}

const struct mp_backend_ops mp_backend_host = {
        .name = "host",
        .measures_time = 0,
        .granularity_bytes = HOST_GRANULARITY,
        .open = host_open,
        .close = host_close,
        .reserve = host_reserve,
        .release = host_release,
        .memset = host_memset,
        .copy = host_copy,
        .va_reserve = host_va_reserve,
        .va_release = host_va_release,
        .map = host_map,
        .unmap = host_unmap,
        .sync = host_sync,
        .fill_pattern = host_fill_pattern,
        .check_pattern = host_check_pattern,
        .collective = host_collective,
};
