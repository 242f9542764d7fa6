/*
 * plugins/caching/caching.h - the caching pool's internal model, shared by
 * its files and by nothing else: PyTorch's Block, BlockPool, segment and
 * ExpandableSegment as C structs, the allocator's constants and its config.
 * Each function here mirrors one of DeviceCachingAllocator's (named in its
 * comment); caching.c says which PyTorch source the model follows.
 */
#ifndef MEMPROF_PLUGIN_CACHING_H
#define MEMPROF_PLUGIN_CACHING_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define CB_MIN_BLOCK       512ull        /* kMinBlockSize: every size rounds to this */
#define CB_SMALL_SIZE      (1ull << 20)  /* kSmallSize: largest small request */
#define CB_SMALL_BUFFER    (2ull << 20)  /* kSmallBuffer: small segment size */
#define CB_LARGE_BUFFER    (20ull << 20) /* kLargeBuffer: 1..10 MiB requests' segment */
#define CB_MIN_LARGE_ALLOC (10ull << 20) /* kMinLargeAlloc */
#define CB_ROUND_LARGE     (2ull << 20)  /* kRoundLarge: larger segments round to this */
#define CB_N_INTERVALS     16            /* kRoundUpPowerOfTwoIntervals: 1 MiB .. 64 GiB */
#define CB_NO_LIMIT        UINT64_MAX
#define CB_MAX_REQUEST     (1ull << 60)  /* allocate() refuses 1 EiB or more */
#define CB_DEFAULT_DEVICE  (80ull << 30) /* device memory the expandable VA is sized for */

/* CUDAAllocatorConfig: the settings that change placement. */
struct cb_config {
	uint64_t max_split_size_bytes;         /* CB_NO_LIMIT: every block may split */
	uint64_t max_non_split_rounding_bytes; /* oversize tolerance, kLargeBuffer */
	double gc_threshold;                   /* 0: no garbage collection */
	int expandable;
	uint64_t roundup_divisions[CB_N_INTERVALS]; /* per power-of-two interval from 1 MiB */
	uint64_t device_bytes;                      /* totalGlobalMem, for the expandable VA */
};

/* An ordered set of blocks (std::set<Block*>): a treap through the blocks. */
struct cb_set {
	struct cb_block *root;
	int by_address; /* BlockComparatorAddress, else BlockComparatorSize */
	size_t n;
};

/* One cudaMalloc'd segment: the region to give back when it is whole and free. */
struct cb_segment {
	struct memprof_region region;
	struct cb_segment *prev, *next; /* the pool's list of live segments */
};

/* ExpandableSegment: one VA range, mapped chunk by chunk (handles_). */
struct cb_es {
	struct memprof_region va;
	uint64_t stream;
	uint64_t chunk_bytes; /* segment_size_: 2 MiB small, 20 MiB large */
	uint64_t n_chunks;    /* max_handles_ */
	uint8_t *mapped;      /* per chunk */
	struct cb_es *prev, *next;
};

struct cb_blockpool;

struct cb_block {
	uint64_t stream; /* the allocation stream */
	uint64_t size_bytes;
	uint64_t requested_bytes;
	uint64_t addr;
	struct cb_blockpool *pool;
	struct cb_segment *seg; /* NULL for expandable blocks */
	struct cb_es *es;       /* expandable_segment_ */
	struct cb_block *prev, *next;
	struct cb_block *left, *right; /* cb_set links */
	int64_t gc_count_base;
	uint32_t prio, id, gen;
	uint8_t allocated, mapped;
};

struct cb_blockpool {
	struct cb_set blocks;   /* free mapped blocks by (stream, size, address) */
	struct cb_set unmapped; /* unmapped expandable ranges by (stream, address) */
	int is_small;
	int64_t get_free_blocks_call_count;
};

/* One block of a seeded (preexisting) segment, in address order. */
struct cb_seed_block {
	uint64_t offset_bytes, size_bytes;
	int64_t index; /* the preexisting allocation's request index; -1: a free block */
};

/* AllocParams. */
struct cb_params {
	uint64_t stream, size_bytes, alloc_bytes;
	struct cb_blockpool *pool;
	struct cb_block *block;
	int err; /* 0, or the backend's refusal (ENOMEM) or failure */
};

struct cb_stats {
	uint64_t n_allocs, n_frees, n_cache_hits, n_cross_stream_frees;
	uint64_t n_segments_reserved, n_segments_released; /* cudaMalloc / cudaFree */
	uint64_t n_device_alloc, n_device_free;            /* incl. map/unmap ranges */
	uint64_t n_chunks_mapped, n_chunks_unmapped, n_va_reserved, n_va_released;
	uint64_t n_splits, n_merges, n_alloc_retries, n_ooms;
	uint64_t n_oom_released, n_gc_released;
	uint64_t n_oversize_allocs;
	uint64_t n_seeded_segments, n_seeded_claimed;
	uint64_t peak_reserved_bytes, peak_allocated_bytes;
};

