/*
 * plugins/global2x/global2x.h - the global2x pool's state, shared by its
 * entry points (pool.c) and its per-key buffers (buffers.c): Megatron's
 * GlobalMemoryBuffer, one list of buffers per key, each grown to twice the
 * request when too small.  Requests it does not key go to an embedded
 * caching pool.  Not thread-safe, like every pool.
 */
#ifndef MEMPROF_PLUGIN_GLOBAL2X_H
#define MEMPROF_PLUGIN_GLOBAL2X_H

#include <stddef.h>
#include <stdint.h>

#include "../caching/embed.h"
#include "../lib/keymap.h"

/* The top bit of a handle marks a view of a global buffer (else: the fallback's). */
#define G2_HANDLE_MINE (1ull << 63)

enum g2_key_kind { G2_KEY_SITE, G2_KEY_TAG, G2_KEY_SIZE };

/* One buffer: a reservation, held until destroy or an out-of-memory retry. */
struct g2_buffer {
	struct memprof_region region;
	uint32_t key;         /* index into the pool's keys */
	uint32_t serial;      /* views served so far: names the holder in its handle */
	int held;             /* reserved (0 once released; slots are never reused) */
	int live;             /* a view of it is live */
	uint64_t view_bytes;  /* the live view's size */
	uint32_t left, right; /* freeset.c: links (slot + 1) while free and held */
};

/* The free buffers of one key (freeset.c); live ones are in no list. */
struct g2_key {
	uint32_t free_root; /* slot + 1, 0 when none is free */
	size_t n_free;
};

struct g2_stats {
	uint64_t n_reallocations, n_buffer_reserves, n_served, n_fallback;
	uint64_t n_without_key, n_outside_sites, n_released_for_oom, n_buffers_peak;
	uint64_t held_bytes_peak, view_waste_peak_bytes;
};

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct cb_pool *fallback;
	enum g2_key_kind key_kind;
	char *sites; /* glob over the key text */
	struct pl_keymap key_ids;
	struct g2_key *keys;
	size_t n_keys, cap_keys;
	struct g2_buffer *bufs; /* slots, never reused */
	size_t n_slots, cap_slots;
	size_t n_buffers;      /* held now */
	uint64_t held_bytes;   /* bytes of all held buffers */
	uint64_t viewed_bytes; /* bytes of all live views */
	struct g2_stats st;
};

/*
 * Serve need bytes (> 0) from key's buffers: the smallest free one that is
 * large enough, else a buffer of 2 x need that replaces the smallest free
 * one, else a further one.  *slot: the buffer.  0 or the host's error
 * (ENOMEM after releasing every free buffer and retrying once).
 */
int g2_serve(struct memprof_pool *p, uint32_t key, uint64_t need, uint32_t *slot);
/* freeset.c: the free held buffers of key k by (size, slot), O(log n) each. */
void g2_free_insert(struct memprof_pool *p, struct g2_key *k, uint32_t slot);
void g2_free_remove(struct memprof_pool *p, struct g2_key *k, uint32_t slot);
/* The first free buffer of at least need bytes (1 and *slot), or 0. */
int g2_free_ceil(struct memprof_pool *p, const struct g2_key *k, uint64_t need, uint32_t *slot);
/* The first free buffer (the smallest), or 0. */
int g2_free_min(struct memprof_pool *p, const struct g2_key *k, uint32_t *slot);
/* Empty the set, writing its k->n_free slots to out in order; how many. */
size_t g2_free_slots(struct memprof_pool *p, struct g2_key *k, uint32_t *out);
/* A view of slot ended: its buffer is free again. */
void g2_buffer_freed(struct memprof_pool *p, uint32_t slot);

/* Release the free buffers of every key; how many. */
size_t g2_release_free(struct memprof_pool *p);
/* Release every held buffer (destroy). */
void g2_release_all(struct memprof_pool *p);

#endif
