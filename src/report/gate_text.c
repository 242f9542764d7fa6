/*
 * report/gate_text.c - 'memprof diff' and 'memprof check' as text for
 * people: per device the figures (BASE, HEAD and the change for diff), the
 * call sites live at the peak (ranked by growth for diff), the replayed
 * pools, every threshold checked with its sentence, notes and a result
 * line.  Layout in memprof-diff(1); no escaping beyond what a terminal
 * shows.
 */
#include "report/gate.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/format.h"

static char *bytes(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "unknown");
	else
		mp_format_bytes(buf, n, v);
	return buf;
}

static void print_figures(FILE *out, const struct mp_gate_report *r, const struct mp_gate_device *b,
                          const struct mp_gate_device *h)
{
	static const struct mp_gate_table text = {
	        .head_diff = "                         BASE           HEAD           change\n",
	        .head_check = "",
	        .row_diff = "  %-22s %-14s %-14s %s\n",
	        .row_check = "  %-22s %s\n",
	        .modelled_label = "peak reserved*",
	        .modelled_note = "  * modelled from block addresses (no segment-level events)\n",
	        .window_note = "  live at end: not leaks, %s is a window of the program (%s)\n",
	};

	mp_gate_print_figures(out, r, b, h, &text);
}

static void plain(FILE *out, const char *text)
{
	fputs(text, out);
}

static const struct mp_gate_sites_style text_sites = {
        .head_check = "\n  live at the peak by call site\n       bytes  blocks  site\n",
        .row_check = "  %10s %7lld  ",
        .end_check = "\n",
        .more_check = "             (%zu more)\n",
        .head_diff = "\n  live at the peak by call site, largest growth first\n"
                     "        BASE       HEAD      change  site\n",
        .row_diff = "  %10s %10s %11s  ",
        .end_diff = "%s\n",
        .more_diff = "             (%zu more)\n",
        .no_change = "\n  live at the peak by call site: no change\n",
        .new_mark = " [new]",
        .gone_mark = " [gone]",
        .site_size = 512,
        .site_width = 80,
        .write_site = plain,
};

static void print_devices(FILE *out, const struct mp_gate_report *r)
{
	size_t i;

	if (!r->diff) {
		for (i = 0; i < r->head->n_devices; i++) {
			fprintf(out, "\ndevice %d\n", (int)r->head->devices[i].device);
			print_figures(out, r, NULL, &r->head->devices[i]);
			mp_gate_print_sites_check(out, r, &r->head->devices[i], &text_sites);
		}
		return;
	}
	for (i = 0; i < r->diff->n_devices; i++) {
		const struct mp_gate_device_change *c = &r->diff->devices[i];
		char b[32];

		if (!c->base || !c->head) {
			const struct mp_gate_device *d = c->base ? c->base : c->head;

			fprintf(out, "\ndevice %d: only in %s (peak live %s)\n", (int)c->device,
			        c->base ? "BASE" : "HEAD",
			        mp_format_bytes(b, sizeof(b), d->peak_live_bytes));
			continue;
		}
		fprintf(out, "\ndevice %d\n", (int)c->device);
		print_figures(out, r, c->base, c->head);
		mp_gate_print_sites_diff(out, r, c, &text_sites);
	}
}

static void pool_figures(char *buf, size_t n, const struct mp_gate_pool *p)
{
	char b[32], t[32];

	snprintf(buf, n, "peak reserved %s, allocator time %s (%s)",
	         bytes(b, sizeof(b), p->peak_reserved_bytes),
	         p->total_ns >= 0 ? mp_format_duration(t, sizeof(t), p->total_ns) : "unknown",
	         p->time_measured ? "measured" : "modelled");
}

