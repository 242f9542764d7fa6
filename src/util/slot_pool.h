/*
 * util/slot_pool.h - fixed-size records in one growing array, addressed by
 * slot number, with freed slots reused first.  For tables of live things
 * (blocks, segments) whose slot numbers are kept in an intmap.  Pointers
 * into the pool are valid until the next mp_slot_pool_take.  Not
 * thread-safe.
 */
#ifndef MP_UTIL_SLOT_POOL_H
#define MP_UTIL_SLOT_POOL_H

#include <stddef.h>

struct mp_slot_pool {
	unsigned char *items;
	size_t item_size; /* at least sizeof(size_t): a free slot holds the next free one */
	size_t n, cap;
	size_t free_head; /* 1 + the first free slot, 0 for none */
};

/* item_size is the size of one record (at least sizeof(size_t)). */
void mp_slot_pool_init(struct mp_slot_pool *p, size_t item_size);
void mp_slot_pool_free(struct mp_slot_pool *p);
/* A zeroed record and its slot in *slot, or NULL when out of memory. */
void *mp_slot_pool_take(struct mp_slot_pool *p, size_t *slot);
/* Give a slot back. */
void mp_slot_pool_give(struct mp_slot_pool *p, size_t slot);
/* The record in a slot that was taken. */
void *mp_slot_pool_at(const struct mp_slot_pool *p, size_t slot);

#endif
