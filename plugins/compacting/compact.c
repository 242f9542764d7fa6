/*
 * plugins/compacting/compact.c - copy mode's compaction: live blocks are
 * repacked in arena order, each at the fill point of the first chunk up to
 * its own with room for it (first fit, a max tree over the chunks' room),
 * so a block never lands on one not yet moved, and a move inside its own
 * chunk only goes down; overlapping moves copy in pieces that never overlap.
 * The host gets every move (block_moved); emptied chunks are released.
 */
#include <stdlib.h>
#include <string.h>

#include "compacting.h"

/* The state of one compaction. */
struct pack {
	struct memprof_pool *p;
	size_t leaves;        /* leaves of p->room_tree, a power of two */
	size_t n_active;      /* chunks the walk has reached, in the tree */
	struct cp_seg *spare; /* free segments to reuse, linked by next */
	int rc;               /* the first failure: later blocks stay in place */
};

static uint64_t room(const struct cp_chunk *c)
{
	return c->region.addr + c->region.size_bytes - c->fill;
}

static void append(struct cp_chunk *c, struct cp_seg *s)
{
	s->chunk = c;
	s->prev = c->last;
	s->next = NULL;
	if (c->last)
		c->last->next = s;
	else
		c->first = s;
	c->last = s;
}

/* A free segment [c->fill, end) appended to c, from the spares. */
static void append_free(struct pack *k, struct cp_chunk *c, uint64_t end)
{
	struct cp_seg *s = k->spare;

	k->spare = s->next;
	*s = (struct cp_seg){.addr = c->fill, .size_bytes = end - c->fill, .is_free = 1};
	append(c, s);
	cp_index_insert(&k->p->arena, s);
	k->p->arena.free_bytes += s->size_bytes;
	c->fill = end;
}

/* Sets chunk i's room in the max tree and updates its ancestors. */
static void set_room(struct pack *k, size_t i, uint64_t v)
{
	uint64_t *t = k->p->room_tree;
	size_t x = k->leaves + i;

	for (t[x] = v, x /= 2; x; x /= 2)
		t[x] = t[2 * x] > t[2 * x + 1] ? t[2 * x] : t[2 * x + 1];
}

/*
 * Where block s of chunk position own goes: the first chunk up to its own
 * with room for it.  Chunks join the tree as the walk reaches them: those
 * before own hold only blocks already placed, so all above their fill is
 * free; own has room, since its fill is at most s's address.
 */
static struct cp_chunk *destination(struct pack *k, const struct cp_seg *s, size_t own)
{
	struct cp_chunk **ch = k->p->arena.chunks;
	const uint64_t *t = k->p->room_tree;
	size_t x = 1;

	for (; k->n_active <= own; k->n_active++)
		set_room(k, k->n_active, room(ch[k->n_active]));
	if (t[1] < s->size_bytes)
		return ch[own];
	while (x < k->leaves)
		x = t[2 * x] >= s->size_bytes ? 2 * x : 2 * x + 1;
	return x - k->leaves < own ? ch[x - k->leaves] : ch[own];
}

/* Copies s's bytes to dst (pieces that never overlap), then tells the host. */
static int move_block(struct pack *k, struct cp_seg *s, uint64_t dst)
{
	const struct memprof_pool_host *h = k->p->host;
	uint64_t src = s->addr, n = s->data_bytes;
	uint64_t step = n, gap = src > dst ? src - dst : dst - src;
	int rc = MEMPROF_POOL_OK;

	if (gap < n)
		step = gap;
	for (uint64_t done = 0; done < n && rc == MEMPROF_POOL_OK; done += step) {
		uint64_t len = n - done < step ? n - done : step;
		uint64_t off =
		        src > dst ? done : n - done - len; /* upward moves copy the top first */

		rc = h->copy(h->ctx, dst + off, src + off, len, 0);
	}
	if (rc == MEMPROF_POOL_OK)
		rc = h->block_moved(h->ctx, s->token, dst);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	s->addr = dst;
	k->p->st.blocks_moved++;
	k->p->st.bytes_moved += n;
	return MEMPROF_POOL_OK;
}

static void place(struct pack *k, struct cp_seg *s, size_t own)
{
	struct cp_chunk *own_chunk = s->chunk;
	struct cp_chunk *c = k->rc ? own_chunk : destination(k, s, own);
	uint64_t dst = c->fill, gap = s->addr - dst;
	int rc;

	if (c == own_chunk && gap && gap < s->data_bytes &&
	    (s->data_bytes + gap - 1) / gap > CP_MAX_PIECES)
		dst = s->addr; /* a short slide of a large block: not worth the pieces */
	if (c == own_chunk && k->rc)
		dst = s->addr;
	if (dst != s->addr) {
		if ((rc = move_block(k, s, dst)) != MEMPROF_POOL_OK) {
			k->rc = rc;
			c = own_chunk;
			dst = s->addr;
		}
	} else if (dst != c->fill) {
		k->p->st.blocks_kept++;
	}
	if (dst > c->fill)
		append_free(k, c, dst);
	append(c, s);
	c->fill = dst + s->size_bytes;
	c->n_live++;
	set_room(k, c->pos, room(c));
}

