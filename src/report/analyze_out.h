/*
 * report/analyze_out.h - 'memprof analyze' output: peaks, fragmentation, OOMs,
 * attribution and lifetime findings per device, and the cross-rank figures
 * of a multi-process trace, as text for people or as JSON for programs
 * (layout in memprof-analyze(1), versioned by MP_ANALYZE_JSON_VERSION).
 * Receives plain results, never a database handle.
 */
#ifndef MP_REPORT_ANALYZE_OUT_H
#define MP_REPORT_ANALYZE_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/attribution.h"
#include "analysis/frag.h"
#include "analysis/lifetime.h"
#include "analysis/memstate.h"
#include "analysis/numa.h"
#include "analysis/pass.h"
#include "analysis/plan.h"
#include "analysis/ranks.h"

#define MP_ANALYZE_JSON_VERSION 2 /* bump when the JSON layout changes incompatibly */

struct mp_analysis {
	const char *path;
	const char *source; /* meta 'source', may be NULL */
	int truncated, lossy;
	/* NULL: the trace covers the program's whole life; else why it is a window
	 * (util/trace_window.h): what is live at its end is then not called a leak */
	const char *window;
	/* allocations whose granted size the importer modelled (meta modelled_granted_blocks:
	 * a snapshot's blocks freed inside its window); 0: every size is as recorded */
	int64_t modelled_granted_blocks;
	/* the trace has no timestamps (meta timestamps=none: a snapshot without time_us):
	 * times are unknown, only event order is known, nothing is computed from durations */
	int no_timestamps;
	/* options as run: the analyses' (kinds, at, at_ts_ns resolved, granularity,
	 * life.churn_window_ns, life.idle_min_share), then the report's own */
	struct mp_pass_opts opts;
	int device; /* -1: every device */
	int top;
	int stack_depth; /* frames shown per call stack (--stack-depth); 0: the default, 3 */
	/* results */
	const struct mp_memstate *ms;
	const struct mp_frag *frag;
	const struct mp_attribution *attr;
	const struct mp_lifetime *life;
	const struct mp_ranks *ranks; /* NULL when not computed */
	const struct mp_plan *plan;   /* NULL when not computed */
	const struct mp_numa *numa;   /* NULL when not computed */
};

/* The attribution kinds' names, indexed by enum mp_attr_kind. */
extern const char *const mp_attr_kind_names[MP_ATTR_KINDS];
/* --by's text ("stack,phase", "all") as 1 << enum mp_attr_kind bits: 0, or
 * -1 for an unknown or empty list (report/analyze_options.c). */
int mp_analyze_parse_by(const char *text, unsigned *kinds);
/* --at's text into o->at, at_ts_ns and at_relative: "peak", "oom", a
 * timestamp in ns, or +DURATION from the first event.  0; -2 for a
 * duration without its unit, -1 otherwise (o untouched). */
int mp_analyze_parse_at(const char *text, struct mp_pass_opts *o);

/*
 * Sentences about what could not be computed or needs care (frees without
 * an allocation, events out of order, lossy or truncated traces, devices
 * without addresses, ...).  Calls fn once per note.
 */
void mp_analyze_notes(const struct mp_analysis *a, void (*fn)(void *ctx, const char *note),
                      void *ctx);

/* Size class k of analysis/attribution as text ("1 MiB..2 MiB" for
 * [1 MiB, 2 MiB), "0 B" for class 0), and its least and greatest size. */
char *mp_size_class_text(char *buf, size_t n, int k);
int64_t mp_size_class_min(int64_t k);
int64_t mp_size_class_max(int64_t k);

/* Bytes as text ("1.50 MiB"), or "unknown" for a negative figure. */
const char *mp_analyze_bytes(char *buf, size_t n, int64_t v);
/* The JSON name of a lifetime kind: "leaks", "churn", ...; in a window
 * (a->window) the leak kind is "live_at_window_end": never called leaks. */
const char *mp_analyze_lifetime_key(const struct mp_analysis *a, int kind);
/* "+1.23 s": ts_ns as the time since the trace's first event. */
const char *mp_analyze_at_time(char *buf, size_t n, const struct mp_analysis *a, int64_t ts_ns);
/* The length of a frame's name without its C++ argument list: the first
 * '(' outside template brackets, "(anonymous namespace)" kept. */
size_t mp_frame_name_len(const char *name);
/* That name, cut to at most 72 bytes ("..." added when cut elsewhere than
 * at the argument list); returns what snprintf returns. */
int mp_frame_short_name(char *buf, size_t n, const char *name);
/* "forward (transformer.py:54) < train (train.py:88)": the call site
 * (util/stack_text.h) and the source frames toward the caller, interpreter,
 * runtime and dispatch frames left out, depth frames at most, joined by
 * sep, file names without directories.  "" for an empty stack. */
const char *mp_stack_summary(char *buf, size_t n, const struct memprof_stack *s, int depth,
                             const char *sep);

/* Indexes into a->ms->devices of the devices to print (--device, or all),
 * in ascending ordinal; returns how many. */
int mp_analyze_device_order(const struct mp_analysis *a, int order[MP_MEM_MAX_DEVICES]);

void mp_analyze_print_text(FILE *out, const struct mp_analysis *a);

/* The ranks section (report/analyze_ranks.c): shown when a->ranks has two
 * or more units (ranks, or processes without a rank). */
int mp_analyze_shows_ranks(const struct mp_analysis *a);
/* "rank 3", or "pid 4242" for a process without a rank.  Returns buf. */
const char *mp_rank_label(char *buf, size_t n, const struct mp_rank *u);
void mp_analyze_print_ranks_text(FILE *out, const struct mp_analysis *a);
/* The "ranks" object, or JSON null when the section is not shown. */
struct cJSON *mp_analyze_ranks_json(const struct mp_analysis *a);
/* A peak as JSON: {"bytes", "ts_ns", "seq"} (analyze_json.c). */
struct cJSON *mp_analyze_peak_json(const struct mp_mem_peak *p);
/* The plan metrics (report/analyze_plan.c, analyze_plan_json.c): nothing,
 * or JSON null, when a->plan is NULL.  Its steps and OOMs are lazy arrays
 * of lz (report/json_lazy.h): write the tree with mp_json_lazy_write. */
void mp_analyze_print_plan_text(FILE *out, const struct mp_analysis *a);
struct mp_json_lazy;
struct cJSON *mp_analyze_plan_json(const struct mp_analysis *a, struct mp_json_lazy *lz);
/* The NUMA section (report/analyze_numa.c): nothing, or JSON null, without a->numa. */
void mp_analyze_print_numa_text(FILE *out, const struct mp_analysis *a);
struct cJSON *mp_analyze_numa_json(const struct mp_analysis *a);
/* Returns 0, or -1 when out of memory. */
int mp_analyze_print_json(FILE *out, const struct mp_analysis *a);

#endif
