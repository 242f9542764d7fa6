/*
 * plugins/mxfp8/pool.c - the mxfp8 pool's entry points: options, serving a
 * paired allocation from its pair's buffer (telling the host when it lies
 * inside the other side's live block, zeroing the gradient bytes when the
 * buffer switches from parameters to gradients), the caching fallback for
 * everything else, handles, and stats.  Pairing and the plan are rule.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "mxfp8.h"

static const char *const on_names[] = {"tag", "site", "auto", NULL};

static const struct memprof_pool_option_spec mx_options[] = {
        {"pair", "PARAM_GLOB:GRAD_GLOB",
         "which allocations are parameters and which gradients; the pair key is the text the "
         "first '*' matched; write a ':' in a glob as '\\:' (default param*:grad*)"},
        {"pair-on", "tag|site|auto",
         "match the rule against the phase tag, the call site, or tags and then, with no "
         "pairs there, sites (default tag)"},
        {NULL, NULL, NULL},
};

static int parse_options(struct memprof_pool *p, const struct memprof_pool_option *opts,
                         size_t n_opts)
{
	for (size_t i = 0; i < n_opts; i++) {
		const char *name = opts[i].name ? opts[i].name : "";
		const char *v = opts[i].value ? opts[i].value : "";
		int c;

		if (!strcmp(name, "pair")) {
			if (mx_parse_rule(p, v) < 0)
				return pl_bad_option(
				        p->host, name, v,
				        "expected PARAM_GLOB:GRAD_GLOB, both non-empty "
				        "(a ':' in a glob is written '\\:')");
		} else if (!strcmp(name, "pair-on")) {
			if ((c = pl_parse_choice(v, on_names)) < 0)
				return pl_bad_option(p->host, name, v,
				                     "expected tag, site or auto");
			p->on = (enum mx_on)c;
		} else {
			return pl_bad_option(p->host, name, v, "no such option");
		}
	}
	return MEMPROF_POOL_OK;
}

static void mx_destroy(struct memprof_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_pairs; i++)
		if (p->pairs[i].reserved)
			p->host->release(p->host->ctx, &p->pairs[i].region);
	if (p->fallback)
		cb_pool_destroy(p->fallback);
	free(p->pairs);
	pl_keymap_free(&p->by_index);
	free(p->pattern[0]);
	free(p->pattern[1]);
	free(p->rule);
	free(p);
}

static int mx_create(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                     size_t n_opts, struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);
	int rc;

	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	pl_keymap_init(&p->by_index);
	rc = cb_pool_create(host, NULL, 0, &p->fallback);
	if (rc == MEMPROF_POOL_OK && mx_parse_rule(p, "param*:grad*") < 0)
		rc = MEMPROF_POOL_ENOMEM;
	if (rc == MEMPROF_POOL_OK)
		rc = parse_options(p, opts, n_opts);
	if (rc != MEMPROF_POOL_OK) {
		mx_destroy(p);
		return rc;
	}
	*out = p;
	return MEMPROF_POOL_OK;
}

/* Release the buffers of pairs with no side live; how many. */
static size_t release_empty(struct memprof_pool *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_pairs; i++) {
		struct mx_pair *pr = &p->pairs[i];

		if (!pr->reserved || pr->live[0].live || pr->live[1].live)
			continue;
		p->host->release(p->host->ctx, &pr->region);
		pr->reserved = 0;
		pr->content = MX_NONE;
		n++;
	}
	p->st.n_released_for_oom += n;
	return n;
}

static int to_fallback(struct memprof_pool *p, const struct memprof_pool_request *req,
                       struct memprof_pool_block *out)
{
	int rc = cb_pool_alloc(p->fallback, req, out);

	if (rc == MEMPROF_POOL_ENOMEM && release_empty(p) > 0)
		rc = cb_pool_alloc(p->fallback, req, out);
	p->st.n_fallback++;
	if (rc == MEMPROF_POOL_OK && (out->handle & MX_HANDLE_MINE)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "the caching fallback used a handle with the top bit set");
		return MEMPROF_POOL_EFAULT;
	}
	return rc;
}

