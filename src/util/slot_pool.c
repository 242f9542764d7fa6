/*
 * util/slot_pool.c - the array behind struct mp_slot_pool: grows by
 * doubling, and chains free slots through their first bytes.
 */
#include "util/slot_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void mp_slot_pool_init(struct mp_slot_pool *p, size_t item_size)
{
	memset(p, 0, sizeof(*p));
	p->item_size = item_size < sizeof(size_t) ? sizeof(size_t) : item_size;
}

void mp_slot_pool_free(struct mp_slot_pool *p)
{
	free(p->items);
	p->items = NULL;
	p->n = p->cap = p->free_head = 0;
}

void *mp_slot_pool_at(const struct mp_slot_pool *p, size_t slot)
{
	return p->items + slot * p->item_size;
}

void *mp_slot_pool_take(struct mp_slot_pool *p, size_t *slot)
{
	void *item;

	if (p->free_head) {
		*slot = p->free_head - 1;
		memcpy(&p->free_head, mp_slot_pool_at(p, *slot), sizeof(size_t));
	} else {
		if (p->n == p->cap) {
			size_t c = p->cap ? 2 * p->cap : 1024;
			unsigned char *a;

			if (c > SIZE_MAX / p->item_size ||
			    !(a = realloc(p->items, c * p->item_size)))
				return NULL;
			p->items = a;
			p->cap = c;
		}
		*slot = p->n++;
	}
	item = mp_slot_pool_at(p, *slot);
	memset(item, 0, p->item_size);
	return item;
}

void mp_slot_pool_give(struct mp_slot_pool *p, size_t slot)
{
	memcpy(mp_slot_pool_at(p, slot), &p->free_head, sizeof(size_t));
	p->free_head = slot + 1;
}