struct cb_pool {
	const struct memprof_pool_host *host;
	struct cb_config cfg;
	struct cb_blockpool large, small;
	struct cb_segment *segments;
	struct cb_es *es_list;
	uint64_t reserved_bytes;  /* total_allocated_memory */
	uint64_t allocated_bytes; /* stats.allocated_bytes */
	uint64_t allowed_bytes;   /* allowed_memory_maximum: the host's capacity, 0 none */
	struct cb_block **by_id;  /* every block struct, by id */
	uint32_t n_ids, cap_ids;
	uint32_t *free_ids;
	uint32_t n_free_ids;
	uint32_t rng;
	uint64_t *seeded; /* by request index: the handle of its seeded block, or UINT64_MAX */
	uint64_t n_seeded;
	int fault; /* a backend call failed other than by ENOMEM: set, logged */
	struct cb_stats st;
};

/* config.c */
int cb_config_parse(struct cb_config *cfg, const struct memprof_pool_host *host,
                    const struct memprof_pool_option *opts, size_t n_opts);
extern const struct memprof_pool_option_spec cb_option_specs[];

/* blockset.c */
void cb_set_init(struct cb_set *s, int by_address);
void cb_set_insert(struct cb_set *s, struct cb_block *b);
void cb_set_erase(struct cb_set *s, struct cb_block *b);
struct cb_block *cb_set_first(const struct cb_set *s);
/* The first block >= (stream, size, addr), or NULL (lower_bound). */
struct cb_block *cb_set_lower_bound(const struct cb_set *s, uint64_t stream, uint64_t size,
                                    uint64_t addr);
/* The last block < (stream, size, addr), or NULL (--lower_bound). */
struct cb_block *cb_set_before(const struct cb_set *s, uint64_t stream, uint64_t size,
                               uint64_t addr);
struct cb_block *cb_set_next(const struct cb_set *s, const struct cb_block *b);
struct cb_block *cb_set_prev(const struct cb_set *s, const struct cb_block *b);

/* block.c: block structs, handles and the block helpers shared by both modes. */
struct cb_block *cb_block_new(struct cb_pool *p, uint64_t stream, uint64_t size,
                              struct cb_blockpool *pool, uint64_t addr);
void cb_block_delete(struct cb_pool *p, struct cb_block *b);
uint64_t cb_block_handle(const struct cb_block *b);
struct cb_block *cb_block_of_handle(struct cb_pool *p, uint64_t handle);
void cb_block_free_all(struct cb_pool *p);
void cb_insert_into_blocks(struct cb_blockpool *pool, struct cb_block *b);
uint64_t cb_try_merge_blocks(struct cb_pool *p, struct cb_block *dst, struct cb_block *src);
void cb_splice(struct cb_block *b, struct cb_block *before, struct cb_block *after);
void cb_account_reserved(struct cb_pool *p, uint64_t add_bytes);
int cb_fault(struct cb_pool *p, int rc, const char *what);

/* alloc.c: malloc and free of DeviceCachingAllocator. */
uint64_t cb_round_size(const struct cb_config *cfg, uint64_t size);
uint64_t cb_allocation_size(uint64_t size);
int cb_malloc(struct cb_pool *p, uint64_t stream, uint64_t orig_size, struct cb_block **out);
int cb_reserve_segment(struct cb_pool *p, struct cb_params *pa);
void cb_free(struct cb_pool *p, struct cb_block *b);

/* release.c: giving cached memory back (OOM retries, garbage collection). */
int cb_release_available_cached_blocks(struct cb_pool *p, const struct cb_params *params);
int cb_release_cached_blocks(struct cb_pool *p);
void cb_garbage_collect_cached_blocks(struct cb_pool *p);
void cb_release_all(struct cb_pool *p);

/* seed.c: the recorded allocator's segments at the start of the window. */
int cb_seed_segment(struct cb_pool *p, uint64_t size, uint64_t stream,
                    const struct cb_seed_block *blocks, size_t n);
struct cb_block *cb_seed_claim(struct cb_pool *p, int64_t index);

/* expandable.c: expandable segments (ExpandableSegment and its block functions). */
struct cb_block *cb_try_allocate_expandable_block(struct cb_pool *p, uint64_t stream,
                                                  struct cb_blockpool *pool, uint64_t size,
                                                  int *err);
void cb_unmap_block(struct cb_pool *p, struct cb_block *b);
void cb_release_expandable_segment(struct cb_pool *p, struct cb_block *b);
void cb_es_destroy_all(struct cb_pool *p);

#endif