static int reserve_pair(struct memprof_pool *p, struct mx_pair *pr)
{
	const struct memprof_pool_host *h = p->host;
	int rc;

	if (pr->reserved)
		return MEMPROF_POOL_OK;
	rc = h->reserve(h->ctx, pr->buffer_bytes, &pr->region);
	if (rc == MEMPROF_POOL_ENOMEM && release_empty(p) > 0)
		rc = h->reserve(h->ctx, pr->buffer_bytes, &pr->region);
	if (rc == MEMPROF_POOL_OK) {
		pr->reserved = 1;
		p->st.n_reserves++;
	}
	return rc;
}

/* Zero the live gradient's bytes: the buffer switches from parameters to gradients. */
static int zero_grad(struct memprof_pool *p, struct mx_pair *pr, uint64_t bytes, uint64_t stream)
{
	int rc = p->host->memset(p->host->ctx, pr->region.addr, 0, bytes, stream);

	if (rc != MEMPROF_POOL_OK) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "zeroing %llu gradient bytes failed (status %d)",
		             (unsigned long long)bytes, rc);
		return rc;
	}
	pr->content = MX_GRAD;
	p->st.n_zeroings++;
	p->st.bytes_zeroed += bytes;
	return MEMPROF_POOL_OK;
}

/*
 * Place the request of side s in its pair's buffer, inside the other side's
 * live block when there is one (1: the host cannot be told, use the fallback).
 */
static int place(struct memprof_pool *p, struct mx_pair *pr, int s,
                 const struct memprof_pool_request *req)
{
	const struct memprof_pool_host *h = p->host;
	const struct mx_holder *other = &pr->live[!s];
	int rc;

	if (other->live) {
		if (!MEMPROF_POOL_HOST_HAS(h, block_shares) ||
		    (rc = h->block_shares(h->ctx, req->block_token, other->token)) != 0) {
			if (p->st.n_no_shares++ == 0)
				h->log(h->ctx, MEMPROF_POOL_LOG_WARN,
				       "the host cannot be told of a shared block (%s): pairs "
				       "whose "
				       "sides are live at once get separate allocations",
				       MEMPROF_POOL_HOST_HAS(h, block_shares) ? "it refused"
				                                              : "no block_shares");
			return 1;
		}
		p->st.n_shared[s]++;
		pr->shared = 1;
	}
	if (s == MX_GRAD && pr->content == MX_PARAM &&
	    (rc = zero_grad(p, pr, req->size_bytes, req->stream)) != MEMPROF_POOL_OK)
		return rc;
	pr->content = s;
	return 0;
}

static int mx_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                    struct memprof_pool_block *out)
{
	uint32_t pair = 0;
	int s = mx_lookup(p, req->index, &pair), rc;
	struct mx_pair *pr = s == MX_NONE ? NULL : &p->pairs[pair];
	struct mx_holder *me;

	if (!p->planned && !p->warned++)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_WARN,
		             "no plan was given: every request goes to the caching fallback");
	if (!pr || req->size_bytes > pr->buffer_bytes)
		return to_fallback(p, req, out);
	if (pr->live[s].live) { /* two live allocations of one side: only one fits */
		p->st.n_same_side++;
		return to_fallback(p, req, out);
	}
	if ((rc = reserve_pair(p, pr)) != MEMPROF_POOL_OK)
		return rc;
	if ((rc = place(p, pr, s, req)) != 0)
		return rc == 1 ? to_fallback(p, req, out) : rc;
	me = &pr->live[s];
	*me = (struct mx_holder){.live = 1,
	                         .serial = (me->serial + 1) & 0x3fffffffu,
	                         .token = req->block_token,
	                         .bytes = req->size_bytes};
	p->st.n_served[s]++;
	out->addr = pr->region.addr;
	out->size_bytes = pr->buffer_bytes;
	out->handle = MX_HANDLE_MINE | (uint64_t)s << 62 | (uint64_t)me->serial << 32 | pair;
	return MEMPROF_POOL_OK;
}

