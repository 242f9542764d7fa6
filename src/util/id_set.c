/*
 * util/id_set.c - the duplicate-check set of id_set.h: a growing bitmap for
 * small ids, util/intmap for the others.  Never shrinks.
 */
#include "util/id_set.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define MIN_LIMIT     ((uint64_t)1 << 16) /* bits the bitmap may always have */
#define BITS_PER_HELD 64                  /* and at most this many an id held, beyond */

void mp_id_set_init(struct mp_id_set *s)
{
	s->bits = NULL;
	s->limit = 0;
	s->n = 0;
	mp_intmap_init(&s->rest);
}

void mp_id_set_free(struct mp_id_set *s)
{
	free(s->bits);
	mp_intmap_free(&s->rest);
	mp_id_set_init(s);
}

/* Make the bitmap hold id if the rules allow it: 1 it does, 0 not, or MP_ENOMEM. */
static int grow_to(struct mp_id_set *s, uint64_t id)
{
	uint64_t limit = s->limit ? s->limit : 64, *bits;

	if (s->rest.n)
		return 0; /* ids at or above the limit are in rest: the limit stays */
	while (limit <= id && limit <= MIN_LIMIT + (uint64_t)BITS_PER_HELD * (s->n + 1))
		limit *= 2;
	if (limit <= id || limit > MIN_LIMIT + (uint64_t)BITS_PER_HELD * (s->n + 1))
		return 0;
	bits = realloc(s->bits, (size_t)(limit / 64) * sizeof(*bits));
	if (!bits)
		return MP_ENOMEM;
	memset(bits + s->limit / 64, 0, (size_t)((limit - s->limit) / 64) * sizeof(*bits));
	s->bits = bits;
	s->limit = limit;
	return 1;
}

int mp_id_set_add(struct mp_id_set *s, uint64_t id)
{
	int rc;

	if (id >= s->limit && (rc = grow_to(s, id)) <= 0) {
		if (rc < 0 || (rc = mp_intmap_add(&s->rest, id, 0, NULL)) < 0)
			return MP_ENOMEM;
		s->n += (size_t)rc;
		return rc;
	}
	if (s->bits[id / 64] & ((uint64_t)1 << (id % 64)))
		return 0;
	s->bits[id / 64] |= (uint64_t)1 << (id % 64);
	s->n++;
	return 1;
}

int mp_id_set_has(const struct mp_id_set *s, uint64_t id)
{
	if (id < s->limit)
		return (s->bits[id / 64] >> (id % 64)) & 1;
	return s->rest.n && mp_intmap_get(&s->rest, id, NULL);
}
