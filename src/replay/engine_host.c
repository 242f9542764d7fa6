/*
 * replay/engine_host.c - the services a pool calls (struct
 * memprof_pool_host), each wrapping the backend: capacity is enforced
 * here, every call is counted and timed (measured wall time on a backend
 * that measures, the cost model otherwise), reserved bytes and the extents
 * of reserved memory are kept up to date, and regions are named to the pool
 * by engine slots so a pool cannot release what it does not hold.
 */
#include <stdarg.h>
#include <stdio.h>

#include "replay/engine_internal.h"

/* When a backend call starts: 0 on a backend whose calls are not timed. */
static uint64_t call_start(const struct engine *e)
{
	return e->be_ops->instant ? 0 : mp_engine_now_ns();
}

static void charge(struct engine *e, enum mp_cost_call call, uint64_t n_bytes, uint64_t t0)
{
	uint64_t wall = e->be_ops->instant ? 0 : mp_engine_now_ns() - t0;
	uint64_t cost = e->be_ops->measures_time ? wall : mp_cost_ns(call, n_bytes);

	if (e->cleanup)
		return;
	e->call_backend_wall_ns += wall;
	e->call_backend_ns += cost;
	e->res->backend_ns += cost;
	e->res->n_calls[call]++;
	e->res->call_ns[call] += cost;
	e->res->backend_calls++;
}

static void add_reserved(struct engine *e, uint64_t n)
{
	e->reserved_bytes += n;
	if (e->reserved_bytes > e->res->peak_reserved_bytes) {
		e->res->peak_reserved_bytes = e->reserved_bytes;
		e->res->peak_reserved_seq = e->cur_seq;
	}
}

static int over_capacity(struct engine *e, uint64_t n)
{
	uint64_t cap = e->o->capacity_bytes;
	return cap && (n > cap || e->reserved_bytes > cap - n);
}

/* The engine's own books ran out of memory: the replay stops. */
static int out_of_memory(struct engine *e)
{
	mp_err(e->err, MP_ENOMEM, "out of memory");
	e->fault = 1;
	return MEMPROF_POOL_EFAULT;
}

/* A backend failure the pool cannot recover from: the replay stops. */
static int fault(struct engine *e, int rc)
{
	if (rc != MEMPROF_POOL_ENOMEM && rc != MEMPROF_POOL_ENOTSUP && rc != MEMPROF_POOL_OK)
		e->fault = 1;
	return rc;
}

static struct region *region_of(struct engine *e, const struct memprof_region *r, int kind)
{
	struct region *g;

	if (!r || r->token >= e->regions.n)
		return NULL;
	g = mp_slot_pool_at(&e->regions, r->token);
	if (g->kind != kind || g->be.addr != r->addr) {
		mp_err(e->err, MP_EINVAL, "pool '%s' passed a region it does not hold (0x%llx)",
		       e->pool_name, (unsigned long long)r->addr);
		e->fault = 1;
		return NULL;
	}
	return g;
}

static int new_region(struct engine *e, int kind, int call, uint64_t size, uint64_t stream,
                      struct memprof_region *out)
{
	size_t slot;
	struct region *g = mp_slot_pool_take(&e->regions, &slot);
	uint64_t t0;
	int rc;

	if (!g)
		return mp_err(e->err, MP_ENOMEM, "out of memory"), e->fault = 1,
		                                                   MEMPROF_POOL_EFAULT;
	t0 = call_start(e);
	if (kind == REGION_RESERVE)
		rc = e->be_ops->reserve(e->be, size, &g->be);
	else if (kind == REGION_VA)
		rc = e->be_ops->va_reserve(e->be, size, &g->be);
	else
		rc = e->be_ops->alloc_async(e->be, size, stream, &g->be);
	charge(e, call, size, t0);
	if (rc != MEMPROF_POOL_OK) {
		mp_slot_pool_give(&e->regions, slot);
		return fault(e, rc);
	}
	g->kind = kind;
	g->mapped_bytes = 0;
	if (kind != REGION_VA) {
		/* a cudaMalloc takes what the driver reserves for it; cudaMallocAsync's
		 * pool is the driver's own business: its requests count as given */
		add_reserved(e, kind == REGION_RESERVE ? mp_driver_add(&e->driver, size) : size);
		if (size && e->extents)
			mp_extents_add_segment(e->extents, g->be.addr, size);
		else if (e->peak && mp_peak_state_add_segment(e->peak, g->be.addr, size) < 0)
			return out_of_memory(e);
	}
	*out = (struct memprof_region){.addr = g->be.addr, .size_bytes = size, .token = slot};
	return MEMPROF_POOL_OK;
}

