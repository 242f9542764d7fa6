/*
 * plugins/caching/alloc.c - DeviceCachingAllocator::malloc and ::free: size
 * rounding, the small/large pool choice, per-stream best fit with the
 * max_split_size rules, new segments (cudaMalloc or expandable mapping), the
 * release-and-retry ladder on OOM, splitting, and coalescing on free.  It
 * never decides reserved-byte figures for the host; it only asks for memory.
 */
#include <stdlib.h>

#include "caching.h"

static unsigned log2_floor(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* CUDAAllocatorConfig::roundup_power2_divisions(size): intervals from 1 MiB. */
static uint64_t divisions_for(const struct cb_config *cfg, uint64_t size)
{
	int index = (int)log2_floor(size) - 20;

	if (index < 0)
		index = 0;
	if (index > CB_N_INTERVALS - 1)
		index = CB_N_INTERVALS - 1;
	return cfg->roundup_divisions[index];
}

/* roundup_power2_next_division: e.g. 1200 with 4 divisions -> 1280. */
static uint64_t roundup_power2_next_division(uint64_t size, uint64_t divisions)
{
	uint64_t floor2, step, rounded;

	if (is_pow2(size))
		return size;
	floor2 = 1ull << log2_floor(size);
	step = floor2 >> log2_floor(divisions);
	if (step == 0)
		return floor2 << 1;
	rounded = size & ~(step - 1);
	return rounded == size ? size : rounded + step;
}

/* round_size */
uint64_t cb_round_size(const struct cb_config *cfg, uint64_t size)
{
	uint64_t divisions;

	if (size < CB_MIN_BLOCK)
		return CB_MIN_BLOCK;
	divisions = divisions_for(cfg, size);
	if (divisions > 1 && size > CB_MIN_BLOCK * divisions)
		return roundup_power2_next_division(size, divisions);
	return CB_MIN_BLOCK * ((size + CB_MIN_BLOCK - 1) / CB_MIN_BLOCK);
}

/* get_allocation_size: the segment a request that found no block reserves. */
uint64_t cb_allocation_size(uint64_t size)
{
	if (size <= CB_SMALL_SIZE)
		return CB_SMALL_BUFFER;
	if (size < CB_MIN_LARGE_ALLOC)
		return CB_LARGE_BUFFER;
	return CB_ROUND_LARGE * ((size + CB_ROUND_LARGE - 1) / CB_ROUND_LARGE);
}

static int gc_enabled(const struct cb_pool *p)
{
	return p->allowed_bytes && p->cfg.gc_threshold > 0.0;
}

/* A free block's size counting the unmapped range right after it. */
static uint64_t expandable_size(const struct cb_block *b)
{
	return b->size_bytes + (b->next && !b->next->mapped ? b->next->size_bytes : 0);
}

/* get_free_block: best fit in the request's stream, within the oversize rules. */
static int get_free_block(struct cb_pool *p, struct cb_params *pa)
{
	struct cb_blockpool *pool = pa->pool;
	uint64_t max_split = p->cfg.max_split_size_bytes;
	struct cb_block *b, *nx;

	if (gc_enabled(p))
		pool->get_free_blocks_call_count++;
	b = cb_set_lower_bound(&pool->blocks, pa->stream, pa->size_bytes, 0);
	if (!b || b->stream != pa->stream)
		return 0;
	/*
	 * The expandable mode is fixed for a run, so the real code's branch for
	 * expandable blocks found while the mode is off cannot arise here.
	 */
	if (b->es) {
		nx = cb_set_next(&pool->blocks, b);
		while (b->es && nx && nx->stream == pa->stream &&
		       expandable_size(nx) < expandable_size(b)) {
			b = nx;
			nx = cb_set_next(&pool->blocks, nx);
		}
	}
	/* Do not return an oversized block for a smaller request ... */
	if (pa->size_bytes < max_split && b->size_bytes >= max_split)
		return 0;
	/* ... and round an oversized request up only within the tolerance. */
	if (pa->size_bytes >= max_split &&
	    b->size_bytes >= pa->size_bytes + p->cfg.max_non_split_rounding_bytes)
		return 0;
	pa->block = b;
	cb_set_erase(&pool->blocks, b);
	return 1;
}

/* The cudaMalloc half of alloc_block: a new segment of alloc_bytes, one free block. */
int cb_reserve_segment(struct cb_pool *p, struct cb_params *pa)
{
	struct memprof_region r;
	struct cb_segment *seg;
	int rc = p->host->reserve(p->host->ctx, pa->alloc_bytes, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc == MEMPROF_POOL_ENOMEM ? rc : cb_fault(p, rc, "reserve");
	seg = calloc(1, sizeof *seg);
	pa->block = seg ? cb_block_new(p, pa->stream, pa->alloc_bytes, pa->pool, r.addr) : NULL;
	if (!pa->block) {
		free(seg);
		p->host->release(p->host->ctx, &r);
		return cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
	}
	seg->region = r;
	seg->next = p->segments;
	if (p->segments)
		p->segments->prev = seg;
	p->segments = seg;
	pa->block->seg = seg;
	cb_account_reserved(p, pa->alloc_bytes);
	p->st.n_segments_reserved++;
	p->st.n_device_alloc++;
	return MEMPROF_POOL_OK;
}

/* alloc_block: a new segment (cudaMalloc) or newly mapped expandable memory. */
static int alloc_block(struct cb_pool *p, struct cb_params *pa, int is_retry)
{
	if (is_retry)
		p->st.n_alloc_retries++;
	pa->err = 0;
	if (p->cfg.expandable) {
		pa->block = cb_try_allocate_expandable_block(p, pa->stream, pa->pool,
		                                             pa->size_bytes, &pa->err);
		return pa->block != NULL;
	}
	pa->err = cb_reserve_segment(p, pa);
	return pa->err == MEMPROF_POOL_OK;
}

/* should_split */
static int should_split(const struct cb_pool *p, const struct cb_block *b, uint64_t size)
{
	uint64_t remaining = b->size_bytes - size;

	if (b->pool->is_small || p->cfg.expandable)
		return remaining >= CB_MIN_BLOCK;
	return size < p->cfg.max_split_size_bytes && remaining > CB_SMALL_SIZE;
}

/* alloc_found_block: carve the request off the front of the block found. */
static struct cb_block *alloc_found_block(struct cb_pool *p, struct cb_params *pa,
                                          uint64_t orig_size, int split)
{
	struct cb_block *b = pa->block, *remaining;

	if (split) {
		remaining = b;
		b = cb_block_new(p, pa->stream, pa->size_bytes, pa->pool, remaining->addr);
		if (!b) {
			cb_insert_into_blocks(pa->pool, remaining);
			cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
			return NULL;
		}
		b->es = remaining->es;
		b->seg = remaining->seg;
		cb_splice(b, remaining->prev, remaining);
		remaining->addr += pa->size_bytes;
		remaining->size_bytes -= pa->size_bytes;
		cb_insert_into_blocks(pa->pool, remaining);
		p->st.n_splits++;
	}
	b->allocated = 1;
	b->requested_bytes = orig_size;
	p->allocated_bytes += b->size_bytes;
	if (p->allocated_bytes > p->st.peak_allocated_bytes)
		p->st.peak_allocated_bytes = p->allocated_bytes;
	if (b->size_bytes >= p->cfg.max_split_size_bytes)
		p->st.n_oversize_allocs++;
	return b;
}

/* The OOM ladder of malloc: allocate, free oversize blocks, free every cached segment. */
static int find_new_block(struct cb_pool *p, struct cb_params *pa)
{
	if (gc_enabled(p))
		cb_garbage_collect_cached_blocks(p);
	if (alloc_block(p, pa, 0))
		return 1;
	if (pa->err != MEMPROF_POOL_ENOMEM || p->fault)
		return 0;
	if (cb_release_available_cached_blocks(p, pa) && alloc_block(p, pa, 0))
		return 1;
	if (pa->err != MEMPROF_POOL_ENOMEM || p->fault)
		return 0;
	return cb_release_cached_blocks(p) && alloc_block(p, pa, 1);
}

/* malloc */
int cb_malloc(struct cb_pool *p, uint64_t stream, uint64_t orig_size, struct cb_block **out)
{
	struct cb_params pa = {.stream = stream};
	struct cb_block *b;

	if (orig_size >= CB_MAX_REQUEST) {
		p->st.n_ooms++;
		return MEMPROF_POOL_ENOMEM;
	}
	pa.size_bytes = cb_round_size(&p->cfg, orig_size);
	pa.pool = pa.size_bytes <= CB_SMALL_SIZE ? &p->small : &p->large;
	pa.alloc_bytes = cb_allocation_size(pa.size_bytes);
	if (get_free_block(p, &pa)) {
		p->st.n_cache_hits++;
	} else if (!find_new_block(p, &pa)) {
		if (p->fault)
			return p->fault;
		if (pa.err != MEMPROF_POOL_ENOMEM)
			return pa.err ? pa.err : MEMPROF_POOL_EFAULT;
		p->st.n_ooms++;
		return MEMPROF_POOL_ENOMEM;
	}
	b = alloc_found_block(p, &pa, orig_size, should_split(p, pa.block, pa.size_bytes));
	if (!b)
		return p->fault;
	*out = b;
	return MEMPROF_POOL_OK;
}

/* free -> free_block: back to its allocation stream's pool, merged with free neighbours. */
void cb_free(struct cb_pool *p, struct cb_block *b)
{
	struct cb_blockpool *pool = b->pool;

	b->allocated = 0;
	p->allocated_bytes -= b->size_bytes;
	cb_try_merge_blocks(p, b, b->prev);
	cb_try_merge_blocks(p, b, b->next);
	cb_insert_into_blocks(pool, b);
}
