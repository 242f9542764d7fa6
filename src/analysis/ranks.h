/*
 * analysis/ranks.h - cross-rank figures of a multi-process trace (a merged
 * job): per rank its devices, peaks of live, requested and reserved bytes,
 * OOMs and what is live at the end; the spread of the peaks between ranks;
 * and the call sites whose bytes at each rank's own peak differ between
 * ranks (memprof-analyze(1), RANKS).  A memstate listener; memory grows with
 * the live segments and with sites x ranks, never with the trace length.
 *
 * A unit is a rank (the processes of the processes table with that rank),
 * or a process without a rank, alone, labelled by its pid.  A unit's bytes
 * are its own blocks and segments only, summed over its devices: two ranks
 * on one device number never count each other's blocks.
 */
#ifndef MP_ANALYSIS_RANKS_H
#define MP_ANALYSIS_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/memstate.h"
#include "util/densemap.h"
#include "util/intmap.h"
#include "util/strmap.h"

/* A unit is "above the median" when its peak live bytes exceed the median
 * of the units' peaks by more than this many percent. */
#define MP_RANKS_ABOVE_MEDIAN_PCT 5

/* A call site of the trace (the key of analysis/call_site.h). */
struct mp_rank_site {
	char *key, *name, *file; /* owned; name and file "" when unknown */
	int64_t line;            /* of the first stack seen; 0 when none */
	int64_t *lines;          /* every line folded in, ascending; owned */
	size_t n_lines;
};

struct mp_rank_site_entry; /* private */

struct mp_rank {
	int64_t rank;       /* -1: a process without a rank */
	int64_t local_rank; /* -1 when unknown */
	char *host;         /* of its first process that has one; NULL when unknown */
	int64_t *pids;      /* its processes' OS pids in table order (0 when unknown) */
	size_t n_pids;
	int32_t *devices; /* devices its events used, ascending */
	size_t n_devices;
	int64_t n_events;
	struct mp_mem_peak live_peak, requested_peak, reserved_peak;
	int has_segments; /* any segment-level event: reserved bytes are known */
	int64_t n_ooms;
	/* as of the last event (the end, after the run) */
	int64_t live_bytes, live_blocks, requested_bytes, reserved_bytes;
	/* private: call-site totals, now and at the live peak */
	struct mp_densemap site_index; /* site number -> entry number */
	struct mp_rank_site_entry *entries;
	size_t n_entries, cap_entries;
	size_t *dirty; /* entries changed since the last copy */
	size_t n_dirty;
	int64_t first_process; /* row id of its first process, for ordering */
};

/* A call site whose bytes at the units' own live peaks differ. */
struct mp_rank_site_diff {
	size_t site;                  /* index into mp_ranks.sites */
	const char *key;              /* its key (mp_ranks.sites owns it) */
	int64_t min_bytes, max_bytes; /* 0 for a unit where the site held nothing */
	size_t min_unit, max_unit;    /* the first unit (in unit order) at each */
	size_t n_present;             /* units where the site held bytes at the peak */
};

struct mp_ranks_spread {
	size_t worst, best; /* units with the highest and lowest peak live (first) */
	int64_t max_bytes, min_bytes;
	int64_t spread_bytes; /* max - min */
	double max_over_min;  /* 0 when min is 0 (undefined) */
	double max_over_mean; /* 0 when every peak is 0 */
	double median_bytes;  /* the middle peak; the mean of the two middle ones */
	size_t *above;        /* units above the median (MP_RANKS_ABOVE_MEDIAN_PCT) */
	size_t n_above;
};

struct mp_ranks {
	int32_t device; /* -1: every device; else only events and blocks of this device */
	/* after the run: units with at least one event, ranks ascending, then
	 * processes without a rank by pid */
	struct mp_rank *units;
	size_t n_units;
	size_t n_ranked;               /* units that are ranks */
	size_t n_hosts;                /* distinct known hosts */
	struct mp_ranks_spread spread; /* valid when n_units > 0 */
	struct mp_rank_site *sites;    /* every call site seen */
	size_t n_sites;
	struct mp_rank_site_diff *diffs; /* sites that differ, by max - min descending, key */
	size_t n_diffs;
	/* private */
	struct mp_densemap by_process; /* process row id -> unit number */
	struct mp_densemap by_stack;   /* stack id -> site number */
	struct mp_strmap site_keys;    /* site key -> site number */
	size_t cap_units, cap_sites;
	struct mp_live_sets segments; /* segment id -> device and size, per process */
	int64_t last_process;
	size_t last_unit;
};

/*
 * Set up the units from the processes table (the caller keeps procs only
 * for this call: strings are copied); device -1 for every device.  A
 * process id met later that is not in the table becomes a unit of its own.
 * Returns 0 or MP_ENOMEM (r is then still safe to free).
 */
int mp_ranks_init(struct mp_ranks *r, const struct memprof_process *procs, size_t n_procs,
                  int32_t device);
void mp_ranks_free(struct mp_ranks *r);
/* The listener; its on_end orders the units and computes the spread and
 * the sites that differ. */
struct mp_mem_listener mp_ranks_listener(struct mp_ranks *r);

/* What the listener's on_end does (analysis/ranks_summary.c): drop units
 * without an event, order the units, compute the spread and the sites that
 * differ.  Returns 0 or MP_ENOMEM. */
int mp_ranks_summarize(struct mp_ranks *r);

/* Private: free what a unit owns (ranks_summary.c drops empty units). */
void mp_rank_unit_free(struct mp_rank *u);

/* Bytes live from site at unit u's own live peak (0 when none). */
int64_t mp_rank_site_bytes(const struct mp_rank *u, size_t site);
/* Blocks of it then. */
int64_t mp_rank_site_blocks(const struct mp_rank *u, size_t site);

#endif
