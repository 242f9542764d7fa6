/*
 * memprof/pool.h - the pool plugin ABI (memprof-plugin(7)), public.
 *
 * A pool is policy only: it decides where each request goes inside memory it
 * reserved through the host's services; the host (memprof's replay engine)
 * owns the backend, the clock and every figure.  A plugin is a shared object
 * that exports one symbol, MEMPROF_POOL_INIT_SYMBOL, and links nothing of
 * memprof.  Structs here are versioned: fields are only ever appended, each
 * struct starts with its size, and a reader copies min(its size, the size it
 * knows).  Nothing here is thread-safe: the host calls a pool from one thread.
 */
#ifndef MEMPROF_POOL_H
#define MEMPROF_POOL_H

#include <stddef.h>
#include <stdint.h>

/* A newer major breaks old plugins; a newer minor only appended fields. */
#define MEMPROF_POOL_ABI_MAJOR 1
#define MEMPROF_POOL_ABI_MINOR 3

#define MEMPROF_POOL_INIT_SYMBOL "memprof_pool_init"

/* Return codes of every callback and service: 0 or one of these. */
enum memprof_pool_status {
	MEMPROF_POOL_OK = 0,
	MEMPROF_POOL_ENOMEM = -1,  /* the backend refused (capacity) or the pool is full */
	MEMPROF_POOL_EINVAL = -2,  /* a bad option or argument; the pool logged why */
	MEMPROF_POOL_ENOTSUP = -3, /* the backend cannot do this (e.g. async on sim) */
	MEMPROF_POOL_EFAULT = -4,  /* the backend failed; the pool logged why */
};

/* Collectives for the collective service (ABI 1.1). */
enum memprof_pool_collective {
	MEMPROF_POOL_ALL_GATHER = 1,     /* in place: rank r's shard is the r-th of the buffer */
	MEMPROF_POOL_REDUCE_SCATTER = 2, /* in place: rank r keeps the sum of the r-th shards */
};

/* Log levels for the host's log service. */
enum memprof_pool_log_level {
	MEMPROF_POOL_LOG_ERROR = 0,
	MEMPROF_POOL_LOG_WARN = 1,
	MEMPROF_POOL_LOG_INFO = 2,
	MEMPROF_POOL_LOG_DEBUG = 3,
};

/*
 * A range of backend memory: a reservation (reserve, alloc_async) or a
 * virtual address range (va_reserve).  addr is the address the pool hands
 * out blocks in: a device address on cuda, a host address on host, a
 * synthetic one on sim; the pool must not dereference it.  token belongs to
 * the host; pass the region back unchanged.
 */
struct memprof_region {
	uint64_t addr;
	uint64_t size_bytes;
	uint64_t token;
};

/*
 * The services the host offers.  ctx is passed back to every service.
 * Services the backend lacks return MEMPROF_POOL_ENOTSUP.  stream is the
 * trace's stream of the request (0: the default stream).
 */
