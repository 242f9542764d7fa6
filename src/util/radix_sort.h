/*
 * util/radix_sort.h - a stable sort of (key, value) pairs by a 64-bit key:
 * least-significant-digit radix, 8 bits a pass, a pass skipped when every
 * key has the same digit there (so keys that differ only in their low bytes
 * cost few passes).  O(n) a pass; no allocation (16 KiB of stack).
 * Stateless and thread-safe.
 */
#ifndef MP_UTIL_RADIX_SORT_H
#define MP_UTIL_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

struct mp_radix_pair {
	uint64_t key;
	uint64_t val;
};

/*
 * Sort v[0..n) by key, equal keys keeping their order; tmp holds n pairs
 * (its contents are lost).  The result is in v.
 */
void mp_radix_sort(struct mp_radix_pair *v, struct mp_radix_pair *tmp, size_t n);

#endif
