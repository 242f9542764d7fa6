/*
 * replay/engine.c - the replay loop: creates the backend and the pool,
 * gives an offline pool the whole plan, feeds every alloc and free of one
 * device in trace order, keeps the trace's live and requested bytes (the
 * lower bound), times each pool call, checks --verify, and fills in the
 * result.  The services the pool calls are in engine_host.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/engine_internal.h"

/* The trace's own figures, whatever the pool does. */
struct trace_state {
	uint64_t live_bytes, requested_bytes;
};

static double frag_of(uint64_t hole_bytes, uint64_t largest_hole)
{
	return hole_bytes ? 1.0 - (double)largest_hole / (double)hole_bytes : 0.0;
}

/* The blocks in the address map, for peak_state: held and not inside another. */
static int each_mapped_block(void *ctx, mp_peak_state_emit_fn emit, void *emit_ctx)
{
	const struct mp_live_blocks *t = ctx;
	size_t n = mp_live_blocks_n_slots(t);
	int rc = 0;

	for (size_t j = 0; j < n && rc == 0; j++) {
		const struct block *b = mp_live_blocks_at(t, j);

		if (b && b->held && !b->shares_with)
			rc = emit(emit_ctx, b->index, b->pb.addr, b->pb.size_bytes);
	}
	return rc;
}

/*
 * The state after the call that first reached a new reserved peak: measured
 * now with the address map, else saved for peak_frag at the end.
 */
static int snapshot_frag(struct engine *e)
{
	struct mp_extents_figures f;

	if (e->res->peak_reserved_bytes <= e->snap_peak || e->cur_op + 1 < e->prelude_end)
		return 0; /* a seeded window's state counts once its preexisting blocks are placed
		           */
	e->snap_peak = e->res->peak_reserved_bytes;
	e->res->free_at_peak_bytes =
	        e->reserved_bytes > e->set_aside_bytes ? e->reserved_bytes - e->set_aside_bytes : 0;
	if (e->peak && mp_peak_state_save(e->peak, each_mapped_block, &e->live) < 0)
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	if (!e->extents)
		return 0;
	mp_extents_figures(e->extents, &f);
	e->res->frag_at_peak = frag_of(f.hole_bytes, f.largest_hole);
	return 0;
}

/* The fragmentation of the state peak_state saved at the reserved peak. */
static int peak_frag(struct engine *e)
{
	uint64_t holes, largest;
	int saved;

	if (!e->peak)
		return 0;
	if (mp_peak_state_holes(e->peak, &holes, &largest, &saved) < 0)
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	if (saved)
		e->res->frag_at_peak = frag_of(holes, largest);
	return 0;
}

/* Block b enters the address map (or the peak state that stands for it). */
static int map_block(struct engine *e, const struct block *b)
{
	int rc = 0;

	if (e->extents)
		rc = mp_extents_add_block(e->extents, b->index, b->pb.addr, b->pb.size_bytes);
	else if (e->peak)
		rc = mp_peak_state_add_block(e->peak, b->index, b->pb.addr, b->pb.size_bytes);
	return rc == MP_ENOMEM ? mp_err(e->err, MP_ENOMEM, "out of memory") : 0;
}

static void unmap_block(struct engine *e, const struct block *b)
{
	if (e->extents)
		mp_extents_remove_block(e->extents, b->index, b->pb.addr);
	else if (e->peak)
		mp_peak_state_remove_block(e->peak, b->index);
}

static void verify_fail(struct engine *e, const char *fmt, unsigned long long index,
                        unsigned long long addr)
{
	char what[256];

	if (e->res->verify == MP_VERIFY_FAILED)
		return;
	snprintf(what, sizeof what, fmt, index, addr);
	e->res->verify = MP_VERIFY_FAILED;
	snprintf(e->res->verify_msg, sizeof e->res->verify_msg, "pool '%s' %s (event %lld)",
	         e->pool_name, what, (long long)e->cur_seq);
}

static int fill_pattern(struct engine *e, const struct block *b, size_t i,
                        const struct mp_replay_alloc *a)
{
	if (e->be_ops->fill_pattern &&
	    e->be_ops->fill_pattern(e->be, b->pb.addr, a->requested_bytes, i + 1) < 0)
		return mp_err(e->err, MP_EIO, "backend '%s' failed writing the verify pattern",
		              e->be_ops->name);
	return 0;
}

