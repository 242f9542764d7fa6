/*
 * util/pair_map.h - a hash map from a pair of 64-bit numbers to a 64-bit
 * value, for the importers' live sets (an allocation id and its process, or
 * an address): open addressing with linear probing in one array of slots,
 * and deletion by shifting back (no tombstones), so that pairing an alloc
 * with its free costs a few dozen instructions.  Memory grows with the most
 * keys held at once.  Not thread-safe.
 */
#ifndef MP_UTIL_PAIR_MAP_H
#define MP_UTIL_PAIR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct mp_pair_slot {
	uint64_t a, b, val;
	uint64_t used; /* 0: empty */
};

struct mp_pair_map {
	struct mp_pair_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

void mp_pair_map_init(struct mp_pair_map *m);
void mp_pair_map_free(struct mp_pair_map *m);
/* 1 and *val set (val may be NULL) when (a, b) is present, else 0. */
int mp_pair_map_get(const struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t *val);
/* Insert or replace.  0, or MP_ENOMEM (the map is unchanged). */
int mp_pair_map_put(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t val);
/* Insert when absent: 1 inserted, 0 when (a, b) is present (the map is
 * unchanged), or MP_ENOMEM (unchanged too).  One probe where get and put take two. */
int mp_pair_map_add(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t val);
/* 1 when (a, b) was present and is now removed, else 0. */
int mp_pair_map_del(struct mp_pair_map *m, uint64_t a, uint64_t b);
/* Get and delete in one probe: 1 and *val set when (a, b) was present, else 0. */
int mp_pair_map_take(struct mp_pair_map *m, uint64_t a, uint64_t b, uint64_t *val);

#endif
