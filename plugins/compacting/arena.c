/*
 * plugins/compacting/arena.c - the compacting pool's arena: chunks tiled
 * by segments in address order, carving a live block from a free extent
 * (the rest stays free), merging a freed block with its free neighbours
 * inside its chunk, the fragmentation ratio, and the handle slot table.
 * It calls no host service: chunks come and go through copy.c and vmm.c.
 */
#include <stdlib.h>

#include "compacting.h"

void cp_arena_init(struct cp_arena *a)
{
	*a = (struct cp_arena){.rng = 2463534242u};
}

static void free_chunk_segs(struct cp_chunk *c)
{
	struct cp_seg *s = c->first, *next;

	for (; s; s = next) {
		next = s->next;
		free(s);
	}
}

void cp_arena_free(struct cp_arena *a)
{
	for (size_t i = 0; i < a->n_chunks; i++) {
		free_chunk_segs(a->chunks[i]);
		free(a->chunks[i]);
	}
	free(a->chunks);
	free(a->slots);
	free(a->gens);
	free(a->free_slots);
	cp_arena_init(a);
}

struct cp_seg *cp_seg_new(struct cp_arena *a, struct cp_chunk *c, uint64_t addr, uint64_t size,
                          int is_free)
{
	struct cp_seg *s = calloc(1, sizeof *s);

	(void)a;
	if (!s)
		return NULL;
	s->addr = addr;
	s->size_bytes = size;
	s->chunk = c;
	s->is_free = is_free;
	return s;
}

struct cp_chunk *cp_arena_add_chunk(struct cp_arena *a, const struct memprof_region *r)
{
	struct cp_chunk *c;
	struct cp_seg *s;

	if (a->n_chunks == a->cap_chunks) {
		size_t cap = a->cap_chunks ? 2 * a->cap_chunks : 16;
		struct cp_chunk **grown = realloc(a->chunks, cap * sizeof *grown);

		if (!grown)
			return NULL;
		a->chunks = grown;
		a->cap_chunks = cap;
	}
	c = calloc(1, sizeof *c);
	s = c ? cp_seg_new(a, c, r->addr, r->size_bytes, 1) : NULL;
	if (!s) {
		free(c);
		return NULL;
	}
	c->region = *r;
	c->first = s;
	cp_index_insert(a, s);
	a->chunks[a->n_chunks++] = c;
	a->arena_bytes += r->size_bytes;
	a->free_bytes += r->size_bytes;
	return c;
}

void cp_arena_drop_chunk(struct cp_arena *a, size_t i)
{
	struct cp_chunk *c = a->chunks[i];

	for (struct cp_seg *s = c->first; s; s = s->next)
		if (s->is_free) {
			cp_index_erase(a, s);
			a->free_bytes -= s->size_bytes;
		}
	a->arena_bytes -= c->region.size_bytes;
	free_chunk_segs(c);
	free(c);
	for (; i + 1 < a->n_chunks; i++)
		a->chunks[i] = a->chunks[i + 1];
	a->n_chunks--;
}

struct cp_seg *cp_arena_take(struct cp_arena *a, struct cp_seg *f, uint64_t size_bytes)
{
	struct cp_seg *rest = NULL;

	if (f->size_bytes > size_bytes) {
		rest = cp_seg_new(a, f->chunk, f->addr + size_bytes, f->size_bytes - size_bytes, 1);
		if (!rest)
			return NULL;
	}
	cp_index_erase(a, f);
	if (rest) {
		rest->prev = f;
		rest->next = f->next;
		if (f->next)
			f->next->prev = rest;
		f->next = rest;
		f->size_bytes = size_bytes;
		cp_index_insert(a, rest);
	}
	f->is_free = 0;
	f->chunk->n_live++;
	a->n_live++;
	a->free_bytes -= size_bytes;
	return f;
}

/* Merges the free segment after s into s (s is out of the index). */
static void absorb_next(struct cp_arena *a, struct cp_seg *s)
{
	struct cp_seg *n = s->next;

	cp_index_erase(a, n);
	s->size_bytes += n->size_bytes;
	s->next = n->next;
	if (n->next)
		n->next->prev = s;
	free(n);
}

void cp_arena_give(struct cp_arena *a, struct cp_seg *s)
{
	s->is_free = 1;
	s->chunk->n_live--;
	a->n_live--;
	a->free_bytes += s->size_bytes;
	if (s->next && s->next->is_free)
		absorb_next(a, s);
	if (s->prev && s->prev->is_free) {
		struct cp_seg *p = s->prev;

		cp_index_erase(a, p);
		p->size_bytes += s->size_bytes;
		p->next = s->next;
		if (s->next)
			s->next->prev = p;
		free(s);
		s = p;
	}
	cp_index_insert(a, s);
}

double cp_arena_frag(const struct cp_arena *a)
{
	const struct cp_seg *big = cp_index_largest(a);

	if (!a->free_bytes || !big)
		return 0.0;
	return 1.0 - (double)big->size_bytes / (double)a->free_bytes;
}

static int grow_slots(struct cp_arena *a)
{
	size_t cap = a->cap_slots ? 2 * a->cap_slots : 256;
	struct cp_seg **slots = realloc(a->slots, cap * sizeof *slots);
	uint32_t *gens, *free_slots;

	if (!slots)
		return -1;
	a->slots = slots;
	gens = realloc(a->gens, cap * sizeof *gens);
	if (!gens)
		return -1;
	a->gens = gens;
	free_slots = realloc(a->free_slots, cap * sizeof *free_slots);
	if (!free_slots)
		return -1;
	a->free_slots = free_slots;
	a->cap_slots = cap;
	return 0;
}

uint64_t cp_handle_new(struct cp_arena *a, struct cp_seg *s)
{
	uint32_t slot;

	if (a->n_free_slots) {
		slot = a->free_slots[--a->n_free_slots];
	} else {
		if (a->n_slots == a->cap_slots && (a->n_slots >= UINT32_MAX || grow_slots(a) < 0))
			return 0;
		slot = (uint32_t)a->n_slots++;
		a->gens[slot] = 0;
	}
	a->gens[slot] = a->gens[slot] == UINT32_MAX ? 1 : a->gens[slot] + 1;
	a->slots[slot] = s;
	s->slot = slot;
	return (uint64_t)a->gens[slot] << 32 | slot;
}

struct cp_seg *cp_handle_find(const struct cp_arena *a, uint64_t handle)
{
	uint64_t slot = handle & UINT32_MAX;

	if (slot >= a->n_slots || a->gens[slot] != handle >> 32)
		return NULL;
	return a->slots[slot];
}

void cp_handle_drop(struct cp_arena *a, struct cp_seg *s)
{
	a->slots[s->slot] = NULL;
	a->free_slots[a->n_free_slots++] = s->slot;
}
