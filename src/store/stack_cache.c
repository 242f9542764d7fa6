/*
 * store/stack_cache.c - call stacks by id as windows into shared runs of
 * frames (contract in stack_cache.h).  Knows no SQL: the reader walks the
 * stacks table and adds nodes parent first.
 */
#include "store/stack_cache.h"

#include <stdlib.h>
#include <string.h>

/* Frames stored back to front: frames[lo..cap) are in use, and a stack is
 * the window of its depth starting at its own frame. */
struct mp_frame_run {
	struct mp_frame_run *next;
	uint32_t cap, lo;
	struct memprof_frame frames[];
};

struct mp_cached_stack {
	struct memprof_stack stack; /* frames point into run */
	struct mp_frame_run *run;
	uint64_t depth; /* the whole stack's depth, beyond MP_STACK_MAX_FRAMES too */
};

/* The most frames a run made to continue a chain may hold. */
#define MAX_RUN_FRAMES (1u << 16)

void mp_stack_cache_init(struct mp_stack_cache *c)
{
	mp_intmap_init(&c->stacks);
	c->runs = NULL;
}

void mp_stack_cache_free(struct mp_stack_cache *c)
{
	size_t i;

	for (i = 0; i < c->stacks.cap; i++)
		if (c->stacks.used[i])
			free((void *)(uintptr_t)c->stacks.vals[i]);
	mp_intmap_free(&c->stacks);
	while (c->runs) {
		struct mp_frame_run *next = c->runs->next;

		free(c->runs);
		c->runs = next;
	}
}

static struct mp_cached_stack *lookup(const struct mp_stack_cache *c, int64_t id)
{
	uint64_t v;

	return mp_intmap_get(&c->stacks, (uint64_t)id, &v) ? (struct mp_cached_stack *)(uintptr_t)v
	                                                   : NULL;
}

const struct memprof_stack *mp_stack_cache_get(const struct mp_stack_cache *c, int64_t id)
{
	struct mp_cached_stack *cs = lookup(c, id);

	return cs ? &cs->stack : NULL;
}

/* A new run of n_frames + slack frames, its last n_frames in use. */
static struct mp_frame_run *new_run(struct mp_stack_cache *c, uint32_t n_frames, uint32_t slack)
{
	struct mp_frame_run *run;

	run = malloc(sizeof(*run) + ((size_t)n_frames + slack) * sizeof(struct memprof_frame));
	if (!run)
		return NULL;
	run->cap = n_frames + slack;
	run->lo = slack;
	run->next = c->runs;
	c->runs = run;
	return run;
}

/* Place frame f then the first n - 1 frames of parent p (NULL: none) in a
 * run; the child's window starts at the returned run's lo. */
static struct mp_frame_run *place(struct mp_stack_cache *c, const struct mp_cached_stack *p,
                                  const struct memprof_frame *f, uint32_t n)
{
	struct mp_frame_run *run = p ? p->run : NULL;
	uint32_t slack = 15;

	if (run && p->stack.frames == &run->frames[run->lo]) {
		if (run->lo > 0) { /* the slot before the parent is free: share */
			run->frames[--run->lo] = *f;
			return run;
		}
		/* a chain going on: room for it to go on growing */
		slack = run->cap < MAX_RUN_FRAMES / 2 ? 2 * run->cap : MAX_RUN_FRAMES;
	}
	run = new_run(c, n, slack);
	if (!run)
		return NULL;
	run->frames[run->lo] = *f;
	if (n > 1)
		memcpy(&run->frames[run->lo + 1], p->stack.frames,
		       (n - 1) * sizeof(struct memprof_frame));
	return run;
}

const struct memprof_stack *mp_stack_cache_add(struct mp_stack_cache *c, int64_t id, int64_t parent,
                                               const struct memprof_frame *f)
{
	const struct mp_cached_stack *p = parent ? lookup(c, parent) : NULL;
	struct mp_cached_stack *cs = malloc(sizeof(*cs));
	uint64_t depth = p ? p->depth + 1 : 1;
	uint32_t n = depth < MP_STACK_MAX_FRAMES ? (uint32_t)depth : MP_STACK_MAX_FRAMES;

	if (!cs || (parent && !p))
		goto fail;
	cs->run = place(c, p, f, n);
	if (!cs->run)
		goto fail;
	cs->depth = depth;
	cs->stack.n_frames = n;
	cs->stack.frames = &cs->run->frames[cs->run->lo];
	if (mp_intmap_put(&c->stacks, (uint64_t)id, (uint64_t)(uintptr_t)cs) < 0)
		goto fail; /* the frame placed in the run stays unused */
	return &cs->stack;
fail:
	free(cs);
	return NULL;
}

size_t mp_stack_cache_size(const struct mp_stack_cache *c)
{
	const struct mp_frame_run *run;
	size_t n = 0;

	for (run = c->runs; run; run = run->next)
		n += run->cap;
	return n;
}
