/*
 * util/strmap.c - chained-free open addressing over heap-allocated entries.
 */
#include "util/strmap.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct mp_strmap_entry {
	uint64_t hash;
	int64_t val;
	size_t len;
	char key[]; /* len bytes and a NUL */
};

/* Eight bytes at a time: keys are stack texts of a hundred bytes and more. */
static uint64_t hash_bytes(const char *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

void mp_strmap_init(struct mp_strmap *m)
{
	m->slots = NULL;
	m->cap = m->n = 0;
}

void mp_strmap_free(struct mp_strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->slots[i]);
	free(m->slots);
	mp_strmap_init(m);
}

static void place(struct mp_strmap_entry **slots, size_t cap, struct mp_strmap_entry *e)
{
	size_t i;

	for (i = e->hash & (cap - 1); slots[i]; i = (i + 1) & (cap - 1))
		;
	slots[i] = e;
}

static int grow(struct mp_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct mp_strmap_entry **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return MP_ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i])
			place(slots, cap, m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int mp_strmap_get(const struct mp_strmap *m, const char *key, size_t len, int64_t *val)
{
	return mp_strmap_get_key(m, key, len, val, NULL);
}

int mp_strmap_get_key(const struct mp_strmap *m, const char *key, size_t len, int64_t *val,
                      const char **stored)
{
	uint64_t h;
	size_t i;

	if (!m->cap)
		return 0;
	h = hash_bytes(key, len);
	for (i = h & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		const struct mp_strmap_entry *e = m->slots[i];

		if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) {
			if (val)
				*val = e->val;
			if (stored)
				*stored = e->key;
			return 1;
		}
	}
	return 0;
}

int mp_strmap_put(struct mp_strmap *m, const char *key, size_t len, int64_t val,
                  const char **stored)
{
	struct mp_strmap_entry *e;

	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return MP_ENOMEM;
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return MP_ENOMEM;
	e->hash = hash_bytes(key, len);
	e->val = val;
	e->len = len;
	memcpy(e->key, key, len);
	e->key[len] = '\0';
	place(m->slots, m->cap, e);
	m->n++;
	if (stored)
		*stored = e->key;
	return 0;
}
