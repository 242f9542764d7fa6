/*
 * report/gate_common.c - what the gate writers (report/gate.h) share: the
 * sentence of each threshold result, the same in every format, the notes,
 * numbers with signs, and the choice of writer.  Plain text: each writer
 * escapes it for its language.
 */
#include "report/runs.h"
#include "report/gate.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/error.h"
#include "util/format.h"

static const char *const format_names[MP_GATE_N_FORMATS] = {"text", "md", "json", "junit"};

const char *mp_gate_format_name(int format)
{
	return format >= 0 && format < MP_GATE_N_FORMATS ? format_names[format] : "?";
}

int mp_gate_format_parse(const char *name)
{
	int f;

	for (f = 0; f < MP_GATE_N_FORMATS; f++)
		if (strcmp(name, format_names[f]) == 0)
			return f;
	return -1;
}

int mp_gate_write(FILE *out, int format, const struct mp_gate_report *r)
{
	int rc;

	switch (format) {
	case MP_GATE_FORMAT_MD:
		rc = mp_gate_write_md(out, r);
		break;
	case MP_GATE_FORMAT_JSON:
		rc = mp_gate_write_json(out, r);
		break;
	case MP_GATE_FORMAT_JUNIT:
		rc = mp_gate_write_junit(out, r);
		break;
	default:
		rc = mp_gate_write_text(out, r);
		break;
	}
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = MP_EIO;
	return rc;
}

size_t mp_gate_n_exceeded(const struct mp_gate_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->n_results; i++)
		n += r->results[i].outcome == MP_GATE_EXCEEDED;
	return n;
}

size_t mp_gate_n_passed(const struct mp_gate_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->n_results; i++)
		n += r->results[i].outcome == MP_GATE_PASS;
	return n;
}

const char *mp_gate_unapplied_why(const struct mp_gate_report *r, const struct mp_gate_limit *l)
{
	size_t j;

	for (j = 0; j < r->n_results; j++)
		if (r->results[j].limit == l)
			return NULL;
	if (l->kind == MP_GATE_POOL_INCREASE)
		return "no pool is replayed in both traces (memprof replay TRACE --pool=...)";
	return r->base ? "no device is in both traces" : "the trace has no device";
}

size_t mp_gate_n_unchecked(const struct mp_gate_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->n_results; i++)
		n += r->results[i].outcome == MP_GATE_NOT_CHECKED;
	for (i = 0; i < r->n_limits; i++)
		n += mp_gate_unapplied_why(r, &r->limits[i]) != NULL;
	return n;
}

int mp_gate_failed(const struct mp_gate_report *r)
{
	return mp_gate_n_exceeded(r) > 0 || (r->require_checked && mp_gate_n_unchecked(r) > 0);
}

char *mp_gate_summary(char *buf, size_t n, const struct mp_gate_report *r)
{
	size_t n_exceeded = mp_gate_n_exceeded(r), n_passed = mp_gate_n_passed(r);
	size_t n_unchecked = mp_gate_n_unchecked(r), n_checked = n_exceeded + n_passed;
	const char *word = mp_gate_failed(r) ? "FAIL" : "PASS";
	char unchecked[64] = "";

	if (r->n_limits == 0) {
		snprintf(buf, n, "PASS, no threshold checked");
		return buf;
	}
	if (n_unchecked > 0)
		snprintf(unchecked, sizeof(unchecked), ", %zu NOT CHECKED%s", n_unchecked,
		         r->require_checked ? " (--require-checked)" : "");
	if (n_exceeded > 0)
		snprintf(buf, n, "%s, %zu of %zu checks exceeded a threshold%s", word, n_exceeded,
		         n_checked, unchecked);
	else if (n_checked > 0)
		snprintf(buf, n, "%s, %zu check%s within %s threshold%s%s", word, n_checked,
		         n_checked == 1 ? "" : "s", n_checked == 1 ? "its" : "their",
		         n_checked == 1 ? "" : "s", unchecked);
	else
		snprintf(buf, n, "%s, nothing checked%s", word, unchecked);
	return buf;
}

const char *mp_gate_reserved_name(int reserved)
{
	switch (reserved) {
	case MP_GATE_RESERVED_SEGMENTS:
		return "segments";
	case MP_GATE_RESERVED_MODELLED:
		return "modelled";
	default:
		return "unknown";
	}
}

