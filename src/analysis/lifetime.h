/*
 * analysis/lifetime.h - lifetime patterns of allocations (DESIGN.md
 * section 3, after DrGPUM and heaptrack): leaks, temporary churn, reuse
 * candidates and blocks idle until the end, each grouped by device and call
 * site with the bytes at stake.  A listener of the memory state
 * (analysis/memstate.h).  Memory grows with the live set and the distinct
 * (device, call site) pairs; of the (device, call site, size) groups at most
 * max_groups stay in memory (more only while more have live blocks): when
 * the table is full, the half of it that has no live block and was least
 * recently allocated from is summed into a temporary SQLite database
 * (store/group_spill.h, a bounded page cache), which the findings read
 * back at the end, so they are the same whatever the bound.  Not
 * thread-safe.
 *
 * Definitions (memprof-analyze(1), LIFETIME PATTERNS).  A block's lifetime
 * is max(0, free ts - alloc ts), free being the program's (on_free); a
 * preexisting block's alloc ts is the trace's first timestamp.  Preexisting
 * blocks are never leaks, churn or reuse (their allocation was not seen),
 * nor an allocation that ends a teardown; they can be idle.  Blocks of
 * size 0 count like the others, with 0 bytes.
 *
 *   leaks: blocks live at the end of the trace.  bytes: sum of granted
 *     sizes.  Preexisting blocks live at the end are only counted, in the
 *     totals' preexisting_live_at_end.
 *   churn: blocks the program frees with lifetime <= churn_window_ns, or
 *     before any other allocation on the same (process, device, stream).
 *     bytes: sum of their sizes (allocation traffic).
 *   reuse: allocations of one (device, call site, granted size) of which
 *     never two were live at once (in event order), at least two of them.
 *     bytes: (count - 1) * size, the allocation traffic one reused buffer
 *     would avoid.
 *   idle: blocks freed after the last allocation on their device, with
 *     lifetime >= idle_min_share * span (span: last ts - first ts of the
 *     trace, both from on_event; no idle finding when the span is 0).
 *     bytes: sum of their sizes.
 *
 * Byte sums saturate at INT64_MAX (traffic is not bounded like live bytes).
 */
#ifndef MP_ANALYSIS_LIFETIME_H
#define MP_ANALYSIS_LIFETIME_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/memstate.h"
#include "memprof/trace.h"
#include "util/intmap.h"

#define MP_LIFETIME_DEFAULT_CHURN_WINDOW_NS 1000000 /* 1 ms */
#define MP_LIFETIME_DEFAULT_IDLE_SHARE      0.5
/* (device, call site, size) groups kept in memory (64 bytes each) */
#define MP_LIFETIME_MAX_GROUPS 65536

enum mp_lifetime_kind {
	MP_LIFETIME_LEAK,
	MP_LIFETIME_CHURN,
	MP_LIFETIME_REUSE,
	MP_LIFETIME_IDLE,
};
#define MP_LIFETIME_N_KINDS 4

struct mp_lifetime_opts {
	int64_t churn_window_ns; /* >= 0; a block freed this soon or sooner is churn */
	double idle_min_share;   /* in [0, 1]: least lifetime of an idle block, share of the span */
	int no_timestamps; /* the trace has none (meta timestamps=none): nothing from durations */
	int64_t keep;      /* findings kept per device and kind, the first in the order of
	                      mp_lifetime_findings (0: all); the totals count every one */
	/* for tests: groups kept in memory (0: the environment's
	 * MEMPROF_LIFETIME_MAX_GROUPS when set to a number >= 1, else
	 * MP_LIFETIME_MAX_GROUPS), and the spill database's page limit, a full
	 * disk (0: MEMPROF_LIFETIME_SPILL_PAGES when set, else none) */
	size_t max_groups;
	int64_t spill_max_pages;
};

/* One finding: a (device, call site) group, or (device, call site, size) for reuse. */
struct mp_lifetime_finding {
	enum mp_lifetime_kind kind;
	int32_t device;
	int64_t stack_id;                  /* 0: no call stack */
	const struct memprof_stack *stack; /* reader-owned; NULL when none or not read */
	int64_t count;                     /* blocks (leak, churn, idle) or allocations (reuse) */
	int64_t bytes;                     /* the bytes at stake, as defined above */
	int64_t first_seq;                 /* an example: the seq of the earliest allocation
	                                      (or preexisting record) among its blocks */
	int64_t site_allocs;               /* all allocations from this device and site, any size,
	                                      preexisting blocks not included (every kind) */
	int64_t mean_lifetime_ns;          /* churn and idle: floor of the mean; else 0 */
	int64_t size_bytes;                /* reuse: the granted size; else 0 */
	int64_t calls_saved;               /* reuse: count - 1; else 0 */
};

