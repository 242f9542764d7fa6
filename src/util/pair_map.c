/*
 * util/pair_map.c - the importers' live-set map (pair_map.h): linear
 * probing in one array, at most half full, deletion by backward shift.
 */
#include "util/pair_map.h"
#include "util/error.h"

#include <stdlib.h>

#define MIN_CAP 64

static size_t home(const struct mp_pair_map *m, uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;

	return (size_t)(h ^ (h >> 31)) & (m->cap - 1);
}

/* The slot holding (a, b), or the empty slot where it would go (cap > 0). */
static size_t find(const struct mp_pair_map *m, uint64_t a, uint64_t b)
{
	size_t i = home(m, a, b);

	while (m->slots[i].used && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void mp_pair_map_init(struct mp_pair_map *m)
{
	m->slots = NULL;
	m->cap = m->n = 0;
}

void mp_pair_map_free(struct mp_pair_map *m)
{
	free(m->slots);
	mp_pair_map_init(m);
}

/* Is (a, b) in m?  Then *at is its slot. */
static int locate(const struct mp_pair_map *m, uint64_t a, uint64_t b, size_t *at)
{
	if (!m->cap)
		return 0;
	*at = find(m, a, b);
	return m->slots[*at].used;
}

int mp_pair_map_get(const struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t *val)
{
	size_t i;

	if (!locate(m, a, b, &i))
		return 0;
	if (val)
		*val = m->slots[i].val;
	return 1;
}

static int grow(struct mp_pair_map *m)
{
	struct mp_pair_map bigger = {NULL, m->cap ? 2 * m->cap : MIN_CAP, 0};
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return MP_ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			bigger.slots[find(&bigger, m->slots[i].a, m->slots[i].b)] = m->slots[i];
	bigger.n = m->n;
	free(m->slots);
	*m = bigger;
	return 0;
}

int mp_pair_map_put(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return MP_ENOMEM;
	i = find(m, a, b);
	if (!m->slots[i].used) {
		m->slots[i] = (struct mp_pair_slot){a, b, val, 1};
		m->n++;
	}
	m->slots[i].val = val;
	return 0;
}

int mp_pair_map_add(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t val)
{
	size_t i = 0;

	if (m->cap && m->slots[i = find(m, a, b)].used)
		return 0;
	if ((m->n + 1) * 2 > m->cap) {
		if (grow(m) < 0)
			return MP_ENOMEM;
		i = find(m, a, b);
	}
	m->slots[i] = (struct mp_pair_slot){a, b, val, 1};
	m->n++;
	return 1;
}

/* Empty the used slot i: shift back every later slot of its run whose home
 * is not in (i, j]. */
static void remove_at(struct mp_pair_map *m, size_t i)
{
	size_t mask = m->cap - 1, j, k;

	for (j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
		k = home(m, m->slots[j].a, m->slots[j].b);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->slots[i] = m->slots[j];
		i = j;
	}
	m->slots[i].used = 0;
	m->n--;
}

int mp_pair_map_take(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t *val)
{
	size_t i;

	if (!locate(m, a, b, &i))
		return 0;
	*val = m->slots[i].val;
	remove_at(m, i);
	return 1;
}

int mp_pair_map_del(struct mp_pair_map *m, uint64_t a, uint64_t b)
{
	uint64_t val;

	return mp_pair_map_take(m, a, b, &val);
}
