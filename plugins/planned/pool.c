/*
 * plugins/planned/pool.c - the planned pool's ABI glue: options, plan (see
 * planned.h for what planning costs), and O(1) serving of the plan: alloc
 * hands out base + the allocation's planned offset, free only marks it idle.
 * One backend reservation of the plan's makespan is made at the first alloc;
 * under a smaller capacity it holds what the capacity allows and requests
 * planned above that fail with ENOMEM.  A plan made under the host's
 * plan_key is kept after destroy for the host's next pass (cache.c).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "plan.h"
#include "planned.h"

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct planned_config cfg;
	struct planned_plan plan;
	int planned, reused;      /* reused: the plan came from the cache */
	uint64_t key, items_hash; /* what the plan is filed under in the cache */
	int reserve_state;        /* 0: not tried, 1: held, -1: refused */
	struct memprof_region region;
	uint64_t n_refused; /* allocs refused: planned beyond the reservation */
};

static const struct memprof_pool_option_spec planned_options[] = {
        {"plan_time", "DURATION",
         "time for the whole plan, greedy passes and search: 500ms, 5s, ... (ns, us, ms, s, "
         "min, h; a bare number is seconds; default 5s; 0: one greedy pass)"},
        {"plan_nodes", "N",
         "stop the search after N nodes, for results that do not depend on the machine "
         "(default 0: no limit but plan-time)"},
        {"order", "all|size|length|area|total|start|overlaps",
         "greedy orderings to try (default all)"},
        {"align", "BYTES", "round every size up to this power of two (default 1)"},
        {NULL, NULL, NULL},
};

/* plan_time: a number and a unit (ns, us, ms, s, min, h), a bare number in
 * seconds; at most a day. */
static int parse_plan_time(struct memprof_pool *p, const char *v)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"", 1e9}, {"s", 1e9},    {"ms", 1e6},  {"us", 1e3},
	             {"ns", 1}, {"min", 60e9}, {"h", 3600e9}};
	char *end;
	double s = strtod(v, &end);
	size_t i;

	if (end == v || !isfinite(s) || s < 0)
		return MEMPROF_POOL_EINVAL;
	while (*end == ' ')
		end++;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].name) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]) || s * units[i].ns > 86400e9)
		return MEMPROF_POOL_EINVAL;
	p->cfg.plan_time_ns = (uint64_t)(s * units[i].ns);
	return MEMPROF_POOL_OK;
}

static int parse_plan_nodes(struct memprof_pool *p, const char *v)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10);

	if (end == v || *end || *v == '-' || n > (1ull << 62))
		return MEMPROF_POOL_EINVAL;
	p->cfg.plan_nodes = n;
	return MEMPROF_POOL_OK;
}

static int parse_order(struct memprof_pool *p, const char *v)
{
	int o;

	if (strcmp(v, "all") == 0) {
		p->cfg.order = PLANNED_ORDER_ALL;
		return MEMPROF_POOL_OK;
	}
	for (o = 0; o < PLANNED_N_ORDERS; o++)
		if (strcmp(v, planned_order_names[o]) == 0) {
			p->cfg.order = o;
			return MEMPROF_POOL_OK;
		}
	return MEMPROF_POOL_EINVAL;
}

static int parse_align(struct memprof_pool *p, const char *v)
{
	char *end;
	unsigned long long a = strtoull(v, &end, 10);

	if (end == v || *end || *v == '-' || a == 0 || a > (1ull << 30) || (a & (a - 1)))
		return MEMPROF_POOL_EINVAL;
	p->cfg.align_bytes = a;
	return MEMPROF_POOL_OK;
}

static int parse_option(struct memprof_pool *p, const struct memprof_pool_option *o)
{
	int rc = MEMPROF_POOL_EINVAL;
	const char *v = o->value ? o->value : "";

	if (o->name && strcmp(o->name, "plan_time") == 0)
		rc = parse_plan_time(p, v);
	else if (o->name && strcmp(o->name, "plan_nodes") == 0)
		rc = parse_plan_nodes(p, v);
	else if (o->name && strcmp(o->name, "order") == 0)
		rc = parse_order(p, v);
	else if (o->name && strcmp(o->name, "align") == 0)
		rc = parse_align(p, v);
	if (rc != MEMPROF_POOL_OK)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "bad option '%s=%s'",
		             o->name ? o->name : "", v);
	return rc;
}

