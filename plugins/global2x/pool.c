/*
 * plugins/global2x/pool.c - the global2x pool's entry points: options, the
 * routing of a request to a global buffer (by its key) or to the embedded
 * caching pool, handles, and stats.  The buffers themselves are buffers.c's.
 * A view's handle is G2_HANDLE_MINE | serial << 32 | buffer slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "global2x.h"

static const char *const key_names[] = {"site", "tag", "size", NULL};

static const struct memprof_pool_option_spec g2_options[] = {
        {"key", "site|tag|size",
         "what names a buffer: the call site, the phase tag, or the power-of-two size class "
         "at or above the request (default site)"},
        {"sites", "GLOB",
         "only requests whose key text matches use global buffers; the others go to the "
         "caching fallback (default *)"},
        {NULL, NULL, NULL},
};

static int parse_options(struct memprof_pool *p, const struct memprof_pool_option *opts,
                         size_t n_opts)
{
	for (size_t i = 0; i < n_opts; i++) {
		const char *name = opts[i].name ? opts[i].name : "";
		const char *v = opts[i].value ? opts[i].value : "";
		int c;

		if (!strcmp(name, "key")) {
			if ((c = pl_parse_choice(v, key_names)) < 0)
				return pl_bad_option(p->host, name, v,
				                     "expected site, tag or size");
			p->key_kind = (enum g2_key_kind)c;
		} else if (!strcmp(name, "sites")) {
			if (!*v)
				return pl_bad_option(p->host, name, v, "expected a glob pattern");
			free(p->sites);
			if (!(p->sites = strdup(v)))
				return MEMPROF_POOL_ENOMEM;
		} else {
			return pl_bad_option(p->host, name, v, "no such option");
		}
	}
	return MEMPROF_POOL_OK;
}

static void g2_destroy(struct memprof_pool *p)
{
	if (!p)
		return;
	g2_release_all(p);
	if (p->fallback)
		cb_pool_destroy(p->fallback);
	free(p->keys);
	free(p->bufs);
	pl_keymap_free(&p->key_ids);
	free(p->sites);
	free(p);
}

static int g2_create(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                     size_t n_opts, struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);
	int rc;

	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	pl_keymap_init(&p->key_ids);
	rc = cb_pool_create(host, NULL, 0, &p->fallback);
	if (rc == MEMPROF_POOL_OK)
		rc = parse_options(p, opts, n_opts);
	if (rc == MEMPROF_POOL_OK && !p->sites && !(p->sites = strdup("*")))
		rc = MEMPROF_POOL_ENOMEM;
	if (rc != MEMPROF_POOL_OK) {
		g2_destroy(p);
		return rc;
	}
	*out = p;
	return MEMPROF_POOL_OK;
}

/* The request's key text, or NULL when the trace has none (no stacks, no phase). */
static const char *key_text(const struct memprof_pool *p, const struct memprof_pool_request *req,
                            uint64_t need, char *buf, size_t len)
{
	const char *t;
	uint64_t c = 1;

	switch (p->key_kind) {
	case G2_KEY_SITE:
		t = req->site;
		break;
	case G2_KEY_TAG:
		t = req->phase;
		break;
	default:
		while (c < need && c < (1ull << 63))
			c <<= 1;
		snprintf(buf, len, "%llu", (unsigned long long)c);
		t = buf;
	}
	return t && *t ? t : NULL;
}

/* The key named text, made on first use. */
static int key_of(struct memprof_pool *p, const char *text, uint32_t *key)
{
	uint64_t v;
	size_t len = strlen(text);

	if (pl_keymap_get(&p->key_ids, text, len, &v)) {
		*key = (uint32_t)v;
		return MEMPROF_POOL_OK;
	}
	if (p->n_keys == p->cap_keys) {
		size_t cap = p->cap_keys ? 2 * p->cap_keys : 16;
		struct g2_key *k;

		if (cap > UINT32_MAX || !(k = realloc(p->keys, cap * sizeof *k)))
			return MEMPROF_POOL_ENOMEM;
		p->keys = k;
		p->cap_keys = cap;
	}
	if (pl_keymap_put(&p->key_ids, text, len, p->n_keys) < 0)
		return MEMPROF_POOL_ENOMEM;
	p->keys[p->n_keys] = (struct g2_key){0};
	*key = (uint32_t)p->n_keys++;
	return MEMPROF_POOL_OK;
}

static int to_fallback(struct memprof_pool *p, const struct memprof_pool_request *req,
                       struct memprof_pool_block *out)
{
	int rc = cb_pool_alloc(p->fallback, req, out);

