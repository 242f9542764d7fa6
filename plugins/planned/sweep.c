/*
 * plugins/planned/sweep.c - time-ordered first fit for problems too large for
 * overlap lists: replays the lifetimes in start order against a set of free
 * gaps (a treap by offset, each node knowing the largest gap below it), so
 * each allocation takes the lowest gap that fits.  The buffers placed and
 * not yet ended wait by end (ends.c).  O(n log n) expected; memory grows
 * with the buffers live at once (gaps and ends), not with n.
 */
#include <stdlib.h>
#include <string.h>

#include "ends.h"
#include "planned.h"

struct treap {
	uint64_t *lo, *len, *max_len;
	uint32_t *pri, *kid[2];
	uint32_t *free_nodes;
	uint32_t *path; /* the nodes above the one take or give reached (no deeper than cap) */
	size_t n_free, cap;
	uint32_t seed;
	int failed; /* a node could not be had: out of memory */
};

#define NIL UINT32_MAX

static void pull(struct treap *t, uint32_t x)
{
	uint64_t m = t->len[x];
	int s;

	for (s = 0; s < 2; s++)
		if (t->kid[s][x] != NIL && t->max_len[t->kid[s][x]] > m)
			m = t->max_len[t->kid[s][x]];
	t->max_len[x] = m;
}

static uint32_t merge(struct treap *t, uint32_t a, uint32_t b)
{
	if (a == NIL || b == NIL)
		return a == NIL ? b : a;
	if (t->pri[a] > t->pri[b]) {
		t->kid[1][a] = merge(t, t->kid[1][a], b);
		pull(t, a);
		return a;
	}
	t->kid[0][b] = merge(t, a, t->kid[0][b]);
	pull(t, b);
	return b;
}

/* *(T **)array reallocated to cap items of size bytes; 0 or -1 (then unchanged). */
static int grow_array(void *array, size_t cap, size_t size)
{
	void *old, *p;

	memcpy(&old, array, sizeof(old));
	if (!(p = realloc(old, cap * size)))
		return -1;
	memcpy(array, &p, sizeof(p));
	return 0;
}

/* Room for twice as many nodes; 0 or -1 (the arrays grown so far are kept). */
static int grow(struct treap *t)
{
	size_t cap = t->cap ? 2 * t->cap : 64, i;

	if (cap >= NIL || grow_array(&t->lo, cap, sizeof(*t->lo)) < 0 ||
	    grow_array(&t->len, cap, sizeof(*t->len)) < 0 ||
	    grow_array(&t->max_len, cap, sizeof(*t->max_len)) < 0 ||
	    grow_array(&t->pri, cap, sizeof(*t->pri)) < 0 ||
	    grow_array(&t->kid[0], cap, sizeof(*t->kid[0])) < 0 ||
	    grow_array(&t->kid[1], cap, sizeof(*t->kid[1])) < 0 ||
	    grow_array(&t->free_nodes, cap, sizeof(*t->free_nodes)) < 0 ||
	    grow_array(&t->path, cap, sizeof(*t->path)) < 0)
		return -1;
	for (i = cap; i > t->cap; i--) /* the lowest new node is taken first */
		t->free_nodes[t->n_free++] = (uint32_t)(i - 1);
	t->cap = cap;
	return 0;
}

static uint32_t new_node(struct treap *t, uint64_t lo, uint64_t len)
{
	uint32_t x;

	if (t->n_free == 0 && grow(t) < 0) {
		t->failed = 1;
		return NIL;
	}
	x = t->free_nodes[--t->n_free];
	t->seed ^= t->seed << 13, t->seed ^= t->seed >> 17, t->seed ^= t->seed << 5;
	t->lo[x] = lo, t->len[x] = len, t->max_len[x] = len;
	t->pri[x] = t->seed;
	t->kid[0][x] = t->kid[1][x] = NIL;
	return x;
}

/*
 * The nodes path[0..d) (each the parent of the next) are pulled again from
 * the deepest up, until one's maximum does not change: those above keep theirs.
 */
static void pull_up(struct treap *t, size_t d)
{
	while (d > 0) {
		uint32_t x = t->path[--d];
		uint64_t was = t->max_len[x];

		pull(t, x);
		if (t->max_len[x] == was)
			return;
	}
}

/* path[0..d] grew to hold a gap of len bytes: each maximum below len is raised to it. */
static void raise_up(struct treap *t, size_t d, uint64_t len)
{
	for (size_t k = d + 1; k-- > 0;) {
		uint32_t x = t->path[k];

		if (t->max_len[x] >= len)
			return;
		t->max_len[x] = len;
	}
}

/*
 * Take size bytes from the lowest gap that holds them (the root's maximum
 * does: the top gap is unbounded); its offset into *at.  One descent, then
 * the maxima pulled back up only while they change.
 */
static uint32_t take(struct treap *t, uint32_t root, uint64_t size, uint64_t *at)
{
	uint32_t x = root, y, parent;
	size_t d = 0;

	for (;;) {
		uint32_t l = t->kid[0][x];

		if (l != NIL && t->max_len[l] >= size)
			t->path[d++] = x, x = l;
		else if (t->len[x] >= size)
			break;
		else
			t->path[d++] = x, x = t->kid[1][x];
	}
	*at = t->lo[x];
	if (t->len[x] != size) {
		t->lo[x] += size, t->len[x] -= size;
		t->path[d++] = x;
		pull_up(t, d);
		return root;
	}
	t->free_nodes[t->n_free++] = x; /* the gap is used up */
	y = merge(t, t->kid[0][x], t->kid[1][x]);
	if (d == 0)
		return y;
	parent = t->path[d - 1];
	t->kid[t->kid[1][parent] == x][parent] = y;
	pull_up(t, d);
	return root;
}

