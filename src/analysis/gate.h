/*
 * analysis/gate.h - the CI gate of 'memprof diff' and 'memprof check': the
 * gate figures of one trace taken from a finished analysis pass (peak live,
 * peak reserved, fragmentation at the reserved peak, leaks, OOMs, what is
 * live at the live peak by call site, and the stored replay results that
 * cmd/ hands in as plain data), the comparison of two traces, and the
 * thresholds checked against either.  Pure computations: nothing printed,
 * no exit status chosen.  Not thread-safe.
 *
 * Call sites (memprof-diff(1), CALL SITES).  A stack group at the live peak
 * belongs to the site of its call-site frame (util/stack_text.h,
 * mp_stack_call_site), keyed "NAME@DIR/FILE" (analysis/call_site.h): the
 * function name and the last two components of the frame's file path, or
 * "NAME" when the frame has no file.  The lines are shown (every line folded
 * in, "model.py:41,88") but are not part of the key, so an edit
 * above a call (which moves its line) or a checkout in another directory
 * keeps the site the same; groups of one function in one file fold into
 * one site.  Blocks without a call stack are the site "(no call stack)".
 *
 * Arithmetic (memprof-diff(1), THRESHOLDS).  A limit is the largest value
 * allowed: a figure equal to its limit passes.  Percentages and ratios are
 * compared exactly in integers: a percent limit with at most 9 decimals,
 * fragmentation rounded to 9 decimals (parts per 10^9) before comparing.
 * Growth from a base of 0 exceeds every percent limit (the growth is
 * infinite); no growth from 0 is 0%.
 */
#ifndef MP_ANALYSIS_GATE_H
#define MP_ANALYSIS_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/pass.h"

#define MP_GATE_NANO INT64_C(1000000000) /* ratios in parts per 10^9 */

/* Where a device's peak reserved bytes come from. */
enum mp_gate_reserved {
	MP_GATE_RESERVED_UNKNOWN,  /* no segment-level events and no addresses */
	MP_GATE_RESERVED_SEGMENTS, /* the trace's segments: measured by the allocator */
	MP_GATE_RESERVED_MODELLED, /* the address-space model at the live peak */
};

/* Blocks live at one device's live peak that share a call site. */
struct mp_gate_site {
	char *key;        /* see above; owned */
	char *name;       /* the call-site frame's function, "" for no stack; owned */
	char *file;       /* its file as recorded, "" when none; owned */
	int64_t line;     /* of the largest stack group folded in; 0 when none */
	int64_t n_stacks; /* call stacks folded into this site */
	int64_t bytes;    /* granted */
	int64_t blocks;
	int64_t *lines; /* every line folded in, ascending, distinct; owned */
	size_t n_lines; /* 0 when none (lines unknown: line alone is shown) */
};

struct mp_gate_device {
	int32_t device;
	int64_t peak_live_bytes, peak_live_ts_ns, peak_live_seq; /* seq 0: never above 0 */
	int reserved;                                            /* enum mp_gate_reserved */
	int64_t peak_reserved_bytes;                             /* -1 when unknown */
	int64_t peak_reserved_ts_ns, peak_reserved_seq;
	int64_t free_in_reserved_bytes; /* at the reserved peak (modelled: at the live peak) */
	int64_t largest_free_bytes;     /* the largest hole there; -1 when unknown */
	int64_t free_share_nano;     /* free_in_reserved / reserved, parts per 10^9; -1 unknown */
	int64_t external_nano; /* 1 - largest hole / free, parts per 10^9; -1 unknown */
	int64_t leaked_bytes, leaked_blocks; /* live at the end (analysis/lifetime leaks) */
	int window; /* the trace is a window: leaked_* are live at its end, not leaks */
	int64_t n_ooms;
	struct mp_gate_site *sites; /* at the live peak, bytes descending, then key */
	size_t n_sites;
};

/* A replay run stored in the trace (the newest of its device, pool and
 * backend), copied in by cmd/. */
struct mp_gate_pool {
	int32_t device;
	char *pool, *backend; /* owned */
	int64_t run_id;
	int64_t peak_reserved_bytes; /* -1 when the run has none */
	int64_t total_ns;            /* allocator time; -1 when the run has none */
	int time_measured;           /* 1 measured on the device, 0 modelled */
	int failed;                  /* the run had OOMs: its peak is not a result */
};

