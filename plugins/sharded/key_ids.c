/*
 * plugins/sharded/key_ids.c - numbers the plan's site+size keys in the
 * order they first appear, as their text (sh_key_of) would number them, but
 * hashing each distinct site address's text once: an address stands for one
 * text while the items are held, and two addresses of one text get one
 * number.  Two small integer maps, no allocation per key.  Pure.
 */
#include <stdlib.h>
#include <string.h>

#include "sharded.h"

struct pair_slot {
	uint64_t a, b;
	uint32_t id, used;
};

/* (a, b) -> id, open addressing, grown at 1/2 load. */
struct pair_map {
	struct pair_slot *v;
	size_t cap, n;
};

static size_t slot_of(const struct pair_map *m, uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ b;

	h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 32;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->v[i].used || (m->v[i].a == a && m->v[i].b == b))
			return i;
}

static int pair_grow(struct pair_map *m)
{
	struct pair_map g = {calloc(m->cap ? 2 * m->cap : 256, sizeof *g.v),
	                     m->cap ? 2 * m->cap : 256, m->n};

	if (!g.v)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->v[i].used)
			g.v[slot_of(&g, m->v[i].a, m->v[i].b)] = m->v[i];
	free(m->v);
	*m = g;
	return 0;
}

/* The id of (a, b), or, when new, next (and *fresh = 1); 0 or -1. */
static int pair_id(struct pair_map *m, uint64_t a, uint64_t b, uint32_t next, uint32_t *id,
                   int *fresh)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && pair_grow(m) < 0)
		return -1;
	i = slot_of(m, a, b);
	*fresh = !m->v[i].used;
	if (*fresh) {
		m->v[i] = (struct pair_slot){a, b, next, 1};
		m->n++;
	}
	*id = m->v[i].id;
	return 0;
}

/* The number of site's text (as the key holds it: truncated, NULL apart from ""). */
static int site_text_id(struct pl_keymap *texts, const char *site, uint32_t *id)
{
	char buf[SH_KEY_BYTES];
	size_t len = sh_key_of(buf, site, 0) - sizeof(uint64_t); /* the size's bytes left out */
	uint64_t v;

	if (pl_keymap_get(texts, buf + sizeof(uint64_t), len, &v)) {
		*id = (uint32_t)v;
		return 0;
	}
	*id = (uint32_t)texts->n;
	return pl_keymap_put(texts, buf + sizeof(uint64_t), len, *id);
}

int sh_key_ids(const struct memprof_pool_lifetime *items, size_t n, uint32_t *key_of,
               size_t *n_keys)
{
	struct pair_map by_addr = {0}, keys = {0};
	struct pl_keymap texts;
	uint32_t text = 0, key = 0;
	int fresh, rc = 0;

	pl_keymap_init(&texts);
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = pair_id(&by_addr, (uint64_t)(uintptr_t)items[i].site, 0, 0, &text, &fresh);
		if (rc == 0 && fresh && (rc = site_text_id(&texts, items[i].site, &text)) == 0)
			by_addr.v[slot_of(&by_addr, (uint64_t)(uintptr_t)items[i].site, 0)].id =
			        text;
		if (rc == 0)
			rc = pair_id(&keys, text, items[i].size_bytes, (uint32_t)keys.n, &key,
			             &fresh);
		key_of[i] = key;
	}
	*n_keys = keys.n;
	pl_keymap_free(&texts);
	free(by_addr.v);
	free(keys.v);
	return rc < 0 ? MEMPROF_POOL_ENOMEM : MEMPROF_POOL_OK;
}
