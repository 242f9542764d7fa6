/*
 * util/intmap.h - open-addressing hash map from uint64 keys to uint64 values.
 *
 * Memory grows with the number of keys, not with how often they are used.
 * Not thread-safe.  Key 0 is allowed.
 */
#ifndef MP_UTIL_INTMAP_H
#define MP_UTIL_INTMAP_H

#include <stddef.h>
#include <stdint.h>

struct mp_intmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two, or 0 */
	size_t n;
};

void mp_intmap_init(struct mp_intmap *m);
void mp_intmap_free(struct mp_intmap *m);
/* Insert or replace.  Returns 0 or MP_ENOMEM. */
int mp_intmap_put(struct mp_intmap *m, uint64_t key, uint64_t val);
/* Insert when absent: 1 inserted; 0 when key is present, *old (may be NULL)
 * set to its value and the map unchanged; or MP_ENOMEM.  One probe where get
 * and put take two. */
int mp_intmap_add(struct mp_intmap *m, uint64_t key, uint64_t val, uint64_t *old);
/* Returns 1 and sets *val when found, else 0.  val may be NULL. */
int mp_intmap_get(const struct mp_intmap *m, uint64_t key, uint64_t *val);
/* Returns 1 when the key was present and is now removed, else 0. */
int mp_intmap_del(struct mp_intmap *m, uint64_t key);

#define MP_INTMAP_NO_SLOT ((size_t)-1)
/* Where key is (its value is m->vals[slot]), or MP_INTMAP_NO_SLOT: valid
 * until the next put or delete. */
size_t mp_intmap_slot(const struct mp_intmap *m, uint64_t key);
/* Remove the key at slot, a slot mp_intmap_slot just gave: one probe for a
 * lookup followed by a removal. */
void mp_intmap_del_slot(struct mp_intmap *m, size_t slot);

#endif
