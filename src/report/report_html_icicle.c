/*
 * report/report_html_icicle.c - the 'peak' chart: an icicle of what is
 * live at a device's live peak by call stack, built from the attribution's
 * stack groups (outermost frame at the top, width proportional to bytes),
 * interpreter, runtime and dispatch frames left out so user frames come first,
 * and the same with every frame behind a toggle (a closed <details>).
 * Cells narrower than MIN_PX are merged into one "other" cell per parent;
 * depth and cell count are capped so the page stays bounded.
 */
#include "report/report_html.h"
#include "util/stack_text.h"

#include <stdlib.h>
#include <string.h>

#define CELL_H        18
#define MIN_PX        2.0
#define MAX_DEPTH     48
#define MAX_CELLS     3000
#define MAX_CELLS_ALL 1000 /* the icicle with every frame, behind its toggle */
#define TOP           4

struct node {
	const struct memprof_frame *frame; /* NULL: the root, or "(no call stack)" */
	int64_t bytes, blocks;
	int32_t first_child, next_sibling; /* -1: none */
	int depth;
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	int64_t n_cut; /* stacks deeper than MAX_DEPTH */
};

/* A group's frames as drawn, outermost first: interpreter, runtime,
 * dispatch and allocator frames left out (util/stack_text.h,
 * mp_stack_frame_shown) unless that would leave none. */
struct path {
	const struct mp_attr_group *g;
	const struct memprof_frame **f;
	uint32_t n; /* at most MAX_DEPTH */
	int cut;    /* more frames than MAX_DEPTH */
};

static int frame_cmp(const struct memprof_frame *a, const struct memprof_frame *b)
{
	int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");

	if (c == 0)
		c = strcmp(a->file ? a->file : "", b->file ? b->file : "");
	if (c == 0)
		c = (a->line > b->line) - (a->line < b->line);
	return c;
}

/* Fill p from g, every frame kept when all; 0 or -1 (out of memory). */
static int path_of(struct path *p, const struct mp_attr_group *g, int all)
{
	const struct memprof_stack *s = g->stack;
	uint32_t i, total = s ? s->n_frames : 0, shown = 0;

	*p = (struct path){g, NULL, 0, 0};
	for (i = 0; i < total; i++)
		shown += (uint32_t)mp_stack_frame_shown(&s->frames[i]);
	all = all || shown == 0;
	if (total && !(p->f = malloc((all ? total : shown) * sizeof(*p->f))))
		return -1;
	for (i = total; i-- > 0;) {
		if (!all && !mp_stack_frame_shown(&s->frames[i]))
			continue;
		if (p->n == MAX_DEPTH) {
			p->cut = 1;
			break;
		}
		p->f[p->n++] = &s->frames[i];
	}
	return 0;
}

static int by_path(const void *pa, const void *pb)
{
	const struct path *a = pa, *b = pb;
	uint32_t k;
	int c;

	for (k = 0; k < a->n && k < b->n; k++)
		if ((c = frame_cmp(a->f[k], b->f[k])) != 0)
			return c;
	return (a->n > b->n) - (a->n < b->n);
}

static int32_t new_node(struct tree *t, const struct memprof_frame *f, int32_t parent, int depth)
{
	struct node *n;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;

		if (!(n = realloc(t->nodes, cap * sizeof(*n))))
			return -1;
		t->nodes = n;
		t->cap = cap;
	}
	n = &t->nodes[t->n];
	*n = (struct node){f, 0, 0, -1, -1, depth};
	if (parent >= 0) { /* prepend: children are sorted when drawn */
		n->next_sibling = t->nodes[parent].first_child;
		t->nodes[parent].first_child = (int32_t)t->n;
	}
	return (int32_t)t->n++;
}

/* Insert one path, sharing the nodes of its common prefix with prev. */
static int insert(struct tree *t, int32_t *path, const struct path *p, const struct path *prev,
                  int32_t *none)
{
	uint32_t k, common = 0;

	t->nodes[0].bytes += p->g->bytes;
	t->nodes[0].blocks += p->g->count;
	t->n_cut += p->cut;
	if (p->n == 0) {
		if (*none < 0 && (*none = new_node(t, NULL, 0, 1)) < 0)
			return -1;
		t->nodes[*none].bytes += p->g->bytes;
		t->nodes[*none].blocks += p->g->count;
		return 0;
	}
	while (prev && common < p->n && common < prev->n &&
	       frame_cmp(p->f[common], prev->f[common]) == 0)
		common++;
	for (k = common; k < p->n; k++)
		if ((path[k + 1] = new_node(t, p->f[k], path[k], (int)k + 1)) < 0)
			return -1;
	for (k = 1; k <= p->n; k++) {
		t->nodes[path[k]].bytes += p->g->bytes;
		t->nodes[path[k]].blocks += p->g->count;
	}
	return 0;
}

/* Insert the groups, sorted by path, sharing the nodes of common prefixes
 * with the group before.  Returns 0 or -1 (out of memory). */
