/*
 * analysis/extents.c - the free extents (holes) of one device's reserved
 * memory, per extents.h: an augmented treap of blocks and container
 * markers.  Owns its nodes and indexes; knows nothing of traces or devices;
 * never prints, never allocates per block event once warm.
 */
#include "analysis/extents.h"
#include "util/error.h"
#include "util/densemap.h"
#include "util/slot_pool.h"

#include <stdlib.h>
#include <string.h>

/*
 * How it works.  Every node lives in one slot pool, linked by 32-bit slot
 * numbers; a dense-key map finds a block's node by key.  The main treap holds
 * nodes in (address, kind, key) order, kinds end marker < start marker <
 * block < top sentinel.  Each node carries the holes between its address-
 * order predecessor and itself (one in the segments model; up to two in the
 * address-space model: the tail of the predecessor's region and the head of
 * its own, and the granule bytes it adds), and the treap keeps the subtree
 * maxima of that hole and of block ends.  So the largest hole is the root's
 * maximum, and the sum and count of holes and the granule bytes are running
 * totals adjusted whenever a node's predecessor or flag changes: on a block
 * add or remove, the node and its successor, O(log n) in all.
 *
 * Segments model: containers (reserved segments and merged mapped ranges)
 * never overlap; they sit in a second treap ordered by start, and each puts
 * a start and an end marker in the main treap.  A block has an inside flag
 * (wholly inside the container that holds its start).  The hole before a
 * node N whose predecessor is P exists when P is a start marker or an inside
 * block and N is an end marker or an inside block; it is N's start minus P's
 * end (a start marker's own address), clamped at 0.  A container change
 * re-checks the flags of the blocks that start in the changed range and of
 * those that straddle a boundary that went away (found through the subtree
 * maximum of ends): O((k + 1) log n) for k such blocks, usually none.
 * Zero-size blocks are counted but never enter the treap.
 *
 * Overlapping blocks: holes use only the address-order neighbour, so space
 * under a block that contains its successor may count as a hole (never
 * negative); n_overlaps is exact (the largest end before the insertion
 * point, taken on the way down, and the blocks just after it).
 */

#define NIL UINT32_MAX

enum { K_END, K_START, K_BLOCK, K_TOP, K_CONT };
enum { F_INSIDE = 1, F_SEGMENT = 2, F_REGION = 4, F_LINKED = 8 };

struct xnode { /* what a descent reads first */
	uint64_t addr, key;
	uint32_t left, right; /* NIL when none */
	uint8_t kind, flags, n_holes;
	uint64_t sub_end, sub_hole;  /* subtree maxima of block ends, of hole_max */
	uint64_t end;                /* markers: = addr; containers: [addr, end) */
	uint64_t hole_max, hole_sum; /* the holes just before this node */
	uint64_t gran_bytes;         /* granule bytes this node adds (address space) */
	uint32_t parent, prio;
	uint32_t link, link2; /* container: its start and end markers */
};

struct gap {
	uint64_t max, sum, gran;
	uint8_t n, region;
};

struct mp_extents {
	uint64_t gran; /* 0: segments model */
	struct mp_slot_pool pool;
	struct mp_densemap keys; /* block key -> slot */
	uint32_t root, croot;    /* main treap, container treap */
	uint32_t tail, top; /* main treap: the last node but top, the top sentinel (NIL: none) */
	uint32_t cont_last; /* the container that starts last (NIL: none) */
	uint32_t rng;
	uint64_t *scratch; /* container ends or ranges during one map or unmap */
	size_t scratch_cap;
	struct mp_extents_figures f; /* all but largest_hole */
};

