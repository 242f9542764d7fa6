/*
 * plugins/compacting/sizeindex.c - the size index of the compacting pool:
 * a treap of free extents keyed by (size, address), threaded through the
 * segments so it never allocates.  Best fit is a lower bound, the largest
 * extent the rightmost node: both O(log n) expected.  Keys are unique
 * because no two free extents share an address.
 */
#include "compacting.h"

static int seg_less(const struct cp_seg *a, const struct cp_seg *b)
{
	if (a->size_bytes != b->size_bytes)
		return a->size_bytes < b->size_bytes;
	return a->addr < b->addr;
}

static uint32_t next_prio(struct cp_arena *a)
{
	uint32_t x = a->rng ? a->rng : 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	a->rng = x;
	return x;
}

static struct cp_seg *rotate_right(struct cp_seg *t)
{
	struct cp_seg *l = t->left;

	t->left = l->right;
	l->right = t;
	return l;
}

static struct cp_seg *rotate_left(struct cp_seg *t)
{
	struct cp_seg *r = t->right;

	t->right = r->left;
	r->left = t;
	return r;
}

static struct cp_seg *insert_at(struct cp_seg *t, struct cp_seg *s)
{
	if (!t)
		return s;
	if (seg_less(s, t)) {
		t->left = insert_at(t->left, s);
		if (t->left->prio > t->prio)
			t = rotate_right(t);
	} else {
		t->right = insert_at(t->right, s);
		if (t->right->prio > t->prio)
			t = rotate_left(t);
	}
	return t;
}

void cp_index_insert(struct cp_arena *a, struct cp_seg *s)
{
	s->left = s->right = NULL;
	s->prio = next_prio(a);
	a->index_root = insert_at(a->index_root, s);
}

/* Removes s from the subtree t; s must be in it. */
static struct cp_seg *erase_at(struct cp_seg *t, struct cp_seg *s)
{
	if (!t)
		return NULL;
	if (t != s) {
		if (seg_less(s, t))
			t->left = erase_at(t->left, s);
		else
			t->right = erase_at(t->right, s);
		return t;
	}
	if (!t->left || !t->right)
		return t->left ? t->left : t->right;
	if (t->left->prio > t->right->prio) {
		t = rotate_right(t);
		t->right = erase_at(t->right, s);
	} else {
		t = rotate_left(t);
		t->left = erase_at(t->left, s);
	}
	return t;
}

void cp_index_erase(struct cp_arena *a, struct cp_seg *s)
{
	a->index_root = erase_at(a->index_root, s);
	s->left = s->right = NULL;
}

struct cp_seg *cp_index_fit(const struct cp_arena *a, uint64_t size_bytes)
{
	struct cp_seg *t = a->index_root, *best = NULL;

	while (t) {
		if (t->size_bytes >= size_bytes) {
			best = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
	return best;
}

struct cp_seg *cp_index_largest(const struct cp_arena *a)
{
	struct cp_seg *t = a->index_root;

	while (t && t->right)
		t = t->right;
	return t;
}
