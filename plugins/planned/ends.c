/*
 * plugins/planned/ends.c - the sweep's waiting buffers by end (ends.h): a
 * bucket per end step in a ring just ahead of the last batch, the rest in a
 * binary min-heap.  A push into the ring and a batch's walk over the ring's
 * steps are O(1) a buffer and a step; only the ends far ahead pay the heap's
 * O(log n).  Knows nothing of gaps or placement.
 */
#include <stdlib.h>
#include <string.h>

#include "ends.h"

void planned_ends_init(struct planned_ends *q)
{
	memset(q, 0, sizeof *q);
	for (size_t k = 0; k < PLANNED_ENDS_RING; k++)
		q->head[k] = PLANNED_ENDS_NONE;
	q->free_node = PLANNED_ENDS_NONE;
}

void planned_ends_free(struct planned_ends *q)
{
	free(q->nodes);
	free(q->heap);
	planned_ends_init(q);
}

static int heap_push(struct planned_ends *q, struct planned_end x)
{
	size_t i = q->n_heap;

	if (q->n_heap == q->cap_heap) {
		size_t cap = q->cap_heap ? 2 * q->cap_heap : 64;
		struct planned_end *v = realloc(q->heap, cap * sizeof *v);
		if (!v)
			return -1;
		q->heap = v, q->cap_heap = cap;
	}
	for (q->n_heap++; i > 0 && q->heap[(i - 1) / 2].end > x.end; i = (i - 1) / 2)
		q->heap[i] = q->heap[(i - 1) / 2];
	q->heap[i] = x;
	return 0;
}

static struct planned_end heap_pop(struct planned_ends *q)
{
	struct planned_end top = q->heap[0], x = q->heap[--q->n_heap];
	size_t i = 0, c, n = q->n_heap;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && q->heap[c + 1].end < q->heap[c].end)
			c++;
		if (q->heap[c].end >= x.end)
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (n)
		q->heap[i] = x;
	return top;
}

/* A ring node for id, from the free list or a new one; PLANNED_ENDS_NONE: out of memory. */
static uint32_t node_for(struct planned_ends *q, uint32_t id)
{
	uint32_t x = q->free_node;

	if (x != PLANNED_ENDS_NONE) {
		q->free_node = q->nodes[x].next;
	} else {
		if (q->n_nodes == q->cap_nodes) {
			size_t cap = q->cap_nodes ? 2 * q->cap_nodes : 256;
			struct planned_ring_node *v;

			if (cap >= PLANNED_ENDS_NONE || !(v = realloc(q->nodes, cap * sizeof *v)))
				return PLANNED_ENDS_NONE;
			q->nodes = v, q->cap_nodes = cap;
		}
		x = (uint32_t)q->n_nodes++;
	}
	q->nodes[x].id = id;
	return x;
}

int planned_ends_push(struct planned_ends *q, int64_t end, uint32_t id)
{
	size_t k;
	uint32_t x;

	if (!q->started)
		q->base = end, q->started = 1;
	if (end < q->base || (uint64_t)end - (uint64_t)q->base >= PLANNED_ENDS_RING)
		return heap_push(q, (struct planned_end){end, id});
	if ((x = node_for(q, id)) == PLANNED_ENDS_NONE)
		return -1;
	k = (size_t)((uint64_t)end % PLANNED_ENDS_RING);
	q->nodes[x].next = q->head[k];
	q->head[k] = x;
	return 0;
}

/* Every node of bucket k to fn, and back on the free list. */
static void take_bucket(struct planned_ends *q, size_t k, void (*fn)(void *, uint32_t), void *ctx)
{
	uint32_t x = q->head[k];

	while (x != PLANNED_ENDS_NONE) {
		uint32_t next = q->nodes[x].next;

		fn(ctx, q->nodes[x].id);
		q->nodes[x].next = q->free_node;
		q->free_node = x;
		x = next;
	}
	q->head[k] = PLANNED_ENDS_NONE;
}

void planned_ends_take(struct planned_ends *q, int64_t t, void (*fn)(void *, uint32_t), void *ctx)
{
	if (!q->started) /* the ring starts at the first batch */
		q->base = t, q->started = 1;
	if (t >= q->base) {
		/* the ring's steps from base to t (all of them when t is a ring or more ahead) */
		uint64_t ahead = (uint64_t)t - (uint64_t)q->base;
		uint64_t steps = ahead >= PLANNED_ENDS_RING ? PLANNED_ENDS_RING : ahead + 1;

		for (uint64_t s = 0; s < steps; s++)
			take_bucket(q, (size_t)(((uint64_t)q->base + s) % PLANNED_ENDS_RING), fn,
			            ctx);
		q->base = t == INT64_MAX ? t : t + 1;
	}
	while (q->n_heap && q->heap[0].end <= t)
		fn(ctx, heap_pop(q).id);
}
