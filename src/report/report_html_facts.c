/*
 * report/report_html_facts.c - the snapshot's own facts, under the page's
 * header: the clock, whether timestamps are known, the window (blocks live
 * before the trace's first event), which figures are modelled, the
 * allocator's settings and its private pools, each as the import stored it
 * in the trace's meta.  Every value is trace text: all of it is escaped.
 */
#include "report/report_html.h"
#include "util/format.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static void row_open(FILE *out, const char *label)
{
	fprintf(out, "<dt>%s</dt><dd>", label);
}

/* A JSON object's members as "key: value" lines; other JSON as its text. */
static void json_value(FILE *out, const char *text)
{
	cJSON *j = cJSON_Parse(text), *m;
	char *v;

	if (!j || !cJSON_IsObject(j)) {
		fputs("<code>", out);
		mp_html_escape(out, text);
		fputs("</code>", out);
		cJSON_Delete(j);
		return;
	}
	fputs("<table class=\"settings\">", out);
	cJSON_ArrayForEach(m, j)
	{
		fputs("<tr><td><code>", out);
		mp_html_escape(out, m->string);
		fputs("</code></td><td><code>", out);
		v = cJSON_IsString(m) ? NULL : cJSON_PrintUnformatted(m);
		mp_html_escape(out, cJSON_IsString(m) ? m->valuestring : v);
		free(v);
		fputs("</code></td></tr>", out);
	}
	fputs("</table>", out);
	cJSON_Delete(j);
}

static void window_row(struct mp_html_page *pg)
{
	const struct mp_report_input *in = pg->in;
	int64_t n = in->a->ms->n_by_op[MEMPROF_OP_PREEXISTING], bytes = 0;
	char b[32];
	int i;

	for (i = 0; in->spans && i < in->spans->n_devices; i++)
		bytes += in->spans->devices[i].preexisting_bytes;
	row_open(pg->out, "window");
	if (n == 0)
		fputs("the trace starts with nothing live: it holds every block from its "
		      "allocation</dd>\n",
		      pg->out);
	else
		fprintf(pg->out,
		        "%lld blocks (%s) were allocated before the trace's first event (the "
		        "snapshot's window): they are live from its start, with what the snapshot "
		        "kept of them</dd>\n",
		        (long long)n, mp_format_bytes(b, sizeof(b), bytes));
}

void mp_html_facts(struct mp_html_page *pg)
{
	const struct mp_report_input *in = pg->in;
	FILE *out = pg->out;

	fputs("<section class=\"facts\">\n<h2>The trace's own facts</h2>\n<dl class=\"meta\">\n",
	      out);
	row_open(out, "clock");
	mp_html_escape(out, in->clock ? in->clock : "as recorded (nanoseconds)");
	fputs("</dd>\n", out);
	row_open(out, "timestamps");
	fputs(in->a->no_timestamps
	              ? "none: only the order of events is known; the timeline's axis is event "
	                "order</dd>\n"
	              : "known</dd>\n",
	      out);
	window_row(pg);
	row_open(out, "modelled figures");
	if (in->a->modelled_granted_blocks > 0)
		fprintf(out,
		        "the granted sizes of %lld blocks freed inside the window are modelled "
		        "from "
		        "their requests (the snapshot keeps only the request); every other figure "
		        "is as recorded</dd>\n",
		        (long long)in->a->modelled_granted_blocks);
	else
		fputs("none: every figure is as recorded</dd>\n", out);
	if (in->allocator_settings) {
		row_open(out, "allocator settings");
		json_value(out, in->allocator_settings);
		fputs("</dd>\n", out);
	}
	if (in->private_pools) {
		row_open(out, "private pools");
		json_value(out, in->private_pools);
		fputs("</dd>\n", out);
	}
	fputs("</dl>\n</section>\n", out);
}
