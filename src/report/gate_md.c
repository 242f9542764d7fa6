/*
 * report/gate_md.c - 'memprof diff' and 'memprof check' as Markdown for a
 * pull request comment: the result first, then the thresholds, one table of
 * figures and one of call sites per device, the pools and the notes.
 * Every string that may come from a trace goes through md_text, so a '|'
 * in a frame cannot break a table nor a '<' open an HTML tag.
 */
#include "report/gate.h"

#include <string.h>

#include "util/error.h"
#include "util/format.h"

/* s escaped for Markdown (GitHub/GitLab flavour), on one line. */
static void md_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', out);
		else if (strchr("\\`*_[]|~@#$!{}", c)) /* as report/report_md.c */
			fprintf(out, "\\%c", c);
		else
			fputc(c, out);
	}
}

static const char *bytes(char *buf, size_t n, int64_t v)
{
	return v < 0 ? "unknown" : mp_format_bytes(buf, n, v);
}

static void print_results(FILE *out, const struct mp_gate_report *r)
{
	static const char *const outcome[] = {"ok", "**exceeded**", "**NOT CHECKED**"};
	char s[600], lim[80];
	size_t i;

	if (r->n_results == 0)
		return;
	fprintf(out,
	        "\n### Thresholds\n\n| result | threshold | device | what |\n|---|---|---:|---|\n");
	for (i = 0; i < r->n_results; i++) {
		const struct mp_gate_result *res = &r->results[i];

		fprintf(out, "| %s | ", outcome[res->outcome]);
		md_text(out, mp_gate_limit_text(lim, sizeof(lim), res->limit));
		fprintf(out, " | %d | ", (int)res->device);
		md_text(out, mp_gate_result_text(s, sizeof(s), res));
		fprintf(out, " |\n");
	}
}

static void print_figures(FILE *out, const struct mp_gate_report *r, const struct mp_gate_device *b,
                          const struct mp_gate_device *h)
{
	static const struct mp_gate_table md = {
	        .head_diff = "| figure | BASE | HEAD | change |\n|---|---:|---:|---:|\n",
	        .head_check = "| figure | value |\n|---|---:|\n",
	        .row_diff = "| %s | %s | %s | %s |\n",
	        .row_check = "| %s | %s |\n",
	        .modelled_label = "peak reserved (modelled)",
	};

	mp_gate_print_figures(out, r, b, h, &md);
}

static void print_sites_check(FILE *out, const struct mp_gate_report *r,
                              const struct mp_gate_device *h)
{
	char b[32], s[1024];
	size_t i;

	if (h->n_sites == 0)
		return;
	fprintf(out, "\nLive at the peak by call site:\n\n| bytes | blocks | call site |\n"
	             "|---:|---:|---|\n");
	for (i = 0; i < h->n_sites && i < (size_t)r->top; i++) {
		fprintf(out, "| %s | %lld | ", mp_format_bytes(b, sizeof(b), h->sites[i].bytes),
		        (long long)h->sites[i].blocks);
		md_text(out, mp_gate_site_text(s, sizeof(s), &h->sites[i], 0));
		fprintf(out, " |\n");
	}
	if (h->n_sites > (size_t)r->top)
		fprintf(out, "\n%zu more call sites.\n", h->n_sites - (size_t)r->top);
}

static void print_sites_diff(FILE *out, const struct mp_gate_report *r,
                             const struct mp_gate_device_change *c)
{
	char tb[32], th[32], td[32], s[1024];
	size_t i;

	if (c->n_sites == 0) {
		fprintf(out, "\nLive at the peak by call site: no change.\n");
		return;
	}
	fprintf(out, "\nLive at the peak by call site, largest growth first:\n\n"
	             "| BASE | HEAD | change | call site |\n|---:|---:|---:|---|\n");
	for (i = 0; i < c->n_sites && i < (size_t)r->top; i++) {
		const struct mp_gate_site_change *sc = &c->sites[i];

		fprintf(out, "| %s | %s | %s | ",
		        sc->base ? mp_format_bytes(tb, sizeof(tb), sc->base->bytes) : "-",
		        sc->head ? mp_format_bytes(th, sizeof(th), sc->head->bytes) : "-",
		        mp_gate_signed_bytes(td, sizeof(td), sc->delta_bytes));
		md_text(out, mp_gate_site_text(s, sizeof(s), sc->head ? sc->head : sc->base, 0));
		fprintf(out, "%s |\n", !sc->base ? " (new)" : !sc->head ? " (gone)" : "");
	}
	if (c->n_sites > (size_t)r->top)
		fprintf(out, "\n%zu more call sites changed.\n", c->n_sites - (size_t)r->top);
}

