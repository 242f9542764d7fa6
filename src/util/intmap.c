/*
 * util/intmap.c - linear-probing hash map with backward-shift deletion.
 */
#include "util/intmap.h"
#include "util/error.h"

#include <stdlib.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

void mp_intmap_init(struct mp_intmap *m)
{
	m->keys = m->vals = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

void mp_intmap_free(struct mp_intmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	mp_intmap_init(m);
}

/* Put a key known to be absent, with room for it: as put does, without comparing keys. */
static void put_absent(struct mp_intmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	for (i = mix(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
		;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

static int grow(struct mp_intmap *m)
{
	struct mp_intmap bigger;
	size_t i;

	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.n = 0;
	bigger.keys = malloc(bigger.cap * sizeof(uint64_t));
	bigger.vals = malloc(bigger.cap * sizeof(uint64_t));
	bigger.used = calloc(bigger.cap, 1);
	if (!bigger.keys || !bigger.vals || !bigger.used) {
		free(bigger.keys);
		free(bigger.vals);
		free(bigger.used);
		return MP_ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			put_absent(&bigger, m->keys[i], m->vals[i]);
	mp_intmap_free(m);
	*m = bigger;
	return 0;
}

int mp_intmap_put(struct mp_intmap *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
		return MP_ENOMEM;
	for (i = mix(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

int mp_intmap_add(struct mp_intmap *m, uint64_t key, uint64_t val, uint64_t *old)
{
	size_t i = 0;

	if (m->cap)
		for (i = mix(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1))
			if (m->keys[i] == key) {
				if (old)
					*old = m->vals[i];
				return 0;
			}
	if ((m->n + 1) * 4 > m->cap * 3) {
		if (grow(m) < 0)
			return MP_ENOMEM;
		put_absent(m, key, val);
		return 1;
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 1;
}

static int find(const struct mp_intmap *m, uint64_t key, size_t *slot)
{
	size_t i;

	if (!m->cap)
		return 0;
	for (i = mix(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*slot = i;
			return 1;
		}
	}
	return 0;
}

int mp_intmap_get(const struct mp_intmap *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!find(m, key, &i))
		return 0;
	if (val)
		*val = m->vals[i];
	return 1;
}

size_t mp_intmap_slot(const struct mp_intmap *m, uint64_t key)
{
	size_t i;

	return find(m, key, &i) ? i : MP_INTMAP_NO_SLOT;
}

void mp_intmap_del_slot(struct mp_intmap *m, size_t hole)
{
	size_t i, home, mask = m->cap - 1;

	m->used[hole] = 0;
	m->n--;
	for (i = (hole + 1) & mask; m->used[i]; i = (i + 1) & mask) {
		home = mix(m->keys[i]) & mask;
		/* move i into the hole when its home is not in (hole, i] cyclically */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			m->keys[hole] = m->keys[i];
			m->vals[hole] = m->vals[i];
			m->used[hole] = 1;
			m->used[i] = 0;
			hole = i;
		}
	}
}

int mp_intmap_del(struct mp_intmap *m, uint64_t key)
{
	size_t hole;

	if (!find(m, key, &hole))
		return 0;
	mp_intmap_del_slot(m, hole);
	return 1;
}