struct memprof_pool_host {
	uint32_t struct_size; /* sizeof(struct memprof_pool_host) of the host */
	uint16_t abi_major, abi_minor;
	void *ctx;
	const char *backend;         /* "sim", "host" or "cuda" */
	uint64_t capacity_bytes;     /* what reserve may hold in all; 0: unlimited */
	uint64_t granularity_bytes;  /* physical chunk size for map/unmap (2 MiB) */
	/* Reserve memory from the backend (cudaMalloc); ENOMEM beyond capacity. */
	int (*reserve)(void *ctx, uint64_t size_bytes, struct memprof_region *out);
	/* Give a reservation back (cudaFree: synchronises the device). */
	int (*release)(void *ctx, const struct memprof_region *r);
	/* Device memset and device-to-device copy of bytes the pool owns. */
	int (*memset)(void *ctx, uint64_t addr, int value, uint64_t n_bytes, uint64_t stream);
	int (*copy)(void *ctx, uint64_t dst, uint64_t src, uint64_t n_bytes, uint64_t stream);
	/* Monotonic host clock, nanoseconds. */
	uint64_t (*clock_ns)(void *ctx);
	/* A message for the user; the host adds the pool's name. */
	void (*log)(void *ctx, int level, const char *fmt, ...)
#if defined(__GNUC__)
	        __attribute__((format(printf, 3, 4)))
#endif
	        ;
	/*
	 * Virtual memory (cuMemAddressReserve / cuMemCreate + cuMemMap): reserve
	 * address space without memory, then map and unmap granularity-aligned
	 * physical chunks inside it.  Only mapped bytes count as reserved.
	 */
	int (*va_reserve)(void *ctx, uint64_t size_bytes, struct memprof_region *out);
	int (*va_release)(void *ctx, const struct memprof_region *va);
	int (*map)(void *ctx, const struct memprof_region *va, uint64_t offset, uint64_t n_bytes);
	int (*unmap)(void *ctx, const struct memprof_region *va, uint64_t offset, uint64_t n_bytes);
	/* Stream-ordered allocation from the driver's pool (cudaMallocAsync). */
	int (*alloc_async)(void *ctx, uint64_t size_bytes, uint64_t stream,
	                   struct memprof_region *out);
	int (*free_async)(void *ctx, const struct memprof_region *r, uint64_t stream);
	/* Wait for the stream (0: the whole device). */
	int (*sync)(void *ctx, uint64_t stream);
	/*
	 * The pool moved a live block (compaction): the block the host knows by
	 * block_token now starts at new_addr.  The pool copies the bytes itself.
	 */
	int (*block_moved)(void *ctx, uint64_t block_token, uint64_t new_addr);
	/* --- ABI 1.1: check host->struct_size covers a service before calling it. --- */
	/*
	 * Only inside alloc of block_token, before it returns: the block about to
	 * be returned lies, by design, inside the live block live_token (the pool
	 * time-multiplexes one buffer, as MXFP8 parameter/gradient sharing does).
	 * From now on live_token's contents are dead: the host exempts the pair
	 * from its overlap check and stops checking live_token's bytes, and the
	 * new block's bytes are not counted as set aside twice.  EINVAL when
	 * live_token is not live or the new block will not lie inside it.
	 */
	int (*block_shares)(void *ctx, uint64_t block_token, uint64_t live_token);
	/*
	 * Run a collective in place over [addr, addr + n_bytes) seen as
	 * world_size equal shards (n_bytes a multiple of world_size), with one
	 * rank per visible GPU (at most world_size ranks; rank 0 is this buffer,
	 * other ranks use a scratch copy on their GPU), and wait for it.
	 * *elapsed_ns: the device time it took.  ENOTSUP where the backend has
	 * no collectives (sim, host; cuda without NCCL).
	 */
	int (*collective)(void *ctx, int kind, uint64_t addr, uint64_t n_bytes,
	                  uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns);
	/* --- ABI 1.2 --- */
	/*
	 * The size of each item plan() gets: the array's stride.  Read
	 * min(lifetime_size, sizeof(struct memprof_pool_lifetime)) of each.  A
	 * host whose struct_size does not reach this field passes items of
	 * MEMPROF_POOL_LIFETIME_SIZE_1_0 bytes, and so does any host to a
	 * plugin built for a minor below 2.
	 */
	uint32_t lifetime_size;
	/*
	 * Nonzero: the host will replay the same allocations again under this
	 * key, and a pool that plans may reuse the plan it made under the same
	 * key instead of planning again.  0: no reuse.  (memprof now measures
	 * the fragmentation at the peak in one pass and passes 0; before, it
	 * ran the start of each replay a second time under one key.)
	 */
	uint64_t plan_key;
};

/* Whether host (of any minor) offers the service member: MEMPROF_POOL_HOST_HAS(h, collective). */
#define MEMPROF_POOL_HOST_HAS(h, member)                                                           \
	((h)->struct_size >= offsetof(struct memprof_pool_host, member) + sizeof((h)->member) &&   \
	 (h)->member != NULL)

/* A request to allocate, as the trace recorded it. */
struct memprof_pool_request {
	uint32_t struct_size;
	uint64_t size_bytes;      /* what to allocate (the trace's granted size) */
	uint64_t requested_bytes; /* what the program asked for (<= size_bytes) */
	uint64_t stream;
	int32_t device;
	int64_t index;       /* the allocation's ordinal in the replay, from 0 */
	uint64_t block_token; /* the host's name for the block (block_moved) */
	const char *site;    /* call site text, or NULL when the trace has no stacks */
	const char *phase;   /* phase (NVTX range) name, or NULL */
	int64_t ts_ns;
};

/* What the pool gave: the address and the host-opaque handle it wants back at free. */
struct memprof_pool_block {
	uint64_t addr;
	uint64_t size_bytes; /* bytes the pool set aside (>= request), for fragmentation */
	uint64_t handle;     /* the pool's own; returned unchanged at free */
};

/* alloc_ts and free_ts when the trace has no times that can order the lifetimes. */
#define MEMPROF_POOL_NO_TIME INT64_MIN

/*
 * One allocation of the whole trace, for pools that plan offline (plan):
 * held on the half-open interval [alloc_at, free_at) of replay steps, where
 * a run of consecutive allocs shares one step, as does a run of frees
 * (MiniMalloc's logical time: two allocations overlap exactly when each
 * starts before the other ends); free_at is INT64_MAX for one never freed.
 */
struct memprof_pool_lifetime {
	int64_t index;
	uint64_t size_bytes;
	int64_t alloc_at, free_at;
	uint64_t stream;
	const char *site;
	const char *phase;
	/* --- ABI 1.2 (see lifetime_size in the host) --- */
	/*
	 * The same lifetime in the trace's own time: the timestamps of the alloc
	 * and the free (ns), or the logical time an imported MiniMalloc CSV
	 * carries.  They never go back in the order of the events, so they order
	 * and weigh the lifetimes (how long each is live, for a planner's
	 * orderings), but ties do not say whether two overlap: alloc_at and
	 * free_at do.  free_ts is INT64_MAX for one never freed; both are
	 * MEMPROF_POOL_NO_TIME in every item when the trace has no usable times.
	 */
	int64_t alloc_ts, free_ts;
};