static int planned_create(const struct memprof_pool_host *host,
                          const struct memprof_pool_option *opts, size_t n_opts,
                          struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);
	size_t i;

	if (!p)
		return MEMPROF_POOL_ENOMEM;
	p->host = host;
	p->cfg = (struct planned_config){
	        .plan_time_ns = 5000000000ull, .order = PLANNED_ORDER_ALL, .align_bytes = 1};
	for (i = 0; i < n_opts; i++)
		if (parse_option(p, &opts[i]) != MEMPROF_POOL_OK) {
			free(p);
			return MEMPROF_POOL_EINVAL;
		}
	*out = p;
	return MEMPROF_POOL_OK;
}

/*
 * The items as this plugin's struct, from a host whose items are not (see
 * items_as_built): its stride is lifetime_size (1.0's without it), and the
 * fields it lacks read as no time.
 */
static struct memprof_pool_lifetime *copy_items(const struct memprof_pool_host *h,
                                                const struct memprof_pool_lifetime *items, size_t n)
{
	size_t stride = MEMPROF_POOL_LIFETIME_SIZE_1_0, k;
	struct memprof_pool_lifetime *v = malloc((n + 1) * sizeof *v);

	if (h->struct_size >=
	            offsetof(struct memprof_pool_host, lifetime_size) + sizeof h->lifetime_size &&
	    h->lifetime_size >= MEMPROF_POOL_LIFETIME_SIZE_1_0)
		stride = h->lifetime_size;
	for (k = 0; v && k < n; k++) {
		v[k].alloc_ts = v[k].free_ts = MEMPROF_POOL_NO_TIME;
		memcpy(&v[k], (const char *)items + k * stride,
		       stride < sizeof *v ? stride : sizeof *v);
	}
	return v;
}

/* Whether the host's items are this plugin's struct exactly, to be read in place. */
static int items_as_built(const struct memprof_pool_host *h)
{
	return h->struct_size >= offsetof(struct memprof_pool_host, lifetime_size) +
	                                 sizeof h->lifetime_size &&
	       h->lifetime_size == sizeof(struct memprof_pool_lifetime);
}

static uint64_t plan_key_of(const struct memprof_pool_host *h)
{
	if (h->struct_size < offsetof(struct memprof_pool_host, plan_key) + sizeof h->plan_key)
		return 0;
	return h->plan_key;
}

/* Say so when the budget stopped the search short of the bound: the best so far is used. */
static void say_out_of_budget(const struct memprof_pool *p)
{
	const struct planned_plan *pl = &p->plan;

	if (!pl->out_of_budget)
		return;
	p->host->log(
	        p->host->ctx, MEMPROF_POOL_LOG_WARN,
	        "the plan stopped at its budget (plan_time %.3g s%s) with the best placement "
	        "found so far: %llu bytes, %.2f%% above the lower bound, not proved optimal",
	        (double)p->cfg.plan_time_ns / 1e9, p->cfg.plan_nodes ? ", or plan_nodes" : "",
	        (unsigned long long)pl->makespan_bytes,
	        pl->lower_bound_bytes
	                ? 100.0 * ((double)pl->makespan_bytes / (double)pl->lower_bound_bytes - 1.0)
	                : 0.0);
}

static int planned_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n)
{
	struct memprof_pool_lifetime *copy = NULL;
	const struct memprof_pool_lifetime *v = items;
	char why[256] = "";
	int rc;

	if (p->planned) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "plan called twice");
		return MEMPROF_POOL_EINVAL;
	}
	if (!items_as_built(p->host) && !(v = copy = copy_items(p->host, items, n)))
		return MEMPROF_POOL_ENOMEM;
	p->key = plan_key_of(p->host);
	p->items_hash = p->key ? planned_cache_hash(v, n) : 0;
	p->reused = p->key && planned_cache_take(p->key, p->items_hash, &p->cfg, &p->plan);
	rc = p->reused ? MEMPROF_POOL_OK
	               : planned_plan_build(&p->plan, v, n, &p->cfg, why, sizeof why);
	free(copy);
	if (rc != MEMPROF_POOL_OK) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "cannot plan: %s",
		             why[0] ? why : "out of memory");
		return rc;
	}
	p->planned = 1;
	if (!p->reused)
		say_out_of_budget(p);
	return MEMPROF_POOL_OK;
}

