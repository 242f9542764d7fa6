/*
 * report/report_html_bands.c - the data and the frame of a device's two
 * interactive views, drawn by the page's script (report_views.js): the
 * active memory timeline (every block a band over time) and the allocator
 * state at a moment (segments and blocks by address).  Writes at most
 * --blocks blocks per device (about 75 bytes of page each), the largest;
 * the rest are merged into one series (analysis/span_merged, at most
 * 4097 doubles), and the page says so.  Computes nothing but that.
 */
#include "report/html_data.h"
#include "report/report_html.h"
#include "util/intmap.h"
#include "util/stack_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 40 /* per stack in a tooltip */
#define MAX_MARKS  22 /* the peak, 20 OOMs, the end */

struct view {
	struct mp_html_page *pg;
	const struct mp_block_spans_device *d;
	int time; /* the axis is time; else event order */
	double x1;
	size_t *sel, n_sel; /* blocks in the page, in order of allocation */
	size_t n_buckets;   /* of the merged series */
	struct mp_intmap stack_ix;
	const struct memprof_stack **stacks;
	size_t n_stacks;
	double mark_x[MAX_MARKS];
	char mark_label[MAX_MARKS][32];
	int n_marks;
};

static double xof(const struct view *v, int64_t ts_ns, int64_t seq)
{
	if (ts_ns == MP_SPAN_OPEN || seq == MP_SPAN_OPEN)
		return INFINITY;
	return v->time ? (double)ts_ns - (double)v->pg->t0_ns : (double)seq;
}

static int by_size_desc(const void *pa, const void *pb, void *ctx)
{
	const struct mp_block_span *b = ctx;
	int64_t x = b[*(const size_t *)pa].size_bytes, y = b[*(const size_t *)pb].size_bytes;

	return (x < y) - (x > y);
}

static int by_index(const void *pa, const void *pb)
{
	size_t x = *(const size_t *)pa, y = *(const size_t *)pb;

	return (x > y) - (x < y);
}

/* The blocks in the page: all, or the --blocks largest. */
static int select_blocks(struct view *v)
{
	size_t i, n = v->d->n_blocks, max = (size_t)v->pg->in->max_blocks;

	if (!(v->sel = malloc((n ? n : 1) * sizeof(*v->sel))))
		return -1;
	for (i = 0; i < n; i++)
		v->sel[i] = i;
	v->n_sel = n;
	if (n > max) {
		qsort_r(v->sel, n, sizeof(*v->sel), by_size_desc, v->d->blocks);
		v->n_sel = max;
		qsort(v->sel, v->n_sel, sizeof(*v->sel), by_index);
	}
	return 0;
}

/* The index of a block's stack among those written, -1 for none. */
static double stack_index(struct view *v, const struct mp_block_span *b)
{
	uint64_t ix;

	if (!b->stack || !b->stack->n_frames)
		return -1;
	if (mp_intmap_get(&v->stack_ix, (uint64_t)b->stack_id, &ix))
		return (double)ix;
	if (mp_intmap_put(&v->stack_ix, (uint64_t)b->stack_id, v->n_stacks) < 0)
		return -1;
	v->stacks[v->n_stacks] = b->stack;
	return (double)v->n_stacks++;
}

static int write_blocks(struct view *v)
{
	double *x = malloc((v->n_sel ? v->n_sel : 1) * 7 * sizeof(*x));
	size_t i;

	if (!x || !(v->stacks = malloc((v->n_sel ? v->n_sel : 1) * sizeof(*v->stacks)))) {
		free(x);
		return -1;
	}
	for (i = 0; i < v->n_sel; i++) {
		const struct mp_block_span *b = &v->d->blocks[v->sel[i]];
		double *o = &x[i * 7];

		o[0] = xof(v, b->alloc_ts_ns, b->alloc_seq);
		o[1] = xof(v, b->free_ts_ns, b->free_seq);
		o[2] = xof(v, b->release_ts_ns, b->release_seq);
		o[3] = (double)b->size_bytes;
		o[4] = (double)b->requested_bytes;
		o[5] = (double)b->address;
		o[6] = stack_index(v, b);
	}
	fputs(" data-blocks=\"", v->pg->out);
	mp_html_b64_doubles(v->pg->out, x, v->n_sel * 7);
	fputc('"', v->pg->out);
	free(x);
	return 0;
}

