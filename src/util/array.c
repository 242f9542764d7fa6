/*
 * util/array.c - mp_array_grow, mp_array_reserve's slow half: the one
 * doubling realloc every growing array uses.
 */
#include "util/array.h"

#include <stdint.h>
#include <stdlib.h>

#include "util/error.h"

int mp_array_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return MP_ENOMEM;
		c *= 2;
	}
	q = realloc(*p, c * elem);
	if (!q)
		return MP_ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}
