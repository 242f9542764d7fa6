/*
 * plugins/caching/embed_stats.c - the embedded caching pool's figures as an
 * embedding pool shows them beside its own (plugins/caching/embed.h): the
 * few worth seeing, each prefixed "fallback_".
 */
#include <stdio.h>

#include "../lib/parse.h"
#include "embed.h"

struct forward {
	memprof_pool_emit_fn emit;
	void *ctx;
};

/* The fallback's own figures worth seeing beside the strategy's, prefixed. */
static void forward_fallback(void *ctx, const char *name, double value, const char *unit)
{
	static const char *const keep[] = {"segments_reserved", "cache_hits", "peak_reserved_bytes",
	                                   "reserved_bytes_end", NULL};
	struct forward *f = ctx;
	char full[48];

	if (pl_parse_choice(name, keep) < 0)
		return;
	snprintf(full, sizeof full, "fallback_%s", name);
	f->emit(f->ctx, full, value, unit);
}

void cb_pool_stats_as_fallback(struct cb_pool *p, memprof_pool_emit_fn emit, void *emit_ctx)
{
	struct forward f = {emit, emit_ctx};

	cb_pool_stats(p, forward_fallback, &f);
}
