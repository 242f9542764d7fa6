/*
 * replay/live_ids.h - the allocations live while the replay input is read,
 * keyed by (process, id), each with a value below 2^31 (input.c: its index
 * and a flag).  The first process's ids that stay within twice its
 * allocations (the common case: ids counted up) are cells of a table, 4
 * bytes an id; every other key is in a per-process hash map.  A key lives in
 * one of the two, and a lookup tries both, so where a key went never
 * depends on when.  Freed once the input is read.  Not thread-safe.
 */
#ifndef MP_REPLAY_LIVE_IDS_H
#define MP_REPLAY_LIVE_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "util/intmap.h"
#include "util/live_set.h"

#define MP_LIVE_IDS_MAX_VALUE ((uint32_t)INT32_MAX)

struct mp_live_ids {
	int has_process;
	int64_t process; /* whose ids the table holds */
	uint32_t *cell;  /* [id]: value + 1, 0: not live */
	size_t n_cells;
	struct mp_live_sets maps; /* the rest */
};

/* Where a live key lies, from mp_live_ids_find: valid until the next add or remove. */
struct mp_live_ref {
	uint32_t *cell;        /* the table's, or NULL */
	struct mp_intmap *map; /* else the map's */
	size_t slot;
};

void mp_live_ids_init(struct mp_live_ids *t);
void mp_live_ids_free(struct mp_live_ids *t);
/*
 * Key (process, id) live from now with value (at most MP_LIVE_IDS_MAX_VALUE);
 * n_allocs, the allocations so far, bounds the table.  *reused is 1 when the
 * key was live already (its value replaced).  0 or MP_ENOMEM.
 */
int mp_live_ids_add(struct mp_live_ids *t, int64_t process, uint64_t id, uint32_t value,
                    size_t n_allocs, int *reused);
/* 1 and *ref when (process, id) is live, else 0. */
int mp_live_ids_find(struct mp_live_ids *t, int64_t process, uint64_t id, struct mp_live_ref *ref);

static inline uint32_t mp_live_ids_value(const struct mp_live_ref *ref)
{
	return ref->cell ? *ref->cell - 1 : (uint32_t)ref->map->vals[ref->slot];
}

static inline void mp_live_ids_set(const struct mp_live_ref *ref, uint32_t value)
{
	if (ref->cell)
		*ref->cell = value + 1;
	else
		ref->map->vals[ref->slot] = value;
}

static inline void mp_live_ids_remove(const struct mp_live_ref *ref)
{
	if (ref->cell)
		*ref->cell = 0;
	else
		mp_intmap_del_slot(ref->map, ref->slot);
}

#endif
