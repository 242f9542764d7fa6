/*
 * plugins/compacting/copy.c - copy mode's allocation path: best fit in the
 * arena; on a miss, compaction instead of growth when fragmentation is past
 * compact-at, else a new chunk (reserve, sized as PyTorch's large pool
 * sizes segments); when the backend refuses it, a forced compaction and one
 * more try.  Chunks stay reserved until a compaction empties them.
 */
#include "compacting.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Reserves a chunk of size_bytes and adds it to the arena. */
static int grow(struct memprof_pool *p, uint64_t size_bytes)
{
	const struct memprof_pool_host *h = p->host;
	struct memprof_region r;
	int rc = h->reserve(h->ctx, size_bytes, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	if (!cp_arena_add_chunk(&p->arena, &r)) {
		h->release(h->ctx, &r);
		h->log(h->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory for a chunk record");
		return MEMPROF_POOL_EFAULT;
	}
	p->st.chunks_reserved++;
	if (p->arena.arena_bytes > p->st.peak_arena_bytes)
		p->st.peak_arena_bytes = p->arena.arena_bytes;
	return MEMPROF_POOL_OK;
}

static int threshold_due(const struct memprof_pool *p)
{
	const struct cp_arena *a = &p->arena;

	return p->dirty && a->free_bytes >= p->cfg.compact_min_bytes &&
	       p->freed_since_bytes >= p->cfg.compact_min_bytes &&
	       cp_arena_frag(a) > p->cfg.compact_at;
}

/*
 * No hole fits size_bytes: grow by a chunk (grow for requests under half of
 * it, else the request rounded up to 2 MiB, as PyTorch's 20 MiB segments
 * serve requests under 10 MiB), then by the request alone; when the backend
 * refuses both, compact (forced) and retry the hole, then the growth.
 */
static int make_room(struct memprof_pool *p, uint64_t size_bytes)
{
	uint64_t least = round_up(round_up(size_bytes, CP_CHUNK_ROUND_BYTES), p->cfg.align_bytes);
	uint64_t chunk = 2 * size_bytes < p->cfg.grow_bytes ? p->cfg.grow_bytes : least;
	int rc = grow(p, chunk);

	if (rc == MEMPROF_POOL_ENOMEM && least < chunk)
		rc = grow(p, least);
	if (rc != MEMPROF_POOL_ENOMEM)
		return rc;
	p->st.grows_refused++;
	if (!p->dirty)
		return MEMPROF_POOL_ENOMEM;
	if ((rc = cp_compact(p, 1)) != MEMPROF_POOL_OK)
		return rc;
	if (cp_index_fit(&p->arena, size_bytes))
		return MEMPROF_POOL_OK;
	return grow(p, least);
}

int cp_copy_alloc(struct memprof_pool *p, uint64_t size_bytes, struct cp_seg **out)
{
	struct cp_seg *f = cp_index_fit(&p->arena, size_bytes);
	int rc;

	if (!f && threshold_due(p)) {
		if ((rc = cp_compact(p, 0)) != MEMPROF_POOL_OK)
			return rc;
		f = cp_index_fit(&p->arena, size_bytes);
	}
	if (!f) {
		if ((rc = make_room(p, size_bytes)) != MEMPROF_POOL_OK)
			return rc;
		f = cp_index_fit(&p->arena, size_bytes);
		if (!f)
			return MEMPROF_POOL_ENOMEM; /* a chunk smaller than asked: cannot happen */
	}
	*out = cp_arena_take(&p->arena, f, size_bytes);
	if (!*out) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory");
		return MEMPROF_POOL_EFAULT;
	}
	return MEMPROF_POOL_OK;
}

void cp_copy_destroy(struct memprof_pool *p)
{
	struct cp_arena *a = &p->arena;

	for (size_t i = 0; i < a->n_chunks; i++)
		p->host->release(p->host->ctx, &a->chunks[i]->region);
	cp_arena_free(a);
}
