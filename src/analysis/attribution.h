/*
 * analysis/attribution.h - who holds memory at one moment: the live blocks
 * of each device grouped by call stack, phase, stream, size class and API,
 * with counts, granted and requested bytes.  The moment is each device's
 * live peak, its first OOM, or a time.  A memstate listener that keeps
 * running totals per group and copies only the groups changed since the
 * last copy when the moment moves (a new peak), so the work per event is
 * O(1) amortized and memory grows with the number of distinct groups.
 */
#ifndef MP_ANALYSIS_ATTRIBUTION_H
#define MP_ANALYSIS_ATTRIBUTION_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/memstate.h"
#include "util/intmap.h"

enum mp_attr_kind {
	MP_ATTR_STACK,
	MP_ATTR_PHASE,
	MP_ATTR_STREAM,
	MP_ATTR_SIZE,
	MP_ATTR_API,
	MP_ATTR_KINDS
};

enum mp_attr_at {
	MP_ATTR_AT_PEAK, /* each device's live peak */
	MP_ATTR_AT_OOM,  /* each device's first OOM (the failed request not counted) */
	MP_ATTR_AT_TIME, /* after the last event whose timestamp is at most at_ts_ns */
};

/* One group at the chosen moment. */
struct mp_attr_group {
	int64_t key; /* stack id, phase id, stream, size class (see below), api id */
	int64_t count;
	int64_t bytes, requested_bytes;
	const struct memprof_stack *stack; /* stack groups; reader-owned, NULL when none */
	const char *name;                  /* phase and api groups; NULL when none */
};

/* Size classes: class k > 0 holds sizes in [2^(k-1), 2^k); class 0 holds 0. */
int mp_attr_size_class(int64_t size_bytes);

struct mp_attr_table; /* private */

struct mp_attr_device {
	int32_t device;
	int taken;          /* the moment happened on this device */
	int64_t ts_ns, seq; /* of the moment */
	int64_t live_bytes, live_blocks;
	struct mp_attr_table *tables[MP_ATTR_KINDS]; /* NULL for kinds not asked */
};

struct mp_attribution {
	unsigned kinds; /* 1 << enum mp_attr_kind */
	int at;         /* enum mp_attr_at */
	int64_t at_ts_ns;
	int at_relative; /* at_ts_ns counts from the first event; resolved at it */
	const struct mp_memstate *ms;
	struct mp_attr_device devices[MP_MEM_MAX_DEVICES]; /* by memstate device slot */
	int n_devices;
	int n_ready; /* slots below it have their tables */
};

void mp_attribution_init(struct mp_attribution *a, const struct mp_memstate *ms, unsigned kinds,
                         int at, int64_t at_ts_ns);
void mp_attribution_free(struct mp_attribution *a);
struct mp_mem_listener mp_attribution_listener(struct mp_attribution *a);

const struct mp_attr_device *mp_attribution_device(const struct mp_attribution *a, int32_t device);
/*
 * The groups of one kind at the moment, largest first (bytes, then count,
 * then key), groups with no block left out: a malloc'd array the caller
 * frees, NULL with *n = 0 when there are none or memory ran out (*n = -1
 * then).
 */
struct mp_attr_group *mp_attribution_groups(const struct mp_attr_device *d, int kind, ptrdiff_t *n);

#endif
