/*
 * util/radix_sort.c - the stable radix sort of radix_sort.h: one pass to
 * count every digit of every key, then one scatter pass for each digit
 * position where the keys differ.  Knows nothing of what the pairs mean.
 */
#include <string.h>

#include "util/radix_sort.h"

#define DIGITS 8
#define BINS   256

void mp_radix_sort(struct mp_radix_pair *v, struct mp_radix_pair *tmp, size_t n)
{
	size_t count[DIGITS][BINS]; /* 16 KiB of stack */
	struct mp_radix_pair *from = v, *to = tmp, *swap;

	if (n < 2)
		return;
	memset(count, 0, sizeof count);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < DIGITS; d++)
			count[d][(v[i].key >> (8 * d)) & (BINS - 1)]++;
	for (int d = 0; d < DIGITS; d++) {
		size_t *c = count[d], sum = 0;

		if (c[(v[0].key >> (8 * d)) & (BINS - 1)] == n)
			continue; /* every key has this digit */
		for (int b = 0; b < BINS; b++) {
			size_t k = c[b];

			c[b] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			to[c[(from[i].key >> (8 * d)) & (BINS - 1)]++] = from[i];
		swap = from, from = to, to = swap;
	}
	if (from != v)
		memcpy(v, from, n * sizeof *v);
}