static inline struct xnode *nd(const struct mp_extents *x, uint32_t i)
{
	return (struct xnode *)(void *)x->pool.items + i;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- the treap ------------------------------------------------------------ */

static int before(const struct xnode *a, const struct xnode *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->key < b->key;
}

/* Recompute i's subtree maxima; 1 when they changed. */
static int pull(struct mp_extents *x, uint32_t i)
{
	struct xnode *n = nd(x, i);
	uint64_t h = n->hole_max, e = n->kind == K_BLOCK ? n->end : 0;

	if (n->left != NIL) {
		h = max64(h, nd(x, n->left)->sub_hole);
		e = max64(e, nd(x, n->left)->sub_end);
	}
	if (n->right != NIL) {
		h = max64(h, nd(x, n->right)->sub_hole);
		e = max64(e, nd(x, n->right)->sub_end);
	}
	if (h == n->sub_hole && e == n->sub_end)
		return 0;
	n->sub_hole = h;
	n->sub_end = e;
	return 1;
}

static void fix_up(struct mp_extents *x, uint32_t i)
{
	while (i != NIL && pull(x, i))
		i = nd(x, i)->parent;
}

/* A hole or block end under i (or at i) grew to h, e: raise the maxima
 * from i up, without reading siblings. */
static void raise_up(struct mp_extents *x, uint32_t i, uint64_t h, uint64_t e)
{
	for (; i != NIL; i = nd(x, i)->parent) {
		struct xnode *n = nd(x, i);

		if (n->sub_hole >= h && n->sub_end >= e)
			return;
		n->sub_hole = max64(n->sub_hole, h);
		n->sub_end = max64(n->sub_end, e);
	}
}

static void replace_child(struct mp_extents *x, uint32_t *root, uint32_t p, uint32_t old,
                          uint32_t new)
{
	if (p == NIL)
		*root = new;
	else if (nd(x, p)->left == old)
		nd(x, p)->left = new;
	else
		nd(x, p)->right = new;
	if (new != NIL)
		nd(x, new)->parent = p;
}

/* Rotate i above its parent. */
static void rotate_up(struct mp_extents *x, uint32_t *root, uint32_t i)
{
	struct xnode *n = nd(x, i);
	uint32_t p = n->parent;
	struct xnode *pn = nd(x, p);
	uint32_t moved;

	replace_child(x, root, pn->parent, p, i);
	if (pn->left == i) {
		moved = n->right;
		pn->left = moved;
		n->right = p;
	} else {
		moved = n->left;
		pn->right = moved;
		n->left = p;
	}
	if (moved != NIL)
		nd(x, moved)->parent = p;
	pn->parent = i;
	/* i now holds the subtree p held: its maxima are p's old ones */
	n->sub_hole = pn->sub_hole;
	n->sub_end = pn->sub_end;
	pull(x, p);
}

/* Where node n goes: its parent and side, its neighbours, and the largest
 * end of a block before it. */
struct place {
	uint32_t parent, pred, succ;
	int left;
	uint64_t end_before;
};

static void tree_find(const struct mp_extents *x, uint32_t c, const struct xnode *n,
                      struct place *pl)
{
	uint32_t parent = NIL, pred = NIL, succ = NIL;
	uint64_t end_before = 0;
	int left = 0;

	while (c != NIL) {
		const struct xnode *cn = nd(x, c);

		parent = c;
		left = before(n, cn);
		if (left) {
			succ = c;
			c = cn->left;
			continue;
		}
		pred = c;
		if (cn->kind == K_BLOCK)
			end_before = max64(end_before, cn->end);
		if (cn->left != NIL)
			end_before = max64(end_before, nd(x, cn->left)->sub_end);
		c = cn->right;
	}
	pl->parent = parent;
	pl->pred = pred;
	pl->succ = succ;
	pl->left = left;
	pl->end_before = end_before;
}

/* Attach i where tree_find placed it, then restore the heap order. */
static void tree_attach(struct mp_extents *x, uint32_t *root, uint32_t i, const struct place *pl)
{
	struct xnode *n = nd(x, i);

	x->rng ^= x->rng << 13;
	x->rng ^= x->rng >> 17;
	x->rng ^= x->rng << 5;
	n->prio = x->rng;
	n->left = n->right = NIL;
	n->parent = pl->parent;
	if (pl->parent == NIL)
		*root = i;
	else if (pl->left)
		nd(x, pl->parent)->left = i;
	else
		nd(x, pl->parent)->right = i;
	n->sub_hole = n->hole_max;
	n->sub_end = n->kind == K_BLOCK ? n->end : 0;
	raise_up(x, n->parent, n->sub_hole, n->sub_end);
	while (n->parent != NIL && nd(x, n->parent)->prio < n->prio)
		rotate_up(x, root, i);
}

static void tree_insert(struct mp_extents *x, uint32_t *root, uint32_t i)
{
	struct place pl;

	tree_find(x, *root, nd(x, i), &pl);
	tree_attach(x, root, i, &pl);
}

static void tree_erase(struct mp_extents *x, uint32_t *root, uint32_t i)
{
	struct xnode *n = nd(x, i);
	uint32_t c, p;

	while (n->left != NIL && n->right != NIL)
		rotate_up(x, root,
		          nd(x, n->left)->prio > nd(x, n->right)->prio ? n->left : n->right);
	c = n->left != NIL ? n->left : n->right;
	p = n->parent;
	replace_child(x, root, p, i, c);
	fix_up(x, p);
}

static uint32_t tree_next(const struct mp_extents *x, uint32_t i)
{
	uint32_t p;

	if (nd(x, i)->right != NIL) {
		for (i = nd(x, i)->right; nd(x, i)->left != NIL;)
			i = nd(x, i)->left;
		return i;
	}
	while ((p = nd(x, i)->parent) != NIL && nd(x, p)->right == i)
		i = p;
	return p;
}

static uint32_t tree_prev(const struct mp_extents *x, uint32_t i)
{
	uint32_t p;

	if (nd(x, i)->left != NIL) {
		for (i = nd(x, i)->left; nd(x, i)->right != NIL;)
			i = nd(x, i)->right;
		return i;
	}
	while ((p = nd(x, i)->parent) != NIL && nd(x, p)->left == i)
		i = p;
	return p;
}

/* The last node of a treap whose address is at most a, or NIL. */
static uint32_t tree_floor(const struct mp_extents *x, uint32_t c, uint64_t a)
{
	uint32_t best = NIL;

	while (c != NIL) {
		if (nd(x, c)->addr <= a) {
			best = c;
			c = nd(x, c)->right;
		} else {
			c = nd(x, c)->left;
		}
	}
	return best;
}

/* The first node of a treap whose address is at least a, or NIL. */
static uint32_t tree_ceil(const struct mp_extents *x, uint32_t c, uint64_t a)
{
	uint32_t best = NIL;

	while (c != NIL) {
		if (nd(x, c)->addr >= a) {
			best = c;
			c = nd(x, c)->left;
		} else {
			c = nd(x, c)->right;
		}
	}
	return best;
}

/* ---- nodes and slots ------------------------------------------------------ */

static int take_node(struct mp_extents *x, uint32_t *slot)
{
	size_t s;
	struct xnode *n = mp_slot_pool_take(&x->pool, &s);

	if (!n)
		return MP_ENOMEM;
	if (s >= NIL) {
		mp_slot_pool_give(&x->pool, s);
		return MP_ENOMEM;
	}
	n->left = n->right = n->parent = n->link = n->link2 = NIL;
	*slot = (uint32_t)s;
	return 0;
}

/* Make sure the next k takes cannot fail (k <= 8). */
static int reserve_nodes(struct mp_extents *x, int k)
{
	uint32_t s[8];
	int i, rc = 0;

	for (i = 0; i < k && rc == 0; i++)
		if ((rc = take_node(x, &s[i])) < 0)
			break;
	while (i-- > 0)
		mp_slot_pool_give(&x->pool, s[i]);
	return rc;
}

/* ---- holes ---------------------------------------------------------------- */

static void gap_add(struct gap *g, uint64_t v)
{
	if (v == 0)
		return;
	g->sum += v;
	g->n++;
	g->max = max64(g->max, v);
}

static void gap_segments(const struct xnode *p, const struct xnode *n, struct gap *g)
{
	uint64_t from;

	if (!p || !(p->kind == K_START || (p->kind == K_BLOCK && (p->flags & F_INSIDE))))
		return;
	if (!(n->kind == K_END || (n->kind == K_BLOCK && (n->flags & F_INSIDE))))
		return;
	from = p->kind == K_START ? p->addr : p->end;
	if (n->addr > from)
		gap_add(g, n->addr - from);
}

static void gap_space(uint64_t gran, const struct xnode *p, const struct xnode *n, struct gap *g)
{
	uint64_t m = gran - 1, lo, hi, pe, base;

	if (n->kind == K_TOP) {
		if (p)
			gap_add(g, ((p->end + m) & ~m) - p->end);
		return;
	}
	lo = n->addr & ~m;
	hi = (n->end + m) & ~m;
	g->region = 1;
	g->gran = hi - lo;
	if (!p) {
		gap_add(g, n->addr - lo);
		return;
	}
	pe = (p->end + m) & ~m;
	if (pe >= lo) { /* the same region */
		g->region = 0;
		if (n->addr > p->end)
			gap_add(g, n->addr - p->end);
	} else {
		gap_add(g, pe - p->end);
		gap_add(g, n->addr - lo);
	}
	base = max64(pe, lo);
	g->gran = hi > base ? hi - base : 0;
}

/* Recompute the holes before i, whose predecessor is p (NIL for none). */
static void refresh(struct mp_extents *x, uint32_t i, uint32_t p)
{
	struct xnode *n = nd(x, i);
	const struct xnode *pn = p == NIL ? NULL : nd(x, p);
	struct gap g = {0};
	uint64_t old_max = n->hole_max;

	if (x->gran)
		gap_space(x->gran, pn, n, &g);
	else
		gap_segments(pn, n, &g);
	x->f.hole_bytes = x->f.hole_bytes - n->hole_sum + g.sum;
	x->f.n_holes = x->f.n_holes - n->n_holes + g.n;
	n->hole_max = g.max;
	n->hole_sum = g.sum;
	n->n_holes = g.n;
	if (x->gran) {
		x->f.container_bytes = x->f.container_bytes - n->gran_bytes + g.gran;
		x->f.n_containers = x->f.n_containers - !!(n->flags & F_REGION) + g.region;
		n->gran_bytes = g.gran;
		n->flags = (uint8_t)((n->flags & ~F_REGION) | (g.region ? F_REGION : 0));
	}
	if (!(n->flags & F_LINKED))
		return;
	if (g.max > old_max)
		raise_up(x, i, g.max, 0);
	else if (g.max < old_max)
		fix_up(x, i);
}

/* When n goes after the tail (the last node but the top sentinel), as it
 * does when blocks are placed at rising addresses: its place without a
 * descent, 1; else 0.  The tail's successor is the top sentinel or none,
 * and of two nodes adjacent in order one has no child on the other's side;
 * every block is before n, so the largest end before it is the root's. */
static int after_tail(const struct mp_extents *x, const struct xnode *n, struct place *pl)
{
	const struct xnode *t;

	if (x->tail == NIL || !before(t = nd(x, x->tail), n))
		return 0;
	pl->pred = x->tail;
	pl->succ = x->top;
	pl->end_before = nd(x, x->root)->sub_end;
	if (x->top == NIL || t->right == NIL) {
		pl->parent = x->tail;
		pl->left = 0;
	} else {
		pl->parent = x->top;
		pl->left = 1;
	}
	return 1;
}

/* Put node i (fields set, holes zero) in the main treap; pl (may be NULL)
 * receives its place. */
static void link_node(struct mp_extents *x, uint32_t i, struct place *pl)
{
	struct place here;

	if (!pl)
		pl = &here;
	if (!after_tail(x, nd(x, i), pl))
		tree_find(x, x->root, nd(x, i), pl);
	refresh(x, i, pl->pred);
	tree_attach(x, &x->root, i, pl);
	nd(x, i)->flags |= F_LINKED;
	if (nd(x, i)->kind != K_TOP && (pl->succ == NIL || nd(x, pl->succ)->kind == K_TOP))
		x->tail = i;
	if (pl->succ != NIL)
		refresh(x, pl->succ, i);
}

static void unlink_node(struct mp_extents *x, uint32_t i)
{
	struct xnode *n = nd(x, i);
	uint32_t p = tree_prev(x, i), s = x->tail == i ? x->top : tree_next(x, i);

	x->f.hole_bytes -= n->hole_sum;
	x->f.n_holes -= n->n_holes;
	x->f.container_bytes -= n->gran_bytes;
	x->f.n_containers -= !!(n->flags & F_REGION);
	n->hole_sum = n->gran_bytes = 0;
	n->n_holes = 0;
	n->flags &= (uint8_t) ~(F_REGION | F_LINKED);
	if (x->tail == i)
		x->tail = p;
	tree_erase(x, &x->root, i);
	if (s != NIL)
		refresh(x, s, p);
}

/* ---- containers (segments model) ----------------------------------------- */

/* Keep the container that starts last, after the container treap changed. */
static void note_cont_last(struct mp_extents *x)
{
	uint32_t c = x->croot;

	while (c != NIL && nd(x, c)->right != NIL)
		c = nd(x, c)->right;
	x->cont_last = c;
}

/* Whether block n lies wholly inside the container that holds its start. */
static int inside(const struct mp_extents *x, const struct xnode *n)
{
	uint32_t c = x->cont_last != NIL && nd(x, x->cont_last)->addr <= n->addr
	                     ? x->cont_last /* above every container's start */
	                     : tree_floor(x, x->croot, n->addr);

	return c != NIL && n->addr < nd(x, c)->end && n->end <= nd(x, c)->end;
}

static void recheck(struct mp_extents *x, uint32_t i)
{
	struct xnode *n = nd(x, i);
	uint32_t s;
	int in = inside(x, n);

	if (in == !!(n->flags & F_INSIDE))
		return;
	n->flags ^= F_INSIDE;
	x->f.n_outside += in ? (uint64_t)-1 : 1;
	refresh(x, i, tree_prev(x, i));
	if ((s = tree_next(x, i)) != NIL)
		refresh(x, s, i);
}

/* Re-check the blocks that start in [lo, hi). */
static void recheck_range(struct mp_extents *x, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = tree_ceil(x, x->root, lo); i != NIL && nd(x, i)->addr < hi; i = tree_next(x, i))
		if (nd(x, i)->kind == K_BLOCK)
			recheck(x, i);
}

