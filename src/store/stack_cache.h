/*
 * store/stack_cache.h - the reader's call stacks by stack id, in memory
 * linear in the number of stack nodes (internal to src/store/).
 *
 * A stack node is a frame and its parent node; the stack of a node is its
 * frame then its parent's stack.  Each cached stack is a window into a
 * shared run of frames stored back to front, so a child that is the first
 * to extend its parent costs one frame, not a copy of the parent's stack:
 * a chain of n nodes takes O(n) memory and time, not O(n^2).  Stacks deeper
 * than MP_STACK_MAX_FRAMES keep their innermost MP_STACK_MAX_FRAMES frames,
 * which bounds what any one stack costs.  Stacks stay valid until free.
 */
#ifndef MP_STORE_STACK_CACHE_H
#define MP_STORE_STACK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"
#include "util/intmap.h"

#define MP_STACK_MAX_FRAMES 256

struct mp_frame_run;

struct mp_stack_cache {
	struct mp_intmap stacks;   /* id -> struct mp_cached_stack* */
	struct mp_frame_run *runs; /* every run, for freeing */
};

void mp_stack_cache_init(struct mp_stack_cache *c);
void mp_stack_cache_free(struct mp_stack_cache *c);

/* The cached stack of node id, or NULL when it is not cached. */
const struct memprof_stack *mp_stack_cache_get(const struct mp_stack_cache *c, int64_t id);

/*
 * Cache node id: frame *f, then the stack of parent (0: none; otherwise
 * cached already).  The frame's strings must outlive the cache.  Returns
 * the new stack, or NULL when out of memory.
 */
const struct memprof_stack *mp_stack_cache_add(struct mp_stack_cache *c, int64_t id, int64_t parent,
                                               const struct memprof_frame *f);

/* How many frames the cache's runs hold room for: what its memory grows with. */
size_t mp_stack_cache_size(const struct mp_stack_cache *c);

#endif
