/*
 * plugins/caching/embed.h - the caching pool as a component: the five entry
 * points behind the "caching" plugin (plugin.c), for strategy pools that
 * send the requests their strategy does not cover to the caching model, so
 * that a difference from the caching baseline comes from the strategy alone.
 * Build the caching sources without plugin.c into such a pool.
 */
#ifndef MEMPROF_PLUGIN_CACHING_EMBED_H
#define MEMPROF_PLUGIN_CACHING_EMBED_H

#include <stddef.h>

#include "memprof/pool.h"

struct cb_pool;

/* As the ops of pool.h; opts are the caching pool's own (cb_option_specs). */
int cb_pool_create(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                   size_t n_opts, struct cb_pool **out);
int cb_pool_alloc(struct cb_pool *p, const struct memprof_pool_request *req,
                  struct memprof_pool_block *out);
int cb_pool_free(struct cb_pool *p, const struct memprof_pool_block *b, uint64_t stream);
void cb_pool_stats(struct cb_pool *p, memprof_pool_emit_fn emit, void *emit_ctx);
void cb_pool_destroy(struct cb_pool *p);
/*
 * The figures of p worth seeing beside an embedding pool's own (segments
 * reserved, cache hits, peak and final reserved bytes), emitted as
 * "fallback_NAME" (embed_stats.c).
 */
void cb_pool_stats_as_fallback(struct cb_pool *p, memprof_pool_emit_fn emit, void *emit_ctx);
/*
 * Give back every cached block's segment (emptyCache), as the pool does on
 * an out-of-memory retry: for an embedding pool whose own memory ran out.
 * 0, or the backend's failure.
 */
int cb_pool_release_cached(struct cb_pool *p);

/*
 * Adopt the trace window's starting segments (ops.seed, ABI 1.3): each is
 * reserved whole and cut into its recorded blocks; free blocks join the
 * cache, live ones wait for the allocation that claims them.  0, or
 * EINVAL (logged) for a layout that does not tile its segment, or the
 * backend's refusal.
 */
int cb_pool_seed(struct cb_pool *p, const struct memprof_pool_seed_segment *segments, size_t n);

/* The options the caching pool declares (NULL-name terminated). */
extern const struct memprof_pool_option_spec cb_option_specs[];

#endif