/* Re-check the blocks of subtree i that start below a and end above it. */
static void recheck_straddling(struct mp_extents *x, uint32_t i, uint64_t a)
{
	while (i != NIL && nd(x, i)->sub_end > a) {
		recheck_straddling(x, nd(x, i)->left, a);
		if (nd(x, i)->addr >= a)
			return;
		if (nd(x, i)->kind == K_BLOCK && nd(x, i)->end > a)
			recheck(x, i);
		i = nd(x, i)->right;
	}
}

/* A container [a, b) with its markers; the caller reserved 3 nodes. */
static void cont_add(struct mp_extents *x, uint64_t a, uint64_t b, int segment)
{
	uint32_t c, s, e;
	struct xnode *n;

	take_node(x, &c);
	take_node(x, &s);
	take_node(x, &e);
	n = nd(x, c);
	n->kind = K_CONT;
	n->addr = a;
	n->end = b;
	n->flags = segment ? F_SEGMENT : 0;
	n->link = s;
	n->link2 = e;
	tree_insert(x, &x->croot, c);
	note_cont_last(x);
	n = nd(x, s);
	n->kind = K_START;
	n->addr = n->end = a;
	link_node(x, s, NULL);
	n = nd(x, e);
	n->kind = K_END;
	n->addr = n->end = b;
	link_node(x, e, NULL);
	x->f.container_bytes += b - a;
	x->f.n_containers++;
}