static int svc_reserve(void *ctx, uint64_t size, struct memprof_region *out)
{
	struct engine *e = ctx;

	if (over_capacity(e, mp_driver_growth(&e->driver, size)))
		return MEMPROF_POOL_ENOMEM;
	return new_region(e, REGION_RESERVE, MP_COST_RESERVE, size, 0, out);
}

static int drop_region(struct engine *e, const struct memprof_region *r, int kind, int call,
                       uint64_t stream)
{
	struct region *g = region_of(e, r, kind);
	uint64_t t0;
	int rc;

	if (!g)
		return MEMPROF_POOL_EINVAL;
	if (kind == REGION_VA && g->mapped_bytes) {
		mp_err(e->err, MP_EINVAL,
		       "pool '%s' released a virtual range with %llu bytes still mapped",
		       e->pool_name, (unsigned long long)g->mapped_bytes);
		e->fault = 1;
		return MEMPROF_POOL_EINVAL;
	}
	t0 = call_start(e);
	if (kind == REGION_RESERVE)
		rc = e->be_ops->release(e->be, &g->be);
	else if (kind == REGION_VA)
		rc = e->be_ops->va_release(e->be, &g->be);
	else
		rc = e->be_ops->free_async(e->be, &g->be, stream);
	charge(e, call, g->be.size_bytes, t0);
	if (rc != MEMPROF_POOL_OK)
		return fault(e, rc);
	if (kind != REGION_VA) {
		e->reserved_bytes -= kind == REGION_RESERVE
		                             ? mp_driver_remove(&e->driver, g->be.size_bytes)
		                             : g->be.size_bytes;
		if (e->extents)
			mp_extents_remove_segment(e->extents, g->be.addr);
		else if (e->peak)
			mp_peak_state_remove_segment(e->peak, g->be.addr);
	}
	g->kind = 0;
	mp_slot_pool_give(&e->regions, r->token);
	return MEMPROF_POOL_OK;
}

static int svc_release(void *ctx, const struct memprof_region *r)
{
	return drop_region(ctx, r, REGION_RESERVE, MP_COST_RELEASE, 0);
}

static int svc_va_reserve(void *ctx, uint64_t size, struct memprof_region *out)
{
	return new_region(ctx, REGION_VA, MP_COST_VA_RESERVE, size, 0, out);
}

static int svc_va_release(void *ctx, const struct memprof_region *va)
{
	return drop_region(ctx, va, REGION_VA, MP_COST_VA_RELEASE, 0);
}

static int svc_alloc_async(void *ctx, uint64_t size, uint64_t stream, struct memprof_region *out)
{
	struct engine *e = ctx;

	if (!e->be_ops->alloc_async)
		return MEMPROF_POOL_ENOTSUP;
	if (over_capacity(e, size))
		return MEMPROF_POOL_ENOMEM;
	return new_region(e, REGION_ASYNC, MP_COST_ALLOC_ASYNC, size, stream, out);
}

static int svc_free_async(void *ctx, const struct memprof_region *r, uint64_t stream)
{
	struct engine *e = ctx;

	if (!e->be_ops->free_async)
		return MEMPROF_POOL_ENOTSUP;
	return drop_region(e, r, REGION_ASYNC, MP_COST_FREE_ASYNC, stream);
}

static int svc_map(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	struct engine *e = ctx;
	struct region *g = region_of(e, va, REGION_VA);
	uint64_t t0;
	int rc;

	if (!g)
		return MEMPROF_POOL_EINVAL;
	if (over_capacity(e, n))
		return MEMPROF_POOL_ENOMEM;
	t0 = call_start(e);
	rc = e->be_ops->map(e->be, &g->be, off, n);
	charge(e, MP_COST_MAP, n, t0);
	if (rc != MEMPROF_POOL_OK)
		return fault(e, rc);
	g->mapped_bytes += n;
	add_reserved(e, n);
	if (e->extents)
		mp_extents_map(e->extents, g->be.addr + off, n);
	else if (e->peak && mp_peak_state_map(e->peak, g->be.addr + off, n) < 0)
		return out_of_memory(e);
	return MEMPROF_POOL_OK;
}

static int svc_unmap(void *ctx, const struct memprof_region *va, uint64_t off, uint64_t n)
{
	struct engine *e = ctx;
	struct region *g = region_of(e, va, REGION_VA);
	uint64_t t0;
	int rc;

	if (!g)
		return MEMPROF_POOL_EINVAL;
	if (n > g->mapped_bytes) {
		mp_err(e->err, MP_EINVAL,
		       "pool '%s' unmapped %llu bytes of a range with %llu mapped", e->pool_name,
		       (unsigned long long)n, (unsigned long long)g->mapped_bytes);
		e->fault = 1;
		return MEMPROF_POOL_EINVAL;
	}
	t0 = call_start(e);
	rc = e->be_ops->unmap(e->be, &g->be, off, n);
	charge(e, MP_COST_UNMAP, n, t0);
	if (rc != MEMPROF_POOL_OK)
		return fault(e, rc);
	g->mapped_bytes -= n;
	e->reserved_bytes -= n;
	if (e->extents)
		mp_extents_unmap(e->extents, g->be.addr + off, n);
	else if (e->peak && mp_peak_state_unmap(e->peak, g->be.addr + off, n) < 0)
		return out_of_memory(e);
	return MEMPROF_POOL_OK;
}

