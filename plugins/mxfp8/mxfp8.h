/*
 * plugins/mxfp8/mxfp8.h - the mxfp8 pool's state, shared by its entry
 * points (pool.c) and its pairing rule and plan (rule.c): a parameter
 * allocation and its gradient allocation share one buffer of max(param,
 * grad) bytes, as Megatron reuses the gradient buffer for the MXFP8
 * parameter all-gather.  Everything else goes to an embedded caching pool.
 */
#ifndef MEMPROF_PLUGIN_MXFP8_H
#define MEMPROF_PLUGIN_MXFP8_H

#include <stddef.h>
#include <stdint.h>

#include "../caching/embed.h"
#include "../lib/keymap.h"

/* Handle: MX_HANDLE_MINE | side << 62 | serial << 32 | pair (else: the fallback's). */
#define MX_HANDLE_MINE (1ull << 63)

enum mx_side { MX_PARAM = 0, MX_GRAD = 1, MX_NONE = -1 };
enum mx_on { MX_ON_TAG, MX_ON_SITE, MX_ON_AUTO };

/* The allocation of one side live in a pair's buffer. */
struct mx_holder {
	int live;
	uint32_t serial; /* names it in its handle */
	uint64_t token;  /* the host's block token */
	uint64_t bytes;  /* its size */
};

struct mx_pair {
	uint64_t side_bytes[2]; /* the largest allocation of each side in the plan */
	uint64_t buffer_bytes;  /* max of the two */
	struct memprof_region region;
	int reserved;
	int content; /* the side whose bytes the buffer holds last, or MX_NONE */
	int shared;  /* both sides were live in it at once */
	struct mx_holder live[2];
};

struct mx_stats {
	uint64_t n_unpaired, n_fallback, n_same_side, n_no_shares;
	uint64_t n_shared[2], n_served[2], n_zeroings, bytes_zeroed;
	uint64_t n_reserves, n_released_for_oom;
};

struct memprof_pool {
	const struct memprof_pool_host *host;
	struct cb_pool *fallback;
	char *pattern[2]; /* PARAM_GLOB and GRAD_GLOB, unescaped */
	char *rule;       /* the pair= text as given, for messages */
	enum mx_on on;
	int planned, on_site; /* on_site: the plan paired call sites */
	int warned;
	struct pl_keymap by_index; /* allocation index -> pair << 1 | side */
	struct mx_pair *pairs;
	size_t n_pairs;
	struct mx_stats st;
};

/* Parse pair=PARAM_GLOB:GRAD_GLOB ('\:' is a ':' in a pattern); 0 or -1. */
int mx_parse_rule(struct memprof_pool *p, const char *text);
/* The plan callback: find the pairs among items, by the rule. */
int mx_plan(struct memprof_pool *p, const struct memprof_pool_lifetime *items, size_t n);
/* The side and pair of allocation index: MX_NONE when it is not in a pair. */
int mx_lookup(const struct memprof_pool *p, int64_t index, uint32_t *pair);

#endif
