/*
 * replay/live_ids.c - the live allocations of the replay input by (process,
 * id) (live_ids.h): a table of cells for the first process's counted-up ids,
 * hash maps for the rest.  Knows nothing of what the values mean.
 */
#include <stdlib.h>
#include <string.h>

#include "replay/live_ids.h"
#include "util/array.h"
#include "util/error.h"

void mp_live_ids_init(struct mp_live_ids *t)
{
	memset(t, 0, sizeof *t);
	mp_live_sets_init(&t->maps);
}

void mp_live_ids_free(struct mp_live_ids *t)
{
	free(t->cell);
	mp_live_sets_free(&t->maps);
	mp_live_ids_init(t);
}

/* The map of process, if it has one (none is made). */
static struct mp_intmap *map_of(const struct mp_live_ids *t, int64_t process)
{
	for (int i = t->maps.n - 1; i >= 0; i--)
		if (t->maps.sets[i].process_id == process)
			return &t->maps.sets[i].map;
	return NULL;
}

/*
 * The table's cell for (process, id), grown to it when the id is within
 * twice the allocations (and a little); NULL: the key is for the maps (or
 * the table could not grow: the maps take it then).
 */
static uint32_t *cell_for(struct mp_live_ids *t, int64_t process, uint64_t id, size_t n_allocs)
{
	size_t cap = t->n_cells;

	if (!t->has_process)
		t->process = process, t->has_process = 1;
	if (process != t->process)
		return NULL;
	if (id < t->n_cells)
		return &t->cell[id];
	if (id >= 2 * (uint64_t)n_allocs + 65536 ||
	    mp_array_reserve((void **)&t->cell, &cap, (size_t)id + 1, sizeof *t->cell) < 0)
		return NULL;
	memset(t->cell + t->n_cells, 0, (cap - t->n_cells) * sizeof *t->cell);
	t->n_cells = cap;
	return &t->cell[id];
}

int mp_live_ids_add(struct mp_live_ids *t, int64_t process, uint64_t id, uint32_t value,
                    size_t n_allocs, int *reused)
{
	uint32_t *cell = cell_for(t, process, id, n_allocs);
	struct mp_intmap *m;
	int added;

	if (cell) {
		m = map_of(t, process); /* an id that came before the table reached it */
		*reused = *cell != 0 || (m && m->n && mp_intmap_del(m, id));
		*cell = value + 1;
		return 0;
	}
	if (!(m = mp_live_sets_of(&t->maps, process)) ||
	    (added = mp_intmap_add(m, id, value, NULL)) < 0)
		return MP_ENOMEM;
	*reused = !added;
	if (!added)
		m->vals[mp_intmap_slot(m, id)] = value;
	return 0;
}

int mp_live_ids_find(struct mp_live_ids *t, int64_t process, uint64_t id, struct mp_live_ref *ref)
{
	struct mp_intmap *m;

	if (t->has_process && process == t->process && id < t->n_cells && t->cell[id]) {
		*ref = (struct mp_live_ref){.cell = &t->cell[id]};
		return 1;
	}
	if (!(m = map_of(t, process)) || m->n == 0 ||
	    (ref->slot = mp_intmap_slot(m, id)) == MP_INTMAP_NO_SLOT)
		return 0;
	ref->cell = NULL;
	ref->map = m;
	return 1;
}