struct mp_gate_trace {
	char *path, *source; /* owned; source may be NULL */
	char *window; /* owned; NULL: the trace covers the program's whole life, else why not
	               * (util/trace_window.h); mp_gate_trace_set_window sets it */
	int truncated, lossy;
	uint64_t granularity;           /* of the address-space model */
	struct mp_gate_device *devices; /* ascending ordinal */
	size_t n_devices;
	struct mp_gate_pool *pools; /* by device, pool, backend */
	size_t n_pools;
};

/*
 * Fill t from a pass that ran to its end with stack attribution at the
 * peak (MP_ATTR_STACK, MP_ATTR_AT_PEAK): every device, or only device when
 * it is >= 0.  Strings are copied: the pass and its reader may go after.
 * Returns 0 or MP_ENOMEM (t is then still safe to free).
 */
int mp_gate_trace_from_pass(struct mp_gate_trace *t, const struct mp_pass *p, const char *path,
                            const char *source, int32_t device);
/* Append a copy of pool (kept sorted).  Returns 0 or MP_ENOMEM. */
int mp_gate_trace_add_pool(struct mp_gate_trace *t, const struct mp_gate_pool *pool);
const struct mp_gate_device *mp_gate_trace_device(const struct mp_gate_trace *t, int32_t device);
void mp_gate_trace_free(struct mp_gate_trace *t);
/* Mark t a window for the reason why (copied; NULL: whole life): what is live at
 * its end is then not a leak, and leak limits are not checked.  0 or MP_ENOMEM. */
int mp_gate_trace_set_window(struct mp_gate_trace *t, const char *why);

/* --- the comparison of two traces ----------------------------------------- */

/* One call site's change at the live peak. */
struct mp_gate_site_change {
	const struct mp_gate_site *base, *head; /* NULL when absent (new, vanished) */
	int64_t delta_bytes;                    /* head bytes - base bytes */
};

struct mp_gate_device_change {
	int32_t device;
	const struct mp_gate_device *base, *head; /* NULL when the device is in one trace only */
	/* both present: by delta descending (largest growth first), then key;
	 * sites whose bytes did not change are left out */
	struct mp_gate_site_change *sites;
	size_t n_sites;
};

struct mp_gate_pool_change {
	const struct mp_gate_pool *base, *head; /* NULL when the pool is in one trace only */
	int times_comparable; /* both times known and both measured or both modelled */
};

struct mp_gate_diff {
	const struct mp_gate_trace *base, *head;
	struct mp_gate_device_change *devices; /* ascending ordinal, union of both */
	size_t n_devices;
	struct mp_gate_pool_change *pools; /* by device, pool, backend; union of both */
	size_t n_pools;
};

/* Returns 0 or MP_ENOMEM (d is then still safe to free).  d refers to the
 * traces, which must outlive it. */
int mp_gate_diff(struct mp_gate_diff *d, const struct mp_gate_trace *base,
                 const struct mp_gate_trace *head);
void mp_gate_diff_free(struct mp_gate_diff *d);

/* --- thresholds --------------------------------------------------------- */

enum mp_gate_kind {
	/* diff */
	MP_GATE_PEAK_INCREASE,     /* --max-peak-increase=N%|SIZE: peak live, HEAD - BASE */
	MP_GATE_RESERVED_INCREASE, /* --max-reserved-increase=N%|SIZE: peak reserved */
	MP_GATE_FREE_SHARE_INCREASE,     /* --max-frag-increase=R: fragmentation, HEAD - BASE */
	MP_GATE_POOL_INCREASE,     /* --max-pool-increase=N%|SIZE: a pool's peak reserved */
	/* diff (on HEAD) and check */
	MP_GATE_FREE_SHARE, /* --max-frag=R */
	/* check */
	MP_GATE_PEAK,          /* --max-peak=SIZE */
	MP_GATE_RESERVED,      /* --max-reserved=SIZE */
	MP_GATE_LEAKED_BYTES,  /* --max-leaked=SIZE */
	MP_GATE_LEAKED_BLOCKS, /* --no-leaks: no block live at the end */
	MP_GATE_OOMS,          /* --no-oom */
	MP_GATE_N_KINDS
};