static int write_segments(struct view *v)
{
	double *x = malloc((v->d->n_segments ? v->d->n_segments : 1) * 4 * sizeof(*x));
	size_t i;

	if (!x)
		return -1;
	for (i = 0; i < v->d->n_segments; i++) {
		const struct mp_segment_span *s = &v->d->segments[i];

		x[i * 4] = xof(v, s->begin_ts_ns, s->begin_seq);
		x[i * 4 + 1] = xof(v, s->end_ts_ns, s->end_seq);
		x[i * 4 + 2] = (double)s->address;
		x[i * 4 + 3] = (double)s->size_bytes;
	}
	fputs(" data-segments=\"", v->pg->out);
	mp_html_b64_doubles(v->pg->out, x, v->d->n_segments * 4);
	fputc('"', v->pg->out);
	free(x);
	return 0;
}

/* The series of the merged blocks on the page's axis: block_spans' own,
 * plus the kept blocks the page leaves out (when --blocks is below the
 * spans' limit), added after the fact.  *own: the caller frees it. */
static const struct mp_span_merged *merged(struct view *v, struct mp_span_merged **own)
{
	const struct mp_span_merged *src = v->time ? v->d->by_time : v->d->by_seq;
	const struct mp_block_spans *bs = v->pg->in->spans;
	size_t i, n = v->d->n_blocks - v->n_sel;
	char *in;

	*own = NULL;
	if (!n)
		return src;
	if (!(*own = malloc(sizeof(**own))) || !(in = calloc(v->d->n_blocks, 1))) {
		free(*own);
		*own = NULL;
		return NULL;
	}
	if (src)
		**own = *src;
	else {
		mp_span_merged_init(*own);
		mp_span_merged_advance(*own, v->time ? bs->first_ts_ns : bs->first_seq);
	}
	for (i = 0; i < v->n_sel; i++)
		in[v->sel[i]] = 1;
	for (i = 0; i < v->d->n_blocks; i++) {
		const struct mp_block_span *b = &v->d->blocks[i];
		int open = b->free_seq == MP_SPAN_OPEN;

		if (in[i] || b->never_live)
			continue;
		mp_span_merged_add_life(*own, v->time ? b->alloc_ts_ns : b->alloc_seq,
		                        open ? (v->time ? bs->last_ts_ns : bs->last_seq)
		                             : (v->time ? b->free_ts_ns : b->free_seq),
		                        (double)b->size_bytes);
		(*own)->level += open ? (double)b->size_bytes : 0;
	}
	free(in);
	return *own;
}

/* The merged blocks' highest live bytes per bucket of the axis, then the
 * level at the end; where bucket 0 starts and the buckets' width. */
static int write_small(struct view *v)
{
	struct mp_span_merged *own;
	const struct mp_span_merged *m = merged(v, &own);
	double *x;
	size_t n;

	if (!m)
		return v->d->n_blocks > v->n_sel ? -1 : 0;
	if (!(x = malloc((MP_SPAN_BUCKETS + 1) * sizeof(*x)))) {
		free(own);
		return -1;
	}
	n = mp_span_merged_values(m, x);
	v->n_buckets = m->n;
	fprintf(v->pg->out, " data-small-x0=\"%.17g\" data-small-dx=\"%.17g\" data-small=\"",
	        v->time ? (double)m->origin - (double)v->pg->t0_ns : (double)m->origin,
	        (double)m->width);
	mp_html_b64_doubles(v->pg->out, x, n);
	fputc('"', v->pg->out);
	free(x);
	free(own);
	return 0;
}

/* A stack as [call site, frames innermost first]: interpreter and runtime
 * frames left out unless they are all it has. */
