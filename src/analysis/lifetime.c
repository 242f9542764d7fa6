/*
 * analysis/lifetime.c - leaks, churn, reuse candidates and idle blocks per
 * (device, call site), as a memory-state listener (definitions in
 * lifetime.h).  Per event: a few hash lookups, no allocation once the
 * tables have grown.  Keeps nothing per live block but its group's number
 * in the tag of memstate's block (a free finds its group without a probe).
 * Never prints; returns MP_E* codes.
 */
#include "analysis/lifetime.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

/* A sum of lifetimes: 128 bits, so that no trace can overflow it. */
struct lt_sum {
	uint64_t hi, lo;
};

/* The blocks of one kind at one site. */
struct lt_acc {
	int64_t count, bytes, first_seq;
	struct lt_sum life;
};

/* Allocations of one (device, call site, granted size): all the hot path
 * touches, in 56 bytes (a trace may hold millions of groups), kept in
 * chunks of GROUP_CHUNK that never move (no copy, no slack beyond one chunk). */
struct mp_lifetime_group {
	int64_t stack_id, size_bytes;
	int64_t count, live, first_seq; /* allocations, not preexisting blocks */
	int32_t device;
	uint32_t index; /* among the groups */
	uint32_t site;  /* its (device, call site) */
	int32_t shared; /* two of its allocations were live at once: no reuse candidate */
};

#define GROUP_CHUNK 4096

static struct mp_lifetime_group *group_at(const struct mp_lifetime *l, size_t i)
{
	return &l->group_chunks[i / GROUP_CHUNK][i % GROUP_CHUNK];
}

/* One (device, call site): made with its first group; churn summed as it
 * happens, its groups' allocations at the end. */
struct mp_lifetime_site {
	int32_t device;
	int64_t stack_id;
	const struct memprof_stack *stack; /* the first one seen */
	size_t next;                       /* 1 + the next site of the same hash, 0 for none */
	int64_t n_allocs;
	struct lt_acc leak, churn, idle;
};

/* A block freed since the last allocation on its device. */
struct lt_cand {
	size_t group;
	int64_t alloc_ts_ns, free_ts_ns, alloc_seq;
	int preexisting;
};

struct mp_lifetime_dev {
	int32_t device;
	struct lt_cand *cands;
	size_t n_cands, cap_cands;
	struct mp_lifetime_totals totals;
};

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void sum_add(struct lt_sum *s, int64_t v)
{
	uint64_t lo = s->lo + (uint64_t)v;

	s->hi += lo < s->lo;
	s->lo = lo;
}

/* floor(s / n) for n > 0; the quotient fits: every term is below 2^63. */
static int64_t sum_div(const struct lt_sum *s, int64_t n)
{
	uint64_t d = (uint64_t)n, rem = s->hi % d, q = 0;
	int i;

	for (i = 63; i >= 0; i--) {
		/* rem < d < 2^63: the shift cannot overflow */
		rem = (rem << 1) | ((s->lo >> i) & 1);
		q <<= 1;
		if (rem >= d) {
			rem -= d;
			q |= 1;
		}
	}
	return q > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)q;
}

static void acc_add(struct lt_acc *a, int64_t size_bytes, int64_t seq, int64_t life_ns)
{
	if (a->count == 0 || seq < a->first_seq)
		a->first_seq = seq;
	a->count++;
	a->bytes = sat_add(a->bytes, size_bytes > 0 ? size_bytes : 0);
	sum_add(&a->life, life_ns);
}

static int64_t life_ns(int64_t from_ts_ns, int64_t to_ts_ns)
{
	/* the difference of two int64 can overflow: compare first */
	if (to_ts_ns <= from_ts_ns)
		return 0;
	return (uint64_t)to_ts_ns - (uint64_t)from_ts_ns > (uint64_t)INT64_MAX
	               ? INT64_MAX
	               : to_ts_ns - from_ts_ns;
}

