/*
 * plugins/compacting/pool.c - the "compacting" pool's ABI glue: options,
 * request rounding, handles, stats.  copy mode (copy.c, compact.c) grows an
 * arena by reserved chunks and compacts it by device copies; vmm mode
 * (vmm.c) maps physical chunks into one virtual range and never copies.
 * Every request is the strategy's: there is no caching fallback.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "compacting.h"

static const struct memprof_pool_option_spec compacting_options[] = {
        {"mode", "copy|vmm",
         "copy: reserved chunks, compacted by device copies; vmm: one virtual range, "
         "chunks mapped and unmapped, no copies (default copy)"},
        {"align", "BYTES", "round every request up to this power of two (default 512)"},
        {"grow", "BYTES",
         "copy: grow by chunks of this size for requests under half of it, else by the "
         "request rounded up to 2MiB (default 20MiB)"},
        {"compact-at", "RATIO",
         "copy: when no hole fits, compact instead of growing if 1 - largest hole / free "
         "bytes is above this; 1: only when the backend refuses memory (default 0.3)"},
        {"compact-min", "BYTES",
         "copy: compact by compact-at only with this many free bytes in the arena "
         "(default 64MiB)"},
        {"va-size", "BYTES",
         "vmm: the virtual range, at most 4TiB (default the capacity plus 1/8, else 80GiB)"},
        {NULL, NULL, NULL},
};

static int parse_value(struct cp_config *c, const char *name, const char *v)
{
	static const char *const modes[] = {"copy", "vmm", NULL};
	uint64_t n;

	if (!strcmp(name, "mode"))
		return (c->mode = pl_parse_choice(v, modes)) < 0 ? -1 : 0;
	if (!strcmp(name, "compact-at"))
		return pl_parse_ratio(v, 0.0, 1.0, &c->compact_at);
	if (pl_parse_bytes(v, &n) < 0)
		return -1;
	if (!strcmp(name, "align") && n && !(n & (n - 1)) && n <= (1ull << 30))
		c->align_bytes = n;
	else if (!strcmp(name, "grow") && n && n <= (1ull << 50))
		c->grow_bytes = n;
	else if (!strcmp(name, "compact-min"))
		c->compact_min_bytes = n;
	else if (!strcmp(name, "va-size") && n && n <= CP_MAX_VA_BYTES)
		c->va_size_bytes = n;
	else
		return -1;
	return 0;
}

static int compacting_create(const struct memprof_pool_host *host,
                             const struct memprof_pool_option *opts, size_t n_opts,
                             struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);

	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	p->cfg = (struct cp_config){.mode = CP_MODE_COPY,
	                            .align_bytes = 512,
	                            .grow_bytes = 20 * CP_MiB,
	                            .compact_min_bytes = 64 * CP_MiB,
	                            .compact_at = 0.3};
	cp_arena_init(&p->arena);
	for (size_t i = 0; i < n_opts; i++) {
		const char *name = opts[i].name ? opts[i].name : "", *v = opts[i].value;

		if (!v || parse_value(&p->cfg, name, v) < 0) {
			host->log(host->ctx, MEMPROF_POOL_LOG_ERROR, "bad option '%s=%s'", name,
			          v ? v : "");
			free(p);
			return MEMPROF_POOL_EINVAL;
		}
	}
	p->cfg.grow_bytes = (p->cfg.grow_bytes + p->cfg.align_bytes - 1) / p->cfg.align_bytes *
	                    p->cfg.align_bytes;
	*out = p;
	return MEMPROF_POOL_OK;
}

static int compacting_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                            struct memprof_pool_block *out)
{
	uint64_t a = p->cfg.align_bytes, size, handle;
	struct cp_seg *s = NULL;
	int rc;

	if (req->size_bytes > CP_MAX_REQUEST_BYTES) {
		p->st.ooms++;
		return MEMPROF_POOL_ENOMEM;
	}
	size = ((req->size_bytes ? req->size_bytes : 1) + a - 1) / a * a;
	rc = p->cfg.mode == CP_MODE_VMM ? cp_vmm_alloc(p, size, &s) : cp_copy_alloc(p, size, &s);
	if (rc == MEMPROF_POOL_ENOMEM)
		p->st.ooms++;
	if (rc != MEMPROF_POOL_OK)
		return rc;
	if (!(handle = cp_handle_new(&p->arena, s))) {
		if (p->cfg.mode == CP_MODE_VMM)
			cp_vmm_free(p, s);
		else
			cp_arena_give(&p->arena, s);
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory");
		return MEMPROF_POOL_EFAULT;
	}
	s->token = req->block_token;
	s->data_bytes = req->size_bytes;
	*out = (struct memprof_pool_block){.addr = s->addr, .size_bytes = size, .handle = handle};
	return MEMPROF_POOL_OK;
}

static int compacting_free(struct memprof_pool *p, const struct memprof_pool_block *b,
                           uint64_t stream)
{
	struct cp_seg *s = cp_handle_find(&p->arena, b->handle);

	(void)stream;
	if (!s || s->addr != b->addr) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a block it does not hold (handle 0x%llx at 0x%llx)",
		             (unsigned long long)b->handle, (unsigned long long)b->addr);
		return MEMPROF_POOL_EINVAL;
	}
	cp_handle_drop(&p->arena, s);
	if (p->cfg.mode == CP_MODE_VMM)
		return cp_vmm_free(p, s);
	p->freed_since_bytes += s->size_bytes;
	cp_arena_give(&p->arena, s);
	p->dirty = 1;
	return MEMPROF_POOL_OK;
}

static void emit_copy(const struct cp_stats *st, memprof_pool_emit_fn emit, void *ctx)
{
	double n = st->n_compactions ? (double)st->n_compactions : 1.0;

	emit(ctx, "compactions_threshold", (double)st->n_threshold, "count");
	emit(ctx, "compactions_forced", (double)st->n_forced, "count");
	emit(ctx, "blocks_moved", (double)st->blocks_moved, "count");
	emit(ctx, "blocks_kept_in_place", (double)st->blocks_kept, "count");
	emit(ctx, "external_fragmentation_before_mean", st->frag_before_sum / n, "ratio");
	emit(ctx, "external_fragmentation_after_mean", st->frag_after_sum / n, "ratio");
	emit(ctx, "external_fragmentation_before_max", st->frag_before_max, "ratio");
	emit(ctx, "chunks_reserved", (double)st->chunks_reserved, "count");
	emit(ctx, "chunks_released", (double)st->chunks_released, "count");
	emit(ctx, "grows_refused", (double)st->grows_refused, "count");
}

static void compacting_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct cp_stats *st = &p->st;

	emit(ctx, "compactions", (double)st->n_compactions, "count");
	emit(ctx, "bytes_moved", (double)st->bytes_moved, "bytes");
	if (p->cfg.mode == CP_MODE_COPY) {
		emit_copy(st, emit, ctx);
		emit(ctx, "arena_bytes_end", (double)p->arena.arena_bytes, "bytes");
		emit(ctx, "external_fragmentation_at_end", cp_arena_frag(&p->arena), "ratio");
	} else {
		emit(ctx, "chunks_mapped", (double)st->chunks_mapped, "count");
		emit(ctx, "chunks_unmapped", (double)st->chunks_unmapped, "count");
		emit(ctx, "va_bytes", (double)p->arena.arena_bytes, "bytes");
		emit(ctx, "mapped_bytes_end", (double)p->vmm.mapped_bytes, "bytes");
	}
	emit(ctx, "peak_arena_bytes", (double)st->peak_arena_bytes, "bytes");
	emit(ctx, "ooms", (double)st->ooms, "count");
}

static void compacting_destroy(struct memprof_pool *p)
{
	if (p->cfg.mode == CP_MODE_VMM)
		cp_vmm_destroy(p);
	else
		cp_copy_destroy(p);
	free(p->scratch);
	free(p->room_tree);
	free(p);
}

static const struct memprof_pool_ops compacting_ops = {
        MEMPROF_POOL_OPS_HEADER("compacting",
                                "one best-fit arena that compacts live blocks by device copies "
                                "(mode=copy) or maps chunks into one virtual range (mode=vmm)"),
        .options = compacting_options,
        .create = compacting_create,
        .alloc = compacting_alloc,
        .free = compacting_free,
        .stats = compacting_stats,
        .destroy = compacting_destroy,
};

MEMPROF_POOL_DEFINE(compacting_ops)