	if (rc == MEMPROF_POOL_ENOMEM && g2_release_free(p) > 0)
		rc = cb_pool_alloc(p->fallback, req, out);
	p->st.n_fallback++;
	if (rc == MEMPROF_POOL_OK && (out->handle & G2_HANDLE_MINE)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "the caching fallback used a handle with the top bit set");
		return MEMPROF_POOL_EFAULT;
	}
	return rc;
}

static int g2_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                    struct memprof_pool_block *out)
{
	uint64_t need = req->requested_bytes ? req->requested_bytes : req->size_bytes;
	char buf[24];
	const char *text = key_text(p, req, need, buf, sizeof buf), *cap;
	size_t cap_len;
	uint32_t key, slot;
	struct g2_buffer *b;
	int rc;

	if (!text) {
		p->st.n_without_key++;
		return to_fallback(p, req, out);
	}
	if (!pl_glob(p->sites, text, &cap, &cap_len)) {
		p->st.n_outside_sites++;
		return to_fallback(p, req, out);
	}
	if (need == 0) /* a view of nothing: the fallback handles it as caching would */
		return to_fallback(p, req, out);
	if ((rc = key_of(p, text, &key)) != MEMPROF_POOL_OK ||
	    (rc = g2_serve(p, key, need, &slot)) != MEMPROF_POOL_OK)
		return rc;
	b = &p->bufs[slot];
	b->live = 1;
	b->view_bytes = need;
	b->serial = (b->serial + 1) & 0x7fffffffu;
	p->viewed_bytes += need;
	if (p->held_bytes > p->st.held_bytes_peak) {
		p->st.held_bytes_peak = p->held_bytes;
		p->st.view_waste_peak_bytes = p->held_bytes - p->viewed_bytes;
	}
	out->addr = b->region.addr;
	out->size_bytes = need;
	out->handle = G2_HANDLE_MINE | (uint64_t)b->serial << 32 | slot;
	return MEMPROF_POOL_OK;
}

static int g2_free(struct memprof_pool *p, const struct memprof_pool_block *blk, uint64_t stream)
{
	uint64_t slot = blk->handle & 0xffffffffu;
	struct g2_buffer *b = slot < p->n_slots ? &p->bufs[slot] : NULL;

	if (!(blk->handle & G2_HANDLE_MINE))
		return cb_pool_free(p->fallback, blk, stream);
	if (!b || !b->held || !b->live || b->region.addr != blk->addr ||
	    b->serial != ((blk->handle >> 32) & 0x7fffffffu)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a view this pool did not hand out (address 0x%llx)",
		             (unsigned long long)blk->addr);
		return MEMPROF_POOL_EINVAL;
	}
	b->live = 0;
	p->viewed_bytes -= b->view_bytes;
	g2_buffer_freed(p, (uint32_t)slot);
	return MEMPROF_POOL_OK;
}

static void g2_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct g2_stats *s = &p->st;

	emit(ctx, "keys", (double)p->n_keys, "count");
	emit(ctx, "buffers", (double)p->n_buffers, "count");
	emit(ctx, "buffers_peak", (double)s->n_buffers_peak, "count");
	emit(ctx, "reallocations", (double)s->n_reallocations, "count");
	emit(ctx, "buffer_reserves", (double)s->n_buffer_reserves, "count");
	emit(ctx, "buffers_released_for_oom", (double)s->n_released_for_oom, "count");
	emit(ctx, "requests_served_from_buffer", (double)s->n_served, "count");
	emit(ctx, "fallback_requests", (double)s->n_fallback, "count");
	emit(ctx, "requests_without_key", (double)s->n_without_key, "count");
	emit(ctx, "requests_outside_sites", (double)s->n_outside_sites, "count");
	emit(ctx, "bytes_held_peak", (double)s->held_bytes_peak, "bytes");
	emit(ctx, "bytes_held_end", (double)p->held_bytes, "bytes");
	emit(ctx, "view_waste_peak", (double)s->view_waste_peak_bytes, "bytes");
	cb_pool_stats_as_fallback(p->fallback, emit, ctx);
}

static const struct memprof_pool_ops global2x_ops = {
        MEMPROF_POOL_OPS_HEADER("global2x",
                                "Megatron's global memory buffer: one buffer per call site, tag "
                                "or size class, grown to twice the request when too small"),
        .options = g2_options,
        .create = g2_create,
        .alloc = g2_alloc,
        .free = g2_free,
        .stats = g2_stats,
        .destroy = g2_destroy,
};

MEMPROF_POOL_DEFINE(global2x_ops)
