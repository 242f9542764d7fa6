/*
 * util/densemap.h - a map from uint64 keys to uint32 values for keys that
 * are mostly small and dense (slot numbers, table row ids, size classes):
 * keys below a bound held in a plain array, one load per lookup, and the
 * rest in a hash map (util/intmap).  The array grows only while the keys
 * below its new bound are at least a quarter of it (or it is small), so a
 * few large keys never make it big: memory stays linear in the keys held.
 * Not thread-safe.
 */
#ifndef MP_UTIL_DENSEMAP_H
#define MP_UTIL_DENSEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/intmap.h"

#define MP_DENSEMAP_NONE UINT32_MAX /* not a value: what the array holds for "absent" */

struct mp_densemap {
	uint32_t *direct; /* key -> value, MP_DENSEMAP_NONE when absent; keys < cap */
	size_t cap;
	size_t n_direct;        /* keys held in direct */
	struct mp_intmap other; /* keys >= cap */
	size_t n_at_refusal;    /* keys held when growing was last refused */
};

void mp_densemap_init(struct mp_densemap *m);
void mp_densemap_free(struct mp_densemap *m);
/* Insert or replace; val must not be MP_DENSEMAP_NONE.  Returns 0,
 * MP_EINVAL for MP_DENSEMAP_NONE, or MP_ENOMEM. */
int mp_densemap_put(struct mp_densemap *m, uint64_t key, uint32_t val);
/* Returns 1 when the key was present and is now removed, else 0. */
int mp_densemap_del(struct mp_densemap *m, uint64_t key);
/* Keys held. */
size_t mp_densemap_count(const struct mp_densemap *m);

/* The value of key, or MP_DENSEMAP_NONE when absent. */
static inline uint32_t mp_densemap_get(const struct mp_densemap *m, uint64_t key)
{
	uint64_t v;

	if (key < m->cap)
		return m->direct[key];
	if (m->other.n == 0 || !mp_intmap_get(&m->other, key, &v))
		return MP_DENSEMAP_NONE;
	return (uint32_t)v;
}

#endif
