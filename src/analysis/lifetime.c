/*
 * analysis/lifetime.c - leaks, churn, reuse candidates and idle blocks per
 * (device, call site), as a memory-state listener (definitions in
 * lifetime.h).  Per event: a few hash lookups, no allocation once the
 * tables have grown.  Keeps nothing per live block but its group's number
 * in the tag of memstate's block (a free finds its group without a probe).
 * The groups beyond the table's bound go to store/group_spill; the
 * findings are the same either way.  Never prints; returns MP_E* codes.
 */
#include "analysis/lifetime.h"
#include "store/group_spill.h"
#include "util/error.h"

#include <stdio.h>
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

/* Allocations of one (device, call site, granted size) since it last came
 * into memory: all the hot path touches, in one 64-byte cache line, kept
 * in chunks of GROUP_CHUNK that an eviction compacts.  A group leaves
 * memory only with no live allocation, so no two of its allocations live
 * at once span two of its records: or-ing their shared flags is exact. */
struct mp_lifetime_group {
	int64_t stack_id, size_bytes;
	int64_t count, live, first_seq; /* allocations, not preexisting blocks */
	int64_t last_seq;               /* of the latest allocation (0: none) */
	int32_t device;
	uint32_t index;          /* among the groups */
	uint32_t site;           /* its (device, call site) */
	int16_t shared;          /* two of its allocations were live at once: no reuse candidate */
	uint16_t site_has_stack; /* its site's stack is set: group_of need not read the site */
};

#define GROUP_CHUNK  4096
#define DEVS_SCANNED 8    /* devices compared one by one; more go through dev_map */
#define SPILL_BATCH  16384 /* records summed into the spill database at once */
_Static_assert(sizeof(struct mp_lifetime_group) == 64, "a group is one cache line");

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
	uint32_t site;
	int preexisting;
	int64_t size_bytes, alloc_ts_ns, free_ts_ns, alloc_seq;
};

