/*
 * load/runs_load.h - the replay runs stored in a trace (store/results),
 * loaded as report/'s view of them (report/runs.h).
 */
#ifndef MP_LOAD_RUNS_LOAD_H
#define MP_LOAD_RUNS_LOAD_H

#include "report/runs.h"
#include "store/results.h"
#include "util/error.h"

struct mp_load_runs {
	struct mp_report_runs view; /* what report/ receives */
	struct mp_result_set set;   /* owns the strings */
	struct mp_report_run *runs;
	struct mp_report_metric *metrics;
};

/* Returns 0 or MP_E* with err set; free with mp_load_runs_free either way. */
int mp_load_runs(const char *path, struct mp_load_runs *out, struct mp_error *err);
void mp_load_runs_free(struct mp_load_runs *r);

#endif
