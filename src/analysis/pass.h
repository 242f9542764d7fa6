/*
 * analysis/pass.h - the analyses of 'memprof analyze' (memory state,
 * fragmentation, attribution, lifetime patterns, the timeline and the
 * cross-rank figures, the plan metrics) set up
 * together and fed by one pass of a reader, so analyze, report, diff and
 * check compute every figure the same way.  Owns the analyses' state, not
 * the reader: names and stacks in the results belong to the reader, which
 * must stay open until they are printed.  Not thread-safe.
 *
 * Use: mp_pass_run (the whole sequence, pass_run.c), read the results,
 * mp_pass_close.  By hand: mp_pass_init, then mp_pass_attach(p, r) (and any
 * further listener on p->ms or consumer on r, registered after it so it
 * sees the analyses' figures of the same event), then mp_pass_read, read
 * the results, mp_pass_free.
 *
 * struct mp_pass_opts holds the analyses' options, the one definition of
 * them: 'memprof analyze' parses into it, its report (report/analyze_out.h)
 * shows it as run.
 */
#ifndef MP_ANALYSIS_PASS_H
#define MP_ANALYSIS_PASS_H

#include <stdint.h>

#include "analysis/attribution.h"
#include "analysis/frag.h"
#include "analysis/lifetime.h"
#include "analysis/memstate.h"
#include "analysis/plan.h"
#include "analysis/ranks.h"
#include "analysis/timeline.h"
#include "store/reader.h"

struct mp_pass_opts {
	uint64_t granularity; /* address-space model granule, a power of two */
	unsigned kinds;       /* attribution kinds, 1 << enum mp_attr_kind */
	int at;               /* enum mp_attr_at */
	int64_t at_ts_ns;
	int at_relative; /* at_ts_ns counts from the first event */
	struct mp_lifetime_opts life;
	int64_t timeline_points; /* rows kept per device; 0: no timeline */
	/* cross-rank figures (analysis/ranks.h) when ranks is set: the
	 * processes table (read during mp_pass_init only) and the device */
	int ranks;
	const struct memprof_process *processes;
	size_t n_processes;
	int32_t ranks_device; /* -1: every device */
	/* the plan metrics (analysis/plan.h) when plan is set: steps from the
	 * phase step_name (NULL: found), figures of plan_device (-1: all) */
	int plan;
	const char *step_name;
	int32_t plan_device;
};

/* The defaults of 'memprof analyze': peak, stack/phase/stream/size, 2 MiB
 * granules, 1 ms churn window, idle share 0.5, no timeline. */
void mp_pass_opts_default(struct mp_pass_opts *o);

struct mp_pass {
	struct mp_pass_opts opts;
	struct mp_memstate ms;
	struct mp_frag frag;
	struct mp_attribution attr;
	struct mp_lifetime life;
	struct mp_timeline timeline; /* empty unless opts.timeline_points > 0 */
	struct mp_ranks ranks;       /* empty unless opts.ranks */
	struct mp_plan plan;         /* empty unless opts.plan */
};

/* Returns 0, MP_EINVAL for timeline_points out of range, or MP_ENOMEM (p
 * is then still safe to free).  p is large: allocate it, do not put it on a stack. */
int mp_pass_init(struct mp_pass *p, const struct mp_pass_opts *o);
/* Register the analyses on the memory state and the memory state on r.
 * Returns 0 or MP_EINVAL (too many listeners or consumers). */
int mp_pass_attach(struct mp_pass *p, struct mp_reader *r);
/* After the run: the moment attribution resolved (--at=+DURATION). */
int64_t mp_pass_at_ts_ns(const struct mp_pass *p);
void mp_pass_free(struct mp_pass *p);

/* Run the reader r through the pass of ms: 0, or an error naming the trace
 * at s (out of memory, sizes too large, the store's own). */
int mp_pass_read(struct mp_store *s, struct mp_reader *r, const struct mp_memstate *ms,
                 struct mp_error *err);

/*
 * One pass over the whole trace at s: a reader opened with stacks, a pass
 * set up with o (the trace's processes read for the cross-rank figures
 * when o->ranks is set without them), setup(ctx, pass) called after the
 * analyses are attached (NULL: none; it may add listeners; its negative
 * MP_E* is "cannot set up the analyses"), the reader run.  *pass and
 * *reader are set even on failure: free both with mp_pass_close, after
 * the results are printed (names and stacks are the reader's).
 */
typedef int (*mp_pass_setup_fn)(void *ctx, struct mp_pass *pass);
int mp_pass_run(struct mp_store *s, const struct mp_pass_opts *o, mp_pass_setup_fn setup,
                void *ctx, struct mp_pass **pass, struct mp_reader **reader, struct mp_error *err);
void mp_pass_close(struct mp_pass *pass, struct mp_reader *reader);

#endif