/*
 * The gaps just below and just above lo (NIL for none; lo lies in no gap),
 * both on the one path down to lo, which path[] holds: *at_below and
 * *at_above are their places on it.
 */
static void neighbours(struct treap *t, uint32_t x, uint64_t lo, uint32_t *below, uint32_t *above,
                       size_t *at_below, size_t *at_above)
{
	size_t d = 0;

	*below = *above = NIL;
	*at_below = *at_above = 0;
	while (x != NIL) {
		t->path[d] = x;
		if (t->lo[x] < lo) {
			*below = x, *at_below = d++;
			x = t->kid[1][x];
		} else {
			*above = x, *at_above = d++;
			x = t->kid[0][x];
		}
	}
}

/* The node keyed key changed its length: its path's maxima are pulled again. */
static void repull(struct treap *t, uint32_t x, uint64_t key)
{
	if (x == NIL)
		return;
	if (key != t->lo[x])
		repull(t, t->kid[key > t->lo[x]][x], key);
	pull(t, x);
}

/* x without the node keyed key (which is there). */
static uint32_t erase(struct treap *t, uint32_t x, uint64_t key)
{
	int side;

	if (key == t->lo[x]) {
		t->free_nodes[t->n_free++] = x;
		return merge(t, t->kid[0][x], t->kid[1][x]);
	}
	side = key > t->lo[x];
	t->kid[side][x] = erase(t, t->kid[side][x], key);
	pull(t, x);
	return x;
}

/* x with node n (whose key is not there), lifted to its place by priority. */
static uint32_t insert(struct treap *t, uint32_t x, uint32_t n)
{
	uint32_t y;
	int side;

	if (x == NIL)
		return n;
	side = t->lo[n] > t->lo[x];
	y = t->kid[side][x] = insert(t, t->kid[side][x], n);
	if (t->pri[y] > t->pri[x]) { /* y rises above x */
		t->kid[side][x] = t->kid[!side][y];
		t->kid[!side][y] = x;
		pull(t, x);
		pull(t, y);
		return y;
	}
	pull(t, x);
	return x;
}

/*
 * Give [lo, lo + size) back, coalescing with the gaps on either side: the
 * gap below grows, or the one above starts lower (no key lies between, so
 * its place holds), or both become the one below, or a new gap goes in.
 */
static uint32_t give(struct treap *t, uint32_t root, uint64_t lo, uint64_t size)
{
	uint32_t below, above, x;
	size_t at_below, at_above;
	int joins_below, joins_above;

	neighbours(t, root, lo, &below, &above, &at_below, &at_above);
	joins_below = below != NIL && t->lo[below] + t->len[below] == lo;
	joins_above = above != NIL && t->lo[above] == lo + size;
	if (joins_below && joins_above) {
		t->len[below] += size + t->len[above];
		root = erase(t, root, t->lo[above]);
		repull(t, root, t->lo[below]);
	} else if (joins_below) {
		t->len[below] += size;
		raise_up(t, at_below, t->len[below]);
	} else if (joins_above) {
		t->lo[above] = lo;
		t->len[above] += size;
		raise_up(t, at_above, t->len[above]);
	} else if ((x = new_node(t, lo, size)) != NIL) {
		root = insert(t, root, x);
	}
	return root;
}

static void treap_free(struct treap *t)
{
	free(t->lo), free(t->len), free(t->max_len), free(t->pri);
	free(t->kid[0]), free(t->kid[1]), free(t->free_nodes), free(t->path);
}

/* What a buffer that ended gives back its space to. */
struct sweep {
	struct treap t;
	uint32_t root;
	const struct planned_problem *pb;
	const uint64_t *off;
};

static void give_back(void *ctx, uint32_t id)
{
	struct sweep *w = ctx;

	if (!w->t.failed)
		w->root = give(&w->t, w->root, w->off[id], w->pb->bufs[id].size_bytes);
}

/*
 * The gaps after the buffers that ended by each start are given back (in
 * any order: the gaps are then the same) and before it takes its own.
 */
int planned_sweep_fit(const struct planned_problem *pb, uint64_t *off)
{
	struct sweep w = {.t = {.seed = 2463534242u}, .pb = pb, .off = off};
	struct planned_ends *ends = malloc(sizeof *ends);
	size_t i;

	w.root = new_node(&w.t, 0, UINT64_MAX); /* everything is free at first */
	if (ends)
		planned_ends_init(ends);
	else
		w.t.failed = 1;
	for (i = 0; i < pb->n_bufs && !w.t.failed; i++) {
		const struct planned_buf *b = &pb->bufs[i];

		planned_ends_take(ends, b->start, give_back, &w);
		if (w.t.failed)
			break;
		w.root = take(&w.t, w.root, b->size_bytes, &off[i]);
		if (planned_ends_push(ends, b->end, (uint32_t)i) < 0)
			w.t.failed = 1;
	}
	treap_free(&w.t);
	if (ends)
		planned_ends_free(ends);
	free(ends);
	return w.t.failed ? MEMPROF_POOL_ENOMEM : MEMPROF_POOL_OK;
}