enum mp_gate_unit {
	MP_GATE_BYTES,   /* value: bytes */
	MP_GATE_PERCENT, /* value: percent of BASE, in parts per 10^9 of a percent */
	MP_GATE_RATIO,   /* value: a ratio (or ratio points), parts per 10^9 */
	MP_GATE_COUNT,   /* value: blocks or OOMs */
};

struct mp_gate_limit {
	int kind; /* enum mp_gate_kind */
	int unit; /* enum mp_gate_unit */
	int64_t value;
	char text[48]; /* the limit as given ("2%", "100MiB", "0.15"; "" for --no-*) */
};

/* The option's name without "--" ("max-peak-increase", "no-leaks"). */
const char *mp_gate_kind_option(int kind);
/* The figure a kind bounds, for people ("peak live", "fragmentation", ...). */
const char *mp_gate_kind_figure(int kind);

/*
 * Parse the value of a kind's option into l: N% or SIZE for the increase
 * kinds, SIZE for peak, reserved and leaked, a ratio R in [0, 1] or a
 * percentage N% in [0%, 100%] for the fragmentation kinds ("0.15" and
 * "15%" are the same limit), NULL for --no-leaks and --no-oom (limit 0).
 * A percent is a decimal number with at most 9 decimals, at most 10^6 (a
 * ratio given in percent: at most 7, so it stays exact).  A size of an
 * increase kind must have a unit: a bare number other than 0 is refused
 * (mp_gate_limit_bare_number), as "2" could mean 2% as well as 2 bytes.
 * Returns 0 or MP_EINVAL.
 */
int mp_gate_limit_parse(int kind, const char *text, struct mp_gate_limit *l);
/* text is a number without a unit, other than 0, for a kind that takes
 * N% or SIZE (peak, reserved and pool increase): ambiguous, refused. */
int mp_gate_limit_bare_number(int kind, const char *text);

enum mp_gate_outcome {
	MP_GATE_PASS,
	MP_GATE_EXCEEDED,
	MP_GATE_NOT_CHECKED, /* a figure is unknown or not comparable: why says which */
};

/* One limit checked on one device (or one pool). */
struct mp_gate_result {
	const struct mp_gate_limit *limit;
	int32_t device;
	const struct mp_gate_pool *base_pool, *head_pool; /* pool kinds */
	int outcome;                                      /* enum mp_gate_outcome */
	const char *why;                                  /* NOT_CHECKED: a static sentence */
	int modelled; /* a figure comes from the address-space model */
	/* figures in the limit's base unit: bytes, counts, or ratios in parts
	 * per 10^9; base is -1 for check (no base) */
	int64_t base, head, delta;
	/* percent kinds: the growth in percent (INFINITY from a base of 0);
	 * otherwise the value compared (head, or delta), as a double */
	double figure;
	/* EXCEEDED: how far past the limit, in the limit's unit (points of
	 * percent, bytes, ratio, count) */
	double over;
};

/* Growth of base to head exceeds pct_nano (percent in parts per 10^9);
 * exact. */
int mp_gate_percent_exceeds(int64_t base, int64_t head, int64_t pct_nano);
/* num / den in parts per 10^9, rounded to nearest; -1 when den <= 0 or
 * num < 0. */
int64_t mp_gate_ratio_nano(int64_t num, int64_t den);

/*
 * Check limits on a diff (d non-NULL; base figures from d->base) or on one
 * trace (d NULL, t the trace): one result per limit and device (devices
 * in both traces for the increase kinds, every HEAD device for the
 * absolute ones), and per pool in both traces for MP_GATE_POOL_INCREASE.
 * A malloc'd array the caller frees; *n its length.  Returns NULL with *n
 * = 0 when there is nothing to check, or with *n = -1 when out of memory.
 */
struct mp_gate_result *mp_gate_check(const struct mp_gate_diff *d, const struct mp_gate_trace *t,
                                     const struct mp_gate_limit *limits, size_t n_limits,
                                     ptrdiff_t *n);

/* The site's lines as text: "41,88" (every line folded in), else its one
 * line, "" when it has none.  Returns buf. */
char *mp_gate_site_lines(char *buf, size_t n, const struct mp_gate_site *s);

#endif
