/*
 * plugins/caching/caching.c - the caching pool: a faithful model of
 * PyTorch's CUDA caching allocator (DeviceCachingAllocator in
 * c10/cuda/CUDACachingAllocator.cpp), following pytorch/pytorch commit
 * 001074d25084fdb87a799823e395a50f5ec044d3, whose snapshot settings
 * (max_split_size, garbage_collection_threshold, expandable_segments,
 * roundup_power2_divisions, ...) are those the shared torch traces record;
 * option ranges follow CUDAAllocatorConfig.cpp of the same line.
 *
 * This file owns the pool's entry points (create, alloc, free, stats,
 * destroy; embed.h, for plugin.c and for pools that embed this one as
 * their fallback) and maps handles to blocks; the allocator itself lives in
 * alloc.c, release.c and expandable.c.  Not modelled, because a replay has
 * none of them: CUDA-graph private pools, recordStream events (a free in the
 * trace is the block's free_completed), IPC, and free-memory callbacks.  A
 * free on another stream returns the block to its allocation stream's pool,
 * as in PyTorch.  The pool serves requested_bytes when the trace has it (the
 * size the program asked PyTorch for), else size_bytes.  seed.c adopts the
 * recorded allocator's segments at the start of a trace window, through
 * the plugin ABI's seed callback (1.3).
 */
#include <stdlib.h>

#include "caching.h"
#include "embed.h"

static int host_ok(const struct memprof_pool_host *host, int expandable)
{
	size_t need = expandable ? offsetof(struct memprof_pool_host, unmap) + sizeof host->unmap
	                         : offsetof(struct memprof_pool_host, log) + sizeof host->log;

	if (host->struct_size < need || !host->reserve || !host->release || !host->log)
		return 0;
	return !expandable || (host->va_reserve && host->va_release && host->map && host->unmap);
}

int cb_pool_create(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                   size_t n_opts, struct cb_pool **out)
{
	struct cb_pool *p;
	struct cb_config cfg;
	int rc = cb_config_parse(&cfg, host, opts, n_opts);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	if (!host_ok(host, cfg.expandable)) {
		if (host->struct_size >=
		            offsetof(struct memprof_pool_host, log) + sizeof host->log &&
		    host->log)
			host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
			          "the host lacks the services this pool needs%s",
			          cfg.expandable
			                  ? " (va_reserve, map, unmap for expandable_segments)"
			                  : "");
		return MEMPROF_POOL_ENOTSUP;
	}
	p = calloc(1, sizeof *p);
	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	p->cfg = cfg;
	p->allowed_bytes = host->capacity_bytes;
	p->rng = 0x9e3779b9u;
	cb_set_init(&p->large.blocks, 0);
	cb_set_init(&p->large.unmapped, 1);
	cb_set_init(&p->small.blocks, 0);
	cb_set_init(&p->small.unmapped, 1);
	p->small.is_small = 1;
	*out = p;
	return MEMPROF_POOL_OK;
}

int cb_pool_alloc(struct cb_pool *p, const struct memprof_pool_request *req,
                  struct memprof_pool_block *out)
{
	uint64_t orig = req->requested_bytes ? req->requested_bytes : req->size_bytes;
	struct cb_block *b;
	int rc;

	if (p->fault)
		return p->fault;
	b = cb_seed_claim(p, req->index);
	if (b && cb_round_size(&p->cfg, orig) > b->size_bytes) {
		cb_free(p, b); /* the trace's block cannot hold the request: serve it afresh */
		b = NULL;
	}
	if (b) {
		b->requested_bytes = orig;
	} else {
		rc = cb_malloc(p, req->stream, orig, &b);
		if (rc != MEMPROF_POOL_OK)
			return rc;
	}
	p->st.n_allocs++;
	out->addr = b->addr;
	out->size_bytes = b->size_bytes;
	out->handle = cb_block_handle(b);
	return MEMPROF_POOL_OK;
}