/*
 * Block i lies inside the live block it shares (block_shares): it is not an
 * extent of its own, and the block it shares no longer keeps its pattern.
 */
static int place_shared_block(struct engine *e, struct block *b, size_t i,
                              const struct mp_replay_alloc *a)
{
	struct block *in = mp_live_blocks_get(&e->live, b->shares_with - 1);

	in->n_sharers++;
	in->clobbered = 1;
	e->res->n_shared++;
	if (!e->o->verify)
		return 0;
	if (b->pb.size_bytes < a->requested_bytes)
		verify_fail(
		        e,
		        "gave allocation #%llu fewer bytes than the program asked for, at 0x%llx",
		        i, b->pb.addr);
	else if (b->pb.addr < in->pb.addr ||
	         b->pb.addr + b->pb.size_bytes > in->pb.addr + in->pb.size_bytes)
		verify_fail(e,
		            "placed allocation #%llu, which it said shares a live block, outside "
		            "that block, at 0x%llx",
		            i, b->pb.addr);
	else
		return fill_pattern(e, b, i, a);
	return 0;
}

/* Record block i in the extents and check it, after a successful alloc. */
static int place_block(struct engine *e, struct block *b, size_t i, const struct mp_replay_alloc *a)
{
	struct mp_extents_figures before, after;
	int rc;

	if (b->shares_with)
		return place_shared_block(e, b, i, a);
	e->set_aside_bytes += b->pb.size_bytes;
	if (!e->extents || !e->o->verify)
		return map_block(e, b);
	mp_extents_figures(e->extents, &before);
	if ((rc = map_block(e, b)) < 0)
		return rc;
	mp_extents_figures(e->extents, &after);
	if (b->pb.size_bytes < a->requested_bytes)
		verify_fail(
		        e,
		        "gave allocation #%llu fewer bytes than the program asked for, at 0x%llx",
		        i, b->pb.addr);
	else if (after.n_overlaps > before.n_overlaps)
		verify_fail(e, "placed allocation #%llu over a live allocation, at 0x%llx", i,
		            b->pb.addr);
	else if (after.n_outside > before.n_outside)
		verify_fail(e, "placed allocation #%llu outside the memory it reserved, at 0x%llx",
		            i, b->pb.addr);
	else
		return fill_pattern(e, b, i, a);
	return 0;
}

static void on_oom(struct engine *e, const struct mp_replay_alloc *a, const struct trace_state *ts)
{
	if (e->res->n_ooms++ == 0)
		e->res->first_oom =
		        (struct mp_replay_oom){.seq = e->cur_seq, /* the alloc op's */
		                               .request_bytes = a->size_bytes,
		                               .live_bytes = ts->live_bytes - a->size_bytes,
		                               .reserved_bytes = e->reserved_bytes};
}

static int pool_failed(struct engine *e, int rc, const char *what, size_t i)
{
	if (e->err->code == 0 || !e->fault)
		mp_err(e->err, MP_EIO, "pool '%s' failed to %s allocation #%zu (error %d)",
		       e->pool_name, what, i, rc);
	return e->err->code ? e->err->code : MP_EIO;
}

/* --pool-threshold: is a sent straight to the backend? */
static int below_threshold(const struct engine *e, const struct mp_replay_alloc *a)
{
	return a->size_bytes < e->o->pool_threshold_bytes;
}

/* A block below the threshold: one backend reservation of its own. */
static int direct_alloc(struct engine *e, const struct mp_replay_alloc *a, struct block *b)
{
	struct memprof_region r;
	int rc = e->host.reserve(e->host.ctx, a->size_bytes ? a->size_bytes : 1, &r);

	if (rc != MEMPROF_POOL_OK)
		return rc;
	b->pb = (struct memprof_pool_block){
	        .addr = r.addr, .size_bytes = r.size_bytes, .handle = r.token};
	b->direct = 1;
	e->res->n_below_threshold++;
	return MEMPROF_POOL_OK;
}

static int direct_free(struct engine *e, const struct block *b)
{
	const struct memprof_region r = {
	        .addr = b->pb.addr, .size_bytes = b->pb.size_bytes, .token = b->pb.handle};

	return e->host.release(e->host.ctx, &r);
}

