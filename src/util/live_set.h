/*
 * util/live_set.h - live allocations keyed by (process, id): allocation ids
 * are unique only within a process.  One hash map per process; processes
 * are few, so they are found by a linear search.
 */
#ifndef MP_UTIL_LIVE_SET_H
#define MP_UTIL_LIVE_SET_H

#include <stdint.h>

#include "util/intmap.h"

struct mp_live_sets {
	struct mp_live_set {
		int64_t process_id;
		struct mp_intmap map; /* id -> caller's value (e.g. size) */
	} * sets;
	int n;
};

void mp_live_sets_init(struct mp_live_sets *l);
void mp_live_sets_free(struct mp_live_sets *l);
/* A new, empty map for a process not in l; NULL when out of memory. */
struct mp_intmap *mp_live_sets_add(struct mp_live_sets *l, int64_t process_id);

/* The map of a process, created on first use; NULL when out of memory.
 * Inline: it runs for every allocation and free. */
static inline struct mp_intmap *mp_live_sets_of(struct mp_live_sets *l, int64_t process_id)
{
	int i;

	for (i = l->n - 1; i >= 0; i--)
		if (l->sets[i].process_id == process_id)
			return &l->sets[i].map;
	return mp_live_sets_add(l, process_id);
}
/* Entries over all processes. */
int64_t mp_live_sets_count(const struct mp_live_sets *l);

#endif
