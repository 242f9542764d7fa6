/*
 * plugins/global2x/freeset.c - the free buffers of one key, ordered by
 * (size, slot) in a treap threaded through the buffers' slots: the best fit
 * for a request, the smallest, an insert and a removal each cost O(log n)
 * in the key's buffers, live ones never looked at.  Knows nothing of the
 * host or of handles.
 */
#include "global2x.h"

/* Links hold slot + 1; 0 is none. */
#define NIL 0u

static struct g2_buffer *at(struct memprof_pool *p, uint32_t link)
{
	return &p->bufs[link - 1];
}

/* A fixed pseudo-random priority per slot (a heap on it keeps the tree balanced). */
static uint32_t prio(uint32_t link)
{
	uint32_t x = link * 0x9e3779b9u;

	x ^= x >> 16;
	x *= 0x85ebca6bu;
	return x ^ (x >> 13);
}

/* Is buffer a before buffer b in (size, slot) order? */
static int before(struct memprof_pool *p, uint32_t a, uint32_t b)
{
	uint64_t sa = at(p, a)->region.size_bytes, sb = at(p, b)->region.size_bytes;

	return sa < sb || (sa == sb && a < b);
}

/* Split t into the nodes before node (*l) and the others (*r). */
static void split(struct memprof_pool *p, uint32_t t, uint32_t node, uint32_t *l, uint32_t *r)
{
	if (t == NIL) {
		*l = *r = NIL;
	} else if (before(p, t, node)) {
		split(p, at(p, t)->right, node, &at(p, t)->right, r);
		*l = t;
	} else {
		split(p, at(p, t)->left, node, l, &at(p, t)->left);
		*r = t;
	}
}

/* Join l and r, every node of l before every node of r. */
static uint32_t merge(struct memprof_pool *p, uint32_t l, uint32_t r)
{
	if (l == NIL || r == NIL)
		return l == NIL ? r : l;
	if (prio(l) > prio(r)) {
		at(p, l)->right = merge(p, at(p, l)->right, r);
		return l;
	}
	at(p, r)->left = merge(p, l, at(p, r)->left);
	return r;
}

static uint32_t insert(struct memprof_pool *p, uint32_t t, uint32_t node)
{
	if (t == NIL || prio(node) > prio(t)) {
		split(p, t, node, &at(p, node)->left, &at(p, node)->right);
		return node;
	}
	if (before(p, node, t))
		at(p, t)->left = insert(p, at(p, t)->left, node);
	else
		at(p, t)->right = insert(p, at(p, t)->right, node);
	return t;
}

static uint32_t erase(struct memprof_pool *p, uint32_t t, uint32_t node)
{
	if (t == NIL)
		return NIL;
	if (t == node)
		return merge(p, at(p, t)->left, at(p, t)->right);
	if (before(p, node, t))
		at(p, t)->left = erase(p, at(p, t)->left, node);
	else
		at(p, t)->right = erase(p, at(p, t)->right, node);
	return t;
}

void g2_free_insert(struct memprof_pool *p, struct g2_key *k, uint32_t slot)
{
	at(p, slot + 1)->left = at(p, slot + 1)->right = NIL;
	k->free_root = insert(p, k->free_root, slot + 1);
	k->n_free++;
}

void g2_free_remove(struct memprof_pool *p, struct g2_key *k, uint32_t slot)
{
	k->free_root = erase(p, k->free_root, slot + 1);
	k->n_free--;
}

int g2_free_ceil(struct memprof_pool *p, const struct g2_key *k, uint64_t need, uint32_t *slot)
{
	uint32_t t = k->free_root, best = NIL;

	while (t != NIL) {
		if (at(p, t)->region.size_bytes >= need) {
			best = t;
			t = at(p, t)->left;
		} else {
			t = at(p, t)->right;
		}
	}
	if (best != NIL)
		*slot = best - 1;
	return best != NIL;
}

int g2_free_min(struct memprof_pool *p, const struct g2_key *k, uint32_t *slot)
{
	uint32_t t = k->free_root;

	if (t == NIL)
		return 0;
	while (at(p, t)->left != NIL)
		t = at(p, t)->left;
	*slot = t - 1;
	return 1;
}

static size_t collect(struct memprof_pool *p, uint32_t t, uint32_t *out, size_t n)
{
	if (t == NIL)
		return n;
	n = collect(p, at(p, t)->left, out, n);
	out[n++] = t - 1;
	return collect(p, at(p, t)->right, out, n);
}

size_t g2_free_slots(struct memprof_pool *p, struct g2_key *k, uint32_t *out)
{
	size_t n = collect(p, k->free_root, out, 0);

	k->free_root = NIL;
	k->n_free = 0;
	return n;
}