struct mp_lifetime_total {
	int64_t count, bytes; /* sums over the findings of a kind (bytes saturate) */
	int64_t n_findings;   /* the findings summed, kept (opts.keep) or not */
};

struct mp_lifetime_totals {
	struct mp_lifetime_total kind[MP_LIFETIME_N_KINDS]; /* by enum mp_lifetime_kind */
	struct mp_lifetime_total preexisting_live_at_end;
};

struct mp_lifetime_site;
struct mp_lifetime_group;
struct mp_lifetime_dev;
struct mp_group_spill;
struct mp_group_rec;

struct mp_lifetime {
	struct mp_lifetime_opts opts;
	const struct mp_memstate *ms;
	int error; /* the first MP_E* a callback returned */
	int ended; /* on_end ran: the results below are filled */
	int have_ts;
	int64_t first_ts_ns, last_ts_ns;
	/* private.  The hot path touches one group per event: (device, site,
	 * size), found through an open-addressing table of slots (1 + group
	 * index, and hash bits), or on a free through the block's tag.
	 * Sites (device, site) are made with their first group and sum the
	 * churn as it happens. */
	struct mp_lifetime_group **group_chunks;
	size_t n_groups, n_chunks, cap_chunks;
	size_t max_groups; /* doubled when a quarter of them cannot be evicted */
	uint64_t *group_slots;
	size_t cap_slots; /* power of two, or 0 */
	/* evicted groups: summed in spill (NULL until the first eviction) */
	struct mp_group_spill *spill;
	int64_t n_spilled; /* records written to spill */
	struct mp_group_rec *evicted;
	int64_t *idle_seqs;
	size_t cap_evicted, cap_idle;
	char error_msg[640]; /* why the spill failed ("" otherwise) */
	struct mp_lifetime_site *sites;
	size_t n_sites, cap_sites;
	struct mp_intmap site_map; /* hash -> 1 + the first site of its chain */
	struct mp_lifetime_dev *devs;
	size_t n_devs, cap_devs, dev_hint;
	struct mp_intmap dev_map;              /* device -> index */
	uint32_t slot_dev[MP_MEM_MAX_DEVICES]; /* memstate device slot -> 1 + index, 0: none */
	/* results, after on_end */
	struct mp_lifetime_finding *findings[MP_LIFETIME_N_KINDS];
	size_t n_findings[MP_LIFETIME_N_KINDS], cap_findings[MP_LIFETIME_N_KINDS];
	struct mp_lifetime_totals totals;
};

/*
 * o NULL: the defaults.  ms: the memory state the listener will be
 * registered on (for mp_memstate_stream_allocs and, at the end,
 * mp_memstate_foreach_live).  Returns 0, or MP_EINVAL for a negative
 * window, keep or page limit, a share outside [0, 1] or max_groups above
 * UINT32_MAX / 4 (l is then still safe to free).
 */
int mp_lifetime_init(struct mp_lifetime *l, const struct mp_lifetime_opts *o,
                     const struct mp_memstate *ms);
void mp_lifetime_free(struct mp_lifetime *l);
/* The listener to register with mp_memstate_listen.  Its callbacks return
 * 0 or MP_ENOMEM, or MP_EIO or MP_EFULL when the spill database fails
 * (the reason in mp_lifetime_error). */
struct mp_mem_listener mp_lifetime_listener(struct mp_lifetime *l);
/* Why the spill database failed, a message for the user; NULL when it did not. */
const char *mp_lifetime_error(const struct mp_lifetime *l);

/*
 * After the run (on_end): the findings of a kind, sorted by bytes
 * descending, then count descending, then stack_id, device and size_bytes
 * ascending; all devices (filter on .device), at most opts.keep of each.
 * Valid until mp_lifetime_free.  Before on_end: NULL and *n = 0.
 */
const struct mp_lifetime_finding *mp_lifetime_findings(const struct mp_lifetime *l,
                                                       enum mp_lifetime_kind k, size_t *n);
/* Totals of all devices together. */
void mp_lifetime_totals(const struct mp_lifetime *l, struct mp_lifetime_totals *out);
/* Totals of one device (zeros when it has none). */
void mp_lifetime_device_totals(const struct mp_lifetime *l, int32_t device,
                               struct mp_lifetime_totals *out);
/* "leaks", "churn", "reuse", "idle" (the JSON names). */
const char *mp_lifetime_kind_name(enum mp_lifetime_kind k);

#endif