static int do_alloc(struct engine *e, const struct mp_replay_input *in, size_t i,
                    const struct mp_replay_alloc *a, struct trace_state *ts,
                    const struct mp_pool_plugin *pool, struct memprof_pool *p)
{
	struct memprof_pool_request req = {
	        .struct_size = sizeof req,
	        .size_bytes = a->size_bytes,
	        .requested_bytes = a->requested_bytes,
	        .stream = in->streams[a->stream],
	        .device = e->res->device,
	        .index = (int64_t)i,
	        .block_token = i,
	        .site = in->sites ? in->sites[a->site] : NULL,
	        .phase = in->phases ? in->phases[a->phase] : NULL,
	        .ts_ns = a->ts_ns,
	};
	struct block *b = mp_live_blocks_add(&e->live, (uint32_t)i);
	uint64_t t0, wall;
	int rc;

	if (!b)
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	ts->live_bytes += a->size_bytes;
	ts->requested_bytes += a->requested_bytes;
	if (ts->live_bytes > e->res->peak_live_bytes)
		e->res->peak_live_bytes = ts->live_bytes;
	if (ts->requested_bytes > e->res->lower_bound_bytes)
		e->res->lower_bound_bytes = ts->requested_bytes;
	e->call_backend_wall_ns = e->call_backend_ns = 0;
	e->allocating = (int64_t)i;
	t0 = mp_engine_now_ns();
	if (below_threshold(e, a))
		rc = direct_alloc(e, a, b);
	else
		rc = pool->ops.alloc(p, &req, &b->pb);
	e->allocating = -1;
	wall = mp_engine_now_ns() - t0;
	wall -= wall > e->call_backend_wall_ns ? e->call_backend_wall_ns : wall;
	e->res->host_ns += wall;
	mp_latency_add(&e->alloc_lat, wall + e->call_backend_ns);
	e->res->n_allocs++;
	if (rc == MEMPROF_POOL_ENOMEM && !e->fault) {
		mp_live_blocks_del(&e->live, (uint32_t)i); /* its free is skipped */
		on_oom(e, a, ts);
		return 0;
	}
	if (rc != MEMPROF_POOL_OK || e->fault)
		return pool_failed(e, rc, "allocate", i);
	b->held = 1;
	if ((rc = place_block(e, b, i, a)) < 0)
		return rc;
	return snapshot_frag(e);
}

/*
 * Block i, which others share, is freed first: from now on each of them is
 * a block of its own (a linear scan, as this is rare).
 */
static int unshare(struct engine *e, struct block *b)
{
	size_t n = mp_live_blocks_n_slots(&e->live);
	int rc;

	for (size_t j = 0; j < n && b->n_sharers; j++) {
		struct block *s = mp_live_blocks_at(&e->live, j);

		if (!s || !s->held || s->shares_with != (uint64_t)b->index + 1)
			continue;
		s->shares_with = 0;
		b->n_sharers--;
		e->set_aside_bytes += s->pb.size_bytes;
		if ((rc = map_block(e, s)) < 0)
			return rc;
	}
	return 0;
}

/* Take block b out of the engine's books before the pool's free. */
static int unplace_block(struct engine *e, struct block *b)
{
	b->held = 0;
	if (b->shares_with) {
		mp_live_blocks_get(&e->live, b->shares_with - 1)->n_sharers--;
		b->shares_with = 0;
		return 0;
	}
	unmap_block(e, b);
	e->set_aside_bytes -= b->pb.size_bytes;
	b->clobbered = 0;
	return b->n_sharers ? unshare(e, b) : 0;
}

static int do_free(struct engine *e, const struct mp_replay_input *in, size_t i,
                   const struct mp_replay_alloc *a, const struct mp_pool_plugin *pool,
                   struct memprof_pool *p)
{
	struct block *b = mp_live_blocks_get(&e->live, i);
	uint64_t t0, wall;
	int rc;