static int svc_memset(void *ctx, uint64_t addr, int value, uint64_t n, uint64_t stream)
{
	struct engine *e = ctx;
	uint64_t t0 = call_start(e);
	int rc = e->be_ops->memset(e->be, addr, value, n, stream);

	charge(e, MP_COST_MEMSET, n, t0);
	if (rc == MEMPROF_POOL_OK)
		e->res->bytes_set += n;
	return fault(e, rc);
}

static int svc_copy(void *ctx, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream)
{
	struct engine *e = ctx;
	uint64_t t0 = call_start(e);
	int rc = e->be_ops->copy(e->be, dst, src, n, stream);

	charge(e, MP_COST_COPY, n, t0);
	if (rc == MEMPROF_POOL_OK)
		e->res->bytes_copied += n;
	return fault(e, rc);
}

static int svc_sync(void *ctx, uint64_t stream)
{
	struct engine *e = ctx;
	uint64_t t0 = call_start(e);
	int rc = e->be_ops->sync(e->be, stream);

	charge(e, MP_COST_SYNC, 0, t0);
	return fault(e, rc);
}

static uint64_t svc_clock_ns(void *ctx)
{
	(void)ctx;
	return mp_engine_now_ns();
}

static void svc_log(void *ctx, int level, const char *fmt, ...)
{
	struct engine *e = ctx;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* After a backend fault its message is the cause: keep it, with the pool's words first. */
	if (level == MEMPROF_POOL_LOG_ERROR && e->fault && e->err->code) {
		char cause[sizeof e->err->msg];

		snprintf(cause, sizeof cause, "%s", e->err->msg);
		mp_err(e->err, e->err->code, "pool '%s': %s: %s", e->pool_name, msg, cause);
	} else if (level == MEMPROF_POOL_LOG_ERROR) {
		mp_err(e->err, MP_EINVAL, "pool '%s': %s", e->pool_name, msg);
	}
	if (e->o->log)
		e->o->log(e->o->log_ctx, e->pool_name, level, msg);
}

static int svc_block_moved(void *ctx, uint64_t token, uint64_t new_addr)
{
	struct engine *e = ctx;
	struct block *b;
	struct mp_extents_figures f;
	uint64_t overlaps, old_addr;

	if (!(b = mp_live_blocks_get(&e->live, token)) || !b->held) {
		mp_err(e->err, MP_EINVAL, "pool '%s' moved a block it does not hold", e->pool_name);
		e->fault = 1;
		return MEMPROF_POOL_EINVAL;
	}
	old_addr = b->pb.addr;
	b->pb.addr = new_addr;
	if (e->peak && mp_peak_state_add_block(e->peak, token, new_addr, b->pb.size_bytes) < 0)
		return out_of_memory(e);
	if (!e->extents)
		return MEMPROF_POOL_OK;
	mp_extents_figures(e->extents, &f);
	overlaps = f.n_overlaps;
	mp_extents_remove_block(e->extents, token, old_addr);
	if (mp_extents_add_block(e->extents, token, new_addr, b->pb.size_bytes) < 0)
		return fault(e, MEMPROF_POOL_EFAULT);
	mp_extents_figures(e->extents, &f);
	if (e->o->verify && f.n_overlaps > overlaps) {
		e->res->verify = MP_VERIFY_FAILED;
		snprintf(e->res->verify_msg, sizeof e->res->verify_msg,
		         "pool '%s' moved allocation #%llu onto a live allocation at 0x%llx",
		         e->pool_name, (unsigned long long)token, (unsigned long long)new_addr);
	}
	return MEMPROF_POOL_OK;
}

static int refuse_sharing(struct engine *e, const char *why, uint64_t token, uint64_t live)
{
	mp_err(e->err, MP_EINVAL, "pool '%s' shared allocation #%llu with #%llu: %s", e->pool_name,
	       (unsigned long long)token, (unsigned long long)live, why);
	e->fault = 1;
	return MEMPROF_POOL_EINVAL;
}