static void stack_json(FILE *m, struct mp_html_text *t, const struct memprof_stack *s)
{
	int site = mp_stack_call_site(s), shown = 0, hidden = 0;
	uint32_t i;

	mp_html_text_reset(t);
	mp_html_frame_text(t, &s->frames[site < 0 ? 0 : site], 0);
	fputc('[', m);
	mp_html_json_string(m, t->buf, t->len);
	mp_html_text_reset(t);
	for (i = 0; i < s->n_frames; i++)
		shown += mp_stack_frame_shown(&s->frames[i]);
	for (i = 0; i < s->n_frames; i++) {
		if (shown && !mp_stack_frame_shown(&s->frames[i])) {
			hidden++;
			continue;
		}
		if (i >= MAX_FRAMES)
			break;
		mp_html_text_add(t, "%s", t->len ? "\n" : "");
		mp_html_frame_text(t, &s->frames[i], 0);
	}
	if (hidden)
		mp_html_text_add(t, "\n(%d interpreter and runtime frames not shown)", hidden);
	fputc(',', m);
	mp_html_json_string(m, t->buf, t->len);
	fputc(']', m);
}

/* JSON built in memory, then written escaped as attribute NAME. */
static int json_attr(struct view *v, const char *name)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return -1;
	fputc('[', m);
	if (strcmp(name, "data-stacks") == 0) {
		for (i = 0; i < v->n_stacks; i++) {
			fputs(i ? "," : "", m);
			stack_json(m, &v->pg->tip, v->stacks[i]);
		}
	} else {
		for (i = 0; i < (size_t)v->n_marks; i++)
			fprintf(m, "%s[\"%s\",%.17g]", i ? "," : "", v->mark_label[i],
			        v->mark_x[i]);
	}
	fputc(']', m);
	if (fclose(m) != 0) {
		free(buf);
		return -1;
	}
	fprintf(v->pg->out, " %s=\"", name);
	mp_html_escape_n(v->pg->out, buf, len);
	fputc('"', v->pg->out);
	free(buf);
	return 0;
}

static void add_mark(struct view *v, const char *label, double x)
{
	if (v->n_marks == MAX_MARKS)
		return;
	snprintf(v->mark_label[v->n_marks], sizeof(v->mark_label[0]), "%s", label);
	v->mark_x[v->n_marks++] = x;
}

static void marks(struct view *v, const struct mp_mem_device *md, const struct mp_frag_device *fd,
                  const struct mp_block_spans *bs)
{
	char label[32];
	size_t i;

	if (md && md->live_peak.seq)
		add_mark(v, "the live peak", xof(v, md->live_peak.ts_ns, md->live_peak.seq));
	for (i = 0; fd && i < fd->n_ooms && v->n_marks < MAX_MARKS - 1; i++) {
		snprintf(label, sizeof(label), "OOM %zu", i + 1);
		add_mark(v, label, xof(v, fd->ooms[i].at.ts_ns, fd->ooms[i].at.seq));
	}
	add_mark(v, "the end", xof(v, bs->last_ts_ns, bs->last_seq));
}

static void controls(struct view *v)
{
	static const int whole[] = {5000, 1000, 200, 50, 10};
	FILE *out = v->pg->out;
	size_t i;
	int k;

	fputs("<div class=\"controls\"><label>bands drawn whole: <select class=\"detail\">"
	      "<option value=\"0\">all</option>",
	      out);
	for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if ((size_t)whole[i] < v->n_sel)
			fprintf(out, "<option value=\"%d\">the %d largest</option>", whole[i],
			        whole[i]);
	fputs("</select></label> <button type=\"button\" class=\"reset\">reset zoom</button>", out);
	if (v->n_sel == v->d->n_total && v->d->n_segments) {
		fputs(" <label>allocator state at: <select class=\"moment\">", out);
		for (k = 0; k < v->n_marks; k++)
			fprintf(out, "<option value=\"%d\">%s</option>", k, v->mark_label[k]);
		fputs("</select></label>", out);
	}
	fputs("</div>\n", out);
}

static void timeline_sentence(struct view *v)
{
	FILE *out = v->pg->out;

	fputs("<p class=\"sub\">Every block from its allocation to the program's free, stacked "
	      "in the order of allocation and coloured by call site; hover a band for its stack, "
	      "drag across the chart to zoom, click to pick a moment.  Each pixel column shows "
	      "the moment of its highest banded bytes. ",
	      out);
	if (!v->time)
		fputs("The trace has no timestamps: the axis is the order of its events. ", out);
	if (v->n_sel < v->d->n_total)
		fprintf(out,
		        "The page holds the %zu largest of the device's %zu blocks; the other %zu "
		        "are merged into the grey band, at their highest within each of %zu equal "
		        "stretches of the trace (one merged only after it ended, when larger "
		        "blocks "
		        "pushed it out, counts over the whole stretches at its two ends). ",
		        v->n_sel, v->d->n_total, v->d->n_total - v->n_sel, v->n_buckets);
	fputs("</p>\n", out);
}