	if (!b || !b->held)
		return 0; /* its alloc failed */
	if (e->be_ops->check_pattern && !b->clobbered) {
		rc = e->o->verify ? e->be_ops->check_pattern(e->be, b->pb.addr, a->requested_bytes,
		                                             i + 1)
		                  : 1;
		if (rc < 0)
			return mp_err(e->err, MP_EIO,
			              "backend '%s' failed reading the verify pattern",
			              e->be_ops->name);
		if (rc == 0)
			verify_fail(e,
			            "let the bytes of allocation #%llu at 0x%llx be overwritten "
			            "while live",
			            i, b->pb.addr);
	}
	if ((rc = unplace_block(e, b)) < 0)
		return rc;
	e->call_backend_wall_ns = e->call_backend_ns = 0;
	t0 = mp_engine_now_ns();
	rc = b->direct ? direct_free(e, b) : pool->ops.free(p, &b->pb, in->streams[a->free_stream]);
	wall = mp_engine_now_ns() - t0;
	wall -= wall > e->call_backend_wall_ns ? e->call_backend_wall_ns : wall;
	e->res->host_ns += wall;
	mp_latency_add(&e->free_lat, wall + e->call_backend_ns);
	e->res->n_frees++;
	if (rc != MEMPROF_POOL_OK || e->fault)
		return pool_failed(e, rc, "free", i);
	mp_live_blocks_del(&e->live, (uint32_t)i);
	return snapshot_frag(e);
}

static void end_live(struct trace_state *ts, const struct mp_replay_alloc *a)
{
	ts->live_bytes -= a->size_bytes;
	ts->requested_bytes -= a->requested_bytes;
}

/* Replays ops [0, n_ops) of d (out of line, so that a profile shows the loop by name). */
__attribute__((noinline)) static int replay_ops(struct engine *e, const struct mp_replay_input *in,
                                                const struct mp_replay_device *d,
                                                const struct mp_pool_plugin *pool,
                                                struct memprof_pool *p, size_t n_ops)
{
	struct trace_state ts = {0};
	uint64_t c0 = mp_engine_cpu_ns(), t0 = mp_engine_now_ns();
	int rc = 0;

	e->cur_seq = 0;
	for (size_t k = 0; k < n_ops && rc == 0; k++) {
		uint32_t op = d->ops[k];
		size_t i = (size_t)MP_REPLAY_OP_INDEX(op);
		const struct mp_replay_alloc *a = &d->allocs[i];

		e->cur_seq += mp_replay_op_seq_step(d, k);
		e->cur_op = (int64_t)k;
		switch (MP_REPLAY_OP_KIND(op)) {
		case MP_OP_ALLOC:
			rc = do_alloc(e, in, i, a, &ts, pool, p);
			break;
		case MP_OP_LIVE_END:
			end_live(&ts, a);
			break;
		case MP_OP_FREE:
			end_live(&ts, a);
			rc = do_free(e, in, i, a, pool, p);
			break;
		default: /* MP_OP_FREE_ENDED: its live time ended at its free_requested */
			rc = do_free(e, in, i, a, pool, p);
		}
		if (e->res->verify == MP_VERIFY_FAILED)
			break;
	}
	e->res->replay_ns = mp_engine_now_ns() - t0;
	e->res->replay_cpu_ns = mp_engine_cpu_ns() - c0;
	return rc;
}

static void emit_stat(void *ctx, const char *name, double value, const char *unit)
{
	struct mp_replay_result *res = ctx;
	struct mp_replay_stat *s;

	if (res->n_stats == MP_REPLAY_MAX_STATS || !name)
		return;
	s = &res->stats[res->n_stats++];
	snprintf(s->name, sizeof s->name, "%s", name);
	snprintf(s->unit, sizeof s->unit, "%s", unit ? unit : "");
	s->value = value;
}

/*
 * A plugin built for a minor below 2 reads lifetimes of the 1.0 size: the
 * first MEMPROF_POOL_LIFETIME_SIZE_1_0 bytes of each, packed in place.
 */
static void pack_lifetimes_1_0(struct memprof_pool_lifetime *items, size_t n)
{
	char *to = (char *)items;

	for (size_t k = 0; k < n; k++)
		memmove(to + k * MEMPROF_POOL_LIFETIME_SIZE_1_0, &items[k],
		        MEMPROF_POOL_LIFETIME_SIZE_1_0);
}

/*
 * The lifetimes pool is to plan with, the caller's when it gave them and the
 * pool takes them as they are (all of them, at this ABI's size), else a copy
 * without those below the threshold, packed for an older ABI: *own is the
 * copy to free, or NULL.
 */
