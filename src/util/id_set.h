/*
 * util/id_set.h - a set of uint64 ids for duplicate checks (an importer's
 * "was this id already used?"): ids below a bound in a bitmap, one bit each
 * and mostly in the caches when ids are nearly consecutive, the rest in a
 * hash map (util/intmap).  The bitmap grows only while it stays within 64
 * bits an id held (or 64 Ki bits) and no id has gone to the hash map, so an
 * id is always in the one place its value says: memory is linear in the
 * ids held.  Not thread-safe.
 */
#ifndef MP_UTIL_ID_SET_H
#define MP_UTIL_ID_SET_H

#include <stddef.h>
#include <stdint.h>

#include "util/intmap.h"

struct mp_id_set {
	uint64_t *bits;        /* bit k of word k / 64: id k is held; ids < limit */
	uint64_t limit;        /* a power of two, or 0 */
	size_t n;              /* ids held, in both */
	struct mp_intmap rest; /* ids >= limit */
};

void mp_id_set_init(struct mp_id_set *s);
void mp_id_set_free(struct mp_id_set *s);
/* Add id: 1 added, 0 when it was held already (the set is unchanged), or
 * MP_ENOMEM (unchanged too). */
int mp_id_set_add(struct mp_id_set *s, uint64_t id);
/* 1 when id is held, else 0. */
int mp_id_set_has(const struct mp_id_set *s, uint64_t id);

#endif
