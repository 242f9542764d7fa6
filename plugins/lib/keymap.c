/*
 * plugins/lib/keymap.c - open-addressing hash map of byte-string keys
 * (keymap.h): FNV-1a, linear probing, grown at 1/2 load.
 */
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

struct pl_keymap_slot {
	char *key; /* NULL: empty */
	size_t len;
	uint64_t hash, value;
};

static uint64_t fnv1a(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

void pl_keymap_init(struct pl_keymap *m)
{
	memset(m, 0, sizeof *m);
}

void pl_keymap_free(struct pl_keymap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

static struct pl_keymap_slot *find(const struct pl_keymap *m, const void *key, size_t len,
                                   uint64_t h)
{
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct pl_keymap_slot *s = &m->slots[i];
		if (!s->key || (s->hash == h && s->len == len && !memcmp(s->key, key, len)))
			return s;
	}
}

static int grow(struct pl_keymap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct pl_keymap_slot *old = m->slots, *slots = calloc(cap, sizeof *slots);
	size_t old_cap = m->cap;

	if (!slots)
		return -1;
	m->slots = slots;
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			*find(m, old[i].key, old[i].len, old[i].hash) = old[i];
	free(old);
	return 0;
}

int pl_keymap_get(const struct pl_keymap *m, const void *key, size_t len, uint64_t *value)
{
	struct pl_keymap_slot *s;

	if (!m->cap)
		return 0;
	s = find(m, key, len, fnv1a(key, len));
	if (!s->key)
		return 0;
	*value = s->value;
	return 1;
}

int pl_keymap_put(struct pl_keymap *m, const void *key, size_t len, uint64_t value)
{
	uint64_t h = fnv1a(key, len);
	struct pl_keymap_slot *s;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	s = find(m, key, len, h);
	if (!s->key) {
		if (!(s->key = malloc(len ? len : 1)))
			return -1;
		memcpy(s->key, key, len);
		s->len = len;
		s->hash = h;
		m->n++;
	}
	s->value = value;
	return 0;
}

size_t pl_key_text_u64(char *buf, size_t buf_len, const char *text, uint64_t v)
{
	size_t tl = text ? strlen(text) : 0;

	if (buf_len < sizeof v + 1)
		return 0;
	if (tl > buf_len - sizeof v - 1)
		tl = buf_len - sizeof v - 1;
	memcpy(buf, &v, sizeof v);
	buf[sizeof v] = text ? 1 : 0; /* NULL text differs from "" */
	memcpy(buf + sizeof v + 1, text ? text : "", tl);
	return sizeof v + 1 + tl;
}
