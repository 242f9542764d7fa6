/*
 * plugins/caching/block.c - block structs and the helpers both segment kinds
 * share: a table of every block by id (a handle is id and generation, so a
 * stale or forged handle is refused, never followed), splicing, merging of
 * free neighbours (try_merge_blocks) and the reserved-bytes account.
 */
#include <stdlib.h>

#include "caching.h"

static uint32_t next_prio(struct cb_pool *p)
{
	uint32_t x = p->rng; /* xorshift32: a fixed seed keeps runs reproducible */

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	p->rng = x;
	return x;
}

static int grow_ids(struct cb_pool *p)
{
	uint32_t cap = p->cap_ids ? p->cap_ids * 2 : 1024;
	struct cb_block **ids;
	uint32_t *free_ids;

	if (cap <= p->cap_ids)
		return -1;
	ids = realloc(p->by_id, cap * sizeof *ids);
	if (!ids)
		return -1;
	p->by_id = ids;
	free_ids = realloc(p->free_ids, cap * sizeof *free_ids);
	if (!free_ids)
		return -1;
	p->free_ids = free_ids;
	p->cap_ids = cap;
	return 0;
}

/* new Block(device, stream, size, pool, ptr); NULL when out of host memory. */
struct cb_block *cb_block_new(struct cb_pool *p, uint64_t stream, uint64_t size,
                              struct cb_blockpool *pool, uint64_t addr)
{
	struct cb_block *b;
	uint32_t gen = 0, id;

	if (p->n_free_ids) {
		id = p->free_ids[--p->n_free_ids];
		b = p->by_id[id];
		gen = b->gen + 1;
	} else {
		if (p->n_ids == p->cap_ids && grow_ids(p) != 0)
			return NULL;
		b = malloc(sizeof *b);
		if (!b)
			return NULL;
		id = p->n_ids++;
		p->by_id[id] = b;
	}
	*b = (struct cb_block){.stream = stream,
	                       .size_bytes = size,
	                       .addr = addr,
	                       .pool = pool,
	                       .mapped = 1,
	                       .id = id,
	                       .gen = gen,
	                       .prio = next_prio(p)};
	return b;
}

/* delete block: the struct goes back to the table for reuse. */
void cb_block_delete(struct cb_pool *p, struct cb_block *b)
{
	b->allocated = 0;
	b->pool = NULL;
	p->free_ids[p->n_free_ids++] = b->id;
}

uint64_t cb_block_handle(const struct cb_block *b)
{
	return ((uint64_t)b->gen << 32) | b->id;
}

/* The allocated block a handle names, or NULL. */
struct cb_block *cb_block_of_handle(struct cb_pool *p, uint64_t handle)
{
	uint32_t id = (uint32_t)handle, gen = (uint32_t)(handle >> 32);
	struct cb_block *b;

	if (id >= p->n_ids)
		return NULL;
	b = p->by_id[id];
	if (b->gen != gen || !b->pool || !b->allocated)
		return NULL;
	return b;
}

void cb_block_free_all(struct cb_pool *p)
{
	for (uint32_t i = 0; i < p->n_ids; i++)
		free(p->by_id[i]);
	free(p->by_id);
	free(p->free_ids);
	p->by_id = NULL;
	p->free_ids = NULL;
	p->n_ids = p->cap_ids = p->n_free_ids = 0;
}

/* BlockPool::insert_into_blocks: stamps the block's garbage-collection age. */
void cb_insert_into_blocks(struct cb_blockpool *pool, struct cb_block *b)
{
	b->gc_count_base = pool->get_free_blocks_call_count;
	cb_set_insert(&pool->blocks, b);
}

/* Block::splice: link b between before and after. */
void cb_splice(struct cb_block *b, struct cb_block *before, struct cb_block *after)
{
	if (before)
		before->next = b;
	b->prev = before;
	if (after)
		after->prev = b;
	b->next = after;
}

/*
 * try_merge_blocks: fold the free neighbour src into dst (which is in no
 * set); returns the bytes subsumed, 0 when src is absent, allocated or of
 * the other mapped state.
 */
uint64_t cb_try_merge_blocks(struct cb_pool *p, struct cb_block *dst, struct cb_block *src)
{
	uint64_t subsumed;

	if (!src || src->allocated || dst->mapped != src->mapped)
		return 0;
	if (dst->prev == src) { /* [src dst] */
		dst->addr = src->addr;
		dst->prev = src->prev;
		if (dst->prev)
			dst->prev->next = dst;
	} else { /* [dst src] */
		dst->next = src->next;
		if (dst->next)
			dst->next->prev = dst;
	}
	subsumed = src->size_bytes;
	if (src->mapped)
		cb_set_erase(&src->pool->blocks, src);
	else
		cb_set_erase(&src->pool->unmapped, src);
	dst->size_bytes += subsumed;
	cb_block_delete(p, src);
	p->st.n_merges++;
	return subsumed;
}

void cb_account_reserved(struct cb_pool *p, uint64_t add_bytes)
{
	p->reserved_bytes += add_bytes;
	if (p->reserved_bytes > p->st.peak_reserved_bytes)
		p->st.peak_reserved_bytes = p->reserved_bytes;
}

/* A backend call failed for a reason other than memory: log it once, remember it. */
int cb_fault(struct cb_pool *p, int rc, const char *what)
{
	if (!p->fault)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "backend %s failed (status %d)",
		             what, rc);
	p->fault = rc ? rc : MEMPROF_POOL_EFAULT;
	return p->fault;
}
