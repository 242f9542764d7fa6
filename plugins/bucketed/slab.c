/*
 * plugins/bucketed/slab.c - slots and slabs of the bucketed pool: the
 * bucket a size goes to, a bucket's LIFO free list (a freed slot is the
 * next one handed out; a new slab's slots go out in address order), carving
 * a new slab when the list is empty, and releasing slabs whose slots are
 * all free (only when asked: pool.c does so when memory runs out).  It
 * never retries and never touches the large pool.
 */
#include <stdlib.h>

#include "bucketed.h"

int bk_bucket_for(const struct memprof_pool *p, uint64_t size_bytes)
{
	size_t lo = 0, hi = p->cfg.n_sizes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->cfg.sizes[mid] < size_bytes)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == p->cfg.n_sizes ? -1 : (int)lo;
}

static int fault(struct memprof_pool *p, int rc, const char *what)
{
	if (!p->fault)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "%s failed (status %d)", what,
		             rc);
	p->fault = rc ? rc : MEMPROF_POOL_EFAULT;
	return p->fault;
}

/* Room for one more slab id and for every slot of bucket b on its free stack. */
static int make_room(struct memprof_pool *p, struct bk_bucket *b, uint64_t n_slots)
{
	uint64_t need = b->n_carved + n_slots;

	if (p->n_slabs == p->cap_slabs) {
		uint32_t cap = p->cap_slabs ? p->cap_slabs * 2 : 64;
		struct bk_slab **s;

		if (p->cap_slabs >= BK_MAX_SLABS / 2)
			return -1;
		s = realloc(p->slabs, cap * sizeof *s);
		if (!s)
			return -1;
		p->slabs = s;
		p->cap_slabs = cap;
	}
	if (need > b->cap_free) {
		size_t cap = b->cap_free ? b->cap_free : 64;
		uint64_t *f;

		while (cap < need)
			cap *= 2;
		f = realloc(b->free, cap * sizeof *f);
		if (!f)
			return -1;
		b->free = f;
		b->cap_free = cap;
	}
	return 0;
}

static void account_carved(struct memprof_pool *p, struct bk_bucket *b, uint64_t n_slots)
{
	b->n_carved += n_slots;
	if (b->n_carved > b->peak_carved)
		b->peak_carved = b->n_carved;
	p->st.slab_bytes += n_slots * b->size_bytes;
	if (p->st.slab_bytes > p->st.peak_slab_bytes)
		p->st.peak_slab_bytes = p->st.slab_bytes;
	p->st.n_slabs_reserved++;
}

/* Reserve a slab for bucket bi and push its slots, the lowest address on top. */
static int new_slab(struct memprof_pool *p, uint32_t bi)
{
	struct bk_bucket *b = &p->buckets[bi];
	uint32_t n = b->slots_per_slab, id = p->n_slabs;
	struct bk_slab *s;
	int rc;

	if (make_room(p, b, n) != 0)
		return fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
	s = calloc(1, sizeof *s);
	if (!s || !(s->requested = malloc((size_t)n * sizeof *s->requested))) {
		free(s);
		return fault(p, MEMPROF_POOL_EFAULT, "bookkeeping (out of host memory)");
	}
	rc = p->host->reserve(p->host->ctx, (uint64_t)n * b->size_bytes, &s->region);
	if (rc != MEMPROF_POOL_OK) {
		free(s->requested);
		free(s);
		return rc == MEMPROF_POOL_ENOMEM ? rc : fault(p, rc, "backend reserve");
	}
	s->bucket = bi;
	s->n_slots = n;
	for (uint32_t i = 0; i < n; i++)
		s->requested[i] = BK_SLOT_FREE;
	for (uint32_t i = n; i-- > 0;)
		b->free[b->n_free++] = (uint64_t)id << 32 | i;
	p->slabs[p->n_slabs++] = s;
	account_carved(p, b, n);
	return MEMPROF_POOL_OK;
}

static void account_take(struct memprof_pool *p, struct bk_bucket *b, uint64_t requested)
{
	uint64_t waste = b->size_bytes - requested;

	b->n_requests++;
	b->waste_bytes += waste;
	if (++b->n_live > b->peak_live)
		b->peak_live = b->n_live;
	p->st.n_bucketed++;
	p->st.waste_bytes += waste;
	p->st.live_waste_bytes += waste;
	if (p->st.live_waste_bytes > p->st.peak_live_waste_bytes)
		p->st.peak_live_waste_bytes = p->st.live_waste_bytes;
	p->st.live_slot_bytes += b->size_bytes;
}