char *mp_gate_signed_bytes(char *buf, size_t n, int64_t bytes)
{
	char b[32];

	if (bytes == 0)
		snprintf(buf, n, "0 B");
	else
		snprintf(buf, n, "%c%s", bytes > 0 ? '+' : '-',
		         mp_format_bytes(b, sizeof(b), bytes > 0 ? bytes : -bytes));
	return buf;
}

/* v with at most `decimals` decimals, trailing zeros dropped ("0.15", "2"). */
static char *trimmed(char *buf, size_t n, double v, int decimals)
{
	char *dot, *end;

	snprintf(buf, n, "%.*f", decimals, v);
	if ((dot = strchr(buf, '.'))) {
		for (end = buf + strlen(buf) - 1; end > dot && *end == '0'; end--)
			*end = '\0';
		if (end == dot)
			*end = '\0';
	}
	if (strcmp(buf, "-0") == 0)
		snprintf(buf, n, "0");
	return buf;
}

char *mp_gate_ratio_text(char *buf, size_t n, int64_t nano, int with_sign)
{
	char t[32];

	if (!with_sign && nano < 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%s%s", with_sign && nano > 0 ? "+" : "",
		         trimmed(t, sizeof(t), (double)nano / 1e9, 9));
	return buf;
}

char *mp_gate_percent_text(char *buf, size_t n, int64_t base, int64_t head)
{
	char t[32];

	if (base <= 0)
		snprintf(buf, n, head > base ? "new" : "0%%");
	else
		snprintf(buf, n, "%s%s%%", head > base ? "+" : "",
		         trimmed(t, sizeof(t), 100.0 * (double)(head - base) / (double)base, 2));
	return buf;
}

char *mp_gate_limit_text(char *buf, size_t n, const struct mp_gate_limit *l)
{
	if (l->text[0])
		snprintf(buf, n, "--%s=%s", mp_gate_kind_option(l->kind), l->text);
	else
		snprintf(buf, n, "--%s", mp_gate_kind_option(l->kind));
	return buf;
}

char *mp_gate_result_name(char *buf, size_t n, const struct mp_gate_result *r)
{
	const struct mp_gate_pool *p = r->head_pool;

	if (p)
		snprintf(buf, n, "%s %s/%s device %d", mp_gate_kind_option(r->limit->kind), p->pool,
		         p->backend, (int)r->device);
	else
		snprintf(buf, n, "%s device %d", mp_gate_kind_option(r->limit->kind),
		         (int)r->device);
	return buf;
}

char *mp_gate_site_text(char *buf, size_t n, const struct mp_gate_site *s, size_t max_name)
{
	const char *name = s->name[0] ? s->name : s->key;
	const char *key_file;
	int len = (int)strlen(name);
	const char *dots = "";
	char line[256] = ":", *lines = line + 1;

	if (max_name > 3 && strlen(name) > max_name)
		len = (int)max_name - 3, dots = "...";
	if (!s->file[0]) {
		snprintf(buf, n, "%.*s%s", len, name, dots);
		return buf;
	}
	/* the key's part of the path, what the site is matched by: the key is
	 * NAME@TAIL (analysis/gate.c) */
	key_file = strlen(s->key) > strlen(s->name) ? s->key + strlen(s->name) + 1 : s->file;
	if (!mp_gate_site_lines(lines, sizeof(line) - 1, s)[0])
		line[0] = '\0';
	snprintf(buf, n, "%.*s%s (%s%s)", len, name, dots, key_file, line);
	return buf;
}

/* The figure's subject: "peak live on device 0", "pool caching (sim) peak
 * reserved on device 0", with "(modelled)" where it applies. */
static void subject(char *buf, size_t n, const struct mp_gate_result *r)
{
	const struct mp_gate_pool *p = r->head_pool;

	char where[48];

	if (p)
		snprintf(buf, n, "pool %s (%s) peak reserved on %s", p->pool, p->backend,
		         mp_report_run_where(where, sizeof(where), r->device, 0));
	else
		snprintf(buf, n, "%s on device %d%s", mp_gate_kind_figure(r->limit->kind),
		         (int)r->device, r->modelled ? " (modelled)" : "");
}