static int mx_free(struct memprof_pool *p, const struct memprof_pool_block *blk, uint64_t stream)
{
	uint64_t pair = blk->handle & 0xffffffffu;
	int s = (int)(blk->handle >> 62 & 1);
	struct mx_pair *pr = pair < p->n_pairs ? &p->pairs[pair] : NULL;

	if (!(blk->handle & MX_HANDLE_MINE))
		return cb_pool_free(p->fallback, blk, stream);
	if (!pr || !pr->reserved || !pr->live[s].live || pr->region.addr != blk->addr ||
	    pr->live[s].serial != (blk->handle >> 32 & 0x3fffffffu)) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a block this pool did not hand out (address 0x%llx)",
		             (unsigned long long)blk->addr);
		return MEMPROF_POOL_EINVAL;
	}
	pr->live[s].live = 0;
	if (s == MX_PARAM && pr->live[MX_GRAD].live && pr->content == MX_PARAM)
		return zero_grad(p, pr, pr->live[MX_GRAD].bytes, stream);
	return MEMPROF_POOL_OK;
}

static void mx_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct mx_stats *s = &p->st;
	uint64_t saved = 0, n_shared = 0, held = 0;

	for (size_t i = 0; i < p->n_pairs; i++) {
		const struct mx_pair *pr = &p->pairs[i];

		if (pr->shared) { /* param + grad - max(param, grad) */
			saved += pr->side_bytes[0] + pr->side_bytes[1] - pr->buffer_bytes;
			n_shared++;
		}
		held += pr->reserved ? pr->buffer_bytes : 0;
	}
	emit(ctx, "pairs_found", (double)p->n_pairs, "count");
	emit(ctx, "pairs_shared", (double)n_shared, "count");
	emit(ctx, "pairs_from_sites", p->on_site ? 1.0 : 0.0, "count");
	emit(ctx, "param_allocs_shared", (double)s->n_shared[MX_PARAM], "count");
	emit(ctx, "grad_allocs_shared", (double)s->n_shared[MX_GRAD], "count");
	emit(ctx, "param_allocs_in_pairs", (double)s->n_served[MX_PARAM], "count");
	emit(ctx, "grad_allocs_in_pairs", (double)s->n_served[MX_GRAD], "count");
	emit(ctx, "bytes_saved", (double)saved, "bytes");
	emit(ctx, "zeroings", (double)s->n_zeroings, "count");
	emit(ctx, "bytes_zeroed", (double)s->bytes_zeroed, "bytes");
	emit(ctx, "fallback_requests", (double)s->n_fallback, "count");
	emit(ctx, "unpaired_sides", (double)s->n_unpaired, "count");
	emit(ctx, "same_side_live", (double)s->n_same_side, "count");
	emit(ctx, "shares_refused", (double)s->n_no_shares, "count");
	emit(ctx, "pair_buffers_reserved", (double)s->n_reserves, "count");
	emit(ctx, "pair_buffers_released_for_oom", (double)s->n_released_for_oom, "count");
	emit(ctx, "pair_bytes_held_end", (double)held, "bytes");
	cb_pool_stats_as_fallback(p->fallback, emit, ctx);
}

static const struct memprof_pool_ops mxfp8_ops = {
        MEMPROF_POOL_OPS_HEADER("mxfp8", "MXFP8 parameter/gradient buffer sharing: a parameter "
                                         "and its gradient share one buffer of max(param, grad)"),
        .options = mx_options,
        .create = mx_create,
        .alloc = mx_alloc,
        .free = mx_free,
        .stats = mx_stats,
        .destroy = mx_destroy,
        .plan = mx_plan,
};

MEMPROF_POOL_DEFINE(mxfp8_ops)
