/*
 * plugins/caching/expandable.c - expandable_segments mode: PyTorch's
 * ExpandableSegment (one VA range per stream and pool kind, from
 * host->va_reserve, sized for 1 1/8 of the device's memory) grown by mapping
 * chunks of 2 MiB (small pool) or 20 MiB (large pool) with host->map and
 * shrunk with host->unmap; and the block functions over it
 * (find_expandable_block, map_block, try_allocate_expandable_block,
 * unmap_block, release_expandable_segment).  Only mapped bytes are reserved.
 */
#include <stdlib.h>

#include "caching.h"

/* A chunk size the host can map: the real size, rounded to the host's granularity. */
static uint64_t chunk_bytes_for(const struct cb_pool *p, int is_small)
{
	uint64_t chunk = is_small ? CB_SMALL_BUFFER : CB_LARGE_BUFFER;
	uint64_t g = p->host->granularity_bytes;

	if (g && chunk % g)
		chunk = (chunk + g - 1) / g * g;
	return chunk;
}

/* new ExpandableSegment: reserve the VA range, nothing mapped. */
static struct cb_es *es_new(struct cb_pool *p, uint64_t stream, int is_small, int *err)
{
	uint64_t total = p->cfg.device_bytes, chunk = chunk_bytes_for(p, is_small);
	struct cb_es *es = calloc(1, sizeof *es);
	int rc;

	if (!es) {
		*err = cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
		return NULL;
	}
	es->stream = stream;
	es->chunk_bytes = chunk;
	es->n_chunks = (total + total / 8 + chunk - 1) / chunk;
	es->mapped = calloc(es->n_chunks, 1);
	rc = es->mapped ? p->host->va_reserve(p->host->ctx, es->n_chunks * chunk, &es->va)
	                : MEMPROF_POOL_EFAULT;
	if (rc != MEMPROF_POOL_OK) {
		free(es->mapped);
		free(es);
		if (rc == MEMPROF_POOL_ENOTSUP)
			p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
			             "expandable_segments=on needs virtual memory (va_reserve), "
			             "which backend '%s' lacks",
			             p->host->backend ? p->host->backend : "?");
		*err = rc == MEMPROF_POOL_ENOMEM ? rc : cb_fault(p, rc, "va_reserve");
		return NULL;
	}
	es->next = p->es_list;
	if (p->es_list)
		p->es_list->prev = es;
	p->es_list = es;
	p->st.n_va_reserved++;
	return es;
}

static void unmap_chunks(struct cb_pool *p, struct cb_es *es, uint64_t begin, uint64_t end)
{
	for (uint64_t i = begin; i < end; i++) {
		int rc =
		        p->host->unmap(p->host->ctx, &es->va, i * es->chunk_bytes, es->chunk_bytes);
		if (rc != MEMPROF_POOL_OK)
			cb_fault(p, rc, "unmap");
		es->mapped[i] = 0;
		p->st.n_chunks_unmapped++;
	}
}

/*
 * ExpandableSegment::map: map the chunks covering [addr, addr + size);
 * all or nothing.  Returns the bytes mapped from addr (0: refused).
 */
static uint64_t es_map(struct cb_pool *p, struct cb_es *es, uint64_t addr, uint64_t size,
                       int *err)
{
	uint64_t c = es->chunk_bytes, begin = (addr - es->va.addr) / c;
	uint64_t end = (addr + size - es->va.addr + c - 1) / c;

	for (uint64_t i = begin; i < end; i++) {
		int rc = p->host->map(p->host->ctx, &es->va, i * c, c);
		if (rc != MEMPROF_POOL_OK) {
			unmap_chunks(p, es, begin, i);
			*err = rc == MEMPROF_POOL_ENOMEM ? rc : cb_fault(p, rc, "map");
			return 0;
		}
		es->mapped[i] = 1;
		p->st.n_chunks_mapped++;
	}
	return (end - begin) * c;
}

/* allocatable: free, mapped or not (no stream uses in a replay). */
static int allocatable(const struct cb_block *b)
{
	return b && !b->allocated;
}

static int has_available_address_space(const struct cb_block *b, uint64_t size)
{
	uint64_t bytes = 0;

	while (bytes < size && allocatable(b)) {
		bytes += b->size_bytes;
		b = b->next;
	}
	return bytes >= size;
}

/* find_expandable_block: the lowest free address range with room, else a new segment. */
static struct cb_block *find_expandable_block(struct cb_pool *p, uint64_t stream,
                                              struct cb_blockpool *pool, uint64_t size, int *err)
{
	struct cb_block *c, *cand;
	struct cb_es *es;

	for (c = cb_set_lower_bound(&pool->unmapped, stream, 0, 0); c && c->stream == stream;
	     c = cb_set_next(&pool->unmapped, c)) {
		cand = allocatable(c->prev) ? c->prev : c;
		if (has_available_address_space(cand, size))
			return cand;
	}
	es = es_new(p, stream, pool->is_small, err);
	if (!es)
		return NULL;
	cand = cb_block_new(p, stream, es->n_chunks * es->chunk_bytes, pool, es->va.addr);
	if (!cand) {
		*err = cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
		return NULL;
	}
	cand->mapped = 0;
	cand->es = es;
	cb_set_insert(&pool->unmapped, cand);
	return cand;
}

