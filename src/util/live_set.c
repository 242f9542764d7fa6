/*
 * util/live_set.c - per-process maps of live allocations.
 */
#include "util/live_set.h"

#include <stdlib.h>

void mp_live_sets_init(struct mp_live_sets *l)
{
	l->sets = NULL;
	l->n = 0;
}

void mp_live_sets_free(struct mp_live_sets *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		mp_intmap_free(&l->sets[i].map);
	free(l->sets);
	mp_live_sets_init(l);
}

struct mp_intmap *mp_live_sets_add(struct mp_live_sets *l, int64_t process_id)
{
	struct mp_live_set *sets;

	sets = realloc(l->sets, (size_t)(l->n + 1) * sizeof(*sets));
	if (!sets)
		return NULL;
	l->sets = sets;
	sets[l->n].process_id = process_id;
	mp_intmap_init(&sets[l->n].map);
	return &sets[l->n++].map;
}

int64_t mp_live_sets_count(const struct mp_live_sets *l)
{
	int64_t n = 0;
	int i;

	for (i = 0; i < l->n; i++)
		n += (int64_t)l->sets[i].map.n;
	return n;
}