static void state_frame(struct view *v)
{
	FILE *out = v->pg->out;

	fputs("<h3>Allocator state at a moment</h3>\n", out);
	if (!v->d->n_segments) {
		fputs("<p>No segment-level events on this device: the allocator's segments are "
		      "unknown, so its state cannot be drawn.</p>\n",
		      out);
		return;
	}
	if (v->n_sel < v->d->n_total) {
		fprintf(out,
		        "<p>Not drawn: the device has %zu blocks, more than the %zu the page holds "
		        "(--blocks); <code>memprof analyze --at=WHEN</code> gives the figures at "
		        "any moment.</p>\n",
		        v->d->n_total, v->n_sel);
		return;
	}
	fputs("<p class=\"sub state-figures\"></p>\n<canvas class=\"state\" width=\"960\" "
	      "height=\"216\"></canvas>\n<p class=\"sub\">The segments that hold memory at the "
	      "moment, by address, one after another in rows (each pixel the same number of "
	      "bytes): blocks the program holds in their call site's colour, blocks it freed "
	      "that the allocator cannot reuse yet (pending free) in orange, free bytes in light "
	      "grey, the largest hole outlined in red, a black line where a segment starts.  "
	      "Free in reserved: reserved bytes minus live bytes, as memprof-analyze(1) counts "
	      "it.</p>\n",
	      out);
}

static int view(struct view *v, const struct mp_mem_device *md, const struct mp_frag_device *fd,
                const struct mp_block_spans *bs)
{
	FILE *out = v->pg->out;

	v->time = !v->pg->in->a->no_timestamps;
	v->x1 = v->time ? (double)v->pg->t1_ns - (double)v->pg->t0_ns : (double)bs->last_seq;
	if (v->pg->x1_shared > 0)
		v->x1 = v->pg->x1_shared;
	if (select_blocks(v) < 0)
		return -1;
	marks(v, md, fd, bs);
	fprintf(out,
	        "<div class=\"bands-view\" hidden data-device=\"%d\" data-axis=\"%s\" "
	        "data-x0=\"0\" data-x1=\"%.17g\"",
	        (int)v->d->device, v->time ? "time" : "events", v->x1);
	if (v->pg->group)
		fprintf(out, " data-group=\"%s\"", v->pg->group);
	if (v->pg->run)
		fprintf(out, " data-run=\"%s\"", v->pg->run);
	if (write_blocks(v) < 0 || write_segments(v) < 0 || write_small(v) < 0 ||
	    json_attr(v, "data-stacks") < 0 || json_attr(v, "data-marks") < 0)
		return -1;
	fputs(">\n", out);
	controls(v);
	fputs("<div class=\"bands-box\"><canvas class=\"bands\" width=\"960\" height=\"320\">"
	      "</canvas><div class=\"brush\" hidden></div></div>\n<p class=\"sub bands-merged\">"
	      "</p>\n",
	      out);
	timeline_sentence(v);
	state_frame(v);
	fputs("</div>\n<noscript><p>The active memory timeline and the allocator state are drawn "
	      "by the page's script: allow JavaScript to see them.</p></noscript>\n",
	      out);
	return 0;
}

void mp_html_bands_view(struct mp_html_page *pg, int32_t device)
{
	const struct mp_block_spans *bs = pg->in->spans;
	struct view v = {.pg = pg};
	int rc;

	if (!pg->run)
		fputs("<h3>Active memory over time</h3>\n", pg->out);
	if (!bs || !(v.d = mp_block_spans_device(bs, device)) || !v.d->n_total) {
		fputs("<p>No blocks on this device.</p>\n", pg->out);
		return;
	}
	mp_intmap_init(&v.stack_ix);
	rc = view(&v, mp_memstate_device(pg->in->a->ms, device),
	          mp_frag_device(pg->in->a->frag, device), bs);
	if (rc < 0)
		fputs("\"><p>Out of memory while writing the timeline.</p></div>\n", pg->out);
	mp_intmap_free(&v.stack_ix);
	free(v.sel);
	free(v.stacks);
}
