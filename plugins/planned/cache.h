/*
 * plugins/planned/cache.h - one finished plan kept between two pools of the
 * same replay: memprof replays the start of a replay a second time (the
 * fragmentation pass) and says so with the host's plan_key, so the second
 * pool takes the first one's plan instead of planning again.  Process-wide,
 * not thread-safe (the host calls pools from one thread).
 */
#ifndef MEMPROF_PLUGIN_PLANNED_CACHE_H
#define MEMPROF_PLUGIN_PLANNED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* A hash of what a plan depends on in the items (index, size, steps, times). */
uint64_t planned_cache_hash(const struct memprof_pool_lifetime *items, size_t n);
/*
 * Move the kept plan into *out when it was made under key (nonzero), for
 * items of this hash and these options: 1, or 0 and *out untouched.
 */
int planned_cache_take(uint64_t key, uint64_t items_hash, const struct planned_config *cfg,
                       struct planned_plan *out);
/* Keep *pl (every slot made idle) in place of any kept plan; *pl is left empty. */
void planned_cache_put(uint64_t key, uint64_t items_hash, const struct planned_config *cfg,
                       struct planned_plan *pl);

#endif