static const struct memprof_pool_lifetime *
lifetimes_for(const struct engine *e, const struct mp_replay_input *in,
              const struct mp_replay_device *d, const struct mp_pool_plugin *pool, size_t *n,
              struct memprof_pool_lifetime **own)
{
	const struct memprof_pool_lifetime *all = e->o->lifetimes;
	size_t k;

	*own = NULL;
	for (k = 0; all && k < d->n_allocs; k++)
		if (all[k].size_bytes < e->o->pool_threshold_bytes)
			break;
	*n = d->n_allocs;
	if (all && k == d->n_allocs && pool->ops.abi_minor >= 2)
		return all;
	if (all && (*own = malloc((d->n_allocs + 1) * sizeof **own)))
		memcpy(*own, all, d->n_allocs * sizeof **own);
	else if (!all)
		*own = mp_replay_input_lifetimes(in, d);
	if (!*own)
		return NULL;
	*n = 0; /* the pool sees none below the threshold */
	for (k = 0; k < d->n_allocs; k++)
		if ((*own)[k].size_bytes >= e->o->pool_threshold_bytes)
			(*own)[(*n)++] = (*own)[k];
	if (pool->ops.abi_minor < 2)
		pack_lifetimes_1_0(*own, *n);
	return *own;
}

static int plan(struct engine *e, const struct mp_replay_input *in,
                const struct mp_replay_device *d, const struct mp_pool_plugin *pool,
                struct memprof_pool *p)
{
	struct memprof_pool_lifetime *own;
	size_t n;
	const struct memprof_pool_lifetime *items = lifetimes_for(e, in, d, pool, &n, &own);
	int rc;

	if (!items)
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	rc = pool->ops.plan(p, items, n);
	free(own);
	if (rc != MEMPROF_POOL_OK || e->fault)
		return e->err->code ? e->err->code
		                    : mp_err(e->err, MP_EIO, "pool '%s' failed to plan (error %d)",
		                             e->pool_name, rc);
	return 0;
}

/* A pool with seed (ABI 1.3) starts from the state the trace window opened with. */
static int seed(struct engine *e, const struct mp_replay_device *d,
                const struct mp_pool_plugin *pool, struct memprof_pool *p)
{
	int rc;

	if (!pool->ops.seed || !d->n_seed_segments || e->o->no_seed)
		return 0;
	rc = pool->ops.seed(p, d->seed_segments, d->n_seed_segments);
	if (rc != MEMPROF_POOL_OK || e->fault)
		return e->err->code
		               ? e->err->code
		               : mp_err(e->err, MP_EIO,
		                        "pool '%s' failed to adopt the trace's starting segments "
		                        "(error %d)",
		                        e->pool_name, rc);
	e->res->n_seeded_segments = d->n_seed_segments;
	e->prelude_end = (int64_t)d->n_prelude_ops;
	return 0;
}

static int start(struct engine *e, const struct mp_replay_input *in,
                 const struct mp_replay_device *d, const struct mp_pool_plugin *pool,
                 struct memprof_pool **p)
{
	struct mp_backend_options bo = {.device = e->o->gpu_set ? e->o->gpu : d->ordinal,
	                                .err = e->err,
	                                .group = e->o->group};
	int rc;

	if ((rc = e->be_ops->open(&bo, &e->be)) < 0)
		return rc;
	if ((rc = mp_engine_host_init(e)) < 0)
		return rc;
	if (!e->extents && !e->o->no_frag && !(e->peak = mp_peak_state_new_keys(d->n_allocs)))
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	rc = pool->ops.create(&e->host, e->o->pool_opts, e->o->n_pool_opts, p);
	if (rc != MEMPROF_POOL_OK || !*p) {
		*p = NULL;
		if (e->err->code == 0)
			mp_err(e->err, MP_EINVAL, "pool '%s' could not be created (error %d)",
			       e->pool_name, rc);
		return e->err->code;
	}
	e->res->started = 1;
	if ((rc = snapshot_frag(e)) < 0)
		return rc;
	if (pool->ops.plan) {
		if ((rc = plan(e, in, d, pool, *p)) < 0)
			return rc;
		if ((rc = snapshot_frag(e)) < 0)
			return rc;
	}
	return seed(e, d, pool, *p);
}

