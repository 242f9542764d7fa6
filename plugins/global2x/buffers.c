/*
 * plugins/global2x/buffers.c - the per-key buffers of the global2x pool:
 * choosing, growing (2 x the request) and adding buffers, and releasing the
 * free ones when memory runs out.  It reserves through the host only; it
 * knows nothing of handles or of the fallback pool.
 */
#include <stdlib.h>

#include "global2x.h"

static void release_slot(struct memprof_pool *p, uint32_t s)
{
	struct g2_buffer *b = &p->bufs[s];

	p->host->release(p->host->ctx, &b->region);
	b->held = 0;
	p->held_bytes -= b->region.size_bytes;
	p->n_buffers--;
}

static int later_slot_first(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Release key's free buffers, the last reserved first. */
static size_t release_key(struct memprof_pool *p, struct g2_key *key)
{
	uint32_t *slots = key->n_free ? malloc(key->n_free * sizeof(*slots)) : NULL, s;
	size_t n = 0;

	if (!slots) { /* out of memory: release them all the same, smallest first */
		while (g2_free_min(p, key, &s)) {
			g2_free_remove(p, key, s);
			release_slot(p, s);
			n++;
		}
		return n;
	}
	n = g2_free_slots(p, key, slots);
	qsort(slots, n, sizeof(*slots), later_slot_first);
	for (size_t i = 0; i < n; i++)
		release_slot(p, slots[i]);
	free(slots);
	return n;
}

size_t g2_release_free(struct memprof_pool *p)
{
	size_t n = 0;

	for (size_t k = 0; k < p->n_keys; k++)
		n += release_key(p, &p->keys[k]);
	p->st.n_released_for_oom += n;
	return n;
}

void g2_buffer_freed(struct memprof_pool *p, uint32_t slot)
{
	g2_free_insert(p, &p->keys[p->bufs[slot].key], slot);
}

void g2_release_all(struct memprof_pool *p)
{
	for (size_t s = 0; s < p->n_slots; s++)
		if (p->bufs[s].held)
			release_slot(p, (uint32_t)s);
}

/* Reserve size bytes; on ENOMEM release every free buffer and retry once. */
static int reserve(struct memprof_pool *p, uint64_t size, struct memprof_region *r)
{
	const struct memprof_pool_host *h = p->host;
	int rc = h->reserve(h->ctx, size, r);

	if (rc == MEMPROF_POOL_ENOMEM && g2_release_free(p) > 0)
		rc = h->reserve(h->ctx, size, r);
	return rc;
}

static int grow_slots(struct memprof_pool *p)
{
	if (p->n_slots == p->cap_slots) {
		size_t cap = p->cap_slots ? 2 * p->cap_slots : 16;
		struct g2_buffer *b;

		if (cap > UINT32_MAX || !(b = realloc(p->bufs, cap * sizeof *b)))
			return MEMPROF_POOL_ENOMEM;
		p->bufs = b;
		p->cap_slots = cap;
	}
	return MEMPROF_POOL_OK;
}

/* A new buffer of 2 x need for key, served at once (so in no free set). */
static int add_buffer(struct memprof_pool *p, uint32_t key, uint64_t need, uint32_t *slot)
{
	uint64_t size = need > UINT64_MAX / 2 ? need : 2 * need;
	struct memprof_region r;
	struct g2_buffer *b;
	int rc;

	if ((rc = grow_slots(p)) != MEMPROF_POOL_OK)
		return rc;
	if ((rc = reserve(p, size, &r)) != MEMPROF_POOL_OK)
		return rc;
	*slot = (uint32_t)p->n_slots++;
	b = &p->bufs[*slot];
	*b = (struct g2_buffer){.region = r, .key = key, .held = 1};
	p->n_buffers++;
	p->held_bytes += r.size_bytes;
	p->st.n_buffer_reserves++;
	if (p->n_buffers > p->st.n_buffers_peak)
		p->st.n_buffers_peak = p->n_buffers;
	return MEMPROF_POOL_OK;
}

int g2_serve(struct memprof_pool *p, uint32_t key, uint64_t need, uint32_t *slot)
{
	struct g2_key *k = &p->keys[key];
	uint32_t small;
	int rc, replaced = 0;

	if (g2_free_ceil(p, k, need, slot)) {
		g2_free_remove(p, k, *slot);
		p->st.n_served++;
		return MEMPROF_POOL_OK;
	}
	if (g2_free_min(p, k, &small)) { /* every free buffer is too small: replace the smallest */
		g2_free_remove(p, k, small);
		release_slot(p, small);
		replaced = 1;
	}
	rc = add_buffer(p, key, need, slot);
	if (rc == MEMPROF_POOL_OK && replaced)
		p->st.n_reallocations++;
	return rc;
}
