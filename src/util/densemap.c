/*
 * util/densemap.c - the dense-key map (util/densemap.h): a direct array
 * for small keys, a hash map for the others, keys moved into the array
 * when it grows over them.
 */
#include "util/densemap.h"
#include "util/error.h"

#include <stdlib.h>

#define MIN_CAP 1024 /* the array may always grow this far, however sparse */

void mp_densemap_init(struct mp_densemap *m)
{
	m->direct = NULL;
	m->cap = 0;
	m->n_direct = 0;
	m->n_at_refusal = 0;
	mp_intmap_init(&m->other);
}

void mp_densemap_free(struct mp_densemap *m)
{
	free(m->direct);
	mp_intmap_free(&m->other);
	mp_densemap_init(m);
}

size_t mp_densemap_count(const struct mp_densemap *m)
{
	return m->n_direct + m->other.n;
}

/* The keys of other below cap, counted. */
static size_t other_below(const struct mp_densemap *m, uint64_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < m->other.cap; i++)
		n += m->other.used[i] && m->other.keys[i] < cap;
	return n;
}

/* Grow the array to cap (a power of two above m->cap), moving the keys of
 * other below it in.  Returns 0 or MP_ENOMEM (m unchanged but for the
 * array's slack). */
static int grow(struct mp_densemap *m, size_t cap)
{
	uint32_t *d = realloc(m->direct, cap * sizeof(*d));
	struct mp_intmap rest;
	size_t i, moved = 0;

	if (!d)
		return MP_ENOMEM;
	m->direct = d;
	mp_intmap_init(&rest);
	for (i = 0; i < m->other.cap; i++)
		if (m->other.used[i] && m->other.keys[i] >= cap &&
		    mp_intmap_put(&rest, m->other.keys[i], m->other.vals[i]) < 0) {
			mp_intmap_free(&rest);
			return MP_ENOMEM;
		}
	for (i = m->cap; i < cap; i++)
		d[i] = MP_DENSEMAP_NONE;
	for (i = 0; i < m->other.cap; i++)
		if (m->other.used[i] && m->other.keys[i] < cap) {
			d[m->other.keys[i]] = (uint32_t)m->other.vals[i];
			moved++;
		}
	mp_intmap_free(&m->other);
	m->other = rest;
	m->n_direct += moved;
	m->cap = cap;
	return 0;
}

/* The bound the array should grow to for key: the next power of two above
 * it, when the keys then below it would fill a quarter of it; 0 for none.
 * Counting the keys of other is skipped until the map has doubled since
 * the last count that said no, so puts stay amortized O(1). */
static size_t wanted_cap(struct mp_densemap *m, uint64_t key)
{
	size_t cap = m->cap ? m->cap : 64, n = mp_densemap_count(m) + 1;

	if (key >= (uint64_t)SIZE_MAX / 8)
		return 0;
	while (cap <= key)
		cap *= 2;
	if (cap <= MIN_CAP)
		return cap;
	if (n * 4 < cap || n < 2 * m->n_at_refusal)
		return 0;
	if ((m->n_direct + 1 + other_below(m, cap)) * 4 >= cap)
		return cap;
	m->n_at_refusal = n;
	return 0;
}

int mp_densemap_put(struct mp_densemap *m, uint64_t key, uint32_t val)
{
	size_t cap;

	if (val == MP_DENSEMAP_NONE)
		return MP_EINVAL;
	if (key >= m->cap && (cap = wanted_cap(m, key)) != 0 && grow(m, cap) < 0)
		return MP_ENOMEM;
	if (key < m->cap) {
		m->n_direct += m->direct[key] == MP_DENSEMAP_NONE;
		m->direct[key] = val;
		return 0;
	}
	return mp_intmap_put(&m->other, key, val);
}

int mp_densemap_del(struct mp_densemap *m, uint64_t key)
{
	if (key < m->cap) {
		if (m->direct[key] == MP_DENSEMAP_NONE)
			return 0;
		m->direct[key] = MP_DENSEMAP_NONE;
		m->n_direct--;
		return 1;
	}
	return mp_intmap_del(&m->other, key);
}