/* Below the threshold and live at the end: given back to the backend. */
static void release_direct(struct engine *e)
{
	size_t n = mp_live_blocks_n_slots(&e->live);

	for (size_t j = 0; j < n; j++) {
		struct block *b = mp_live_blocks_at(&e->live, j);

		if (b && b->held && b->direct && direct_free(e, b) == 0)
			b->held = 0;
	}
}

static void finish(struct engine *e, const struct mp_pool_plugin *pool, struct memprof_pool *p)
{
	struct mp_replay_result *res = e->res;

	res->end_reserved_bytes = e->reserved_bytes;
	res->alloc_ns_p50 = mp_latency_quantile(&e->alloc_lat, 0.5);
	res->alloc_ns_p99 = mp_latency_quantile(&e->alloc_lat, 0.99);
	res->alloc_ns_max = e->alloc_lat.max_ns;
	res->free_ns_p50 = mp_latency_quantile(&e->free_lat, 0.5);
	res->free_ns_p99 = mp_latency_quantile(&e->free_lat, 0.99);
	if (p && pool->ops.stats)
		pool->ops.stats(p, emit_stat, res);
	e->cleanup = 1; /* what destroy gives back is not the pool's work during the run */
	release_direct(e);
	if (p)
		pool->ops.destroy(p);
	res->total_ns = res->host_ns + res->backend_ns;
	res->host_ns_min = res->host_ns_max = res->host_ns;
	res->backend_ns_min = res->backend_ns_max = res->backend_ns;
	if (res->verify == MP_VERIFY_OFF && e->o->verify)
		res->verify = MP_VERIFY_PASSED;
}

static void result_init(struct mp_replay_result *res, const struct mp_replay_device *d,
                        const struct mp_pool_plugin *pool, const struct mp_replay_options *o)
{
	memset(res, 0, sizeof *res);
	snprintf(res->pool, sizeof res->pool, "%s", pool->ops.name);
	res->backend = o->backend->name;
	res->device = d->ordinal;
	res->level = d->level;
	res->trace_has_segments = d->has_segments;
	res->trace_peak_reserved_bytes = d->trace_peak_reserved_bytes;
	res->trace_segments = d->trace_segments;
	res->trace_segments_at_peak = d->trace_segments_at_peak;
	res->n_runs = 1;
	res->time_measured = o->backend->measures_time;
	res->pool_threshold_bytes = o->pool_threshold_bytes;
}

/*
 * One replay of d into res, in one pass.  With --verify the engine keeps the
 * address map and measures the holes at each new reserved peak from it;
 * without, the replay runs at the speed of the pool and peak_state keeps
 * what the map would hold at the last new peak, measured once at the end.
 */
int mp_replay_run(const struct mp_replay_input *in, const struct mp_replay_device *d,
                  const struct mp_pool_plugin *pool, const struct mp_replay_options *o,
                  struct mp_replay_result *res, struct mp_error *err)
{
	struct engine e = {.o = o,
	                   .be_ops = o->backend,
	                   .err = err,
	                   .res = res,
	                   .pool_name = pool->ops.name,
	                   .with_extents = o->verify,
	                   .cur_op = -1,
	                   .allocating = -1};
	struct memprof_pool *p = NULL;
	size_t leftover;
	int rc;

	result_init(res, d, pool, o);
	mp_err_clear(err);
	rc = mp_live_blocks_init(&e.live, d->n_allocs) < 0 ? mp_err(err, MP_ENOMEM, "out of memory")
	                                                   : start(&e, in, d, pool, &p);
	if (rc == 0)
		rc = replay_ops(&e, in, d, pool, p, d->n_ops);
	if (rc == 0 && res->peak_reserved_bytes > 0)
		rc = peak_frag(&e);
	if (e.regions.item_size) {
		finish(&e, pool, p);
		leftover = mp_engine_host_release_all(&e);
		if (leftover && rc == 0)
			emit_stat(res, "regions_left_at_destroy", (double)leftover, "count");
		mp_engine_host_fini(&e);
	}
	if (e.be)
		o->backend->close(e.be);
	mp_live_blocks_free(&e.live);
	mp_peak_state_free(e.peak);
	return rc;
}
