/*
 * plugins/caching/release.c - how the caching pool gives cached memory back:
 * release_block (cudaFree of a whole free segment), the two OOM steps
 * (release_available_cached_blocks, release_cached_blocks), the garbage
 * collector of garbage_collection_threshold, and the final release at
 * destroy.  Live blocks are never touched here except at destroy.
 */
#include <stdlib.h>

#include "caching.h"

static int is_split(const struct cb_block *b)
{
	return b->prev || b->next;
}

/* release_block: cudaFree of an unsplit, non-expandable free block. */
static void release_block(struct cb_pool *p, struct cb_block *b)
{
	struct cb_segment *seg = b->seg;
	int rc = p->host->release(p->host->ctx, &seg->region);

	if (rc != MEMPROF_POOL_OK)
		cb_fault(p, rc, "release");
	p->reserved_bytes -= b->size_bytes;
	p->st.n_segments_released++;
	p->st.n_device_free++;
	if (seg->prev)
		seg->prev->next = seg->next;
	else
		p->segments = seg->next;
	if (seg->next)
		seg->next->prev = seg->prev;
	free(seg);
	cb_set_erase(&b->pool->blocks, b);
	cb_block_delete(p, b);
}

/* A block release_block may take: whole, cudaMalloc'd and free. */
static int releasable(const struct cb_block *b)
{
	return !b->es && !is_split(b) && b->seg;
}

/*
 * release_available_cached_blocks: with max_split_size set, free the
 * smallest oversize block that covers the request, else oversize blocks from
 * the largest down until they cover it.  Expandable blocks are never freed
 * here (PyTorch #134338): a found one sends the search to the second way,
 * which steps over them.  A split block (possible only in a seeded segment)
 * is stepped over likewise, since release_block frees whole segments.
 */
int cb_release_available_cached_blocks(struct cb_pool *p, const struct cb_params *pa)
{
	uint64_t max_split = p->cfg.max_split_size_bytes, key_size, total = 0;
	struct cb_set *set = &pa->pool->blocks;
	struct cb_block *b, *cur;

	if (max_split == CB_NO_LIMIT)
		return 0;
	key_size = pa->size_bytes < max_split ? max_split : pa->size_bytes;
	b = cb_set_lower_bound(set, pa->stream, key_size, 0);
	if (b && b->stream == pa->stream && releasable(b)) {
		release_block(p, b);
		p->st.n_oom_released++;
		return 1;
	}
	/* No single block is large enough: free several, starting with the largest. */
	b = cb_set_before(set, pa->stream, key_size, 0);
	while (b && total < key_size && b->size_bytes >= max_split && b->stream == pa->stream) {
		cur = b;
		b = cb_set_prev(set, cur);
		if (releasable(cur)) {
			total += cur->size_bytes;
			release_block(p, cur);
			p->st.n_oom_released++;
		}
	}
	return total >= key_size;
}

/* release_blocks: free every unsplit cached segment, unmap free expandable pages. */
static void release_blocks(struct cb_pool *p, struct cb_blockpool *pool)
{
	struct cb_block *b, *nb, **to_unmap;
	size_t n = 0;

	to_unmap = malloc((pool->blocks.n + 1) * sizeof *to_unmap);
	if (!to_unmap) {
		cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
		return;
	}
	for (b = cb_set_first(&pool->blocks); b; b = nb) {
		nb = cb_set_next(&pool->blocks, b);
		if (b->es) {
			to_unmap[n++] = b;
		} else if (!is_split(b)) {
			release_block(p, b);
			p->st.n_oom_released++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		cb_unmap_block(p, to_unmap[i]);
		if (!is_split(to_unmap[i]))
			cb_release_expandable_segment(p, to_unmap[i]);
	}
	free(to_unmap);
}

/* release_cached_blocks (emptyCache): both pools. */
int cb_release_cached_blocks(struct cb_pool *p)
{
	release_blocks(p, &p->large);
	release_blocks(p, &p->small);
	return !p->fault;
}

static uint64_t gc_count(const struct cb_block *b)
{
	return (uint64_t)(b->pool->get_free_blocks_call_count - b->gc_count_base);
}

/* One sweep of the collector: free unsplit large blocks at least as old as the average. */
static int gc_sweep(struct cb_pool *p, uint64_t *total_age, uint64_t *n_freeable,
                    uint64_t *reclaimed)
{
	double age_threshold = (double)*total_age / (double)*n_freeable;
	struct cb_block *b, *nb;
	int freed = 0;

	for (b = cb_set_first(&p->large.blocks); b; b = nb) {
		nb = cb_set_next(&p->large.blocks, b);
		if (releasable(b) && (double)gc_count(b) >= age_threshold) {
			freed = 1;
			*reclaimed += b->size_bytes;
			*total_age -= gc_count(b);
			(*n_freeable)--;
			release_block(p, b);
			p->st.n_gc_released++;
		}
	}
	return freed;
}

/* garbage_collect_cached_blocks: when reserved passes threshold x capacity. */
void cb_garbage_collect_cached_blocks(struct cb_pool *p)
{
	uint64_t gc_threshold = (uint64_t)(p->cfg.gc_threshold * (double)p->allowed_bytes);
	uint64_t target, reclaimed = 0, total_age = 0, n_freeable = 0;
	struct cb_block *b;

	if (p->reserved_bytes <= gc_threshold)
		return;
	target = p->reserved_bytes - gc_threshold;
	for (b = cb_set_first(&p->large.blocks); b; b = cb_set_next(&p->large.blocks, b)) {
		if (releasable(b)) {
			total_age += gc_count(b);
			n_freeable++;
		}
	}
	while (reclaimed < target && n_freeable > 0 &&
	       gc_sweep(p, &total_age, &n_freeable, &reclaimed))
		;
}

/* At destroy: give back every segment, live or cached, and every VA range. */
void cb_release_all(struct cb_pool *p)
{
	struct cb_segment *seg = p->segments, *next;

	while (seg) {
		next = seg->next;
		p->host->release(p->host->ctx, &seg->region);
		free(seg);
		seg = next;
	}
	p->segments = NULL;
	cb_es_destroy_all(p);
	p->reserved_bytes = 0;
}