static void cont_del(struct mp_extents *x, uint32_t c)
{
	struct xnode *n = nd(x, c);
	uint32_t s = n->link, e = n->link2;

	x->f.container_bytes -= n->end - n->addr;
	x->f.n_containers--;
	unlink_node(x, s);
	unlink_node(x, e);
	tree_erase(x, &x->croot, c);
	note_cont_last(x);
	mp_slot_pool_give(&x->pool, e);
	mp_slot_pool_give(&x->pool, s);
	mp_slot_pool_give(&x->pool, c);
}

static int scratch_need(struct mp_extents *x, size_t n)
{
	uint64_t *p;
	size_t cap;

	if (n <= x->scratch_cap)
		return 0;
	cap = n < 16 ? 16 : 2 * n;
	if (!(p = realloc(x->scratch, cap * sizeof(*p))))
		return MP_ENOMEM;
	x->scratch = p;
	x->scratch_cap = cap;
	return 0;
}

/* The first container that ends after a (in address order), or NIL. */
static uint32_t cont_first_after(const struct mp_extents *x, uint64_t a)
{
	uint32_t c = tree_floor(x, x->croot, a);

	if (c == NIL)
		c = tree_ceil(x, x->croot, 0);
	else if (nd(x, c)->end <= a)
		c = tree_next(x, c);
	return c;
}