/* A byte or percent increase: "grew 3.1% (+24.0 MiB)". */
static void increase_text(char *buf, size_t n, const struct mp_gate_result *r)
{
	char b[32], p[32];
	const char *verb = r->delta > 0 ? "grew" : r->delta < 0 ? "fell" : "did not change";

	mp_gate_signed_bytes(b, sizeof(b), r->delta);
	if (r->delta == 0)
		snprintf(buf, n, "did not change (%s)", mp_format_bytes(b, sizeof(b), r->head));
	else if (r->base <= 0)
		snprintf(buf, n, "grew from 0 B to %s", mp_format_bytes(p, sizeof(p), r->head));
	else if (r->limit->unit == MP_GATE_PERCENT)
		snprintf(buf, n, "%s %s (%s)", verb,
		         mp_gate_percent_text(p, sizeof(p), r->base, r->head) + 1, b);
	else
		snprintf(buf, n, "%s %s (%s)", verb, b + 1,
		         mp_gate_percent_text(p, sizeof(p), r->base, r->head));
}

/* The figure itself: "is 24.0 GiB", "rose 0.05 (0.1 to 0.15)". */
static void figure_text(char *buf, size_t n, const struct mp_gate_result *r)
{
	char a[32], b[32], c[32];

	switch (r->limit->kind) {
	case MP_GATE_PEAK_INCREASE:
	case MP_GATE_RESERVED_INCREASE:
	case MP_GATE_POOL_INCREASE:
		increase_text(buf, n, r);
		return;
	case MP_GATE_FREE_SHARE_INCREASE:
		snprintf(buf, n, "%s %s (%s to %s)", r->delta >= 0 ? "rose" : "fell",
		         trimmed(a, sizeof(a), fabs(r->figure), 9),
		         trimmed(b, sizeof(b), (double)r->base / 1e9, 9),
		         trimmed(c, sizeof(c), (double)r->head / 1e9, 9));
		return;
	case MP_GATE_FREE_SHARE:
		snprintf(buf, n, "is %s", trimmed(a, sizeof(a), r->figure, 9));
		return;
	case MP_GATE_LEAKED_BLOCKS:
		snprintf(buf, n, "%lld block%s", (long long)r->head, r->head == 1 ? "" : "s");
		return;
	case MP_GATE_OOMS:
		snprintf(buf, n, "%lld", (long long)r->head);
		return;
	default: /* peak, reserved, leaked bytes */
		snprintf(buf, n, "is %s", mp_format_bytes(a, sizeof(a), r->head));
		return;
	}
}

/* How far over: "1.1 points", "4.00 GiB", "0.03", "3 blocks". */
static void over_text(char *buf, size_t n, const struct mp_gate_result *r)
{
	char t[32];

	switch (r->limit->unit) {
	case MP_GATE_PERCENT:
		if (isinf(r->over))
			snprintf(buf, n,
			         "an unbounded share (any growth from 0 exceeds a percentage)");
		else
			trimmed(t, sizeof(t), r->over, 2),
			        snprintf(buf, n, "%s point%s", t, strcmp(t, "1") == 0 ? "" : "s");
		return;
	case MP_GATE_RATIO:
		snprintf(buf, n, "%s", trimmed(t, sizeof(t), r->over, 9));
		return;
	case MP_GATE_COUNT:
		if (r->limit->kind == MP_GATE_LEAKED_BLOCKS)
			snprintf(buf, n, "%lld block%s", (long long)r->over,
			         r->over == 1 ? "" : "s");
		else
			snprintf(buf, n, "%lld", (long long)r->over);
		return;
	default:
		mp_format_bytes(buf, n, (int64_t)r->over);
		return;
	}
}

