/*
 * report/gate.h - the output of 'memprof diff' and 'memprof check': the
 * gate figures, their change, the call sites that account for it, the
 * replayed pools and every threshold checked, as text for people
 * (gate_text.c), Markdown for a pull request comment (gate_md.c), JSON for
 * programs (gate_json.c; layout in memprof-diff(1), versioned by
 * MP_GATE_JSON_VERSION) and JUnit XML for CI test reports (gate_junit.c).
 * Receives results, never database handles; every string from a trace is
 * escaped for the output's language.
 */
#ifndef MP_REPORT_GATE_H
#define MP_REPORT_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/gate.h"

#define MP_GATE_JSON_VERSION 2 /* bump when the JSON layout changes incompatibly */

enum mp_gate_format {
	MP_GATE_FORMAT_TEXT,
	MP_GATE_FORMAT_MD,
	MP_GATE_FORMAT_JSON,
	MP_GATE_FORMAT_JUNIT,
	MP_GATE_N_FORMATS
};

struct mp_gate_report {
	const char *command;              /* "diff" or "check" */
	const struct mp_gate_trace *base; /* diff: BASE; check: NULL */
	const struct mp_gate_trace *head; /* diff: HEAD; check: the trace */
	const struct mp_gate_diff *diff;  /* diff only */
	int32_t device;                   /* --device, -1 for all */
	int top;                          /* call sites listed per device */
	const struct mp_gate_limit *limits;
	size_t n_limits;
	const struct mp_gate_result *results;
	size_t n_results;
	int require_checked; /* --require-checked: a threshold not checked fails */
};

/* "text", "md", "json", "junit"; mp_gate_format_parse returns -1 for others. */
const char *mp_gate_format_name(int format);
int mp_gate_format_parse(const char *name);

/* Write r in format.  Returns 0, or a negative MP_E* (MP_ENOMEM, MP_EIO). */
int mp_gate_write(FILE *out, int format, const struct mp_gate_report *r);
int mp_gate_write_text(FILE *out, const struct mp_gate_report *r);
int mp_gate_write_md(FILE *out, const struct mp_gate_report *r);
int mp_gate_write_json(FILE *out, const struct mp_gate_report *r);
int mp_gate_write_junit(FILE *out, const struct mp_gate_report *r);

/* --- shared by the writers (gate_common.c) ------------------------------- */

/* Results with outcome MP_GATE_EXCEEDED. */
size_t mp_gate_n_exceeded(const struct mp_gate_report *r);
/* Results with outcome MP_GATE_PASS. */
size_t mp_gate_n_passed(const struct mp_gate_report *r);
/* What was not checked: results with outcome MP_GATE_NOT_CHECKED plus the
 * limits that applied to nothing (no result at all).  Never counted as
 * passed. */
size_t mp_gate_n_unchecked(const struct mp_gate_report *r);
/* The limit applies to nothing in r (no result): why, a static sentence;
 * NULL when it has a result. */
const char *mp_gate_unapplied_why(const struct mp_gate_report *r, const struct mp_gate_limit *l);
/* The gate fails: a threshold exceeded, or one not checked under
 * --require-checked.  The exit status is 3 exactly then. */
int mp_gate_failed(const struct mp_gate_report *r);
/* The result line, the same in text and Markdown: "PASS, 1 check within
 * its threshold, 1 NOT CHECKED", "FAIL, 1 of 2 checks exceeded a
 * threshold", "PASS, no threshold checked".  Returns buf. */
char *mp_gate_summary(char *buf, size_t n, const struct mp_gate_report *r);

/*
 * The sentence of one result, the same in every format, e.g. "peak live on
 * device 0 grew 3.1% (+24.0 MiB), over --max-peak-increase=2% by 1.1
 * points".  Returns buf.
 */
char *mp_gate_result_text(char *buf, size_t n, const struct mp_gate_result *r);
/* "--max-peak-increase=2%", "--no-leaks".  Returns buf. */
char *mp_gate_limit_text(char *buf, size_t n, const struct mp_gate_limit *l);
/* A short name for the check of one result, unique in a report:
 * "max-peak-increase device 0", "max-pool-increase caching/sim device 0". */
