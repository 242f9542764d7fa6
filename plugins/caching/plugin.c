/*
 * plugins/caching/plugin.c - the "caching" plugin: its ops table over the
 * pool of caching.c (embed.h).  The only file of the caching sources that a
 * pool embedding the caching model leaves out.
 */
#include "embed.h"

static int plugin_create(const struct memprof_pool_host *host,
                         const struct memprof_pool_option *opts, size_t n_opts,
                         struct memprof_pool **out)
{
	return cb_pool_create(host, opts, n_opts, (struct cb_pool **)out);
}

static int plugin_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                        struct memprof_pool_block *out)
{
	return cb_pool_alloc((struct cb_pool *)p, req, out);
}

static int plugin_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	return cb_pool_free((struct cb_pool *)p, b, stream);
}

static void plugin_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	cb_pool_stats((struct cb_pool *)p, emit, ctx);
}

static int plugin_seed(struct memprof_pool *p, const struct memprof_pool_seed_segment *segments,
                       size_t n)
{
	return cb_pool_seed((struct cb_pool *)p, segments, n);
}

static void plugin_destroy(struct memprof_pool *p)
{
	cb_pool_destroy((struct cb_pool *)p);
}

static const struct memprof_pool_ops caching_ops = {
        MEMPROF_POOL_OPS_HEADER("caching",
                                "PyTorch's CUDA caching allocator: 512 B rounding, 2 MiB small and "
                                "20 MiB large segments, per-stream best fit with splitting"),
        .options = cb_option_specs,
        .create = plugin_create,
        .alloc = plugin_alloc,
        .free = plugin_free,
        .stats = plugin_stats,
        .destroy = plugin_destroy,
        .seed = plugin_seed,
};

MEMPROF_POOL_DEFINE(caching_ops)