static int check_range(const struct mp_extents *x, uint64_t a, uint64_t size)
{
	if (x->gran || size > UINT64_MAX - a)
		return MP_EINVAL;
	return 0;
}

/* ---- the interface --------------------------------------------------------- */

int mp_extents_new(uint64_t granularity, struct mp_extents **out)
{
	struct mp_extents *x;
	uint32_t top;

	*out = NULL;
	if (granularity & (granularity - 1))
		return MP_EINVAL;
	if (!(x = calloc(1, sizeof(*x))))
		return MP_ENOMEM;
	x->gran = granularity;
	mp_slot_pool_init(&x->pool, sizeof(struct xnode));
	mp_densemap_init(&x->keys);
	x->root = x->croot = x->tail = x->top = x->cont_last = NIL;
	x->rng = 0x9e3779b9u;
	if (granularity) { /* the sentinel that holds the last region's tail */
		if (take_node(x, &top) < 0) {
			mp_extents_destroy(x);
			return MP_ENOMEM;
		}
		nd(x, top)->kind = K_TOP;
		nd(x, top)->addr = nd(x, top)->end = UINT64_MAX;
		link_node(x, top, NULL);
		x->top = top;
	}
	*out = x;
	return 0;
}

void mp_extents_destroy(struct mp_extents *x)
{
	if (!x)
		return;
	mp_slot_pool_free(&x->pool);
	mp_densemap_free(&x->keys);
	free(x->scratch);
	free(x);
}

