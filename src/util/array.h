/*
 * util/array.h - growing a malloc'd array by doubling.  Stateless.
 */
#ifndef MP_UTIL_ARRAY_H
#define MP_UTIL_ARRAY_H

#include <stddef.h>

/*
 * Make *p (of *cap elements of elem bytes) hold at least need elements,
 * doubling from 16; *p and *cap are updated only on success.  Returns 0,
 * or MP_ENOMEM when out of memory or the size would overflow.
 */
int mp_array_reserve(void **p, size_t *cap, size_t need, size_t elem);

#endif