char *mp_gate_result_name(char *buf, size_t n, const struct mp_gate_result *r);
/* A call site for people: "step (cs336/optimizers.py:82)", "(no call stack)";
 * a function name longer than max_name (0: no limit) is cut with "...".
 * Returns buf. */
char *mp_gate_site_text(char *buf, size_t n, const struct mp_gate_site *s, size_t max_name);
/* The texts of one figure of a device for a table row: BASE, HEAD and the
 * change ("" without a base, or when a side is unknown). */
enum { MP_GATE_CELL_BYTES, MP_GATE_CELL_RATIO, MP_GATE_CELL_COUNT };
struct mp_gate_cells {
	char base[32], head[32], change[80];
};
void mp_gate_cells(struct mp_gate_cells *c, const struct mp_gate_report *r, int kind, int64_t b,
                   int64_t h);
/*
 * The figures of a device as one table (peak live, peak reserved, free
 * share, external fragmentation, leaked bytes and blocks or, in a window,
 * what is live at its end, OOMs) in a writer's style: its head, a printf
 * format for a row (label, BASE, HEAD, change with a base; label, value
 * without), the label of a peak reserved modelled from addresses and the
 * note after such a table (NULL: none), and the note after a window's
 * table: a printf format of which trace ("HEAD", "BASE", "the trace") and
 * why (NULL: none).  b NULL: no base (check).
 */
struct mp_gate_table {
	const char *head_diff, *head_check;
	const char *row_diff, *row_check;
	const char *modelled_label, *modelled_note;
	const char *window_note;
};
void mp_gate_print_figures(FILE *out, const struct mp_gate_report *r,
                           const struct mp_gate_device *b, const struct mp_gate_device *h,
                           const struct mp_gate_table *t);
/*
 * The call sites live at the peak (report/gate_sites.c) in a writer's style:
 * a head, a printf format of a row's figures (bytes, blocks; BASE, HEAD,
 * change), the site's text (mp_gate_site_text into site_size bytes, names
 * cut at site_width, 0: whole) written by write_site, then what ends the
 * row (diff: a format of the mark of a new or gone site), and a format of
 * the count of sites left out by --top.  no_change: diff's line when no
 * site changed.
 */
struct mp_gate_sites_style {
	const char *head_check, *row_check, *end_check, *more_check;
	const char *head_diff, *row_diff, *end_diff, *more_diff, *no_change;
	const char *new_mark, *gone_mark;
	size_t site_size, site_width;
	void (*write_site)(FILE *out, const char *text);
};
void mp_gate_print_sites_check(FILE *out, const struct mp_gate_report *r,
                               const struct mp_gate_device *h,
                               const struct mp_gate_sites_style *st);
void mp_gate_print_sites_diff(FILE *out, const struct mp_gate_report *r,
                              const struct mp_gate_device_change *c,
                              const struct mp_gate_sites_style *st);
/* Bytes with a sign: "+24.0 MiB", "-512 B", "0 B". */
char *mp_gate_signed_bytes(char *buf, size_t n, int64_t bytes);
/* A percent change: "+3.1%", "-0.5%", "new" (from 0).  Returns buf. */
char *mp_gate_percent_text(char *buf, size_t n, int64_t base, int64_t head);
/* A ratio in parts per 10^9 with at most 9 decimals (exact) ("0.15"), "unknown"
 * when negative; with_sign: "+0.05", "-0.1", "0" (for changes). */
char *mp_gate_ratio_text(char *buf, size_t n, int64_t nano, int with_sign);
/* "segments", "modelled", "unknown". */
const char *mp_gate_reserved_name(int reserved);

/* Sentences about what was not compared or needs care (a device or pool in
 * one trace only, modelled figures, truncated traces, times not
 * comparable).  Calls fn once per note. */
void mp_gate_notes(const struct mp_gate_report *r, void (*fn)(void *ctx, const char *note),
                   void *ctx);

#endif