int mp_extents_add_block(struct mp_extents *x, uint64_t key, uint64_t address, uint64_t size)
{
	struct place pl;
	uint32_t i, s;
	struct xnode *n;
	int rc;

	if (size > UINT64_MAX - address || mp_densemap_get(&x->keys, key) != MP_DENSEMAP_NONE)
		return MP_EINVAL;
	if (x->gran && size && address + size > UINT64_MAX - x->gran + 1)
		return MP_EINVAL; /* its last granule would end past 2^64 */
	if ((rc = take_node(x, &i)) < 0)
		return rc;
	if (mp_densemap_put(&x->keys, key, i) < 0) {
		mp_slot_pool_give(&x->pool, i);
		return MP_ENOMEM;
	}
	n = nd(x, i);
	n->kind = K_BLOCK;
	n->key = key;
	n->addr = address;
	n->end = address + size;
	x->f.n_blocks++;
	if (size == 0)
		return 0;
	if (!x->gran) {
		if (inside(x, n))
			n->flags |= F_INSIDE;
		else
			x->f.n_outside++;
	}
	link_node(x, i, &pl);
	if (pl.end_before > address)
		x->f.n_overlaps++;
	else /* a block that starts in [address, end) after it */
		for (s = pl.succ; s != NIL && nd(x, s)->addr < address + size; s = tree_next(x, s))
			if (nd(x, s)->kind == K_BLOCK) {
				x->f.n_overlaps++;
				break;
			}
	return 0;
}

int mp_extents_remove_block(struct mp_extents *x, uint64_t key, uint64_t address)
{
	uint32_t i = mp_densemap_get(&x->keys, key);
	struct xnode *n;

	if (i == MP_DENSEMAP_NONE || nd(x, i)->addr != address)
		return 0;
	n = nd(x, i);
	if (n->flags & F_LINKED) {
		if (!x->gran && !(n->flags & F_INSIDE))
			x->f.n_outside--;
		unlink_node(x, i);
	}
	mp_densemap_del(&x->keys, key);
	mp_slot_pool_give(&x->pool, i);
	x->f.n_blocks--;
	return 1;
}

int mp_extents_add_segment(struct mp_extents *x, uint64_t address, uint64_t size)
{
	uint32_t c;
	int rc;

	if ((rc = check_range(x, address, size)) < 0)
		return rc;
	if (size == 0)
		return 0;
	c = tree_floor(x, x->croot, address + size - 1);
	if (c != NIL && nd(x, c)->end > address)
		return MP_EINVAL; /* overlaps a container */
	if ((rc = reserve_nodes(x, 3)) < 0)
		return rc;
	cont_add(x, address, address + size, 1);
	recheck_range(x, address, address + size);
	return 0;
}

