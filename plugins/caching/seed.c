/*
 * plugins/caching/seed.c - adopting the recorded allocator's state at the
 * start of a trace window (a snapshot's preexisting segments), the way
 * PyTorch restores a checkpointed pool (setSegmentStateToCheckpoint): each
 * segment is reserved whole, cut into its recorded blocks, and its free
 * blocks go to the cache; each live block waits for its preexisting
 * allocation (by request index) to claim it.  Nothing else uses it.
 */
#include <stdlib.h>

#include "caching.h"

static int layout_ok(uint64_t size, const struct cb_seed_block *blocks, size_t n)
{
	uint64_t at = 0;

	for (size_t i = 0; i < n; i++) {
		if (blocks[i].offset_bytes != at || blocks[i].size_bytes == 0 ||
		    blocks[i].size_bytes > size - at)
			return 0;
		at += blocks[i].size_bytes;
	}
	return n > 0 && at == size;
}

/* Note that allocation index will claim block b; -1 if named twice. */
static int remember(struct cb_pool *p, int64_t index, const struct cb_block *b)
{
	if ((uint64_t)index >= p->n_seeded) {
		uint64_t want = (uint64_t)index + 1,
		         n = 2 * p->n_seeded > want ? 2 * p->n_seeded : want;
		uint64_t *grown = realloc(p->seeded, n * sizeof *grown);
		if (!grown)
			return -1;
		for (uint64_t i = p->n_seeded; i < n; i++)
			grown[i] = UINT64_MAX;
		p->seeded = grown;
		p->n_seeded = n;
	}
	if (p->seeded[index] != UINT64_MAX)
		return -1;
	p->seeded[index] = cb_block_handle(b);
	return 0;
}

/* Cut the segment's head block into the recorded blocks, all allocated for now. */
static int cut(struct cb_pool *p, struct cb_block *head, const struct cb_seed_block *blocks,
               size_t n, struct cb_block **made)
{
	struct cb_block *b = head;

	for (size_t i = 0; i < n; i++) {
		if (i > 0) {
			b = cb_block_new(p, head->stream, blocks[i].size_bytes, head->pool,
			                 head->addr + blocks[i].offset_bytes);
			if (!b)
				return cb_fault(p, MEMPROF_POOL_EFAULT,
				                "bookkeeping (out of host memory)");
			b->seg = head->seg;
			cb_splice(b, made[i - 1], NULL);
		}
		b->size_bytes = blocks[i].size_bytes;
		b->allocated = 1;
		b->requested_bytes = blocks[i].size_bytes;
		p->allocated_bytes += b->size_bytes;
		made[i] = b;
		if (blocks[i].index >= 0 && remember(p, blocks[i].index, b) != 0) {
			p->host->log(
			        p->host->ctx, MEMPROF_POOL_LOG_ERROR,
			        "seeded allocation %lld is named twice (or out of host memory)",
			        (long long)blocks[i].index);
			return MEMPROF_POOL_EINVAL;
		}
	}
	return MEMPROF_POOL_OK;
}

/*
 * Reserve one preexisting segment of size bytes on stream, laid out as
 * blocks (address order, covering it exactly; index -1 for a free block).
 * Segments of 2 MiB or less join the small pool, larger ones the large pool.
 */
int cb_seed_segment(struct cb_pool *p, uint64_t size, uint64_t stream,
                    const struct cb_seed_block *blocks, size_t n)
{
	struct cb_params pa = {.stream = stream, .size_bytes = size, .alloc_bytes = size};
	struct cb_block **made;
	int rc;

	if (!layout_ok(size, blocks, n)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "seeded segment of %llu bytes: its blocks do not tile it",
		             (unsigned long long)size);
		return MEMPROF_POOL_EINVAL;
	}
	pa.pool = size <= CB_SMALL_BUFFER ? &p->small : &p->large;
	made = malloc(n * sizeof *made);
	if (!made)
		return cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
	rc = cb_reserve_segment(p, &pa);
	if (rc == MEMPROF_POOL_OK)
		rc = cut(p, pa.block, blocks, n, made);
	for (size_t i = 0; rc == MEMPROF_POOL_OK && i < n; i++)
		if (blocks[i].index < 0)
			cb_free(p, made[i]);
	free(made);
	if (rc == MEMPROF_POOL_OK)
		p->st.n_seeded_segments++;
	return rc;
}

/* The seeded block waiting for allocation index, or NULL; claimed once. */
struct cb_block *cb_seed_claim(struct cb_pool *p, int64_t index)
{
	struct cb_block *b;

	if (index < 0 || (uint64_t)index >= p->n_seeded || p->seeded[index] == UINT64_MAX)
		return NULL;
	b = cb_block_of_handle(p, p->seeded[index]);
	p->seeded[index] = UINT64_MAX;
	if (b)
		p->st.n_seeded_claimed++;
	return b;
}
