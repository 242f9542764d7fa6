/*
 * util/array.h - growing a malloc'd array by doubling.  Stateless.
 */
#ifndef MP_UTIL_ARRAY_H
#define MP_UTIL_ARRAY_H

#include <stddef.h>

/* The growing half of mp_array_reserve (array.c). */
int mp_array_grow(void **p, size_t *cap, size_t need, size_t elem);

/*
 * Make *p (of *cap elements of elem bytes) hold at least need elements,
 * doubling from 16; *p and *cap are updated only on success.  Returns 0,
 * or MP_ENOMEM when out of memory or the size would overflow.  Inline: the
 * common call, with room left, is one compare.
 */
static inline int mp_array_reserve(void **p, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap ? 0 : mp_array_grow(p, cap, need, elem);
}

#endif
