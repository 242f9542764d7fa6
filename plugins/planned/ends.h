/*
 * plugins/planned/ends.h - the buffers the sweep placed and not yet ended,
 * by end: a ring of buckets, one per end step, for the ends close ahead (most
 * buffers of a training step are short-lived) and a min-heap for the rest.
 * Taken in batches: every buffer ending at or before a time, in no set order.
 * Memory grows with the buffers waiting, not with the trace.  Not
 * thread-safe.
 */
#ifndef MEMPROF_PLUGIN_PLANNED_ENDS_H
#define MEMPROF_PLUGIN_PLANNED_ENDS_H

#include <stddef.h>
#include <stdint.h>

#define PLANNED_ENDS_RING 4096u /* end steps the ring covers ahead of the last batch */

struct planned_end {
	int64_t end;
	uint32_t id;
};

struct planned_ends {
	/* ring: head[end % RING] lists the waiting ends in [base, base + RING), by node */
	uint32_t head[PLANNED_ENDS_RING];
	int64_t base;
	int started;
	struct planned_ring_node {
		uint32_t id, next;
	} * nodes;
	uint32_t free_node; /* a list through next; PLANNED_ENDS_NONE: none */
	size_t n_nodes, cap_nodes;
	struct planned_end *heap; /* the ends past the ring when they came */
	size_t n_heap, cap_heap;
};

#define PLANNED_ENDS_NONE UINT32_MAX

void planned_ends_init(struct planned_ends *q);
void planned_ends_free(struct planned_ends *q);
/* Buffer id ends at end (after every batch taken so far): 0, or -1 out of memory. */
int planned_ends_push(struct planned_ends *q, int64_t end, uint32_t id);
/*
 * Every buffer ending at or before t, each given to fn (in no set order),
 * then gone: t is at or after the last batch's.
 */
void planned_ends_take(struct planned_ends *q, int64_t t, void (*fn)(void *, uint32_t), void *ctx);

#endif