/* Grow an array of n items to hold one more; 0 or MP_ENOMEM. */
static int reserve(void **items, size_t *cap, size_t n, size_t item_size)
{
	size_t cap2;
	void *p;

	if (n < *cap)
		return 0;
	cap2 = *cap ? *cap * 2 : 16;
	p = realloc(*items, cap2 * item_size);
	if (!p)
		return MP_ENOMEM;
	*items = p;
	*cap = cap2;
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t group_hash(int32_t device, int64_t stack_id, int64_t size_bytes)
{
	return mix(mix((uint64_t)stack_id ^ ((uint64_t)(uint32_t)device << 40)) ^
	           (uint64_t)size_bytes);
}

/* A slot: 1 + the group's index in the low 32 bits (0: empty), the high
 * 32 bits of its hash above, so that a probe rarely reads a group. */
static uint64_t slot_of(size_t index, uint64_t hash)
{
	return (hash & 0xffffffff00000000ULL) | (uint64_t)(index + 1);
}

/* Double the slot table (at most half full) and place every group again. */
static int grow_slots(struct mp_lifetime *l)
{
	size_t cap = l->cap_slots ? l->cap_slots * 2 : 256, i, j;
	uint64_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return MP_ENOMEM;
	for (i = 0; i < l->n_groups; i++) {
		const struct mp_lifetime_group *g = group_at(l, i);
		uint64_t hash = group_hash(g->device, g->stack_id, g->size_bytes);

		for (j = hash & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = slot_of(i, hash);
	}
	free(l->group_slots);
	l->group_slots = slots;
	l->cap_slots = cap;
	return 0;
}

/* The site of (device, stack_id), created when absent; NULL when out of
 * memory.  Once per group, and at the end. */
static struct mp_lifetime_site *site_of(struct mp_lifetime *l, int32_t device, int64_t stack_id)
{
	uint64_t key = group_hash(device, stack_id, 0), head = 0;
	size_t i;
	struct mp_lifetime_site *s;

	mp_intmap_get(&l->site_map, key, &head);
	for (i = head; i; i = l->sites[i - 1].next)
		if (l->sites[i - 1].device == device && l->sites[i - 1].stack_id == stack_id)
			return &l->sites[i - 1];
	if (reserve((void **)&l->sites, &l->cap_sites, l->n_sites, sizeof(*s)) < 0 ||
	    mp_intmap_put(&l->site_map, key, l->n_sites + 1) < 0)
		return NULL;
	s = &l->sites[l->n_sites++];
	memset(s, 0, sizeof(*s));
	s->device = device;
	s->stack_id = stack_id;
	s->next = head;
	return s;
}

static struct mp_lifetime_group *add_group(struct mp_lifetime *l, const struct mp_mem_block *b,
                                           uint64_t hash)
{
	struct mp_lifetime_group *g;
	struct mp_lifetime_site *s;
	size_t j;

	if (l->n_groups >= UINT32_MAX - 1 ||
	    ((l->n_groups + 1) * 2 > l->cap_slots && grow_slots(l) < 0) ||
	    !(s = site_of(l, b->device, b->stack_id)))
		return NULL;
	if (l->n_groups % GROUP_CHUNK == 0) {
		size_t k = l->n_groups / GROUP_CHUNK;

		if (reserve((void **)&l->group_chunks, &l->cap_chunks, k, sizeof(g)) < 0 ||
		    !(l->group_chunks[k] = malloc(GROUP_CHUNK * sizeof(*g))))
			return NULL;
	}
	for (j = hash & (l->cap_slots - 1); l->group_slots[j]; j = (j + 1) & (l->cap_slots - 1))
		;
	l->group_slots[j] = slot_of(l->n_groups, hash);
	g = group_at(l, l->n_groups);
	memset(g, 0, sizeof(*g));
	g->index = (uint32_t)l->n_groups++;
	g->site = (uint32_t)(s - l->sites);
	g->device = b->device;
	g->stack_id = b->stack_id;
	g->size_bytes = b->size_bytes;
	return g;
}

/* The group of a block, created when absent; NULL when out of memory. */
static struct mp_lifetime_group *group_of(struct mp_lifetime *l, const struct mp_mem_block *b)
{
	uint64_t hash = group_hash(b->device, b->stack_id, b->size_bytes), slot;
	uint64_t high = hash & 0xffffffff00000000ULL;
	size_t j, mask = l->cap_slots - 1;
	struct mp_lifetime_group *g;

	for (j = hash & mask; l->cap_slots && (slot = l->group_slots[j]); j = (j + 1) & mask) {
		if ((slot & 0xffffffff00000000ULL) != high)
			continue;
		g = group_at(l, (uint32_t)slot - 1);
		if (g->size_bytes == b->size_bytes && g->stack_id == b->stack_id &&
		    g->device == b->device)
			goto found;
	}
	g = add_group(l, b, hash);
	if (!g)
		return NULL;
found:
	if (!l->sites[g->site].stack)
		l->sites[g->site].stack = b->stack;
	return g;
}

/* The group of a block whose allocation was seen: the one its tag names
 * (set by on_alloc, saving a probe into a table too large for the cache),
 * else looked up. */
static struct mp_lifetime_group *tagged_group(struct mp_lifetime *l, const struct mp_mem_block *b)
{
	struct mp_lifetime_group *g;

	if (b->tag > 0 && b->tag <= l->n_groups) {
		g = group_at(l, b->tag - 1);
		if (g->size_bytes == b->size_bytes && g->stack_id == b->stack_id &&
		    g->device == b->device)
			return g;
	}
	return group_of(l, b);
}

static struct mp_lifetime_dev *dev_of(struct mp_lifetime *l, int32_t device)
{
	uint64_t i;
	struct mp_lifetime_dev *d;

	if (l->dev_hint < l->n_devs && l->devs[l->dev_hint].device == device)
		return &l->devs[l->dev_hint];
	if (mp_intmap_get(&l->dev_map, (uint32_t)device, &i)) {
		l->dev_hint = i;
		return &l->devs[i];
	}
	if (reserve((void **)&l->devs, &l->cap_devs, l->n_devs, sizeof(*d)) < 0 ||
	    mp_intmap_put(&l->dev_map, (uint32_t)device, l->n_devs) < 0)
		return NULL;
	d = &l->devs[l->n_devs++];
	memset(d, 0, sizeof(*d));
	d->device = device;
	return d;
}

static int fail(struct mp_lifetime *l, int code)
{
	if (!l->error)
		l->error = code;
	return code;
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_lifetime *l = ctx;
	struct mp_lifetime_group *g = group_of(l, b);
	struct mp_lifetime_dev *d;

	(void)rec;
	if (!g)
		return fail(l, MP_ENOMEM);
	/* the block is memstate's own, handed over const: the tag is ours */
	((struct mp_mem_block *)b)->tag = (uint64_t)g->index + 1;
	if (b->preexisting)
		return 0;
	d = dev_of(l, b->device);
	if (!d)
		return fail(l, MP_ENOMEM);
	if (g->count++ == 0)
		g->first_seq = b->alloc_seq;
	if (++g->live > 1)
		g->shared = 1;
	d->n_cands = 0; /* frees before this allocation are not teardown */
	return 0;
}

/* Churn: freed within the window, or before the next allocation on its stream. */
static int is_churn(const struct mp_lifetime *l, const struct mp_mem_block *b, int64_t life)
{
	if (!l->opts.no_timestamps && life <= l->opts.churn_window_ns)
		return 1;
	return l->ms && b->stream_ordinal == mp_memstate_stream_allocs(l->ms, b->process_id,
	                                                               b->device, b->stream);
}

static int on_free(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_lifetime *l = ctx;
	struct mp_lifetime_group *g = tagged_group(l, b);
	struct mp_lifetime_dev *d = dev_of(l, b->device);
	struct lt_cand *c;
	int64_t life;

	if (!g || !d || reserve((void **)&d->cands, &d->cap_cands, d->n_cands, sizeof(*c)) < 0)
		return fail(l, MP_ENOMEM);
	c = &d->cands[d->n_cands++];
	c->group = g->index;
	c->alloc_ts_ns = b->alloc_ts_ns;
	c->free_ts_ns = rec->ev.ts_ns;
	c->alloc_seq = b->alloc_seq;
	c->preexisting = b->preexisting;
	if (b->preexisting)
		return 0;
	if (g->live > 0)
		g->live--;
	life = life_ns(b->alloc_ts_ns, rec->ev.ts_ns);
	if (is_churn(l, b, life))
		acc_add(&l->sites[g->site].churn, b->size_bytes, b->alloc_seq, life);
	return 0;
}

/* The slot group_of will probe first for an allocation, or the group a
 * free's tag names, loaded while memstate and the listeners before this one
 * work (a miss in tables too large for the cache). */
static void prefetch(void *ctx, const struct memprof_record *rec, const struct mp_mem_block *b)
{
	const struct mp_lifetime *l = ctx;
	const struct memprof_event *ev = &rec->ev;

	if (b && b->tag > 0 && b->tag <= l->n_groups)
		__builtin_prefetch(group_at(l, b->tag - 1));
	else if (!b && l->cap_slots)
		__builtin_prefetch(
		        &l->group_slots[group_hash(ev->device, ev->stack_id, ev->size_bytes) &
		                        (l->cap_slots - 1)]);
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
                    unsigned changes)
{
	struct mp_lifetime *l = ctx;

	(void)d;
	(void)changes;
	if (!l->have_ts) {
		l->have_ts = 1;
		l->first_ts_ns = rec->ev.ts_ns;
	}
	l->last_ts_ns = rec->ev.ts_ns;
	return 0;
}

/* Sum the groups' allocations into their sites. */
static void build_sites(struct mp_lifetime *l)
{
	size_t i;

	for (i = 0; i < l->n_groups; i++)
		l->sites[group_at(l, i)->site].n_allocs += group_at(l, i)->count;
}

static int leak_cb(void *ctx, const struct mp_mem_block *b)
{
	struct mp_lifetime *l = ctx;
	struct mp_lifetime_site *s = site_of(l, b->device, b->stack_id);
	struct mp_lifetime_dev *d = dev_of(l, b->device);
	struct mp_lifetime_total *t;

	if (!s || !d)
		return MP_ENOMEM;
	if (!s->stack)
		s->stack = b->stack;
	if (!b->preexisting) {
		acc_add(&s->leak, b->size_bytes, b->alloc_seq, 0);
		return 0;
	}
	t = &d->totals.preexisting_live_at_end;
	t->count++;
	t->bytes = sat_add(t->bytes, b->size_bytes > 0 ? b->size_bytes : 0);
	return 0;
}

/* The teardown frees that remain candidates qualify when long enough. */
static void settle_idle(struct mp_lifetime *l)
{
	int64_t span = l->have_ts && !l->opts.no_timestamps ? life_ns(l->first_ts_ns, l->last_ts_ns)
	                                                    : 0,
	        life;
	double least = l->opts.idle_min_share * (double)span;
	size_t i, j;

	for (i = 0; i < l->n_devs; i++) {
		for (j = 0; span > 0 && j < l->devs[i].n_cands; j++) {
			const struct lt_cand *c = &l->devs[i].cands[j];
			const struct mp_lifetime_group *g = group_at(l, c->group);

			life = life_ns(c->preexisting ? l->first_ts_ns : c->alloc_ts_ns,
			               c->free_ts_ns);
			if ((double)life >= least)
				acc_add(&l->sites[g->site].idle, g->size_bytes, c->alloc_seq, life);
		}
		l->devs[i].n_cands = 0;
	}
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct mp_lifetime_finding *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->size_bytes != b->size_bytes)
		return a->size_bytes < b->size_bytes ? -1 : 1;
	return 0;
}

static struct mp_lifetime_finding *push(struct mp_lifetime *l, enum mp_lifetime_kind k,
                                        const struct mp_lifetime_site *s, size_t *cap)
{
	struct mp_lifetime_finding *f;

	if (reserve((void **)&l->findings[k], cap, l->n_findings[k], sizeof(*f)) < 0)
		return NULL;
	f = &l->findings[k][l->n_findings[k]++];
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->device = s->device;
	f->stack_id = s->stack_id;
	f->stack = s->stack;
	f->site_allocs = s->n_allocs;
	return f;
}

static int push_acc(struct mp_lifetime *l, enum mp_lifetime_kind k,
                    const struct mp_lifetime_site *s, const struct lt_acc *a, size_t *cap)
{
	struct mp_lifetime_finding *f;

	if (a->count == 0)
		return 0;
	f = push(l, k, s, cap);
	if (!f)
		return MP_ENOMEM;
	f->count = a->count;
	f->bytes = a->bytes;
	f->first_seq = a->first_seq;
	if (k != MP_LIFETIME_LEAK)
		f->mean_lifetime_ns = sum_div(&a->life, a->count);
	return 0;
}

static int collect_sites(struct mp_lifetime *l, size_t *cap)
{
	size_t i;

	for (i = 0; i < l->n_sites; i++) {
		const struct mp_lifetime_site *s = &l->sites[i];

		if (push_acc(l, MP_LIFETIME_LEAK, s, &s->leak, &cap[MP_LIFETIME_LEAK]) < 0 ||
		    push_acc(l, MP_LIFETIME_CHURN, s, &s->churn, &cap[MP_LIFETIME_CHURN]) < 0 ||
		    push_acc(l, MP_LIFETIME_IDLE, s, &s->idle, &cap[MP_LIFETIME_IDLE]) < 0)
			return MP_ENOMEM;
	}
	return 0;
}

static int collect_groups(struct mp_lifetime *l, size_t *cap)
{
	size_t i;

	for (i = 0; i < l->n_groups; i++) {
		const struct mp_lifetime_group *g = group_at(l, i);
		struct mp_lifetime_finding *f;
		int64_t size = g->size_bytes > 0 ? g->size_bytes : 0;

		if (g->count < 2 || g->shared)
			continue;
		f = push(l, MP_LIFETIME_REUSE, &l->sites[g->site], cap);
		if (!f)
			return MP_ENOMEM;
		f->count = g->count;
		f->size_bytes = g->size_bytes;
		f->calls_saved = g->count - 1;
		f->bytes = size && f->calls_saved > INT64_MAX / size ? INT64_MAX
		                                                     : f->calls_saved * size;
		f->first_seq = g->first_seq;
	}
	return 0;
}

static void add_total(struct mp_lifetime_total *t, int64_t count, int64_t bytes)
{
	t->count += count;
	t->bytes = sat_add(t->bytes, bytes);
}

static void sum_totals(struct mp_lifetime *l)
{
	struct mp_lifetime_dev *d;
	size_t i;
	int k;

	for (k = 0; k < MP_LIFETIME_N_KINDS; k++) {
		for (i = 0; i < l->n_findings[k]; i++) {
			const struct mp_lifetime_finding *f = &l->findings[k][i];

			add_total(&l->totals.kind[k], f->count, f->bytes);
			d = dev_of(l, f->device);
			if (d)
				add_total(&d->totals.kind[k], f->count, f->bytes);
		}
	}
	for (i = 0; i < l->n_devs; i++)
		add_total(&l->totals.preexisting_live_at_end,
		          l->devs[i].totals.preexisting_live_at_end.count,
		          l->devs[i].totals.preexisting_live_at_end.bytes);
}

static int on_end(void *ctx)
{
	struct mp_lifetime *l = ctx;
	size_t cap[MP_LIFETIME_N_KINDS] = {0};
	int k, rc;

	if (l->ended)
		return 0;
	build_sites(l);
	if (l->ms && (rc = mp_memstate_foreach_live(l->ms, leak_cb, l)) < 0)
		return fail(l, rc);
	settle_idle(l);
	if (collect_sites(l, cap) < 0 || collect_groups(l, &cap[MP_LIFETIME_REUSE]) < 0)
		return fail(l, MP_ENOMEM);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		if (l->n_findings[k] > 1)
			qsort(l->findings[k], l->n_findings[k], sizeof(*l->findings[k]),
			      cmp_finding);
	sum_totals(l);
	l->ended = 1;
	return 0;
}

int mp_lifetime_init(struct mp_lifetime *l, const struct mp_lifetime_opts *o,
                     const struct mp_memstate *ms)
{
	memset(l, 0, sizeof(*l));
	mp_intmap_init(&l->site_map);
	mp_intmap_init(&l->dev_map);
	l->ms = ms;
	l->opts.churn_window_ns = MP_LIFETIME_DEFAULT_CHURN_WINDOW_NS;
	l->opts.idle_min_share = MP_LIFETIME_DEFAULT_IDLE_SHARE;
	if (!o)
		return 0;
	/* written so that a NaN share fails too */
	if (o->churn_window_ns < 0 || !(o->idle_min_share >= 0 && o->idle_min_share <= 1))
		return MP_EINVAL;
	l->opts = *o;
	return 0;
}

void mp_lifetime_free(struct mp_lifetime *l)
{
	size_t i;
	int k;

	for (i = 0; i < l->n_devs; i++)
		free(l->devs[i].cands);
	free(l->devs);
	free(l->sites);
	for (i = 0; i * GROUP_CHUNK < l->n_groups; i++)
		free(l->group_chunks[i]);
	free(l->group_chunks);
	free(l->group_slots);
	mp_intmap_free(&l->site_map);
	mp_intmap_free(&l->dev_map);
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		free(l->findings[k]);
	memset(l, 0, sizeof(*l));
}

struct mp_mem_listener mp_lifetime_listener(struct mp_lifetime *l)
{
	struct mp_mem_listener m = {.ctx = l,
	                            .on_alloc = on_alloc,
	                            .on_free = on_free,
	                            .on_event = on_event,
	                            .prefetch = prefetch,
	                            .on_end = on_end};

	return m;
}

const struct mp_lifetime_finding *mp_lifetime_findings(const struct mp_lifetime *l,
                                                       enum mp_lifetime_kind k, size_t *n)
{
	if (!l->ended || (unsigned)k >= MP_LIFETIME_N_KINDS) {
		*n = 0;
		return NULL;
	}
	*n = l->n_findings[k];
	return l->findings[k];
}

void mp_lifetime_totals(const struct mp_lifetime *l, struct mp_lifetime_totals *out)
{
	*out = l->totals;
}

void mp_lifetime_device_totals(const struct mp_lifetime *l, int32_t device,
                               struct mp_lifetime_totals *out)
{
	uint64_t i;

	if (mp_intmap_get(&l->dev_map, (uint32_t)device, &i))
		*out = l->devs[i].totals;
	else
		memset(out, 0, sizeof(*out));
}

const char *mp_lifetime_kind_name(enum mp_lifetime_kind k)
{
	static const char *const names[MP_LIFETIME_N_KINDS] = {"leaks", "churn", "reuse", "idle"};

	return (unsigned)k < MP_LIFETIME_N_KINDS ? names[k] : "?";
}