int cb_pool_free(struct cb_pool *p, const struct memprof_pool_block *blk, uint64_t stream)
{
	struct cb_block *b = cb_block_of_handle(p, blk->handle);

	if (!b || b->addr != blk->addr) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a block this pool did not hand out (address 0x%llx)",
		             (unsigned long long)blk->addr);
		return MEMPROF_POOL_EINVAL;
	}
	if (stream != b->stream)
		p->st.n_cross_stream_frees++;
	p->st.n_frees++;
	cb_free(p, b);
	return p->fault;
}

static uint64_t cached_bytes(const struct cb_set *s)
{
	uint64_t n = 0;

	for (struct cb_block *b = cb_set_first(s); b; b = cb_set_next(s, b))
		n += b->size_bytes;
	return n;
}

void cb_pool_stats(struct cb_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct cb_stats *s = &p->st;
	const struct {
		const char *name;
		double value;
		const char *unit;
	} rows[] = {
	        {"segments_reserved", (double)s->n_segments_reserved, "count"},
	        {"segments_released", (double)s->n_segments_released, "count"},
	        {"cache_hits", (double)s->n_cache_hits, "count"},
	        {"cache_hit_ratio", s->n_allocs ? (double)s->n_cache_hits / (double)s->n_allocs : 0,
	         "ratio"},
	        {"splits", (double)s->n_splits, "count"},
	        {"merges", (double)s->n_merges, "count"},
	        {"alloc_retries", (double)s->n_alloc_retries, "count"},
	        {"ooms", (double)s->n_ooms, "count"},
	        {"blocks_released_for_oom", (double)s->n_oom_released, "count"},
	        {"blocks_released_by_gc", (double)s->n_gc_released, "count"},
	        {"oversize_allocations", (double)s->n_oversize_allocs, "count"},
	        {"cross_stream_frees", (double)s->n_cross_stream_frees, "count"},
	        {"chunks_mapped", (double)s->n_chunks_mapped, "count"},
	        {"chunks_unmapped", (double)s->n_chunks_unmapped, "count"},
	        {"expandable_segments", (double)s->n_va_reserved, "count"},
	        {"seeded_segments", (double)s->n_seeded_segments, "count"},
	        {"seeded_blocks_claimed", (double)s->n_seeded_claimed, "count"},
	        {"reserved_bytes_end", (double)p->reserved_bytes, "bytes"},
	        {"allocated_bytes_end", (double)p->allocated_bytes, "bytes"},
	        {"cached_free_bytes_end",
	         (double)(cached_bytes(&p->large.blocks) + cached_bytes(&p->small.blocks)),
	         "bytes"},
	        {"peak_reserved_bytes", (double)s->peak_reserved_bytes, "bytes"},
	        {"peak_allocated_bytes", (double)s->peak_allocated_bytes, "bytes"},
	};

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		emit(ctx, rows[i].name, rows[i].value, rows[i].unit);
}

void cb_pool_destroy(struct cb_pool *p)
{
	if (!p)
		return;
	cb_release_all(p);
	cb_block_free_all(p);
	free(p->seeded);
	free(p);
}

int cb_pool_seed(struct cb_pool *p, const struct memprof_pool_seed_segment *segments, size_t n)
{
	int rc = MEMPROF_POOL_OK;

	for (size_t i = 0; i < n && rc == MEMPROF_POOL_OK; i++) {
		const struct memprof_pool_seed_segment *s = &segments[i];
		struct cb_seed_block *blocks =
		        malloc((s->n_blocks ? s->n_blocks : 1) * sizeof *blocks);

		if (!blocks)
			return cb_fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
		for (size_t k = 0; k < s->n_blocks; k++)
			blocks[k] =
			        (struct cb_seed_block){s->blocks[k].offset_bytes,
			                               s->blocks[k].size_bytes, s->blocks[k].index};
		rc = cb_seed_segment(p, s->size_bytes, s->stream, blocks, s->n_blocks);
		free(blocks);
	}
	return rc;
}

int cb_pool_release_cached(struct cb_pool *p)
{
	return cb_release_cached_blocks(p);
}
