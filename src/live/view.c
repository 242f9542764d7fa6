/*
 * live/view.c - the text of the live view (a table of processes and
 * devices, the top call sites, notes, the command's last output lines) and
 * of the one-line summary.  Pure: reads the state, writes text; no terminal
 * control sequences, no I/O.
 */
#include "live/view.h"
#include "util/error.h"
#include "util/format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define LINE_MAX_BYTES 1024

struct page {
	struct mp_live_text *out;
	int width, left; /* columns; lines still free */
};

/* One line, cut to the width; nothing when the page is full. */
static void __attribute__((format(printf, 2, 3))) line(struct page *pg, const char *fmt, ...)
{
	char buf[LINE_MAX_BYTES];
	va_list ap;
	int n;

	if (pg->left <= 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (n > pg->width)
		n = pg->width;
	mp_live_append(pg->out, buf, (size_t)n);
	mp_live_append(pg->out, "\n", 1);
	pg->left--;
}

static const char *bytes(char *buf, size_t n, int known, int64_t v)
{
	return known ? mp_format_bytes(buf, n, v) : strcpy(buf, "-");
}

static const char *ratio(char *buf, size_t n, double r)
{
	if (r < 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%.3f", r);
	return buf;
}

static const char *duration(char *buf, size_t n, size_t have, int64_t ns)
{
	return have ? mp_format_duration(buf, n, ns) : strcpy(buf, "-");
}

#define ROW_FORMAT "%-7s %4s %3s %10s %10s %10s %10s %7s %7s %7s %7s %10s %7s %7s"

static void header(struct page *pg)
{
	line(pg, ROW_FORMAT, "PID", "RANK", "DEV", "LIVE", "RESERVED", "PEAK LIVE", "PEAK RES",
	     "FREE", "ALLOCS", "FREES", "ALLOC/S", "BYTES/S", "P50", "P99");
}

static void row(struct page *pg, const struct mp_live_state *st, const struct mp_live_process *p,
                const struct mp_live_device *d)
{
	char pid[24], rank[24], dev[16], live[16], res[16], plive[16], pres[16], frag[16];
	char na[24], nf[24], rate[24], brate[24], p50[24], p99[24];
	int64_t q50, q99;
	size_t have = mp_live_latency_quantiles(st, d, &q50, &q99);
	int live_shown = d->live_known || !d->reserved_known;

	snprintf(pid, sizeof(pid), "%lld", (long long)p->pid);
	snprintf(rank, sizeof(rank), p->labels.rank >= 0 ? "%lld" : "-", (long long)p->labels.rank);
	snprintf(dev, sizeof(dev), "%d", d->device);
	snprintf(na, sizeof(na), "%lld", (long long)d->n_allocs);
	snprintf(nf, sizeof(nf), "%lld", (long long)d->n_frees);
	snprintf(rate, sizeof(rate), "%.1f", d->allocs_per_s);
	mp_format_bytes(brate, sizeof(brate) - 2, (int64_t)d->bytes_per_s);
	strcat(brate, "/s");
	line(pg, ROW_FORMAT, pid, rank, dev, bytes(live, sizeof(live), live_shown, d->live_bytes),
	     bytes(res, sizeof(res), d->reserved_known, d->reserved_bytes),
	     bytes(plive, sizeof(plive), live_shown, d->peak_live_bytes),
	     bytes(pres, sizeof(pres), d->reserved_known, d->peak_reserved_bytes),
	     ratio(frag, sizeof(frag), mp_live_free_share(d)), na, nf, rate, brate,
	     duration(p50, sizeof(p50), have, q50), duration(p99, sizeof(p99), have, q99));
}

static void table(struct page *pg, const struct mp_live_state *st)
{
	size_t i, k, n_rows = 0;

	header(pg);
	for (i = 0; i < st->n_procs; i++)
		for (k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++, n_rows++)
			row(pg, st, st->procs[i], &st->procs[i]->devices[k]);
	if (n_rows == 0)
		line(pg, "(no allocation yet: the figures come from the spools once a process "
		         "calls CUDA)");
}

static void sites(struct page *pg, const struct mp_live_state *st)
{
	struct mp_live_top top[MP_LIVE_TOP_SITES];
	size_t i, n = mp_live_state_top_sites(st, top, MP_LIVE_TOP_SITES);
	char b[16];

	line(pg, "%s", "");
	line(pg, "top call sites by live bytes:%s", n ? "" : " none with a stack yet");
	for (i = 0; i < n; i++)
		line(pg, "  %10s %6lld allocs  pid %-8lld %s",
		     mp_format_bytes(b, sizeof(b), top[i].site->live_bytes),
		     (long long)top[i].site->n_live, (long long)top[i].proc->pid,
		     top[i].site->label ? top[i].site->label : "(not labelled yet)");
}

static void notes(struct page *pg, const struct mp_live_state *st)
{
	size_t i;

	if (st->note[0])
		line(pg, "note: spool stopped: %s", st->note);
	for (i = 0; i < st->n_procs; i++)
		if (st->procs[i] && st->procs[i]->disabled[0])
			line(pg, "note: pid %lld: the recording library turned itself off: %s",
			     (long long)st->procs[i]->pid, st->procs[i]->disabled);
}

/* Allocation calls that failed for lack of memory, on every device. */
static int64_t n_ooms(const struct mp_live_state *st)
{
	int64_t n = 0;

	for (size_t i = 0; i < st->n_procs; i++)
		for (size_t k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++)
			n += st->procs[i]->devices[k].n_ooms;
	return n;
}

int mp_live_render_view(const struct mp_live_state *st, const struct mp_live_view_opts *o,
                        struct mp_live_text *out)
{
	struct page pg = {out, o->width > 0 ? o->width : 80, o->height > 0 ? o->height : 24};
	size_t n_procs = mp_live_state_n_processes(st), i, first;
	int64_t el = st->now_ns - st->start_ns;

	char ooms[32] = "";

	if (n_ooms(st))
		snprintf(ooms, sizeof(ooms), "%lld OOMs   ", (long long)n_ooms(st));
	line(&pg,
	     "memprof record --live   %lld.%lld s   %zu process%s   %lld events dropped   "
	     "%sq: close this view",
	     (long long)(el / 1000000000), (long long)(el / 100000000 % 10), n_procs,
	     n_procs == 1 ? "" : "es", (long long)mp_live_state_n_dropped(st), ooms);
	table(&pg, st);
	sites(&pg, st);
	notes(&pg, st);
	if (o->log_path && pg.left >= 2) {
		line(&pg, "%s", "");
		line(&pg, "command output (%s):", o->log_path);
		first = o->n_log_lines > (size_t)pg.left ? o->n_log_lines - (size_t)pg.left : 0;
		for (i = first; i < o->n_log_lines; i++)
			line(&pg, "  %s", o->log_lines[i]);
	}
	return out->failed ? MP_ENOMEM : 0;
}

int mp_live_render_line(const struct mp_live_state *st, struct mp_live_text *out)
{
	char live[16], res[16], plive[16], pres[16], p50[24], p99[24], brate[24];
	double allocs_per_s = 0, bytes_per_s = 0;
	int64_t n_allocs = 0, n_frees = 0, q50, q99, el = st->now_ns - st->start_ns;
	int64_t peak_live = 0, peak_reserved = 0;
	size_t i, k, have = mp_live_latency_quantiles(st, NULL, &q50, &q99);

	for (i = 0; i < st->n_procs; i++)
		for (k = 0; st->procs[i] && k < st->procs[i]->n_devices; k++) {
			const struct mp_live_device *d = &st->procs[i]->devices[k];

			peak_live += d->peak_live_bytes;
			peak_reserved += d->peak_reserved_bytes;
			n_allocs += d->n_allocs;
			n_frees += d->n_frees;
			allocs_per_s += d->allocs_per_s;
			bytes_per_s += d->bytes_per_s;
		}
	mp_live_printf(
	        out,
	        "memprof record: %lld.%lld s: live %s, reserved %s, peaks: live %s, "
	        "reserved %s, %lld allocs (%.1f/s, %s/s), %lld frees, p50 %s, p99 %s, "
	        "%zu process%s, %lld dropped",
	        (long long)(el / 1000000000), (long long)(el / 100000000 % 10),
	        bytes(live, sizeof(live), st->live_known || !st->reserved_known, st->live_bytes),
	        bytes(res, sizeof(res), st->reserved_known, st->reserved_bytes),
	        bytes(plive, sizeof(plive), st->live_known || !st->reserved_known, peak_live),
	        bytes(pres, sizeof(pres), st->reserved_known, peak_reserved), (long long)n_allocs,
	        allocs_per_s, mp_format_bytes(brate, sizeof(brate), (int64_t)bytes_per_s),
	        (long long)n_frees, duration(p50, sizeof(p50), have, q50),
	        duration(p99, sizeof(p99), have, q99), mp_live_state_n_processes(st),
	        mp_live_state_n_processes(st) == 1 ? "" : "es",
	        (long long)mp_live_state_n_dropped(st));
	if (n_ooms(st))
		mp_live_printf(out, ", %lld OOMs", (long long)n_ooms(st));
	return out->failed ? MP_ENOMEM : 0;
}

size_t mp_live_log_lines(char *buf, size_t len, int starts_line, const char **lines, size_t n)
{
	size_t i = 0, got = 0, k, end;

	buf[len] = '\0';
	if (!starts_line) { /* the first line began before the tail */
		while (i < len && buf[i] != '\n')
			i++;
		i = i < len ? i + 1 : len;
	}
	for (; i < len; i = end + 1) {
		for (end = i; end < len && buf[end] != '\n' && buf[end] != '\r'; end++) {
			unsigned char c = (unsigned char)buf[end];

			if (c == '\t')
				buf[end] = ' ';
			else if (c < 0x20 || c > 0x7e)
				buf[end] = '?';
		}
		buf[end] = '\0';
		if (end == i || n == 0)
			continue; /* empty lines are left out */
		if (got == n) {
			for (k = 1; k < n; k++)
				lines[k - 1] = lines[k];
			got--;
		}
		lines[got++] = buf + i;
	}
	return got;
}