static int build(struct tree *t, const struct mp_attr_group *g, size_t n, int all)
{
	int32_t path[MAX_DEPTH + 2], none = -1;
	struct path *p = calloc(n ? n : 1, sizeof(*p));
	size_t i;
	int rc = p && new_node(t, NULL, -1, 0) >= 0 ? 0 : -1;

	path[0] = 0;
	for (i = 0; rc == 0 && i < n; i++)
		rc = path_of(&p[i], &g[i], all);
	if (rc == 0)
		qsort(p, n, sizeof(*p), by_path);
	for (i = 0; rc == 0 && i < n; i++)
		rc = insert(t, path, &p[i], i ? &p[i - 1] : NULL, &none);
	for (i = 0; p && i < n; i++)
		free(p[i].f);
	free(p);
	return rc;
}

struct draw {
	struct mp_html_page *pg;
	const struct tree *t;
	double scale;  /* px per byte */
	int64_t total; /* bytes live at the peak */
	int32_t path[MAX_DEPTH + 2];
	int n_cells, n_cells_cut, max_cells;
};

static int by_bytes_desc(const void *pa, const void *pb, void *ctx)
{
	const struct node *n = ctx;
	int64_t a = n[*(const int32_t *)pa].bytes, b = n[*(const int32_t *)pb].bytes;

	return (a < b) - (a > b);
}

static unsigned frame_colour(const struct memprof_frame *f)
{
	const char *s = f && f->file && f->file[0] ? f->file : f && f->name ? f->name : "";
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % 7;
}

/* The tooltip: the frame, its bytes and share, and the stack down to it. */
static void cell_tip(struct draw *dr, const struct node *n, const char *other, int64_t n_other)
{
	struct mp_html_text *t = &dr->pg->tip;
	int k;

	mp_html_text_reset(t);
	if (other)
		mp_html_text_add(t, "%lld smaller call paths", (long long)n_other);
	else if (n->depth == 0)
		mp_html_text_add(t, "all blocks live at the peak");
	else if (!n->frame)
		mp_html_text_add(t, "(no call stack)");
	else
		mp_html_frame_text(t, n->frame, 1);
	mp_html_text_add(t, "\n%lld bytes (%.1f%% of the live peak), %lld blocks",
	                 (long long)n->bytes, 100.0 * (double)n->bytes / (double)dr->total,
	                 (long long)n->blocks);
	if (n->depth == 0 || (!n->frame && !other))
		return;
	mp_html_text_add(t, "\ncall stack, outermost first:");
	for (k = 1; k <= n->depth; k++) {
		const struct node *p = &dr->t->nodes[dr->path[k]];

		mp_html_text_add(t, "\n");
		if (p->frame)
			mp_html_frame_text(t, p->frame, 0);
	}
	if (other)
		mp_html_text_add(t, "\n(%lld smaller frames below)", (long long)n_other);
}

