/*
 * plugins/sharded/sharded.h - the sharded pool's internals, shared by its
 * files and its unit test: options, iteration detection, recurring keys,
 * the shard table and the pool's state.  Only pool.c and slab.c talk to the
 * host while serving; plan.c logs what the offline analysis found.
 */
#ifndef MEMPROF_PLUGIN_SHARDED_H
#define MEMPROF_PLUGIN_SHARDED_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"
#include "../caching/embed.h"
#include "../lib/keymap.h"

#define SH_SHARD_ALIGN_BYTES 256          /* each rank's shard starts NCCL-aligned */
#define SH_MAX_WORLD_SIZE    4096         /* bounds the shard table (slots x ranks) */
#define SH_MAX_SLOT_BYTES    (1ull << 56) /* larger requests are never cached */
#define SH_MIN_MATCH_SHARE   0.9          /* a period must repeat this share of keys */
#define SH_N_CANDIDATES      16           /* most frequent gaps tried as periods */
#define SH_KEY_BYTES         1280         /* room for a site text and a size */
#define SH_MINE              (1ull << 63) /* a handle's top bit: a slot, not the fallback's */

struct sh_config {
	uint32_t world_size;
	char *iteration_phase; /* NULL: auto */
	double min_share;      /* of the iterations after the first a key must recur in */
};

enum sh_from { SH_FROM_NONE = 0, SH_FROM_PHASES = 1, SH_FROM_PERIOD = 2 };

/* Where the iterations are. */
struct sh_iters {
	int from;               /* enum sh_from */
	uint64_t n_iters;       /* full iterations */
	uint64_t period_allocs; /* SH_FROM_PERIOD: the period in allocations */
	double match_share;     /* SH_FROM_PERIOD: share of key[i] == key[i + period] */
	const char *phase;      /* SH_FROM_PHASES: the phase (valid during plan only) */
	/* Per allocation: 0 before iteration 1, 1..n_iters, -1 after the last full one. */
	int32_t *iter_of;
	int64_t second_start; /* index of iteration 2's first allocation; INT64_MAX: none */
	uint64_t best_period; /* the best candidate period, accepted or not (0: none) */
	double best_share;    /* its match share */
};

/* A recurring (site, size) key and its slots. */
struct sh_key {
	uint64_t size_bytes, shard_bytes, slot_bytes; /* slot = world_size x shard */
	uint32_t first_slot, n_slots;
	uint32_t n_free; /* top of its free-slot stack (free_stack[first_slot ...]) */
};

struct sh_slot {
	uint64_t offset_bytes; /* in the slab */
	uint64_t addr;         /* once the slab is held */
	uint32_t key;
	int live;
};

/* The shard table: built by plan, addressed when the slab is reserved. */
struct sh_table {
	uint32_t world_size;
	struct sh_key *keys;
	size_t n_keys;
	struct sh_slot *slots;
	size_t n_slots;
	uint64_t *shard_offsets; /* n_slots x world_size: rank r's shard at r x shard_bytes */
	uint32_t *free_stack;
	uint64_t slab_bytes, shard_bytes_per_rank;
};

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct sh_config cfg;
	struct cb_pool *fallback;
	struct sh_table tab;
	struct pl_keymap serve; /* site+size key -> index in tab.keys */
	int planned;
	int slab_state; /* 0: not yet, 1: held, -1: refused (everything to the fallback) */
	struct memprof_region slab;
	int64_t second_start;
	uint64_t n_iters, period_allocs;
	int iters_from;
	uint64_t n_avoided, n_fallback, n_slot_misses;
	uint64_t n_collectives, all_gather_ns, reduce_scatter_ns;
};

/* options.c */
extern const struct memprof_pool_option_spec sh_option_specs[];
int sh_parse_options(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                     size_t n_opts, struct sh_config *cfg);
void sh_config_free(struct sh_config *cfg);

/* iterations.c: a key's text, then iterations; key_ids.c: key ids (in order of first appearance).
 */
size_t sh_key_of(char *buf, const char *site, uint64_t size_bytes);
int sh_key_ids(const struct memprof_pool_lifetime *items, size_t n, uint32_t *key_of,
               size_t *n_keys);
int sh_iters_detect(const struct memprof_pool_lifetime *items, size_t n, const uint32_t *key_of,
                    const char *phase_opt, struct sh_iters *out);
void sh_iters_free(struct sh_iters *it);

/* period.c: the best candidate period of key_of[0..n) (0: none) and its match share. */
uint64_t sh_find_period(const uint32_t *key_of, size_t n, size_t n_keys, double *share);

/* recurring.c: n_slots_of_key[k] = slots key k needs when recurring, else 0. */
int sh_recurring(const struct memprof_pool_lifetime *items, size_t n, const uint32_t *key_of,
                 size_t n_keys, const struct sh_iters *it, double min_share,
                 uint32_t *n_slots_of_key);

/* table.c */
uint64_t sh_shard_bytes(uint64_t size_bytes, uint32_t world_size); /* 0: too large */
int sh_table_build(struct sh_table *t, uint32_t world_size, const uint64_t *sizes,
                   const uint32_t *n_slots, size_t n_keys);
void sh_table_address(struct sh_table *t, uint64_t base);
int64_t sh_table_take(struct sh_table *t, uint32_t key); /* a free slot, or -1 */
int sh_table_put(struct sh_table *t, uint64_t slot);     /* -1: not a live slot */
void sh_table_free(struct sh_table *t);

/* plan.c */
int sh_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n);

/* slab.c: reserve the slab and run the collectives over it, once. */
int sh_slab_create(struct memprof_pool *p, uint64_t stream);

/* For tests: the pool's shard table. */
const struct sh_table *sh_pool_table(const struct memprof_pool *p);

#endif