char *mp_gate_result_text(char *buf, size_t n, const struct mp_gate_result *r)
{
	char subj[160], fig[160], lim[80], over[96];
	int kind = r->limit->kind;
	const char *sep = kind == MP_GATE_LEAKED_BLOCKS || kind == MP_GATE_OOMS ? ":" : "";

	subject(subj, sizeof(subj), r);
	mp_gate_limit_text(lim, sizeof(lim), r->limit);
	if (r->outcome == MP_GATE_NOT_CHECKED) {
		snprintf(buf, n, "%s: not checked against %s: %s", subj, lim, r->why);
		return buf;
	}
	figure_text(fig, sizeof(fig), r);
	if (r->outcome == MP_GATE_EXCEEDED) {
		over_text(over, sizeof(over), r);
		snprintf(buf, n, "%s%s %s, over %s by %s", subj, sep, fig, lim, over);
	} else {
		snprintf(buf, n, "%s%s %s, within %s", subj, sep, fig, lim);
	}
	return buf;
}

/* --- notes ----------------------------------------------------------------- */

struct notes {
	void (*fn)(void *ctx, const char *note);
	void *ctx;
};

static void note(struct notes *nt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct notes *nt, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nt->fn(nt->ctx, buf);
}

static void trace_notes(struct notes *nt, const struct mp_gate_trace *t, const char *label)
{
	char g[32];
	size_t i;

	if (t->truncated)
		note(nt, "%s '%s' is truncated: its figures may be low", label, t->path);
	if (t->lossy)
		note(nt, "%s '%s' is lossy (records were dropped): its figures may be off", label,
		     t->path);
	for (i = 0; i < t->n_devices; i++) {
		const struct mp_gate_device *d = &t->devices[i];

		if (d->reserved == MP_GATE_RESERVED_MODELLED)
			note(nt,
			     "device %d of %s has no segment-level events: its peak reserved bytes "
			     "and "
			     "fragmentation are modelled from block addresses (%s granules, at the "
			     "live "
			     "peak)",
			     (int)d->device, label,
			     mp_format_bytes(g, sizeof(g), (int64_t)t->granularity));
		else if (d->reserved == MP_GATE_RESERVED_UNKNOWN)
			note(nt,
			     "device %d of %s has neither segment-level events nor addresses: its "
			     "reserved bytes and fragmentation are unknown",
			     (int)d->device, label);
	}
}

static void diff_notes(struct notes *nt, const struct mp_gate_diff *d)
{
	size_t i;

	for (i = 0; i < d->n_devices; i++)
		if (!d->devices[i].base || !d->devices[i].head)
			note(nt, "device %d is only in %s '%s': not compared",
			     (int)d->devices[i].device, d->devices[i].base ? "BASE" : "HEAD",
			     d->devices[i].base ? d->base->path : d->head->path);
	for (i = 0; i < d->n_pools; i++) {
		const struct mp_gate_pool_change *c = &d->pools[i];
		const struct mp_gate_pool *p = c->base ? c->base : c->head;

		char where[48];

		mp_report_run_where(where, sizeof(where), p->device, 0);
		if (!c->base || !c->head)
			note(nt, "pool %s (%s) on %s is only replayed in %s: not compared", p->pool,
			     p->backend, where, c->base ? "BASE" : "HEAD");
		else if (!c->times_comparable && c->base->total_ns >= 0 && c->head->total_ns >= 0)
			note(nt,
			     "pool %s (%s) on %s: the allocator time of BASE is %s and that "
			     "of "
			     "HEAD %s: times not compared",
			     p->pool, p->backend, where,
			     c->base->time_measured ? "measured" : "modelled",
			     c->head->time_measured ? "measured" : "modelled");
	}
}

void mp_gate_notes(const struct mp_gate_report *r, void (*fn)(void *ctx, const char *note),
                   void *ctx)
{
	struct notes nt = {fn, ctx};
	size_t i, n_unchecked;

	if (r->base)
		trace_notes(&nt, r->base, "BASE");
	trace_notes(&nt, r->head, r->base ? "HEAD" : "the trace");
	if (r->diff)
		diff_notes(&nt, r->diff);
	if (r->n_limits == 0)
		note(&nt, "no threshold given: nothing was checked (memprof-%s(1) lists them)",
		     r->command);
	for (i = 0; i < r->n_limits; i++) {
		const char *why = mp_gate_unapplied_why(r, &r->limits[i]);
		char lim[80];

		if (why)
			note(&nt, "%s checked nothing: %s",
			     mp_gate_limit_text(lim, sizeof(lim), &r->limits[i]), why);
	}
	n_unchecked = mp_gate_n_unchecked(r);
	if (n_unchecked > 0 && !r->require_checked)
		note(&nt,
		     "%zu check%s NOT CHECKED, which is not a pass: --require-checked makes an "
		     "unchecked threshold fail the gate (exit 3)",
		     n_unchecked, n_unchecked == 1 ? " was" : "s were");
}