/* Recorded now, checked in place_block when the alloc returns (engine.c). */
static int svc_block_shares(void *ctx, uint64_t token, uint64_t live_token)
{
	struct engine *e = ctx;
	struct block *live;

	if (e->allocating < 0 || token != (uint64_t)e->allocating)
		return refuse_sharing(e, "outside that allocation's alloc call", token, live_token);
	if (!(live = mp_live_blocks_get(&e->live, live_token)) || !live->held)
		return refuse_sharing(e, "the second is not live", token, live_token);
	if (live->shares_with)
		return refuse_sharing(e, "the second itself lies inside another", token,
		                      live_token);
	mp_live_blocks_get(&e->live, token)->shares_with = (uint32_t)live_token + 1;
	return MEMPROF_POOL_OK;
}

/* The collective itself, after the ranks of a group agreed to run it. */
static int run_collective(struct engine *e, int kind, uint64_t addr, uint64_t n_bytes,
                          uint32_t world_size, uint64_t stream, uint64_t *elapsed_ns)
{
	if (e->o->group) {
		int agreed = mp_rank_group_agree(e->o->group, kind, n_bytes);
		if (agreed < 0) {
			mp_err(e->err, MP_EIO, "the ranks could not agree on a collective");
			e->fault = 1;
			return MEMPROF_POOL_EFAULT;
		}
		if (!agreed)
			return MEMPROF_POOL_ENOTSUP;
	}
	return fault(e, e->be_ops->collective(e->be, kind, addr, n_bytes, world_size, stream,
	                                      elapsed_ns));
}

/*
 * A validity proof for the pool, not allocator work: neither allocator time
 * nor a backend call, and its wall time (waiting for the other ranks
 * included) is kept out of the pool's host time too.
 */
static int svc_collective(void *ctx, int kind, uint64_t addr, uint64_t n_bytes, uint32_t world_size,
                          uint64_t stream, uint64_t *elapsed_ns)
{
	struct engine *e = ctx;
	uint64_t t0 = mp_engine_now_ns();
	int rc;

	if (elapsed_ns)
		*elapsed_ns = 0;
	if (kind != MEMPROF_POOL_ALL_GATHER && kind != MEMPROF_POOL_REDUCE_SCATTER)
		return MEMPROF_POOL_EINVAL;
	if (world_size == 0 || n_bytes == 0 || n_bytes % world_size)
		return MEMPROF_POOL_EINVAL;
	if (!e->be_ops->collective)
		return MEMPROF_POOL_ENOTSUP;
	rc = run_collective(e, kind, addr, n_bytes, world_size, stream, elapsed_ns);
	e->call_backend_wall_ns += mp_engine_now_ns() - t0;
	return rc;
}

int mp_engine_host_init(struct engine *e)
{
	mp_slot_pool_init(&e->regions, sizeof(struct region));
	if (e->with_extents && mp_extents_new(0, &e->extents) < 0)
		return mp_err(e->err, MP_ENOMEM, "out of memory");
	e->host = (struct memprof_pool_host){
	        .struct_size = sizeof(struct memprof_pool_host),
	        .abi_major = MEMPROF_POOL_ABI_MAJOR,
	        .abi_minor = MEMPROF_POOL_ABI_MINOR,
	        .ctx = e,
	        .backend = e->be_ops->name,
	        .capacity_bytes = e->o->capacity_bytes,
	        .granularity_bytes = e->be_ops->granularity_bytes,
	        .reserve = svc_reserve,
	        .release = svc_release,
	        .memset = svc_memset,
	        .copy = svc_copy,
	        .clock_ns = svc_clock_ns,
	        .log = svc_log,
	        .va_reserve = svc_va_reserve,
	        .va_release = svc_va_release,
	        .map = svc_map,
	        .unmap = svc_unmap,
	        .alloc_async = svc_alloc_async,
	        .free_async = svc_free_async,
	        .sync = svc_sync,
	        .block_moved = svc_block_moved,
	        .block_shares = svc_block_shares,
	        .collective = svc_collective,
	        .lifetime_size = sizeof(struct memprof_pool_lifetime),
	};
	return 0;
}

size_t mp_engine_host_release_all(struct engine *e)
{
	size_t n = 0;

	for (size_t slot = 0; slot < e->regions.n; slot++) {
		struct region *g = mp_slot_pool_at(&e->regions, slot);
		struct memprof_region r;

		if (!g->kind)
			continue;
		r = (struct memprof_region){
		        .addr = g->be.addr, .size_bytes = g->be.size_bytes, .token = slot};
		n++;
		if (g->kind == REGION_VA && g->mapped_bytes)
			svc_unmap(e, &r, 0, g->be.size_bytes); /* best effort: whole range */
		drop_region(e, &r, g->kind,
		            g->kind == REGION_RESERVE ? MP_COST_RELEASE
		            : g->kind == REGION_VA    ? MP_COST_VA_RELEASE
		                                      : MP_COST_FREE_ASYNC,
		            0);
	}
	return n;
}

void mp_engine_host_fini(struct engine *e)
{
	mp_slot_pool_free(&e->regions);
	if (e->extents)
		mp_extents_destroy(e->extents);
}
