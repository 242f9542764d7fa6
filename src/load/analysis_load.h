/*
 * load/analysis_load.h - report/'s struct mp_analysis filled from an open
 * trace and the pass run over it: what 'memprof analyze' and 'memprof
 * report' both hand their writers; analyze's whole reading of a trace.
 */
#ifndef MP_LOAD_ANALYSIS_LOAD_H
#define MP_LOAD_ANALYSIS_LOAD_H

#include "analysis/numa.h"
#include "analysis/pass.h"
#include "report/analyze_out.h"
#include "store/reader.h"
#include "store/store.h"

/* a's trace facts from s (path, truncated, lossy, modelled granted blocks;
 * source and its window as the meta values source and window, which the
 * caller keeps) and the pass's options as run and results (memory state,
 * fragmentation, attribution, lifetimes).  Ranks, plan, NUMA, device, top
 * and stack depth are the caller's. */
void mp_load_analysis(struct mp_analysis *a, struct mp_store *s, const struct mp_pass *p,
                      const char *source, const char *window);

/* 'memprof analyze''s reading of one trace, owned here. */
struct mp_analyze_load {
	struct mp_pass *pass;
	struct mp_reader *r;
	struct mp_numa numa;
	char *source, *window;
};
/* Run the pass of a's options over s into l, with every figure analyze
 * shows: the ranks and the plan of a->device (steps begun by phase
 * step_name, NULL: found), the timeline when timeline_points > 0.  l is
 * set even on failure: free it with mp_analyze_load_free.  0 or MP_E*
 * with err set. */
int mp_analyze_load_pass(struct mp_store *s, const struct mp_analysis *a, int64_t timeline_points,
                         const char *step_name, struct mp_analyze_load *l, struct mp_error *err);
/* Then a filled from l's pass (mp_load_analysis), with its ranks, plan and
 * the NUMA placement of device's host buffers.  0 or MP_E* with err set. */
int mp_analyze_load_fill(struct mp_store *s, struct mp_analysis *a, struct mp_analyze_load *l,
                         struct mp_error *err);
void mp_analyze_load_free(struct mp_analyze_load *l);

#endif
