/*
 * plugins/planned/sweep.c - time-ordered first fit for problems too large for
 * overlap lists: replays the lifetimes in start order against a set of free
 * gaps (a treap by offset, each node knowing the largest gap below it), so
 * each allocation takes the lowest gap that fits.  O(n log n) expected.
 */
#include <stdlib.h>

#include "planned.h"

struct treap {
	uint64_t *lo, *len, *max_len;
	uint32_t *pri, *kid[2];
	uint32_t *free_nodes;
	size_t n_free;
	uint32_t seed;
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

/* Split x into keys < key (*l) and keys >= key (*r). */
static void split(struct treap *t, uint32_t x, uint64_t key, uint32_t *l, uint32_t *r)
{
	if (x == NIL) {
		*l = *r = NIL;
	} else if (t->lo[x] < key) {
		split(t, t->kid[1][x], key, &t->kid[1][x], r);
		pull(t, x);
		*l = x;
	} else {
		split(t, t->kid[0][x], key, l, &t->kid[0][x]);
		pull(t, x);
		*r = x;
	}
}

static uint32_t new_node(struct treap *t, uint64_t lo, uint64_t len)
{
	uint32_t x = t->free_nodes[--t->n_free];

	t->seed ^= t->seed << 13, t->seed ^= t->seed >> 17, t->seed ^= t->seed << 5;
	t->lo[x] = lo, t->len[x] = len, t->max_len[x] = len;
	t->pri[x] = t->seed;
	t->kid[0][x] = t->kid[1][x] = NIL;
	return x;
}

/* Take size bytes from the lowest gap in x that holds them; its offset into *at. */
static uint32_t take(struct treap *t, uint32_t x, uint64_t size, uint64_t *at)
{
	uint32_t l = t->kid[0][x];

	if (l != NIL && t->max_len[l] >= size) {
		t->kid[0][x] = take(t, l, size, at);
	} else if (t->len[x] >= size) {
		*at = t->lo[x];
		if (t->len[x] == size) {
			t->free_nodes[t->n_free++] = x;
			return merge(t, t->kid[0][x], t->kid[1][x]);
		}
		t->lo[x] += size, t->len[x] -= size;
	} else {
		t->kid[1][x] = take(t, t->kid[1][x], size, at);
	}
	pull(t, x);
	return x;
}

/* Remove and return the extreme (side 0: lowest, 1: highest) node of x, into *out. */
static uint32_t pop_end(struct treap *t, uint32_t x, int side, uint32_t *out)
{
	if (t->kid[side][x] == NIL) {
		uint32_t rest = t->kid[!side][x];
		*out = x;
		t->kid[!side][x] = NIL; /* x leaves alone */
		t->max_len[x] = t->len[x];
		return rest;
	}
	t->kid[side][x] = pop_end(t, t->kid[side][x], side, out);
	pull(t, x);
	return x;
}

/* Give [lo, lo + size) back, coalescing with the gaps on either side. */
static uint32_t give(struct treap *t, uint32_t root, uint64_t lo, uint64_t size)
{
	uint32_t a, b, x;
	uint64_t end = lo + size;

	split(t, root, lo, &a, &b);
	if (a != NIL) {
		a = pop_end(t, a, 1, &x);
		if (t->lo[x] + t->len[x] == lo)
			lo = t->lo[x], t->free_nodes[t->n_free++] = x;
		else
			a = merge(t, a, x);
	}
	if (b != NIL) {
		b = pop_end(t, b, 0, &x);
		if (t->lo[x] == end)
			end = t->lo[x] + t->len[x], t->free_nodes[t->n_free++] = x;
		else
			b = merge(t, x, b);
	}
	return merge(t, merge(t, a, new_node(t, lo, end - lo)), b);
}

struct release {
	int64_t end;
	uint32_t id;
};

static int cmp_release(const void *a, const void *b)
{
	const struct release *x = a, *y = b;

	return x->end < y->end ? -1 : x->end > y->end;
}

static int treap_init(struct treap *t, size_t n)
{
	size_t i;

	t->lo = malloc(n * sizeof *t->lo);
	t->len = malloc(n * sizeof *t->len);
	t->max_len = malloc(n * sizeof *t->max_len);
	t->pri = malloc(n * sizeof *t->pri);
	t->kid[0] = malloc(n * sizeof *t->kid[0]);
	t->kid[1] = malloc(n * sizeof *t->kid[1]);
	t->free_nodes = malloc(n * sizeof *t->free_nodes);
	t->seed = 2463534242u;
	if (!t->lo || !t->len || !t->max_len || !t->pri || !t->kid[0] || !t->kid[1] ||
	    !t->free_nodes)
		return MEMPROF_POOL_ENOMEM;
	for (i = 0; i < n; i++)
		t->free_nodes[i] = (uint32_t)(n - 1 - i);
	t->n_free = n;
	return MEMPROF_POOL_OK;
}

static void treap_free(struct treap *t)
{
	free(t->lo), free(t->len), free(t->max_len), free(t->pri);
	free(t->kid[0]), free(t->kid[1]), free(t->free_nodes);
}

int planned_sweep_fit(const struct planned_problem *pb, uint64_t *off)
{
	size_t m = pb->n_bufs, i, f = 0;
	struct treap t = {0};
	struct release *rel = malloc((m + 1) * sizeof *rel);
	uint32_t root;
	int rc = treap_init(&t, m + 2);

	if (rc != MEMPROF_POOL_OK || !rel) {
		treap_free(&t), free(rel);
		return MEMPROF_POOL_ENOMEM;
	}
	for (i = 0; i < m; i++)
		rel[i] = (struct release){.end = pb->bufs[i].end, .id = (uint32_t)i};
	qsort(rel, m, sizeof *rel, cmp_release);
	root = new_node(&t, 0, UINT64_MAX); /* everything is free at first */
	for (i = 0; i < m; i++) {
		for (; f < m && rel[f].end <= pb->bufs[i].start; f++)
			root = give(&t, root, off[rel[f].id], pb->bufs[rel[f].id].size_bytes);
		root = take(&t, root, pb->bufs[i].size_bytes, &off[i]);
	}
	treap_free(&t), free(rel);
	return MEMPROF_POOL_OK;
}