/* The size of a lifetime in pool ABI 1.0 and 1.1 (and the stride of their plan arrays). */
#define MEMPROF_POOL_LIFETIME_SIZE_1_0 offsetof(struct memprof_pool_lifetime, alloc_ts)

/*
 * ABI 1.3: the allocator state a trace window opened with, for seed.  A
 * trace that starts mid-run (a PyTorch snapshot is a window) holds segments
 * reserved before its first event, cut into blocks by a history it does not
 * contain.  Each seeded segment is given as its blocks in address order,
 * tiling it exactly; a live block names the preexisting allocation
 * (request.index) that will claim it with its alloc, a free one has -1.
 */
struct memprof_pool_seed_block {
	uint64_t offset_bytes; /* from the segment's start */
	uint64_t size_bytes;
	int64_t index; /* the allocation that claims it, or -1: a free block */
};

struct memprof_pool_seed_segment {
	uint32_t struct_size;
	uint64_t size_bytes;
	uint64_t stream;
	const struct memprof_pool_seed_block *blocks;
	size_t n_blocks;
};

/* An option the pool accepts (--pool-opt=NAME=VALUE, or --NAME=VALUE). */
struct memprof_pool_option_spec {
	const char *name;
	const char *value_hint; /* e.g. "BYTES", "on|off" */
	const char *help;       /* one line, including the default */
};

/* An option as given. */
struct memprof_pool_option {
	const char *name;
	const char *value;
};

struct memprof_pool; /* the plugin's own state */

/* emit, for stats: one named figure.  unit is "bytes", "count", "ns" or "ratio". */
typedef void (*memprof_pool_emit_fn)(void *emit_ctx, const char *name, double value,
                                     const char *unit);

struct memprof_pool_ops {
	uint32_t struct_size; /* sizeof(struct memprof_pool_ops) the plugin was built with */
	uint16_t abi_major, abi_minor;
	const char *name;        /* short, lowercase: the --pool= name */
	const char *description; /* one line */
	/* NULL-terminated by a NULL name; NULL when the pool takes no options. */
	const struct memprof_pool_option_spec *options;
	/*
	 * Make a pool.  host stays valid until destroy.  Only options the pool
	 * declared are passed.  On failure return non-zero after logging why.
	 */
	int (*create)(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
	              size_t n_opts, struct memprof_pool **out);
	/* Serve a request; ENOMEM when memory ran out even after the pool's own retries. */
	int (*alloc)(struct memprof_pool *p, const struct memprof_pool_request *req,
	             struct memprof_pool_block *out);
	/* Take back a block alloc returned; stream is the stream it was freed on. */
	int (*free)(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream);
	/* Optional (NULL): report the pool's own figures through emit. */
	void (*stats)(struct memprof_pool *p, memprof_pool_emit_fn emit, void *emit_ctx);
	/*
	 * Release everything still reserved and free p.  The host releases, and
	 * reports, whatever a pool leaves reserved after destroy.
	 */
	void (*destroy)(struct memprof_pool *p);
	/*
	 * Optional (NULL): offline pools see every allocation of the replay before
	 * the first alloc; request.index names the lifetime.  Called once.
	 */
	int (*plan)(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n);
	/* --- ABI 1.3 --- */
	/*
	 * Optional (NULL): adopt the segments the trace's allocator held when its
	 * window opened (struct memprof_pool_seed_segment), reserving each through
	 * the host as it is; called once, after create and plan, before the first
	 * alloc, and only when the trace has such a state.  The allocations named
	 * by the seeded blocks then arrive as ordinary allocs.  A pool that
	 * cannot adopt a segment logs why and returns non-zero: the host then
	 * replays without the seed.
	 */
	int (*seed)(struct memprof_pool *p, const struct memprof_pool_seed_segment *segments,
	            size_t n);
};

/*
 * The one exported symbol: fill in nothing, return the pool's ops (static
 * storage, valid while the plugin is loaded).  host_abi_major is the host's
 * major, for plugins that support several.
 */
typedef const struct memprof_pool_ops *(*memprof_pool_init_fn)(uint16_t host_abi_major);

/* Declare the init function with this, so the name cannot be misspelt. */
#define MEMPROF_POOL_DEFINE(ops_var)                                                               \
	const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major);                 \
	const struct memprof_pool_ops *memprof_pool_init(uint16_t host_abi_major)                  \
	{                                                                                          \
		(void)host_abi_major;                                                              \
		return &(ops_var);                                                                 \
	}

#define MEMPROF_POOL_OPS_HEADER(name_, desc_)                                                      \
	.struct_size = sizeof(struct memprof_pool_ops), .abi_major = MEMPROF_POOL_ABI_MAJOR,       \
	.abi_minor = MEMPROF_POOL_ABI_MINOR, .name = (name_), .description = (desc_)

#endif /* MEMPROF_POOL_H */
