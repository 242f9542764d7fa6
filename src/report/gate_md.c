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

static const struct mp_gate_sites_style md_sites = {
        .head_check = "\nLive at the peak by call site:\n\n| bytes | blocks | call site |\n"
                      "|---:|---:|---|\n",
        .row_check = "| %s | %lld | ",
        .end_check = " |\n",
        .more_check = "\n%zu more call sites.\n",
        .head_diff = "\nLive at the peak by call site, largest growth first:\n\n"
                     "| BASE | HEAD | change | call site |\n|---:|---:|---:|---|\n",
        .row_diff = "| %s | %s | %s | ",
        .end_diff = "%s |\n",
        .more_diff = "\n%zu more call sites changed.\n",
        .no_change = "\nLive at the peak by call site: no change.\n",
        .new_mark = " (new)",
        .gone_mark = " (gone)",
        .site_size = 1024,
        .site_width = 0,
        .write_site = md_text,
};

static void print_devices(FILE *out, const struct mp_gate_report *r)
{
	char b[32];
	size_t i;

	if (!r->diff) {
		for (i = 0; i < r->head->n_devices; i++) {
			fprintf(out, "\n### Device %d\n\n", (int)r->head->devices[i].device);
			print_figures(out, r, NULL, &r->head->devices[i]);
			mp_gate_print_sites_check(out, r, &r->head->devices[i], &md_sites);
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
		mp_gate_print_sites_diff(out, r, c, &md_sites);
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
