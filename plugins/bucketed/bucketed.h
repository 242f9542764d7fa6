/*
 * plugins/bucketed/bucketed.h - the bucketed pool's internal interface:
 * size classes (buckets) with LIFO free lists of fixed-size slots carved
 * from slabs, and an embedded caching pool (plugins/caching/embed.h) as the
 * best-fit large pool for requests above the largest bucket.  Shared by the
 * files of plugins/bucketed/ and by nothing else.
 */
#ifndef MEMPROF_PLUGIN_BUCKETED_H
#define MEMPROF_PLUGIN_BUCKETED_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define BK_MAX_BUCKETS    256
#define BK_MIN_CLASS      512ull        /* the default series' first class: CUDA's minimum */
#define BK_MAX_CLASS      (64ull << 20) /* the default series' last class */
#define BK_DEFAULT_SLAB   (2ull << 20)
#define BK_DEFAULT_SLOTS  4            /* a slab holds at least this many slots */
#define BK_MAX_BUCKET     (1ull << 40) /* the largest bucket a list may name */
#define BK_MAX_SLAB       (1ull << 30) /* the largest slab option */
#define BK_MAX_SLAB_SLOTS (1u << 22)   /* slots per slab at most (host bookkeeping) */
#define BK_MAX_MIN_SLOTS  65536u
#define BK_MAX_REQUEST    (1ull << 60) /* the caching model refuses this or more at once */
#define BK_MARK           (1ull << 63) /* set in the handles of bucket slots */
#define BK_SLOT_FREE      UINT64_MAX   /* a slot's requested bytes while it is free */
#define BK_MAX_SLABS      (1u << 31)   /* slab ids fit in 31 bits of a handle */
#define BK_TOP_BUCKETS    15           /* buckets with stats of their own; the rest: other */

struct cb_pool;

struct bk_config {
	uint64_t sizes[BK_MAX_BUCKETS]; /* strictly increasing */
	size_t n_sizes;
	uint64_t slab_bytes; /* slab option */
	uint32_t min_slots;  /* slab-slots option */
	double growth;       /* the default series' ratio (0 when a list was given) */
};

/* One reservation carved into n_slots slots of one bucket. */
struct bk_slab {
	struct memprof_region region;
	uint32_t bucket;
	uint32_t n_slots, n_live;
	uint64_t *requested; /* per slot: the live request's bytes, or BK_SLOT_FREE */
};

struct bk_bucket {
	uint64_t size_bytes;
	uint32_t slots_per_slab; /* a slab is slots_per_slab * size_bytes bytes */
	uint64_t *free;          /* LIFO stack of free slot refs: slab id << 32 | slot */
	size_t n_free, cap_free;
	uint64_t n_requests, waste_bytes; /* waste: sum of size_bytes - requested */
	uint64_t n_live, peak_live, n_carved, peak_carved;
};

struct bk_stats {
	uint64_t n_bucketed, n_large;
	uint64_t n_slabs_reserved, n_slabs_released, n_oom_retries;
	uint64_t waste_bytes, live_waste_bytes, peak_live_waste_bytes;
	uint64_t live_slot_bytes, slab_bytes, peak_slab_bytes;
};

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct bk_config cfg;
	struct bk_bucket *buckets; /* cfg.n_sizes of them */
	struct bk_slab **slabs;    /* by id; NULL once released; ids are never reused */
	uint32_t n_slabs, cap_slabs;
	struct cb_pool *large;
	int fault; /* a backend call failed other than by ENOMEM: logged, sticky */
	struct bk_stats st;
};

/* config.c: options.  0, or EINVAL after logging the option and value. */
extern const struct memprof_pool_option_spec bk_option_specs[];
int bk_config_parse(struct bk_config *cfg, const struct memprof_pool_host *host,
                    const struct memprof_pool_option *opts, size_t n_opts);
/* The geometric series from 512 B to 64 MiB with ratio growth, classes rounded up to 512 B. */
int bk_series(double growth, uint64_t *sizes, size_t max_n, size_t *n);

/* slab.c: slots and slabs. */
/* The index of the smallest bucket >= size_bytes, or -1 when above the largest. */
int bk_bucket_for(const struct memprof_pool *p, uint64_t size_bytes);
/* A free slot of bucket b, carving a new slab when none: 0, ENOMEM or a fault. */
int bk_slot_take(struct memprof_pool *p, uint32_t b, uint64_t requested,
                 struct memprof_pool_block *out);
/* Give back the slot a handle names; EINVAL (logged) when it is no live slot of ours. */
int bk_slot_put(struct memprof_pool *p, const struct memprof_pool_block *blk);
/* Release every slab whose slots are all free; how many were released. */
uint64_t bk_release_free_slabs(struct memprof_pool *p);
/* At destroy: release every slab, live or not, and free the bookkeeping. */
void bk_slabs_destroy(struct memprof_pool *p);

/* stats.c */
void bk_stats_emit(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx);
/* "512B", "64KiB", "1MiB", "1536B": the exact size in its largest whole binary unit. */
void bk_size_name(uint64_t size_bytes, char *buf, size_t len);

#endif