static void print_devices(FILE *out, const struct mp_gate_report *r)
{
	char b[32];
	size_t i;

	if (!r->diff) {
		for (i = 0; i < r->head->n_devices; i++) {
			fprintf(out, "\n### Device %d\n\n", (int)r->head->devices[i].device);
			print_figures(out, r, NULL, &r->head->devices[i]);
			print_sites_check(out, r, &r->head->devices[i]);
		}
		return;
	}
	for (i = 0; i < r->diff->n_devices; i++) {
		const struct mp_gate_device_change *c = &r->diff->devices[i];

		fprintf(out, "\n### Device %d\n\n", (int)c->device);
		if (!c->base || !c->head) {
			fprintf(out, "Only in %s (peak live %s): not compared.\n",
			        c->base ? "BASE" : "HEAD",
			        mp_format_bytes(b, sizeof(b),
			                        (c->base ? c->base : c->head)->peak_live_bytes));
			continue;
		}
		print_figures(out, r, c->base, c->head);
		print_sites_diff(out, r, c);
	}
}

static void pool_cells(FILE *out, const struct mp_gate_pool *p)
{
	char b[32], t[32];

	if (!p) {
		fprintf(out, " - | - |");
		return;
	}
	fprintf(out, " %s | %s (%s) |", bytes(b, sizeof(b), p->peak_reserved_bytes),
	        p->total_ns >= 0 ? mp_format_duration(t, sizeof(t), p->total_ns) : "unknown",
	        p->time_measured ? "measured" : "modelled");
}

static void pool_row(FILE *out, const struct mp_gate_report *r, const struct mp_gate_pool *b,
                     const struct mp_gate_pool *h, int times_comparable)
{
	const struct mp_gate_pool *p = b ? b : h;
	char pc[32], tc[32];

	fprintf(out, "| %d | ", (int)p->device);
	md_text(out, p->pool);
	fprintf(out, " | ");
	md_text(out, p->backend);
	fprintf(out, " |");
	if (r->diff)
		pool_cells(out, b);
	pool_cells(out, h);
	if (!r->diff) {
		fputc('\n', out);
		return;
	}
	if (b && h && b->peak_reserved_bytes >= 0 && h->peak_reserved_bytes >= 0)
		mp_gate_percent_text(pc, sizeof(pc), b->peak_reserved_bytes,
		                     h->peak_reserved_bytes);
	else
		snprintf(pc, sizeof(pc), "-");
	if (times_comparable)
		mp_gate_percent_text(tc, sizeof(tc), b->total_ns, h->total_ns);
	else
		snprintf(tc, sizeof(tc), b && h ? "not compared" : "-");
	fprintf(out, " %s | %s |\n", pc, tc);
}

static void print_pools(FILE *out, const struct mp_gate_report *r)
{
	size_t i;

	if (r->diff ? r->diff->n_pools == 0 : r->head->n_pools == 0)
		return;
	fprintf(out, "\n### Replayed pools\n\nThe newest stored replay of each pool.\n\n");
	if (r->diff) {
		fprintf(out, "| device | pool | backend | BASE peak reserved | BASE allocator time "
		             "| HEAD peak reserved | HEAD allocator time | peak reserved change "
		             "| time change |\n|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
		for (i = 0; i < r->diff->n_pools; i++)
			pool_row(out, r, r->diff->pools[i].base, r->diff->pools[i].head,
			         r->diff->pools[i].times_comparable);
		return;
	}
	fprintf(out, "| device | pool | backend | peak reserved | allocator time |\n"
	             "|---:|---|---|---:|---:|\n");
	for (i = 0; i < r->head->n_pools; i++)
		pool_row(out, r, NULL, &r->head->pools[i], 0);
}

struct note_ctx {
	FILE *out;
	int n;
};

static void put_note(void *ctx, const char *note)
{
	struct note_ctx *c = ctx;

	if (c->n++ == 0)
		fprintf(c->out, "\n### Notes\n\n");
	fputs("- ", c->out);
	md_text(c->out, note);
	fputc('\n', c->out);
}

static void print_header(FILE *out, const struct mp_gate_report *r)
{
	char s[200];

	fprintf(out, "## memprof %s: %s\n\n", r->command,
	        r->n_limits ? mp_gate_summary(s, sizeof(s), r) : "no threshold checked");
	if (r->base) {
		fputs("BASE: ", out);
		md_text(out, r->base->path);
		fputs("  \nHEAD: ", out);
	} else {
		fputs("Trace: ", out);
	}
	md_text(out, r->head->path);
	fputc('\n', out);
}

int mp_gate_write_md(FILE *out, const struct mp_gate_report *r)
{
	struct note_ctx c = {out, 0};

	print_header(out, r);
	print_results(out, r);
	print_devices(out, r);
	print_pools(out, r);
	mp_gate_notes(r, put_note, &c);
	return ferror(out) ? MP_EIO : 0;
}