/* map_block: map the front of an unmapped block and merge it with free neighbours. */
static int map_block(struct cb_pool *p, struct cb_block *to_map, uint64_t size, int *err)
{
	struct cb_blockpool *pool = to_map->pool;
	uint64_t mapped = es_map(p, to_map->es, to_map->addr, size, err);
	struct cb_block *rest;

	if (mapped == 0)
		return 0;
	cb_set_erase(&pool->unmapped, to_map);
	to_map->mapped = 1;
	if (mapped < to_map->size_bytes) {
		rest = cb_block_new(p, to_map->stream, to_map->size_bytes - mapped, pool,
		                    to_map->addr + mapped);
		if (!rest) {
			*err = cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
			return 0;
		}
		rest->mapped = 0;
		rest->es = to_map->es;
		cb_splice(rest, to_map, to_map->next);
		cb_set_insert(&pool->unmapped, rest);
		to_map->size_bytes = mapped;
	}
	cb_try_merge_blocks(p, to_map, to_map->prev);
	cb_try_merge_blocks(p, to_map, to_map->next);
	cb_insert_into_blocks(pool, to_map);
	cb_account_reserved(p, mapped);
	p->st.n_device_alloc++;
	return 1;
}

/* try_allocate_expandable_block: map pages until one free block holds size bytes. */
struct cb_block *cb_try_allocate_expandable_block(struct cb_pool *p, uint64_t stream,
                                                  struct cb_blockpool *pool, uint64_t size,
                                                  int *err)
{
	struct cb_block *cand = find_expandable_block(p, stream, pool, size, err), *next;

	if (!cand)
		return NULL;
	if (!cand->mapped &&
	    !map_block(p, cand, cand->size_bytes < size ? cand->size_bytes : size, err))
		return NULL;
	while (cand->size_bytes < size) {
		uint64_t remaining = size - cand->size_bytes;
		next = cand->next;
		if (!map_block(p, next, remaining < next->size_bytes ? remaining : next->size_bytes,
		               err))
			return NULL;
		cand = next;
	}
	cb_set_erase(&pool->blocks, cand);
	return cand;
}

/* ExpandableSegment::unmap: the whole chunks inside [addr, addr + size); bytes from *start. */
static uint64_t es_unmap(struct cb_pool *p, struct cb_es *es, uint64_t addr, uint64_t size,
                         uint64_t *start)
{
	uint64_t c = es->chunk_bytes, base = es->va.addr;
	uint64_t begin = (addr - base + c - 1) / c, end = (addr + size - base) / c;

	if (begin >= end)
		return 0;
	/* unmapHandles waits for the segment's stream before unmapping. */
	if (p->host->sync)
		p->host->sync(p->host->ctx, es->stream);
	unmap_chunks(p, es, begin, end);
	*start = base + begin * c;
	return (end - begin) * c;
}

static struct cb_block *free_piece(struct cb_pool *p, struct cb_block *b, uint64_t addr,
                                   uint64_t size)
{
	struct cb_block *piece = cb_block_new(p, b->stream, size, b->pool, addr);

	if (!piece) {
		cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
		return NULL;
	}
	piece->es = b->es;
	return piece;
}

/* unmap_block: unmap a free block's whole chunks; partial chunks stay free and mapped. */
void cb_unmap_block(struct cb_pool *p, struct cb_block *b)
{
	uint64_t start = 0, n = es_unmap(p, b->es, b->addr, b->size_bytes, &start);
	uint64_t before = start - b->addr, after = b->size_bytes - before - n;
	struct cb_block *piece;

	if (n == 0)
		return;
	cb_set_erase(&b->pool->blocks, b);
	if (before > 0 && (piece = free_piece(p, b, b->addr, before))) {
		cb_splice(piece, b->prev, b);
		cb_insert_into_blocks(b->pool, piece);
	}
	if (after > 0 && (piece = free_piece(p, b, start + n, after))) {
		cb_splice(piece, b, b->next);
		cb_insert_into_blocks(b->pool, piece);
	}
	b->addr = start;
	b->size_bytes = n;
	b->mapped = 0;
	cb_try_merge_blocks(p, b, b->prev);
	cb_try_merge_blocks(p, b, b->next);
	cb_set_insert(&b->pool->unmapped, b);
	p->reserved_bytes -= n;
	p->st.n_device_free++;
}

static void es_free(struct cb_pool *p, struct cb_es *es)
{
	int rc;

	for (uint64_t i = 0; i < es->n_chunks; i++)
		if (es->mapped[i])
			unmap_chunks(p, es, i, i + 1);
	rc = p->host->va_release(p->host->ctx, &es->va);
	if (rc != MEMPROF_POOL_OK)
		cb_fault(p, rc, "va_release");
	p->st.n_va_released++;
	if (es->prev)
		es->prev->next = es->next;
	else
		p->es_list = es->next;
	if (es->next)
		es->next->prev = es->prev;
	free(es->mapped);
	free(es);
}

/* release_expandable_segment: a wholly unmapped segment gives its VA range back. */
void cb_release_expandable_segment(struct cb_pool *p, struct cb_block *b)
{
	cb_set_erase(&b->pool->unmapped, b);
	es_free(p, b->es);
	cb_block_delete(p, b);
}

/* At destroy: unmap every chunk and give every VA range back. */
void cb_es_destroy_all(struct cb_pool *p)
{
	while (p->es_list)
		es_free(p, p->es_list);
}