static void pool_change(char *buf, size_t n, const struct mp_gate_pool_change *c)
{
	char b1[32], b2[32], p1[32], t1[32], t2[32], p2[32], time[128];
	const struct mp_gate_pool *b = c->base, *h = c->head;

	if (c->times_comparable)
		snprintf(time, sizeof(time), "%s -> %s (%s, %s)",
		         mp_format_duration(t1, sizeof(t1), b->total_ns),
		         mp_format_duration(t2, sizeof(t2), h->total_ns),
		         mp_gate_percent_text(p2, sizeof(p2), b->total_ns, h->total_ns),
		         h->time_measured ? "measured" : "modelled");
	else
		snprintf(time, sizeof(time), "not compared (%s vs %s)",
		         b->total_ns < 0    ? "unknown"
		         : b->time_measured ? "measured"
		                            : "modelled",
		         h->total_ns < 0    ? "unknown"
		         : h->time_measured ? "measured"
		                            : "modelled");
	snprintf(buf, n, "peak reserved %s -> %s (%s), allocator time %s",
	         bytes(b1, sizeof(b1), b->peak_reserved_bytes),
	         bytes(b2, sizeof(b2), h->peak_reserved_bytes),
	         b->peak_reserved_bytes >= 0 && h->peak_reserved_bytes >= 0
	                 ? mp_gate_percent_text(p1, sizeof(p1), b->peak_reserved_bytes,
	                                        h->peak_reserved_bytes)
	                 : "-",
	         time);
}

static void print_pools(FILE *out, const struct mp_gate_report *r)
{
	char what[400];
	size_t i;

	if (!r->diff) {
		if (r->head->n_pools == 0)
			return;
		fprintf(out, "\nreplayed pools (the newest stored run of each)\n");
		for (i = 0; i < r->head->n_pools; i++) {
			const struct mp_gate_pool *p = &r->head->pools[i];

			pool_figures(what, sizeof(what), p);
			fprintf(out, "  device %d  %s (%s): %s\n", (int)p->device, p->pool,
			        p->backend, what);
		}
		return;
	}
	if (r->diff->n_pools == 0)
		return;
	fprintf(out, "\nreplayed pools (the newest stored run of each)\n");
	for (i = 0; i < r->diff->n_pools; i++) {
		const struct mp_gate_pool_change *c = &r->diff->pools[i];
		const struct mp_gate_pool *p = c->base ? c->base : c->head;

		if (c->base && c->head)
			pool_change(what, sizeof(what), c);
		else
			snprintf(what, sizeof(what), "only in %s", c->base ? "BASE" : "HEAD");
		fprintf(out, "  device %d  %s (%s): %s\n", (int)p->device, p->pool, p->backend,
		        what);
	}
}

struct note_ctx {
	FILE *out;
	int n;
};

static void put_note(void *ctx, const char *note)
{
	struct note_ctx *c = ctx;

	if (c->n++ == 0)
		fprintf(c->out, "\nnotes\n");
	fprintf(c->out, "  - %s\n", note);
}

static void print_results(FILE *out, const struct mp_gate_report *r)
{
	static const char *const outcome[] = {"ok", "EXCEEDED", "NOT CHECKED"};
	struct note_ctx c = {out, 0};
	char s[600];
	size_t i;

	if (r->n_results > 0)
		fprintf(out, "\nthresholds\n");
	for (i = 0; i < r->n_results; i++)
		fprintf(out, "  %-11s  %s\n", outcome[r->results[i].outcome],
		        mp_gate_result_text(s, sizeof(s), &r->results[i]));
	mp_gate_notes(r, put_note, &c);
	fprintf(out, "\nresult: %s\n", mp_gate_summary(s, sizeof(s), r));
}

int mp_gate_write_text(FILE *out, const struct mp_gate_report *r)
{
	fprintf(out, "memprof %s\n", r->command);
	if (r->base)
		fprintf(out, "  BASE  %s (%s)\n", r->base->path,
		        r->base->source ? r->base->source : "unknown source");
	fprintf(out, "  %s  %s (%s)\n", r->base ? "HEAD" : "trace", r->head->path,
	        r->head->source ? r->head->source : "unknown source");
	print_devices(out, r);
	print_pools(out, r);
	print_results(out, r);
	return ferror(out) ? MP_EIO : 0;
}