/*
 * Takes every segment out of the chunks: live blocks into p->scratch in
 * arena order, free extents onto the spare list, topped up so that the
 * holes and tails the repacking leaves cannot run short.  -1: no memory.
 */
static int collect(struct pack *k)
{
	struct cp_arena *a = &k->p->arena;
	size_t n = 0, n_spare = 0, need = a->n_live + a->n_chunks;

	if (k->p->cap_scratch < a->n_live) {
		struct cp_seg **grown = realloc(k->p->scratch, a->n_live * sizeof *grown);

		if (!grown)
			return -1;
		k->p->scratch = grown;
		k->p->cap_scratch = a->n_live;
	}
	for (k->leaves = 1; k->leaves < a->n_chunks;)
		k->leaves *= 2;
	if (k->p->cap_room_tree < 2 * k->leaves) {
		uint64_t *grown = realloc(k->p->room_tree, 2 * k->leaves * sizeof *grown);

		if (!grown)
			return -1;
		k->p->room_tree = grown;
		k->p->cap_room_tree = 2 * k->leaves;
	}
	memset(k->p->room_tree, 0, 2 * k->leaves * sizeof *k->p->room_tree);
	for (size_t i = 0; i < a->n_chunks; i++)
		for (struct cp_seg *s = a->chunks[i]->first; s; s = s->next)
			n_spare += s->is_free;
	for (; n_spare < need; n_spare++) {
		struct cp_seg *s = calloc(1, sizeof *s);

		if (!s)
			return -1;
		s->next = k->spare;
		k->spare = s;
	}
	for (size_t i = 0; i < a->n_chunks; i++) {
		struct cp_chunk *c = a->chunks[i];
		struct cp_seg *s = c->first, *next;

		for (; s; s = next) {
			next = s->next;
			if (s->is_free) {
				s->next = k->spare;
				k->spare = s;
			} else {
				k->p->scratch[n++] = s;
			}
		}
		c->pos = i;
		c->fill = c->region.addr;
		c->first = c->last = NULL;
		c->n_live = 0;
	}
	a->index_root = NULL;
	a->free_bytes = 0;
	return 0;
}

/* Gives back the chunks left empty, in any position. */
static int release_empty(struct memprof_pool *p, uint64_t *n_released)
{
	struct cp_arena *a = &p->arena;
	int rc = MEMPROF_POOL_OK;

	for (size_t i = a->n_chunks; i-- > 0;) {
		struct cp_chunk *c = a->chunks[i];
		int r;

		if (c->n_live)
			continue;
		r = p->host->release(p->host->ctx, &c->region);
		if (r != MEMPROF_POOL_OK) {
			rc = r;
			continue;
		}
		cp_arena_drop_chunk(a, i);
		(*n_released)++;
	}
	return rc;
}

static void record(struct memprof_pool *p, int forced, double before, double after,
                   uint64_t n_blocks, uint64_t n_bytes, uint64_t n_released)
{
	struct cp_stats *st = &p->st;

	st->n_compactions++;
	if (forced)
		st->n_forced++;
	else
		st->n_threshold++;
	st->frag_before_sum += before;
	st->frag_after_sum += after;
	if (before > st->frag_before_max)
		st->frag_before_max = before;
	st->chunks_released += n_released;
	if (st->n_compactions <= 10)
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_INFO,
		             "compaction %llu (%s): fragmentation %.3f -> %.3f, moved %llu blocks "
		             "(%llu bytes), released %llu chunks",
		             (unsigned long long)st->n_compactions, forced ? "forced" : "threshold",
		             before, after, (unsigned long long)n_blocks,
		             (unsigned long long)n_bytes, (unsigned long long)n_released);
}

int cp_compact(struct memprof_pool *p, int forced)
{
	struct cp_arena *a = &p->arena;
	struct pack k = {.p = p};
	double before = cp_arena_frag(a);
	uint64_t blocks0 = p->st.blocks_moved, bytes0 = p->st.bytes_moved, n_released = 0;
	size_t n_live = a->n_live;
	int rc;

	if (collect(&k) < 0) {
		while (k.spare) {
			struct cp_seg *s = k.spare;

			k.spare = s->next;
			free(s);
		}
		p->host->log(p->host->ctx, MEMPROF_POOL_LOG_ERROR, "out of host memory");
		return MEMPROF_POOL_EFAULT;
	}
	for (size_t i = 0; i < n_live; i++)
		place(&k, p->scratch[i], p->scratch[i]->chunk->pos);
	for (size_t i = 0; i < a->n_chunks; i++) {
		struct cp_chunk *c = a->chunks[i];

		if (room(c))
			append_free(&k, c, c->region.addr + c->region.size_bytes);
	}
	while (k.spare) {
		struct cp_seg *s = k.spare;

		k.spare = s->next;
		free(s);
	}
	rc = release_empty(p, &n_released);
	p->dirty = 0;
	p->freed_since_bytes = 0;
	record(p, forced, before, cp_arena_frag(a), p->st.blocks_moved - blocks0,
	       p->st.bytes_moved - bytes0, n_released);
	return k.rc ? k.rc : rc;
}