struct mp_lifetime_dev {
	int32_t device;
	struct lt_cand *cands;
	size_t n_cands, cap_cands;
	int64_t kept; /* findings kept while trimming one kind */
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

/* Place every group in the (zeroed) slots. */
static void place_groups(struct mp_lifetime *l, uint64_t *slots, size_t cap)
{
	size_t i, j;

	for (i = 0; i < l->n_groups; i++) {
		const struct mp_lifetime_group *g = group_at(l, i);
		uint64_t hash = group_hash(g->device, g->stack_id, g->size_bytes);

		for (j = hash & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = slot_of(i, hash);
	}
}

/* Double the slot table (at most half full) and place every group again. */
static int grow_slots(struct mp_lifetime *l)
{
	size_t cap = l->cap_slots ? l->cap_slots * 2 : 256;
	uint64_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return MP_ENOMEM;
	place_groups(l, slots, cap);
	free(l->group_slots);
	l->group_slots = slots;
	l->cap_slots = cap;
	return 0;
}

static int fail(struct mp_lifetime *l, int code)
{
	if (!l->error)
		l->error = code;
	return l->error;
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

/* The message for the spill database's failure rc; returns rc. */
static int spill_failed(struct mp_lifetime *l, int rc)
{
	if (rc == MP_ENOMEM)
		return fail(l, rc);
	snprintf(l->error_msg, sizeof(l->error_msg),
	         "cannot write the lifetime groups to a temporary database: %s\nhint: SQLite "
	         "makes it in SQLITE_TMPDIR or TMPDIR, else /var/tmp or /tmp: point one of them "
	         "at a directory with free space",
	         mp_group_spill_error(l->spill));
	return fail(l, rc);
}

/* Sum the first n records of l->evicted into the spill database. */
static int spill_out(struct mp_lifetime *l, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	if (!l->spill && (rc = mp_group_spill_open(&l->spill, l->opts.spill_max_pages)) < 0)
		return spill_failed(l, rc);
	if ((rc = mp_group_spill_add(l->spill, l->evicted, n)) < 0)
		return spill_failed(l, rc);
	l->n_spilled += (int64_t)n;
	return 0;
}

static void rec_of(const struct mp_lifetime_group *g, struct mp_group_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->device = g->device;
	r->stack_id = g->stack_id;
	r->size_bytes = g->size_bytes;
	r->site = g->site;
	r->count = g->count;
	r->first_seq = g->first_seq;
	r->shared = g->shared;
}

/* Append g's record to l->evicted (n of them so far), spilled by
 * SPILL_BATCH (the buffer stays small). */
static int add_evicted(struct mp_lifetime *l, const struct mp_lifetime_group *g, size_t *n)
{
	int rc;

	if (reserve((void **)&l->evicted, &l->cap_evicted, *n, sizeof(*l->evicted)) < 0)
		return MP_ENOMEM;
	rec_of(g, &l->evicted[(*n)++]);
	if (*n < SPILL_BATCH)
		return 0;
	rc = spill_out(l, *n);
	*n = 0;
	return rc;
}

/* The k-th least (from 0) of v[0..n), v reordered (Hoare's selection). */
static int64_t kth_least(int64_t *v, ptrdiff_t n, ptrdiff_t k)
{
	ptrdiff_t lo = 0, hi = n - 1, i, j;
	int64_t pivot, t;

	while (lo < hi) {
		pivot = v[lo + (hi - lo) / 2];
		for (i = lo, j = hi; i <= j;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/* The last allocation seq below which idle groups leave: INT64_MAX for all
 * of them when they are at most half the table; -1 when fewer than a quarter
 * are idle (the table doubles instead). */
static int64_t eviction_cut(struct mp_lifetime *l)
{
	size_t i, n = 0, half = l->max_groups > 1 ? l->max_groups / 2 : 1;

	if (l->cap_idle < l->n_groups) {
		int64_t *p = realloc(l->idle_seqs, l->n_groups * sizeof(*p));

		if (!p)
			return MP_ENOMEM;
		l->idle_seqs = p;
		l->cap_idle = l->n_groups;
	}
	for (i = 0; i < l->n_groups; i++)
		if (group_at(l, i)->live == 0)
			l->idle_seqs[n++] = group_at(l, i)->last_seq;
	if (n == 0 || n < l->max_groups / 4)
		return -1;
	return n <= half ? INT64_MAX : kth_least(l->idle_seqs, (ptrdiff_t)n, (ptrdiff_t)half - 1);
}

/* The table is full: the idle groups allocated from least recently, half of
 * the table, go to the spill database (their allocations summed into their
 * sites now), the others move down; or, with too few idle, the bound doubles
 * (the live set needs it). */
static int evict(struct mp_lifetime *l)
{
	int64_t cut = eviction_cut(l);
	size_t i, w = 0, n_out = 0;

	if (cut == MP_ENOMEM)
		return fail(l, MP_ENOMEM);
	if (cut < 0) {
		l->max_groups *= 2;
		return 0;
	}
	for (i = 0; i < l->n_groups; i++) {
		struct mp_lifetime_group *g = group_at(l, i);

		if (g->live == 0 && g->last_seq <= cut) {
			l->sites[g->site].n_allocs += g->count;
			if (g->count > 0 && add_evicted(l, g, &n_out) < 0)
				return fail(l, MP_ENOMEM);
			continue;
		}
		if (w != i)
			*group_at(l, w) = *g;
		group_at(l, w)->index = (uint32_t)w;
		w++;
	}
	l->n_groups = w;
	/* the tags of live blocks may now name another group: tagged_group checks */
	memset(l->group_slots, 0, l->cap_slots * sizeof(*l->group_slots));
	place_groups(l, l->group_slots, l->cap_slots);
	return spill_out(l, n_out);
}

static struct mp_lifetime_group *add_group(struct mp_lifetime *l, const struct mp_mem_block *b,
                                           uint64_t hash)
{
	struct mp_lifetime_group *g;
	struct mp_lifetime_site *s;
	size_t j;

	if (l->n_groups >= l->max_groups && evict(l) < 0)
		return NULL;
	if (l->n_groups >= UINT32_MAX - 1 ||
	    ((l->n_groups + 1) * 2 > l->cap_slots && grow_slots(l) < 0) ||
	    !(s = site_of(l, b->device, b->stack_id)))
		return NULL;
	if (l->n_groups == l->n_chunks * GROUP_CHUNK) {
		if (reserve((void **)&l->group_chunks, &l->cap_chunks, l->n_chunks, sizeof(g)) <
		            0 ||
		    !(l->group_chunks[l->n_chunks] = aligned_alloc(64, GROUP_CHUNK * sizeof(*g))))
			return NULL;
		l->n_chunks++;
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
	if (!g->site_has_stack) {
		if (!l->sites[g->site].stack)
			l->sites[g->site].stack = b->stack;
		g->site_has_stack = l->sites[g->site].stack != NULL;
	}
	return g;
}

/* A block's tag: 1 + its group's index in the low 32 bits (0: none), the
 * group's site above (a hint to prefetch on its free). */
static uint64_t tag_group(const struct mp_mem_block *b)
{
	return b->tag & 0xffffffffu;
}

/* The group of a block whose allocation was seen: the one its tag names
 * (set by on_alloc, saving a probe into a table too large for the cache),
 * else looked up. */
static struct mp_lifetime_group *tagged_group(struct mp_lifetime *l, const struct mp_mem_block *b)
{
	struct mp_lifetime_group *g;

	if (tag_group(b) > 0 && tag_group(b) <= l->n_groups) {
		g = group_at(l, tag_group(b) - 1);
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
	if (l->n_devs <= DEVS_SCANNED) { /* a few devices, often alternating */
		for (i = 0; i < l->n_devs; i++)
			if (l->devs[i].device == device) {
				l->dev_hint = i;
				return &l->devs[i];
			}
	} else if (mp_intmap_get(&l->dev_map, (uint32_t)device, &i)) {
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

/* The device of block b: the one its memory-state slot last named when
 * that is still b's device, else looked up (and the slot noted). */
static inline struct mp_lifetime_dev *block_dev(struct mp_lifetime *l, const struct mp_mem_block *b)
{
	struct mp_lifetime_dev *d;
	size_t i;

	if (b->dev_slot < 0 || b->dev_slot >= MP_MEM_MAX_DEVICES)
		return dev_of(l, b->device);
	i = l->slot_dev[b->dev_slot];
	if (i > 0 && i <= l->n_devs && l->devs[i - 1].device == b->device)
		return &l->devs[i - 1];
	if ((d = dev_of(l, b->device)))
		l->slot_dev[b->dev_slot] = (uint32_t)(d - l->devs) + 1;
	return d;
}

static int on_alloc(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec)
{
	struct mp_lifetime *l = ctx;
	struct mp_lifetime_group *g = group_of(l, b);
	struct mp_lifetime_dev *d;

	(void)rec;
	if (!g)
		return fail(l, MP_ENOMEM); /* or the spill's first error */
	/* the block is memstate's own, handed over const: the tag is ours */
	((struct mp_mem_block *)b)->tag = (uint64_t)g->site << 32 | ((uint64_t)g->index + 1);
	if (b->preexisting)
		return 0;
	d = block_dev(l, b);
	if (!d)
		return fail(l, MP_ENOMEM);
	if (g->count++ == 0)
		g->first_seq = b->alloc_seq;
	g->last_seq = b->alloc_seq;
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
	struct mp_lifetime_dev *d = block_dev(l, b);
	struct lt_cand *c;
	int64_t life;

	if (!g || !d || reserve((void **)&d->cands, &d->cap_cands, d->n_cands, sizeof(*c)) < 0)
		return fail(l, MP_ENOMEM);
	c = &d->cands[d->n_cands++];
	c->site = g->site;
	c->size_bytes = g->size_bytes;
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

	if (b && tag_group(b) > 0 && tag_group(b) <= l->n_groups) {
		__builtin_prefetch(group_at(l, tag_group(b) - 1));
		if ((b->tag >> 32) < l->n_sites) /* its churn */
			__builtin_prefetch(&l->sites[b->tag >> 32].churn);
	} else if (!b && l->cap_slots)
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

			life = life_ns(c->preexisting ? l->first_ts_ns : c->alloc_ts_ns,
			               c->free_ts_ns);
			if ((double)life >= least)
				acc_add(&l->sites[c->site].idle, c->size_bytes, c->alloc_seq, life);
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

static void add_total(struct mp_lifetime_total *t, int64_t count, int64_t bytes)
{
	t->count += count;
	t->bytes = sat_add(t->bytes, bytes);
	t->n_findings++;
}

/* Keep the first opts.keep findings of kind k of each device, in the order
 * of cmp_finding (all of them sorted when keep is 0). */
static void trim(struct mp_lifetime *l, enum mp_lifetime_kind k)
{
	struct mp_lifetime_finding *f = l->findings[k];
	size_t i, w = 0;

	if (l->n_findings[k] > 1)
		qsort(f, l->n_findings[k], sizeof(*f), cmp_finding);
	if (l->opts.keep <= 0)
		return;
	for (i = 0; i < l->n_devs; i++)
		l->devs[i].kept = 0;
	for (i = 0; i < l->n_findings[k]; i++) {
		struct mp_lifetime_dev *d = dev_of(l, f[i].device); /* made by add_finding */

		if (d && d->kept++ < l->opts.keep)
			f[w++] = f[i];
	}
	l->n_findings[k] = w;
}

/* A new finding of kind k at site s, counted into the totals by
 * add_finding once filled; NULL when out of memory. */
static struct mp_lifetime_finding *push(struct mp_lifetime *l, enum mp_lifetime_kind k,
                                        const struct mp_lifetime_site *s)
{
	struct mp_lifetime_finding *f;

	if (reserve((void **)&l->findings[k], &l->cap_findings[k], l->n_findings[k], sizeof(*f)) <
	    0)
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

/* Count the last finding pushed into the totals; trim its kind when it
 * holds many more than it keeps. */
static int add_finding(struct mp_lifetime *l, enum mp_lifetime_kind k)
{
	const struct mp_lifetime_finding *f = &l->findings[k][l->n_findings[k] - 1];
	struct mp_lifetime_dev *d = dev_of(l, f->device);
	size_t most = (size_t)l->opts.keep * l->n_devs;

	if (!d)
		return MP_ENOMEM;
	add_total(&l->totals.kind[k], f->count, f->bytes);
	add_total(&d->totals.kind[k], f->count, f->bytes);
	if (l->opts.keep > 0 && l->n_findings[k] >= 2 * most + 4096)
		trim(l, k);
	return 0;
}

static int push_acc(struct mp_lifetime *l, enum mp_lifetime_kind k,
                    const struct mp_lifetime_site *s, const struct lt_acc *a)
{
	struct mp_lifetime_finding *f;

	if (a->count == 0)
		return 0;
	f = push(l, k, s);
	if (!f)
		return MP_ENOMEM;
	f->count = a->count;
	f->bytes = a->bytes;
	f->first_seq = a->first_seq;
	if (k != MP_LIFETIME_LEAK)
		f->mean_lifetime_ns = sum_div(&a->life, a->count);
	return add_finding(l, k);
}

static int collect_sites(struct mp_lifetime *l)
{
	size_t i;

	for (i = 0; i < l->n_sites; i++) {
		const struct mp_lifetime_site *s = &l->sites[i];

		if (push_acc(l, MP_LIFETIME_LEAK, s, &s->leak) < 0 ||
		    push_acc(l, MP_LIFETIME_CHURN, s, &s->churn) < 0 ||
		    push_acc(l, MP_LIFETIME_IDLE, s, &s->idle) < 0)
			return MP_ENOMEM;
	}
	return 0;
}

/* The reuse finding of a group's record (all of its records summed). */
static int reuse_of(void *ctx, const struct mp_group_rec *r)
{
	struct mp_lifetime *l = ctx;
	struct mp_lifetime_finding *f = push(l, MP_LIFETIME_REUSE, &l->sites[r->site]);
	int64_t size = r->size_bytes > 0 ? r->size_bytes : 0;

	if (!f)
		return MP_ENOMEM;
	f->count = r->count;
	f->size_bytes = r->size_bytes;
	f->calls_saved = r->count - 1;
	f->bytes = size && f->calls_saved > INT64_MAX / size ? INT64_MAX : f->calls_saved * size;
	f->first_seq = r->first_seq;
	return add_finding(l, MP_LIFETIME_REUSE);
}

static int emit_reuse(void *ctx, const struct mp_group_rec *r)
{
	return r->count >= 2 && !r->shared ? reuse_of(ctx, r) : 0;
}

/* Something was spilled: the groups in memory with allocations spilled
 * too (sorted runs: no more than a sort and a copy each), then every
 * group's sums read back in key order. */
static int spill_all(struct mp_lifetime *l)
{
	size_t i, n = 0;
	int rc;

	for (i = 0; i < l->n_groups; i++) {
		const struct mp_lifetime_group *g = group_at(l, i);

		if (g->count > 0 && (rc = add_evicted(l, g, &n)) < 0)
			return fail(l, rc);
	}
	if ((rc = spill_out(l, n)) < 0)
		return rc;
	rc = mp_group_spill_foreach(l->spill, emit_reuse, l);
	return rc == MP_ENOMEM ? fail(l, rc) : rc < 0 ? spill_failed(l, rc) : 0;
}

/* The reuse findings: from the groups in memory, or, once some were
 * spilled, from the spill database with the groups in memory merged in. */
static int collect_groups(struct mp_lifetime *l)
{
	size_t i;

	if (l->spill)
		return spill_all(l);
	for (i = 0; i < l->n_groups; i++) {
		const struct mp_lifetime_group *g = group_at(l, i);
		struct mp_group_rec r;

		if (g->count < 2 || g->shared)
			continue;
		rec_of(g, &r);
		if (reuse_of(l, &r) < 0)
			return fail(l, MP_ENOMEM);
	}
	return 0;
}

static void sum_preexisting(struct mp_lifetime *l)
{
	size_t i;

	for (i = 0; i < l->n_devs; i++) {
		struct mp_lifetime_total *t = &l->totals.preexisting_live_at_end;

		t->count += l->devs[i].totals.preexisting_live_at_end.count;
		t->bytes = sat_add(t->bytes, l->devs[i].totals.preexisting_live_at_end.bytes);
	}
}

static int on_end(void *ctx)
{
	struct mp_lifetime *l = ctx;
	int k, rc;

	if (l->ended)
		return 0;
	build_sites(l);
	if (l->ms && (rc = mp_memstate_foreach_live(l->ms, leak_cb, l)) < 0)
		return fail(l, rc);
	settle_idle(l);
	if (collect_sites(l) < 0)
		return fail(l, MP_ENOMEM);
	if ((rc = collect_groups(l)) < 0)
		return rc;
	for (k = 0; k < MP_LIFETIME_N_KINDS; k++)
		trim(l, (enum mp_lifetime_kind)k);
	sum_preexisting(l);
	l->ended = 1;
	return 0;
}

/* The environment variable name as a number in [1, UINT32_MAX / 4], else 0. */
static uint64_t env_count(const char *name)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (!e || *e < '0' || *e > '9')
		return 0;
	v = strtoull(e, &end, 10);
	return !*end && v >= 1 && v <= UINT32_MAX / 4 ? v : 0;
}

/* The table's bound and the spill's page limit: the options', else the
 * environment's (for tests), else MP_LIFETIME_MAX_GROUPS and none. */
static void limits(struct mp_lifetime *l)
{
	l->max_groups =
	        l->opts.max_groups ? l->opts.max_groups : env_count("MEMPROF_LIFETIME_MAX_GROUPS");
	if (!l->max_groups)
		l->max_groups = MP_LIFETIME_MAX_GROUPS;
	if (!l->opts.spill_max_pages)
		l->opts.spill_max_pages = (int64_t)env_count("MEMPROF_LIFETIME_SPILL_PAGES");
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
	if (o) {
		/* written so that a NaN share fails too */
		if (o->churn_window_ns < 0 || !(o->idle_min_share >= 0 && o->idle_min_share <= 1) ||
		    o->keep < 0 || o->max_groups > UINT32_MAX / 4 || o->spill_max_pages < 0) {
			limits(l);
			return MP_EINVAL;
		}
		l->opts = *o;
	}
	limits(l);
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
	for (i = 0; i < l->n_chunks; i++)
		free(l->group_chunks[i]);
	free(l->group_chunks);
	free(l->group_slots);
	mp_group_spill_close(l->spill);
	free(l->evicted);
	free(l->idle_seqs);
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

const char *mp_lifetime_error(const struct mp_lifetime *l)
{
	return l->error_msg[0] ? l->error_msg : NULL;
}

const char *mp_lifetime_kind_name(enum mp_lifetime_kind k)
{
	static const char *const names[MP_LIFETIME_N_KINDS] = {"leaks", "churn", "reuse", "idle"};

	return (unsigned)k < MP_LIFETIME_N_KINDS ? names[k] : "?";
}
