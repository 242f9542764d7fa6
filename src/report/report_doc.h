/*
 * report/report_doc.h - 'memprof report': one trace's analyses and stored
 * replay results drawn for people, as one self-contained HTML file with
 * SVG charts (report_html*.c) or as a Markdown summary for a pull request
 * comment (report_md.c).  Receives results, never database handles; every
 * string that came from a trace is escaped for the output's language.
 */
#ifndef MP_REPORT_REPORT_DOC_H
#define MP_REPORT_REPORT_DOC_H

#include <stdio.h>

#include "analysis/block_spans.h"
#include "analysis/frag_series.h"
#include "analysis/gate.h"
#include "analysis/pass.h"
#include "analysis/phase_spans.h"
#include "report/analyze_out.h"
#include "report/runs.h"

struct mp_report_input {
	/* path, source, truncated, lossy, device (-1 all), top, and the
	 * results ms, frag, attr, life, as 'memprof analyze' prints them */
	const struct mp_analysis *a;
	const struct mp_timeline *timeline; /* live, requested, reserved over time */
	const struct mp_report_runs *runs;  /* replay results stored in the trace */
	const char *command_line;           /* meta command_line, may be NULL */
	const char *created;                /* meta created, may be NULL */
	const char *tool_version;           /* meta tool_version, may be NULL */
	/* further inputs of the HTML writer are appended below */
	const struct mp_frag_series *frag_series; /* fragmentation over time; may be NULL */
	const struct mp_phase_spans *phases;      /* top-level phase spans; may be NULL */
	const struct memprof_device *devices;     /* the trace's devices table; may be NULL */
	size_t n_devices;
	const struct mp_block_spans *spans; /* every block's and segment's life; may be NULL */
	int64_t max_blocks;                 /* blocks per device the page holds whole (--blocks) */
	const struct mp_gate_trace *gate;   /* call sites at the peak; may be NULL */
	const char *clock;                  /* meta clock, may be NULL */
	const char *allocator_settings;     /* meta allocator_settings (JSON), may be NULL */
	const char *private_pools;          /* meta private_pools (JSON), may be NULL */
};

#define MP_REPORT_DEFAULT_BLOCKS 20000
#define MP_REPORT_MAX_BLOCKS     1000000

/* Returns 0, or a negative MP_E* (MP_ENOMEM, MP_EIO). */
int mp_report_write_html(FILE *out, const struct mp_report_input *in);
int mp_report_write_md(FILE *out, const struct mp_report_input *in);
/* Two traces on one page (report_html_diff.c): the gate's figures as
 * 'memprof diff' prints them, the call sites that grew or shrank at the
 * peak (d, from the two inputs' gate figures), and both timelines of each
 * device on one axis.  device -1: all; top: call sites per device. */
int mp_report_write_diff_html(FILE *out, const struct mp_report_input *base,
                              const struct mp_report_input *head, const struct mp_gate_diff *d,
                              int32_t device, int top);

#endif