int bk_slot_take(struct memprof_pool *p, uint32_t bi, uint64_t requested,
                 struct memprof_pool_block *out)
{
	struct bk_bucket *b = &p->buckets[bi];
	struct bk_slab *s;
	uint64_t ref;
	uint32_t slot;
	int rc;

	if (b->n_free == 0 && (rc = new_slab(p, bi)) != MEMPROF_POOL_OK)
		return rc;
	ref = b->free[--b->n_free];
	s = p->slabs[ref >> 32];
	slot = (uint32_t)ref;
	s->requested[slot] = requested;
	s->n_live++;
	account_take(p, b, requested);
	out->addr = s->region.addr + (uint64_t)slot * b->size_bytes;
	out->size_bytes = b->size_bytes;
	out->handle = BK_MARK | ref;
	return MEMPROF_POOL_OK;
}

/* The slab of a live slot the block names, or NULL. */
static struct bk_slab *live_slab_of(struct memprof_pool *p, const struct memprof_pool_block *blk)
{
	uint64_t id = (blk->handle & ~BK_MARK) >> 32;
	uint32_t slot = (uint32_t)blk->handle;
	struct bk_slab *s;

	if (id >= p->n_slabs || !(s = p->slabs[id]) || slot >= s->n_slots ||
	    s->requested[slot] == BK_SLOT_FREE)
		return NULL;
	if (blk->addr != s->region.addr + (uint64_t)slot * p->buckets[s->bucket].size_bytes)
		return NULL;
	return s;
}

int bk_slot_put(struct memprof_pool *p, const struct memprof_pool_block *blk)
{
	struct bk_slab *s = live_slab_of(p, blk);
	struct bk_bucket *b;
	uint32_t slot = (uint32_t)blk->handle;
	uint64_t waste;

	if (!s) {
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR,
		             "free of a block this pool did not hand out (address 0x%llx, handle "
		             "0x%llx)",
		             (unsigned long long)blk->addr, (unsigned long long)blk->handle);
		return MEMPROF_POOL_EINVAL;
	}
	b = &p->buckets[s->bucket];
	waste = b->size_bytes - s->requested[slot];
	s->requested[slot] = BK_SLOT_FREE;
	s->n_live--;
	b->n_live--;
	p->st.live_waste_bytes -= waste;
	p->st.live_slot_bytes -= b->size_bytes;
	b->free[b->n_free++] = blk->handle & ~BK_MARK; /* room: n_free < n_carved <= cap_free */
	return MEMPROF_POOL_OK;
}

/* Drop the refs of released slabs from bucket b's free stack, keeping the order. */
static void compact_free(struct memprof_pool *p, struct bk_bucket *b)
{
	size_t k = 0;

	for (size_t i = 0; i < b->n_free; i++)
		if (p->slabs[b->free[i] >> 32])
			b->free[k++] = b->free[i];
	b->n_free = k;
}

static void release_slab(struct memprof_pool *p, uint32_t id)
{
	struct bk_slab *s = p->slabs[id];
	struct bk_bucket *b = &p->buckets[s->bucket];
	int rc = p->host->release(p->host->ctx, &s->region);

	if (rc != MEMPROF_POOL_OK)
		fault(p, rc, "backend release");
	b->n_carved -= s->n_slots;
	p->st.slab_bytes -= (uint64_t)s->n_slots * b->size_bytes;
	p->st.n_slabs_released++;
	free(s->requested);
	free(s);
	p->slabs[id] = NULL;
}

uint64_t bk_release_free_slabs(struct memprof_pool *p)
{
	uint64_t n = 0;
	uint8_t touched[BK_MAX_BUCKETS] = {0};

	for (uint32_t id = 0; id < p->n_slabs; id++) {
		struct bk_slab *s = p->slabs[id];

		if (s && s->n_live == 0) {
			touched[s->bucket] = 1;
			release_slab(p, id);
			n++;
		}
	}
	for (size_t bi = 0; bi < p->cfg.n_sizes; bi++)
		if (touched[bi])
			compact_free(p, &p->buckets[bi]);
	return n;
}

void bk_slabs_destroy(struct memprof_pool *p)
{
	for (uint32_t id = 0; id < p->n_slabs; id++) {
		struct bk_slab *s = p->slabs[id];

		if (s) {
			p->host->release(p->host->ctx, &s->region);
			free(s->requested);
			free(s);
		}
	}
	free(p->slabs);
	p->slabs = NULL;
	p->n_slabs = p->cap_slabs = 0;
	for (size_t bi = 0; p->buckets && bi < p->cfg.n_sizes; bi++)
		free(p->buckets[bi].free);
}