/* The one reservation: the makespan, or what the capacity allows. */
static int reserve_once(struct memprof_pool *p)
{
	const struct memprof_pool_host *h = p->host;
	uint64_t need = p->plan.makespan_bytes;
	int rc;

	if (p->reserve_state || need == 0)
		return MEMPROF_POOL_OK;
	rc = h->reserve(h->ctx, need, &p->region);
	if (rc == MEMPROF_POOL_ENOMEM && h->capacity_bytes && h->capacity_bytes < need) {
		h->log(h->ctx, MEMPROF_POOL_LOG_WARN,
		       "the plan needs %llu bytes, the capacity is %llu: allocations planned above "
		       "it will fail",
		       (unsigned long long)need, (unsigned long long)h->capacity_bytes);
		rc = h->reserve(h->ctx, h->capacity_bytes, &p->region);
	}
	if (rc == MEMPROF_POOL_ENOMEM)
		p->reserve_state = -1;
	else if (rc == MEMPROF_POOL_OK)
		p->reserve_state = 1;
	return rc;
}

static int planned_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                         struct memprof_pool_block *out)
{
	int64_t slot = p->planned ? planned_plan_slot(&p->plan, req->index) : -1;
	int rc;

	if (slot < 0 || p->plan.state[slot] != PLANNED_SLOT_IDLE ||
	    req->size_bytes > p->plan.size_bytes[slot]) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "allocation %lld of %llu bytes is not in the plan%s",
		             (long long)req->index, (unsigned long long)req->size_bytes,
		             slot >= 0 && p->plan.state[slot] == PLANNED_SLOT_LIVE
		                     ? " (already live)"
		                     : "");
		return MEMPROF_POOL_EINVAL;
	}
	rc = reserve_once(p);
	if (rc != MEMPROF_POOL_OK && rc != MEMPROF_POOL_ENOMEM)
		return rc;
	if (p->plan.size_bytes[slot] > 0 &&
	    (p->reserve_state != 1 ||
	     p->plan.offset_bytes[slot] + p->plan.size_bytes[slot] > p->region.size_bytes)) {
		p->n_refused++;
		return MEMPROF_POOL_ENOMEM;
	}
	p->plan.state[slot] = PLANNED_SLOT_LIVE;
	out->addr = p->region.addr + p->plan.offset_bytes[slot];
	out->size_bytes = p->plan.size_bytes[slot];
	out->handle = (uint64_t)slot;
	return MEMPROF_POOL_OK;
}

static int planned_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	(void)stream;
	if (!p->planned || b->handle >= p->plan.n_slots ||
	    p->plan.state[b->handle] != PLANNED_SLOT_LIVE) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a block that is not live (handle %llu)",
		             (unsigned long long)b->handle);
		return MEMPROF_POOL_EINVAL;
	}
	p->plan.state[b->handle] = PLANNED_SLOT_IDLE;
	return MEMPROF_POOL_OK;
}

static void planned_stats(struct memprof_pool *p, memprof_pool_emit_fn emit, void *ctx)
{
	const struct planned_plan *pl = &p->plan;
	double lb = (double)pl->lower_bound_bytes;

	emit(ctx, "makespan_bytes", (double)pl->makespan_bytes, "bytes");
	emit(ctx, "plan_lower_bound_bytes", lb, "bytes");
	emit(ctx, "proven_bound_bytes", (double)pl->proven_bound_bytes, "bytes");
	emit(ctx, "plan_ratio", lb > 0 ? (double)pl->makespan_bytes / lb : 1.0, "ratio");
	emit(ctx, "plan_ns", (double)pl->plan_ns, "ns");
	emit(ctx, "orderings_tried", (double)pl->n_runs, "count");
	emit(ctx, "search_nodes", (double)pl->n_nodes, "count");
	emit(ctx, "optimal", pl->optimal ? 1.0 : 0.0, "count");
	emit(ctx, "overlap_pairs", (double)pl->n_pairs, "count");
	emit(ctx, "swept", pl->swept ? 1.0 : 0.0, "count");
	emit(ctx, "refused_beyond_capacity", (double)p->n_refused, "count");
	emit(ctx, "plan_out_of_budget", pl->out_of_budget ? 1.0 : 0.0, "count");
	emit(ctx, "plan_reused", p->reused ? 1.0 : 0.0, "count");
}

static void planned_destroy(struct memprof_pool *p)
{
	if (p->reserve_state == 1)
		p->host->release(p->host->ctx, &p->region);
	if (p->planned && p->key)
		planned_cache_put(p->key, p->items_hash, &p->cfg, &p->plan);
	planned_plan_free(&p->plan);
	free(p);
}

static const struct memprof_pool_ops planned_ops = {
        MEMPROF_POOL_OPS_HEADER("planned", "offline placement of the whole trace: the reachable "
                                           "optimum beside the lower bound"),
        .options = planned_options,
        .create = planned_create,
        .alloc = planned_alloc,
        .free = planned_free,
        .stats = planned_stats,
        .destroy = planned_destroy,
        .plan = planned_plan,
};

MEMPROF_POOL_DEFINE(planned_ops)
