/*
 * plugins/global2x/buffers.c - the per-key buffers of the global2x pool:
 * choosing, growing (2 x the request) and adding buffers, and releasing the
 * free ones when memory runs out.  It reserves through the host only; it
 * knows nothing of handles or of the fallback pool.
 */
#include <stdlib.h>

#include "global2x.h"

/* Remove the j-th buffer of key k from its list, keeping the order. */
static void unlist(struct g2_key *k, size_t j)
{
	for (size_t i = j + 1; i < k->n_bufs; i++)
		k->bufs[i - 1] = k->bufs[i];
	k->n_bufs--;
}

static void release_slot(struct memprof_pool *p, uint32_t s)
{
	struct g2_buffer *b = &p->bufs[s];

	p->host->release(p->host->ctx, &b->region);
	b->held = 0;
	p->held_bytes -= b->region.size_bytes;
	p->n_buffers--;
}

size_t g2_release_free(struct memprof_pool *p)
{
	size_t n = 0;

	for (size_t k = 0; k < p->n_keys; k++) {
		struct g2_key *key = &p->keys[k];

		for (size_t j = key->n_bufs; j-- > 0;) {
			uint32_t s = key->bufs[j];

			if (p->bufs[s].live)
				continue;
			release_slot(p, s);
			unlist(key, j);
			n++;
		}
	}
	p->st.n_released_for_oom += n;
	return n;
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

static int grow_slots(struct memprof_pool *p, struct g2_key *k)
{
	if (p->n_slots == p->cap_slots) {
		size_t cap = p->cap_slots ? 2 * p->cap_slots : 16;
		struct g2_buffer *b;

		if (cap > UINT32_MAX || !(b = realloc(p->bufs, cap * sizeof *b)))
			return MEMPROF_POOL_ENOMEM;
		p->bufs = b;
		p->cap_slots = cap;
	}
	if (k->n_bufs == k->cap_bufs) {
		size_t cap = k->cap_bufs ? 2 * k->cap_bufs : 2;
		uint32_t *l = realloc(k->bufs, cap * sizeof *l);

		if (!l)
			return MEMPROF_POOL_ENOMEM;
		k->bufs = l;
		k->cap_bufs = cap;
	}
	return MEMPROF_POOL_OK;
}

/* A new buffer of 2 x need at the end of key's list. */
static int add_buffer(struct memprof_pool *p, uint32_t key, uint64_t need, uint32_t *slot)
{
	struct g2_key *k = &p->keys[key];
	uint64_t size = need > UINT64_MAX / 2 ? need : 2 * need;
	struct memprof_region r;
	struct g2_buffer *b;
	int rc;

	if ((rc = grow_slots(p, k)) != MEMPROF_POOL_OK)
		return rc;
	if ((rc = reserve(p, size, &r)) != MEMPROF_POOL_OK)
		return rc;
	*slot = (uint32_t)p->n_slots++;
	b = &p->bufs[*slot];
	*b = (struct g2_buffer){.region = r, .key = key, .held = 1};
	k->bufs[k->n_bufs++] = *slot;
	p->n_buffers++;
	p->held_bytes += r.size_bytes;
	p->st.n_buffer_reserves++;
	if (p->n_buffers > p->st.n_buffers_peak)
		p->st.n_buffers_peak = p->n_buffers;
	return MEMPROF_POOL_OK;
}

/* The key's free buffers: the smallest that fits (*fit) and the smallest of all (*small). */
static void scan(const struct memprof_pool *p, const struct g2_key *k, uint64_t need,
                 ptrdiff_t *fit, ptrdiff_t *small)
{
	*fit = *small = -1;
	for (size_t j = 0; j < k->n_bufs; j++) {
		const struct g2_buffer *b = &p->bufs[k->bufs[j]];
		uint64_t size = b->region.size_bytes;

		if (b->live)
			continue;
		if (size >= need && (*fit < 0 || size < p->bufs[k->bufs[*fit]].region.size_bytes))
			*fit = (ptrdiff_t)j;
		if (*small < 0 || size < p->bufs[k->bufs[*small]].region.size_bytes)
			*small = (ptrdiff_t)j;
	}
}

int g2_serve(struct memprof_pool *p, uint32_t key, uint64_t need, uint32_t *slot)
{
	struct g2_key *k = &p->keys[key];
	ptrdiff_t fit, small;
	int rc;

	scan(p, k, need, &fit, &small);
	if (fit >= 0) {
		*slot = k->bufs[fit];
		p->st.n_served++;
		return MEMPROF_POOL_OK;
	}
	if (small >= 0) { /* every free buffer is too small: replace the smallest */
		release_slot(p, k->bufs[small]);
		unlist(k, (size_t)small);
	}
	rc = add_buffer(p, key, need, slot);
	if (rc == MEMPROF_POOL_OK && small >= 0)
		p->st.n_reallocations++;
	return rc;
}
