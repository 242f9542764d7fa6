/*
 * cmd/report_load.h - one trace loaded for 'memprof report'
 * (cmd/report_load.c): its analyses, gate figures, stored runs and meta,
 * as the writers' input.
 */
#ifndef MP_CMD_REPORT_LOAD_H
#define MP_CMD_REPORT_LOAD_H

#include "cmd/cmd.h"
#include "load/runs_load.h"
#include "report/report_doc.h"

/* The command's options, as parsed. */
struct mp_report_opts {
	const char *trace, *head, *output; /* head: the second trace, NULL for one */
	int md, force;
	int32_t device;
	int top;
	int64_t points, blocks;
};

/* Everything the writers read of one trace, owned here. */
struct mp_report_trace {
	const struct mp_report_opts *o;
	struct mp_store *s;
	struct mp_reader *r;
	struct mp_pass *pass;
	struct mp_frag_series series;
	struct mp_phase_spans phases;
	struct mp_block_spans spans;
	struct mp_gate_trace gate;
	struct mp_load_runs runs;
	struct memprof_device *devices;
	size_t n_devices;
	char *meta[8];
	struct mp_analysis a;
	struct mp_report_input in;
};

/* Open, analyze and describe the trace at path into *out (set even on
 * failure: free it with mp_report_unload).  0 or a negative MP_E*, err set. */
int mp_report_load(const char *path, const struct mp_report_opts *o, struct mp_report_trace **out,
                   struct mp_error *err);
void mp_report_unload(struct mp_report_trace *st);

#endif
