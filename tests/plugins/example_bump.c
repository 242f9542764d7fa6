/*
 * bump.c - a bump allocator: one arena reserved at create, blocks handed
 * out one after another at 256-byte alignment, and the whole arena reused
 * once every block is freed.  The example of memprof-plugin(7).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <memprof/pool.h>

#define BUMP_ALIGN 256

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct memprof_region arena;
	uint64_t used_bytes; /* the bump pointer, from arena.addr */
	uint64_t n_live, n_resets;
};

static const struct memprof_pool_option_spec bump_options[] = {
        {"arena-bytes", "BYTES", "size of the arena (default 1073741824)"},
        {NULL, NULL, NULL},
};

static int bump_create(const struct memprof_pool_host *host,
                       const struct memprof_pool_option *opts, size_t n_opts,
                       struct memprof_pool **out)
{
	uint64_t arena_bytes = 1ull << 30;
	struct memprof_pool *p;
	char *end;
	int rc;

	for (size_t i = 0; i < n_opts; i++) {
		if (strcmp(opts[i].name, "arena-bytes") != 0)
			continue;
		errno = 0;
		arena_bytes = strtoull(opts[i].value, &end, 10);
		if (errno || end == opts[i].value || *end ||
		    opts[i].value[0] == '-' || arena_bytes == 0) {
			host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
			          "invalid arena-bytes '%s': give a positive "
			          "number of bytes",
			          opts[i].value);
			return MEMPROF_POOL_EINVAL;
		}
	}
	if (!(p = calloc(1, sizeof *p)))
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	rc = host->reserve(host->ctx, arena_bytes, &p->arena);
	if (rc != MEMPROF_POOL_OK) {
		host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
		          "cannot reserve a %llu-byte arena",
		          (unsigned long long)arena_bytes);
		free(p);
		return rc;
	}
	*out = p;
	return MEMPROF_POOL_OK;
}

static int bump_alloc(struct memprof_pool *p,
                      const struct memprof_pool_request *req,
                      struct memprof_pool_block *out)
{
	uint64_t size = req->size_bytes ? req->size_bytes : 1;

	if (size > p->arena.size_bytes)
		return MEMPROF_POOL_ENOMEM;
	size = (size + BUMP_ALIGN - 1) / BUMP_ALIGN * BUMP_ALIGN;
	if (size > p->arena.size_bytes - p->used_bytes)
		return MEMPROF_POOL_ENOMEM;
	out->addr = p->arena.addr + p->used_bytes;
	out->size_bytes = size;
	out->handle = 0;
	p->used_bytes += size;
	p->n_live++;
	return MEMPROF_POOL_OK;
}

static int bump_free(struct memprof_pool *p, const struct memprof_pool_block *b,
                     uint64_t stream)
{
	(void)b, (void)stream;
	if (--p->n_live == 0) {
		p->used_bytes = 0;
		p->n_resets++;
	}
	return MEMPROF_POOL_OK;
}

static void bump_stats(struct memprof_pool *p, memprof_pool_emit_fn emit,
                       void *emit_ctx)
{
	emit(emit_ctx, "arena_bytes", (double)p->arena.size_bytes, "bytes");
	emit(emit_ctx, "resets", (double)p->n_resets, "count");
}

static void bump_destroy(struct memprof_pool *p)
{
	p->host->release(p->host->ctx, &p->arena);
	free(p);
}

static const struct memprof_pool_ops bump_ops = {
        MEMPROF_POOL_OPS_HEADER("bump",
                                "one arena, a bump pointer, reset when empty"),
        .options = bump_options,
        .create = bump_create,
        .alloc = bump_alloc,
        .free = bump_free,
        .stats = bump_stats,
        .destroy = bump_destroy,
};

MEMPROF_POOL_DEFINE(bump_ops)
