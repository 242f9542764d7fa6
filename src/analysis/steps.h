/*
 * analysis/steps.h - where the training steps of a trace begin, found in
 * one pass: from the begins of a phase named by the user (--step=NAME),
 * else from phase names that look like steps, else from the period of the
 * allocation sequence; the result says which method found them and why
 * (the rules are in memprof-analyze(1), PLAN METRICS).  Fed records in
 * order; holds no memory state of its own.  Not thread-safe.
 *
 * Memory is bounded: MP_STEPS_MAX_CANDIDATES phase names, MP_STEPS_MAX
 * boundaries each, MP_STEPS_PREFIX_ALLOCS allocations for the period.
 *
 * Use: mp_steps_init, then mp_steps_feed for every record (it says when the
 * caller should keep the memory state before that record, because the record
 * may turn out to start or end a step), mp_steps_finish after the last, read
 * s->result, mp_steps_free.
 */
#ifndef MP_ANALYSIS_STEPS_H
#define MP_ANALYSIS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/trace.h"

#define MP_STEPS_MAX_CANDIDATES 16                 /* step-like phase names followed */
#define MP_STEPS_MAX            1048576            /* step boundaries kept per name */
#define MP_STEPS_PREFIX_ALLOCS  32768              /* allocations searched for a period */
#define MP_STEPS_MAX_WORK       (INT64_C(1) << 27) /* comparisons in the search */
#define MP_STEPS_MAX_THREADS    256                /* (process, thread) nesting depths kept */

enum mp_steps_method {
	MP_STEPS_NONE,
	MP_STEPS_PHASE,      /* --step=NAME */
	MP_STEPS_PHASE_NAME, /* a phase name that looks like a step */
	MP_STEPS_PERIOD,     /* the period of the allocation sequence */
};

/* A place in the trace: a step starts at the record (the memory state before it). */
struct mp_step_mark {
	int64_t seq, ts_ns;
};

/* A phase name followed as a possible step (its trailing number dropped). */
struct mp_steps_candidate {
	char *key;                 /* the name, a trailing decimal number dropped */
	char *first_name;          /* the name as first seen */
	int numbered;              /* names differed in their trailing number */
	int64_t process_id;        /* steps are the begins in this process (its first) */
	int64_t n_begins;          /* in that process */
	int64_t n_top_level;       /* of those, begun with no other phase open on the thread */
	int64_t n_other_processes; /* begins in other processes, not steps */
	struct mp_step_mark *begins;
	size_t n_marks, cap_marks;
	int64_t n_dropped;       /* begins past MP_STEPS_MAX */
	struct mp_step_mark end; /* the end of the phase begun last; seq 0: none */
};

/* The period search over the allocations of one process and device. */
struct mp_steps_period {
	int found;
	int done; /* searched (the prefix filled, or the trace ended) */
	int64_t process_id;
	int32_t device;
	int64_t n_allocs;     /* allocations of that process and device seen */
	int64_t period;       /* allocations per step */
	int64_t start_index;  /* the periodic part begins at this allocation (from 0) */
	int64_t anchor_index; /* the anchor's first allocation in the periodic part */
	int64_t anchor_size_bytes, anchor_stack_id;
	int64_t n_searched; /* allocations searched (the prefix) */
	int64_t work;       /* comparisons made */
	int work_exhausted;
	/* the last period rejected because the live bytes at its repeats changed by over a
	 * quarter of what one repeat allocates (repeats inside one step, not steps); 0: none.
	 * drift: the change per repeat on average; volume: the bytes one repeat allocates */
	int64_t rejected_period, rejected_repeats, rejected_drift_bytes, rejected_volume_bytes;
	int64_t best_anchor_index; /* private */
	/* private: the prefix */
	int64_t *sizes, *stacks, *live, *seqs, *ts;
	size_t n, cap;
	struct mp_step_mark *marks; /* anchor allocations from the periodic part on */
	size_t n_marks, cap_marks;
	int64_t n_dropped;
};

struct mp_steps_result {
	int method;       /* enum mp_steps_method */
	const char *name; /* display name (phase methods), owned by s; NULL otherwise */
	char why[768];    /* why this method, or why none */
	const struct mp_step_mark *starts; /* the steps' first records, in order */
	size_t n_steps;
	int64_t n_dropped;            /* steps past MP_STEPS_MAX, not listed */
	struct mp_step_mark last_end; /* the last step ends before it; seq 0: at the trace's end */
};

struct mp_threads_depth {
	int64_t process_id, thread;
	int depth;
};

struct mp_steps {
	char *step_name; /* --step, or NULL */
	struct mp_steps_candidate cands[MP_STEPS_MAX_CANDIDATES];
	int n_cands;
	int64_t n_cands_dropped;    /* step-like names past MP_STEPS_MAX_CANDIDATES */
	int64_t n_phase_names_seen; /* begins of any phase */
	struct mp_steps_period period;
	struct mp_steps_result result;
	size_t prefix_cap; /* MP_STEPS_PREFIX_ALLOCS; smaller in tests */
	/* private: nesting per (process, thread) */
	struct mp_threads_depth depths[MP_STEPS_MAX_THREADS];
	int n_depths;
};

/* step_name: --step=NAME or NULL; prefix_allocs: 0 for MP_STEPS_PREFIX_ALLOCS. */
int mp_steps_init(struct mp_steps *s, const char *step_name, size_t prefix_allocs);
void mp_steps_free(struct mp_steps *s);
/*
 * One record, in trace order.  live_before_bytes: live bytes of the record's
 * device before it (the anchor is chosen where they are least).  Returns 1
 * when the caller should keep the memory state before this record (keyed by
 * its seq), 0 when not, or MP_ENOMEM.
 */
int mp_steps_feed(struct mp_steps *s, const struct memprof_record *rec, int64_t live_before_bytes);
/* Whether a record kept on feed's word may still be a step's start or end. */
int mp_steps_needed(const struct mp_steps *s, int64_t seq);
/* After the last record: decide (fills s->result).  0 or MP_ENOMEM. */
int mp_steps_finish(struct mp_steps *s);
const char *mp_steps_method_name(int method);
/* Whether a phase name looks like a step: "step" or "iter" (any case)
 * beginning a word (see memprof-analyze(1)). */
int mp_steps_name_like(const char *name);

/* analysis/steps_period.c, for steps.c and the tests */
int mp_steps_period_add(struct mp_steps_period *p, size_t cap, const struct memprof_event *ev,
                        int64_t live_before_bytes);
/* Search the prefix for the period (sets found, done). */
int mp_steps_period_search(struct mp_steps_period *p);
/* Whether ev is a later allocation of the anchor (call after the search). */
int mp_steps_period_is_anchor(const struct mp_steps_period *p, const struct memprof_event *ev);
int mp_steps_period_add_mark(struct mp_steps_period *p, const struct memprof_event *ev);
void mp_steps_period_free(struct mp_steps_period *p);

#endif