int mp_extents_remove_segment(struct mp_extents *x, uint64_t address)
{
	uint32_t c = tree_floor(x, x->croot, address);
	uint64_t end;

	if (x->gran || c == NIL || nd(x, c)->addr != address || !(nd(x, c)->flags & F_SEGMENT))
		return 0;
	end = nd(x, c)->end;
	cont_del(x, c);
	recheck_range(x, address, end);
	return 1;
}

/* The mapped ranges that touch [a, b), their ends into scratch; MP_EINVAL
 * when a reserved segment overlaps it. */
static int64_t touching_maps(struct mp_extents *x, uint64_t a, uint64_t b, uint64_t *lo,
                             uint64_t *hi)
{
	uint32_t c;
	size_t n = 0;

	for (c = cont_first_after(x, a ? a - 1 : 0); c != NIL && nd(x, c)->addr <= b;
	     c = tree_next(x, c)) {
		const struct xnode *cn = nd(x, c);

		if (cn->end < a)
			continue;
		if (cn->flags & F_SEGMENT) {
			if (cn->addr < b && cn->end > a)
				return MP_EINVAL;
			continue;
		}
		if (scratch_need(x, n + 1) < 0)
			return MP_ENOMEM;
		x->scratch[n++] = cn->end;
		if (cn->addr < *lo)
			*lo = cn->addr;
		if (cn->end > *hi)
			*hi = cn->end;
	}
	return (int64_t)n;
}

int mp_extents_map(struct mp_extents *x, uint64_t address, uint64_t size)
{
	uint64_t b = address + size, lo = address, hi = b;
	int64_t n, k;
	int rc;

	if ((rc = check_range(x, address, size)) < 0)
		return rc;
	if (size == 0)
		return 0;
	if ((n = touching_maps(x, address, b, &lo, &hi)) < 0)
		return (int)n;
	if ((rc = reserve_nodes(x, 3)) < 0)
		return rc;
	for (k = 0; k < n; k++) /* each merged range, found by its last byte */
		cont_del(x, tree_floor(x, x->croot, x->scratch[k] - 1));
	cont_add(x, lo, hi, 0);
	recheck_range(x, address, b);
	for (k = 0; k < n; k++)
		recheck_straddling(x, x->root, x->scratch[k]);
	return 0;
}

/* The mapped ranges that overlap [a, b), as (start, end) pairs in scratch. */
static int64_t overlapping_maps(struct mp_extents *x, uint64_t a, uint64_t b)
{
	uint32_t c;
	size_t n = 0;

	for (c = cont_first_after(x, a); c != NIL && nd(x, c)->addr < b; c = tree_next(x, c)) {
		if (nd(x, c)->flags & F_SEGMENT)
			continue;
		if (scratch_need(x, n + 2) < 0)
			return MP_ENOMEM;
		x->scratch[n++] = nd(x, c)->addr;
		x->scratch[n++] = nd(x, c)->end;
	}
	return (int64_t)n;
}

int64_t mp_extents_unmap(struct mp_extents *x, uint64_t address, uint64_t size)
{
	uint64_t b = address + size, s, e, gone = 0;
	int64_t n, k;
	int rc;

	if ((rc = check_range(x, address, size)) < 0 || size > INT64_MAX)
		return rc < 0 ? rc : MP_EINVAL;
	if (size == 0 || (n = overlapping_maps(x, address, b)) == 0)
		return 0;
	if (n < 0)
		return n;
	if ((rc = reserve_nodes(x, 6)) < 0)
		return rc;
	for (k = 0; k < n; k += 2) {
		s = x->scratch[k];
		e = x->scratch[k + 1];
		cont_del(x, tree_floor(x, x->croot, s));
		if (s < address)
			cont_add(x, s, address, 0);
		if (e > b)
			cont_add(x, b, e, 0);
		gone += (e < b ? e : b) - (s > address ? s : address);
	}
	recheck_range(x, address, b);
	recheck_straddling(x, x->root, address);
	return (int64_t)gone;
}

void mp_extents_figures(const struct mp_extents *x, struct mp_extents_figures *f)
{
	*f = x->f;
	f->largest_hole = x->root == NIL ? 0 : nd(x, x->root)->sub_hole;
}
