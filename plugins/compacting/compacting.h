/*
 * plugins/compacting/compacting.h - the compacting pool's internals: an
 * arena of chunks (reserved regions in copy mode, one virtual range in vmm
 * mode) cut into segments, live blocks and free extents, kept in address
 * order per chunk; free extents are also indexed by (size, address) for
 * O(log n) best fit.  Handles name live blocks through a slot table.
 * Nothing here is thread-safe; nothing here prints (the pool logs).
 */
#ifndef MEMPROF_PLUGIN_COMPACTING_H
#define MEMPROF_PLUGIN_COMPACTING_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define CP_MiB (1ull << 20)
/* Copy-mode chunks are at least the request rounded up to this (PyTorch's kRoundLarge). */
#define CP_CHUNK_ROUND_BYTES (2 * CP_MiB)
/* A block whose overlapping move would take more pieces than this stays where it is. */
#define CP_MAX_PIECES 8
/* The largest virtual range vmm mode reserves (a 4-byte count per granule). */
#define CP_MAX_VA_BYTES (4ull << 40)
/* Requests above this are refused before any rounding could overflow. */
#define CP_MAX_REQUEST_BYTES (1ull << 62)

enum cp_mode { CP_MODE_COPY = 0, CP_MODE_VMM = 1 };

struct cp_chunk;

/* A live block or a free extent inside one chunk. */
struct cp_seg {
	uint64_t addr, size_bytes;
	uint64_t data_bytes; /* live: the bytes a move copies (the request's size) */
	uint64_t token;      /* live: the host's block_token */
	struct cp_chunk *chunk;
	struct cp_seg *prev, *next;  /* address order inside the chunk */
	struct cp_seg *left, *right; /* size index (free extents only) */
	uint32_t prio;               /* size index heap priority */
	uint32_t slot;               /* live: handle slot */
	int is_free;
};

/* A reserved region (copy) or the virtual range (vmm). */
struct cp_chunk {
	struct memprof_region region;
	struct cp_seg *first; /* lowest segment; segments tile the region */
	uint64_t n_live;
	/* compaction only: arena position, fill pointer, last segment placed */
	size_t pos;
	uint64_t fill;
	struct cp_seg *last;
};

struct cp_arena {
	struct cp_chunk **chunks; /* arena order: the order they were added */
	size_t n_chunks, cap_chunks;
	struct cp_seg *index_root; /* free extents by (size, addr) */
	uint64_t arena_bytes;      /* sum of chunk sizes */
	uint64_t free_bytes;       /* free extent bytes inside chunks */
	uint64_t n_live;
	uint32_t rng;
	struct cp_seg **slots; /* handle slot -> live segment, NULL when free */
	uint32_t *gens;        /* handle slot generation */
	uint32_t *free_slots;
	size_t n_slots, n_free_slots, cap_slots;
};

struct cp_config {
	int mode;
	uint64_t align_bytes, grow_bytes, compact_min_bytes, va_size_bytes;
	double compact_at;
};

struct cp_stats {
	uint64_t n_compactions, n_forced, n_threshold;
	uint64_t bytes_moved, blocks_moved, blocks_kept, copy_calls;
	double frag_before_sum, frag_after_sum, frag_before_max;
	uint64_t chunks_reserved, chunks_released, chunks_mapped, chunks_unmapped;
	uint64_t grows_refused, ooms;
	uint64_t peak_arena_bytes;
};

/* vmm mode: the one virtual range and a live-block count per granule. */
struct cp_vmm {
	int reserved; /* 0: not yet, 1: held, -1: refused */
	uint64_t granule_bytes, n_granules, mapped_bytes;
	uint32_t *users;
};

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct cp_config cfg;
	struct cp_arena arena;
	struct cp_stats st;
	struct cp_vmm vmm;
	int dirty;                  /* copy: a block was freed since the last compaction */
	uint64_t freed_since_bytes; /* copy: bytes freed since then */
	struct cp_seg **scratch;    /* compaction: live blocks in arena order */
	size_t cap_scratch;
	uint64_t *room_tree; /* compaction: max tree of the chunks' room */
	size_t cap_room_tree;
};

/* sizeindex.c: free extents by (size, addr). */
void cp_index_insert(struct cp_arena *a, struct cp_seg *s);
void cp_index_erase(struct cp_arena *a, struct cp_seg *s);
/* The smallest free extent of at least size_bytes (lowest address on ties), or NULL. */
struct cp_seg *cp_index_fit(const struct cp_arena *a, uint64_t size_bytes);
struct cp_seg *cp_index_largest(const struct cp_arena *a);

/* arena.c */
void cp_arena_init(struct cp_arena *a);
/* Frees every segment and chunk record; the caller gave the regions back. */
void cp_arena_free(struct cp_arena *a);
/* A new chunk over r, all free, appended in arena order; NULL when out of memory. */
struct cp_chunk *cp_arena_add_chunk(struct cp_arena *a, const struct memprof_region *r);
/* Drops the entirely free chunk at arena position i (the region is the caller's). */
void cp_arena_drop_chunk(struct cp_arena *a, size_t i);
/* Carves a live block of size_bytes from the start of free extent f; NULL when out of memory. */
struct cp_seg *cp_arena_take(struct cp_arena *a, struct cp_seg *f, uint64_t size_bytes);
/* The live block s becomes free and merges with its free neighbours. */
void cp_arena_give(struct cp_arena *a, struct cp_seg *s);
/* 1 - largest free extent / free bytes (0 when nothing is free). */
double cp_arena_frag(const struct cp_arena *a);
/* Handles: a new one for live s (0 when out of memory), and the live block of one. */
uint64_t cp_handle_new(struct cp_arena *a, struct cp_seg *s);
struct cp_seg *cp_handle_find(const struct cp_arena *a, uint64_t handle);
void cp_handle_drop(struct cp_arena *a, struct cp_seg *s);
/* A new segment (not linked anywhere); NULL when out of memory. */
struct cp_seg *cp_seg_new(struct cp_arena *a, struct cp_chunk *c, uint64_t addr, uint64_t size,
                          int is_free);

/* copy.c: copy mode. */
int cp_copy_alloc(struct memprof_pool *p, uint64_t size_bytes, struct cp_seg **out);
void cp_copy_destroy(struct memprof_pool *p);

/* compact.c: slide live blocks down, release free chunks; forced: a request failed. */
int cp_compact(struct memprof_pool *p, int forced);

/* vmm.c: vmm mode. */
int cp_vmm_alloc(struct memprof_pool *p, uint64_t size_bytes, struct cp_seg **out);
int cp_vmm_free(struct memprof_pool *p, struct cp_seg *s);
void cp_vmm_destroy(struct memprof_pool *p);

#endif