static void cell_bytes(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "unknown");
	else
		mp_format_bytes(buf, n, v);
}

void mp_gate_cells(struct mp_gate_cells *c, const struct mp_gate_report *r, int kind, int64_t b,
                   int64_t h)
{
	char tc[32], tp[32];
	int known = r->base && b >= 0 && h >= 0;

	c->change[0] = '\0';
	switch (kind) {
	case MP_GATE_CELL_BYTES:
		cell_bytes(c->base, sizeof(c->base), b);
		cell_bytes(c->head, sizeof(c->head), h);
		if (known)
			snprintf(c->change, sizeof(c->change), "%s (%s)",
			         mp_gate_signed_bytes(tc, sizeof(tc), h - b),
			         mp_gate_percent_text(tp, sizeof(tp), b, h));
		break;
	case MP_GATE_CELL_RATIO:
		mp_gate_ratio_text(c->base, sizeof(c->base), b, 0);
		mp_gate_ratio_text(c->head, sizeof(c->head), h, 0);
		if (known)
			mp_gate_ratio_text(c->change, sizeof(c->change), h - b, 1);
		break;
	default:
		snprintf(c->base, sizeof(c->base), "%lld", (long long)b);
		snprintf(c->head, sizeof(c->head), "%lld", (long long)h);
		if (r->base)
			snprintf(c->change, sizeof(c->change), "%+lld", (long long)(h - b));
	}
}

/* One figure of a device as a row: BASE, HEAD and the change. */
static void figure_row(FILE *out, const struct mp_gate_report *r, const struct mp_gate_table *t,
                       int kind, const char *label, int64_t b, int64_t h)
{
	struct mp_gate_cells c;

	mp_gate_cells(&c, r, kind, b, h);
	if (r->base)
		fprintf(out, t->row_diff, label, c.base, c.head, c.change);
	else
		fprintf(out, t->row_check, label, c.head);
}

void mp_gate_print_figures(FILE *out, const struct mp_gate_report *r,
                           const struct mp_gate_device *b, const struct mp_gate_device *h,
                           const struct mp_gate_table *t)
{
	static const struct mp_gate_device none = {
	        .peak_reserved_bytes = -1, .free_share_nano = -1, .external_nano = -1};
	int modelled = h->reserved == MP_GATE_RESERVED_MODELLED ||
	               (b && b->reserved == MP_GATE_RESERVED_MODELLED);
	int window;

	if (!b)
		b = &none;
	window = h->window || b->window; /* what is live at the end is then not a leak */
	fputs(r->base ? t->head_diff : t->head_check, out);
	figure_row(out, r, t, MP_GATE_CELL_BYTES, "peak live", b->peak_live_bytes,
	           h->peak_live_bytes);
	figure_row(out, r, t, MP_GATE_CELL_BYTES, modelled ? t->modelled_label : "peak reserved",
	           b->peak_reserved_bytes, h->peak_reserved_bytes);
	figure_row(out, r, t, MP_GATE_CELL_RATIO, "free share", b->free_share_nano,
	           h->free_share_nano);
	figure_row(out, r, t, MP_GATE_CELL_RATIO, "external fragmentation", b->external_nano,
	           h->external_nano);
	figure_row(out, r, t, MP_GATE_CELL_BYTES, window ? "live at end" : "leaked bytes",
	           b->leaked_bytes, h->leaked_bytes);
	figure_row(out, r, t, MP_GATE_CELL_COUNT, window ? "blocks live at end" : "leaked blocks",
	           b->leaked_blocks, h->leaked_blocks);
	figure_row(out, r, t, MP_GATE_CELL_COUNT, "OOMs", b->n_ooms, h->n_ooms);
	if (modelled && t->modelled_note)
		fputs(t->modelled_note, out);
	if (window && t->window_note)
		fprintf(out, t->window_note, h->window ? (r->base ? "HEAD" : "the trace") : "BASE",
		        h->window ? r->head->window : r->base->window);
}