static void cell(struct draw *dr, const struct node *n, double x, double w, const char *other,
                 int64_t n_other)
{
	FILE *out = dr->pg->out;
	int depth = other ? n->depth + 1 : n->depth;
	double y = TOP + depth * CELL_H;

	dr->n_cells++;
	cell_tip(dr, n, other, n_other);
	fprintf(out, "<g class=\"cell%s\"", other ? " other" : "");
	mp_html_tip_open(dr->pg, 1);
	fprintf(out, "<rect class=\"p%u\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>",
	        other || !n->frame ? 7u : frame_colour(n->frame), x, y, w, CELL_H - 1);
	if (w > 36) {
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + CELL_H - 5);
		if (other)
			fputs("other", out);
		else if (n->depth == 0)
			fputs("all", out);
		else
			mp_html_escape_cut(out, n->frame ? n->frame->name : "(no call stack)",
			                   (size_t)((w - 6) / 6.5));
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

static void draw_node(struct draw *dr, int32_t id, double x)
{
	const struct node *n = &dr->t->nodes[id];
	double w = (double)n->bytes * dr->scale, cx = x, other_w = 0;
	int32_t kids[512], c; /* at most width / MIN_PX are that wide */
	size_t n_kids = 0, i;
	int64_t n_other = 0;

	if (dr->n_cells >= dr->max_cells) {
		dr->n_cells_cut++;
		return;
	}
	dr->path[n->depth] = id;
	cell(dr, n, x, w, NULL, 0);
	for (c = n->first_child; c >= 0; c = dr->t->nodes[c].next_sibling) {
		double cw = (double)dr->t->nodes[c].bytes * dr->scale;

		if (cw < MIN_PX || n_kids == sizeof(kids) / sizeof(kids[0])) {
			other_w += cw;
			n_other++;
		} else {
			kids[n_kids++] = c;
		}
	}
	qsort_r(kids, n_kids, sizeof(kids[0]), by_bytes_desc, dr->t->nodes);
	for (i = 0; i < n_kids; i++) {
		draw_node(dr, kids[i], cx);
		cx += (double)dr->t->nodes[kids[i]].bytes * dr->scale;
	}
	if (n_other && dr->n_cells < dr->max_cells) {
		struct node o = *n;

		o.bytes = (int64_t)(other_w / dr->scale + 0.5);
		cell(dr, &o, cx, other_w, "other", n_other);
	}
}

/* The deepest level with a cell at least MIN_PX wide. */
static int drawn_depth(const struct tree *t, double scale)
{
	int d = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		if ((double)t->nodes[i].bytes * scale >= MIN_PX && t->nodes[i].depth > d)
			d = t->nodes[i].depth;
	return d + 1; /* an "other" row below it */
}

static void icicle(struct mp_html_page *pg, const struct tree *t, int32_t device, int all)
{
	struct draw dr = {.pg = pg,
	                  .t = t,
	                  .total = t->nodes[0].bytes,
	                  .max_cells = all ? MAX_CELLS_ALL : MAX_CELLS};
	int height;
	char label[96];

	dr.scale = (double)MP_HTML_CHART_WIDTH / (double)dr.total;
	height = TOP + (drawn_depth(t, dr.scale) + 1) * CELL_H + 4;
	snprintf(label, sizeof(label), "what is live at the peak by call stack, device %d",
	         (int)device);
	mp_svg_open(pg->out, all ? "peak-all" : "peak", device, MP_HTML_CHART_WIDTH, height, label);
	draw_node(&dr, 0, 0);
	mp_svg_close(pg->out);
	fprintf(pg->out,
	        "<p class=\"sub\">Outermost frame at the top; widths proportional to bytes live "
	        "at the peak; cells narrower than %.0f px are merged into one grey 'other' cell "
	        "per parent.  %s",
	        MIN_PX,
	        all ? "Every frame is drawn, interpreter, runtime and dispatch frames included."
	            : "Interpreter, runtime and dispatch frames are left out (memprof(1), "
	              "MEMPROF_SKIP_FRAMES).");
	if (t->n_cut)
		fprintf(pg->out, " %lld stacks deeper than %d frames are cut there.",
		        (long long)t->n_cut, MAX_DEPTH);
	if (dr.n_cells_cut)
		fprintf(pg->out, " Only the first %d cells are drawn.", dr.max_cells);
	fputs("</p>\n", pg->out);
}

static int has_stacks(const struct mp_attr_group *g, ptrdiff_t n)
{
	ptrdiff_t i;

	for (i = 0; i < n; i++)
		if (g[i].stack && g[i].stack->n_frames)
			return 1;
	return 0;
}

/* Some frame of a stack is left out of the icicle (and the stack has others). */
static int has_hidden(const struct mp_attr_group *g, ptrdiff_t n)
{
	ptrdiff_t i;
	uint32_t k, shown, total;

	for (i = 0; i < n; i++) {
		total = g[i].stack ? g[i].stack->n_frames : 0;
		for (k = 0, shown = 0; k < total; k++)
			shown += (uint32_t)mp_stack_frame_shown(&g[i].stack->frames[k]);
		if (shown && shown < total)
			return 1;
	}
	return 0;
}

/* The same icicle with every frame, behind a toggle that starts closed. */
static void all_frames(struct mp_html_page *pg, const struct mp_attr_group *g, ptrdiff_t n,
                       int32_t device)
{
	struct tree t = {0};

	fputs("<details class=\"all-frames\"><summary>Show interpreter, runtime and dispatch "
	      "frames</summary>\n",
	      pg->out);
	if (build(&t, g, (size_t)n, 1) < 0)
		fputs("<p>Out of memory while building the call tree.</p>\n", pg->out);
	else if (t.nodes[0].bytes > 0)
		icicle(pg, &t, device, 1);
	fputs("</details>\n", pg->out);
	free(t.nodes);
}

void mp_html_peak_chart(struct mp_html_page *pg, int32_t device)
{
	const struct mp_attr_device *ad = mp_attribution_device(pg->in->a->attr, device);
	struct tree t = {0};
	struct mp_attr_group *g = NULL;
	ptrdiff_t n = 0;
	char b[64], at[32];

	fputs("<h3>What is live at the peak</h3>\n", pg->out);
	if (ad && ad->taken)
		g = mp_attribution_groups(ad, MP_ATTR_STACK, &n);
	if (!g || n <= 0) {
		fputs(n < 0 ? "<p>Out of memory while grouping the peak's blocks.</p>\n"
		            : "<p>Nothing is live at the peak of this device.</p>\n",
		      pg->out);
		free(g);
		return;
	}
	fprintf(pg->out, "<p class=\"sub\">%s in %lld blocks at %s (event %lld).</p>\n",
	        mp_html_bytes(b, sizeof(b), ad->live_bytes), (long long)ad->live_blocks,
	        mp_html_at(pg, at, sizeof(at), ad->ts_ns), (long long)ad->seq);
	if (!has_stacks(g, n))
		fputs("<p>No call stacks: no block live at this device's peak has one (the trace "
		      "was recorded or imported without them), so what is live cannot be drawn by "
		      "stack.</p>\n",
		      pg->out);
	else if (build(&t, g, (size_t)n, 0) < 0)
		fputs("<p>Out of memory while building the call tree.</p>\n", pg->out);
	else if (t.nodes[0].bytes > 0)
		icicle(pg, &t, device, 0);
	if (has_hidden(g, n))
		all_frames(pg, g, n, device);
	free(t.nodes);
	free(g);
}
