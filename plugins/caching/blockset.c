/*
 * plugins/caching/blockset.c - the ordered block sets of the caching pool
 * (PyTorch's std::set<Block*> with BlockComparatorSize or ...Address): a
 * treap threaded through the blocks themselves, so a set never allocates.
 * Keys are (stream, size, address) or (stream, address); all are unique
 * because no two blocks of a set share an address.
 */
#include "caching.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Compare the key (stream, size, addr) with block b in set s's order. */
static int key_cmp(const struct cb_set *s, uint64_t stream, uint64_t size, uint64_t addr,
                   const struct cb_block *b)
{
	int c = cmp_u64(stream, b->stream);

	if (c)
		return c;
	if (!s->by_address) {
		c = cmp_u64(size, b->size_bytes);
		if (c)
			return c;
	}
	return cmp_u64(addr, b->addr);
}

static int block_cmp(const struct cb_set *s, const struct cb_block *a, const struct cb_block *b)
{
	return key_cmp(s, a->stream, a->size_bytes, a->addr, b);
}

void cb_set_init(struct cb_set *s, int by_address)
{
	s->root = NULL;
	s->by_address = by_address;
	s->n = 0;
}

static struct cb_block *rotate_right(struct cb_block *t)
{
	struct cb_block *l = t->left;
	t->left = l->right;
	l->right = t;
	return l;
}

static struct cb_block *rotate_left(struct cb_block *t)
{
	struct cb_block *r = t->right;
	t->right = r->left;
	r->left = t;
	return r;
}

static struct cb_block *insert_at(const struct cb_set *s, struct cb_block *t, struct cb_block *b)
{
	if (!t)
		return b;
	if (block_cmp(s, b, t) < 0) {
		t->left = insert_at(s, t->left, b);
		if (t->left->prio > t->prio)
			t = rotate_right(t);
	} else {
		t->right = insert_at(s, t->right, b);
		if (t->right->prio > t->prio)
			t = rotate_left(t);
	}
	return t;
}

void cb_set_insert(struct cb_set *s, struct cb_block *b)
{
	b->left = b->right = NULL;
	s->root = insert_at(s, s->root, b);
	s->n++;
}

static struct cb_block *join(struct cb_block *a, struct cb_block *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->right = join(a->right, b);
		return a;
	}
	b->left = join(a, b->left);
	return b;
}

static struct cb_block *erase_at(const struct cb_set *s, struct cb_block *t, struct cb_block *b,
                                 int *found)
{
	int c;

	if (!t)
		return NULL;
	if (t == b) {
		*found = 1;
		return join(t->left, t->right);
	}
	c = block_cmp(s, b, t);
	if (c < 0)
		t->left = erase_at(s, t->left, b, found);
	else
		t->right = erase_at(s, t->right, b, found);
	return t;
}

void cb_set_erase(struct cb_set *s, struct cb_block *b)
{
	int found = 0;

	s->root = erase_at(s, s->root, b, &found);
	if (found) {
		s->n--;
		b->left = b->right = NULL;
	}
}

struct cb_block *cb_set_first(const struct cb_set *s)
{
	struct cb_block *t = s->root;

	while (t && t->left)
		t = t->left;
	return t;
}

struct cb_block *cb_set_lower_bound(const struct cb_set *s, uint64_t stream, uint64_t size,
                                    uint64_t addr)
{
	struct cb_block *t = s->root, *best = NULL;

	while (t) {
		if (key_cmp(s, stream, size, addr, t) <= 0) {
			best = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
	return best;
}

struct cb_block *cb_set_before(const struct cb_set *s, uint64_t stream, uint64_t size,
                               uint64_t addr)
{
	struct cb_block *t = s->root, *best = NULL;

	while (t) {
		if (key_cmp(s, stream, size, addr, t) > 0) {
			best = t;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return best;
}

struct cb_block *cb_set_next(const struct cb_set *s, const struct cb_block *b)
{
	struct cb_block *t = s->root, *best = NULL;

	while (t) {
		if (block_cmp(s, b, t) < 0) {
			best = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
	return best;
}

struct cb_block *cb_set_prev(const struct cb_set *s, const struct cb_block *b)
{
	return cb_set_before(s, b->stream, b->size_bytes, b->addr);
}
