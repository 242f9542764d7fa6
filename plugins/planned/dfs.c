/*
 * plugins/planned/dfs.c - the exact search: does a placement within cap
 * bytes exist?  Depth first over canonical placements (each buffer at its
 * lowest offset above its placed neighbours, offsets never decreasing),
 * pruned by dominance (no buffer placed above a gap another unplaced buffer
 * would fill) and by section bounds (floor + unplaced bytes <= cap); splits
 * into independent parts when no unplaced buffer spans a section boundary.
 * Ideas from MiniMalloc (Moffitt, ASPLOS 2023); the code is our own.
 * Exponential in the worst case: bounded by a node limit and a deadline.
 */
#include <stdlib.h>

#include "clock.h"
#include "dfs.h"

static enum dfs_result node(struct dfs *s, uint32_t p_lo, uint32_t p_hi, const uint32_t *in,
                            size_t n_in, int sorted, uint64_t last_off, uint32_t last_rank);

static int push(struct dfs_undo *u, uint32_t id, uint64_t old)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 1024;
		struct dfs_change *v = realloc(u->v, cap * sizeof *v);
		if (!v)
			return -1;
		u->v = v, u->cap = cap;
	}
	u->v[u->n].id = id;
	u->v[u->n++].old = old;
	return 0;
}

static int before(const struct dfs *s, uint32_t a, uint32_t b)
{
	if (s->min_off[a] != s->min_off[b])
		return s->min_off[a] < s->min_off[b];
	return s->rank[a] < s->rank[b];
}

/* The unplaced buffers of in[], by (lowest offset, rank), by insertion: in[] is nearly in order. */
static uint32_t *order_all(const struct dfs *s, const uint32_t *in, size_t n_in, size_t *n_out)
{
	uint32_t *v = malloc((n_in + 1) * sizeof *v);
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < n_in; i++) {
		uint32_t b = in[i];
		size_t j = n;
		if (s->off[b] != PLANNED_UNPLACED)
			continue;
		while (j > 0 && before(s, b, v[j - 1])) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = b;
		n++;
	}
	*n_out = n;
	return v;
}

/*
 * The same when in[] is the parent's order: only the neighbours the last
 * placement lifted have new keys.  The others keep their order; the lifted
 * ones are sorted apart and merged in from the back.  O(n + d^2), d lifted.
 */
static uint32_t *order(const struct dfs *s, const uint32_t *in, size_t n_in, int sorted,
                       size_t *n_out)
{
	uint32_t *v, *side;
	size_t i, n = 0, m = 0, k;

	if (!sorted)
		return order_all(s, in, n_in, n_out);
	v = malloc(2 * (n_in + 1) * sizeof *v);
	if (!v)
		return NULL;
	side = v + n_in + 1;
	for (i = 0; i < n_in; i++) {
		uint32_t b = in[i];
		size_t j = m;
		if (s->off[b] != PLANNED_UNPLACED)
			continue;
		if (s->lifted[b] != s->n_placed) {
			v[n++] = b;
			continue;
		}
		while (j > 0 && before(s, b, side[j - 1])) {
			side[j] = side[j - 1];
			j--;
		}
		side[j] = b;
		m++;
	}
	*n_out = n + m;
	for (k = n + m, i = n; m > 0;) /* merge from the back: v has room for both */
		v[--k] = i > 0 && before(s, side[m - 1], v[i - 1]) ? v[--i] : side[--m];
	return v;
}

/*
 * Raise the floor of section sec to the lowest offset of its unplaced
 * buffers (all of them stack above it).  Stops at the first one at or below
 * the floor: most sections are settled after a few.
 */
static int raise_floor(struct dfs *s, uint32_t sec)
{
	uint64_t lowest = PLANNED_UNPLACED;
	uint32_t k, first = s->pb->sec_start[sec];

	for (k = first; k < first + s->n_live[sec]; k++) {
		uint32_t c = s->live[k];
		if (s->min_off[c] <= s->floor[sec])
			return 0;
		if (s->min_off[c] < lowest)
			lowest = s->min_off[c];
	}
	if (lowest == PLANNED_UNPLACED)
		return 0;
	if (push(&s->undo_floor, sec, s->floor[sec]))
		return -1;
	s->floor[sec] = lowest;
	return 0;
}

/* Take b out of the unplaced members of sec (swap it past the end); undone by keep_member. */
static void drop_member(struct dfs *s, uint32_t b, uint32_t sec)
{
	const struct planned_problem *pb = s->pb;
	uint32_t k = s->where[s->span_start[b] + sec - pb->bufs[b].s_lo];
	uint32_t end = pb->sec_start[sec] + --s->n_live[sec], x = s->live[end];

	s->live[k] = x;
	s->where[s->span_start[x] + sec - pb->bufs[x].s_lo] = k;
	s->live[end] = b; /* b's own where[] keeps k, for keep_member */
}

static void keep_member(struct dfs *s, uint32_t b, uint32_t sec)
{
	const struct planned_problem *pb = s->pb;
	uint32_t k = s->where[s->span_start[b] + sec - pb->bufs[b].s_lo];
	uint32_t end = pb->sec_start[sec] + s->n_live[sec]++, x = s->live[k];

	s->live[end] = x;
	s->where[s->span_start[x] + sec - pb->bufs[x].s_lo] = end;
	s->live[k] = b;
}

/*
 * Raise b's unplaced neighbours above it; their sections are marked in
 * s->cover.  1 when b has none ("hatless"), 0, or -1 out of memory.
 */
static int lift_neighbours(struct dfs *s, uint32_t b, uint64_t top, uint32_t *c_lo, uint32_t *c_hi)
{
	const struct planned_problem *pb = s->pb;
	int hatless = 1;
	uint32_t k;

	for (k = pb->adj_start[b]; k < pb->adj_start[b + 1]; k++) {
		uint32_t c = pb->adj[k];
		if (s->off[c] != PLANNED_UNPLACED)
			continue;
		hatless = 0;
		if (s->min_off[c] >= top)
			continue;
		if (push(&s->undo_min, c, s->min_off[c]))
			return -1;
		s->min_off[c] = top;
		s->lifted[c] = s->n_placed;
		s->cover[pb->bufs[c].s_lo]++;
		s->cover[pb->bufs[c].s_hi]--;
		*c_lo = pb->bufs[c].s_lo < *c_lo ? pb->bufs[c].s_lo : *c_lo;
		*c_hi = pb->bufs[c].s_hi > *c_hi ? pb->bufs[c].s_hi : *c_hi;
	}
	return hatless;
}

/*
 * Place b at its lowest offset, recording every change for unplace, and check
 * the sections whose floors rose (only those of the neighbours it lifted,
 * which lie inside its part): 0, 1 when one can no longer hold its
 * unplaced bytes within cap, -1 out of memory.  The sections it did not
 * touch were checked by room_at before.  *hatless: b had no unplaced
 * neighbour, so no other choice here can do better if this one fails.
 */
static int place(struct dfs *s, uint32_t b, int *hatless)
{
	const struct planned_buf *bb = &s->pb->bufs[b];
	uint64_t o = s->min_off[b], top = o + bb->size_bytes;
	int32_t covered = 0;
	uint32_t sec, c_lo = UINT32_MAX, c_hi = 0;
	int rc = 0;

	s->off[b] = s->sol[b] = o;
	s->n_placed++;
	for (sec = bb->s_lo; sec < bb->s_hi; sec++) {
		s->left[sec] -= bb->size_bytes;
		drop_member(s, b, sec);
	}
	*hatless = lift_neighbours(s, b, top, &c_lo, &c_hi);
	if (*hatless < 0)
		rc = -1;
	for (sec = bb->s_lo; sec < bb->s_hi && rc == 0; sec++) {
		if (push(&s->undo_floor, sec, s->floor[sec]))
			rc = -1;
		else
			s->floor[sec] = top;
	}
	for (sec = c_lo; sec <= c_hi; sec++) { /* cover must be left all zero */
		covered += s->cover[sec];
		s->cover[sec] = 0;
		if (covered <= 0 || rc != 0)
			continue;
		if (raise_floor(s, sec))
			rc = -1;
		else if ((s->floor[sec] > o ? s->floor[sec] : o) + s->left[sec] > s->cap)
			rc = 1;
	}
	return rc;
}

static void unplace(struct dfs *s, uint32_t b, size_t min_mark, size_t floor_mark)
{
	const struct planned_buf *bb = &s->pb->bufs[b];
	uint32_t sec;

	while (s->undo_floor.n > floor_mark) {
		struct dfs_change *c = &s->undo_floor.v[--s->undo_floor.n];
		s->floor[c->id] = c->old;
	}
	for (sec = bb->s_hi; sec-- > bb->s_lo;) {
		s->left[sec] += bb->size_bytes;
		keep_member(s, b, sec);
	}
	while (s->undo_min.n > min_mark) {
		struct dfs_change *c = &s->undo_min.v[--s->undo_min.n];
		s->min_off[c->id] = c->old;
	}
	s->off[b] = PLANNED_UNPLACED;
}

/*
 * Can every section of the part hold its unplaced bytes above both its
 * floor and offset?  (Later buffers never go below the last one placed.)
 */
static int room_at(const struct dfs *s, uint32_t p_lo, uint32_t p_hi, uint64_t offset)
{
	uint32_t sec;

	for (sec = p_lo; sec < p_hi; sec++) {
		uint64_t f = s->floor[sec] > offset ? s->floor[sec] : offset;
		if (f + s->left[sec] > s->cap)
			return 0;
	}
	return 1;
}

/* Which part (between cut sections) a section falls in. */
static size_t part_of(const uint32_t *cut, size_t n_cut, uint32_t sec)
{
	size_t lo = 0, hi = n_cut;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cut[mid] <= sec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_key(const void *a, const void *b)
{
	const struct dfs_key *x = a, *y = b;
	int i;

	for (i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] > y->k[i] ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* Rank a part's buffers by s->preorder, T counting the bytes still unplaced; v[] in that order. */
static void rank_part(struct dfs *s, uint32_t *v, size_t n)
{
	const struct planned_problem *pb = s->pb;
	size_t i;
	int j;

	for (i = 0; i < n; i++) {
		const struct planned_buf *b = &pb->bufs[v[i]];
		double w = b->width, t = 0;
		uint32_t sec;
		for (sec = b->s_lo; sec < b->s_hi; sec++)
			t = (double)s->left[sec] > t ? (double)s->left[sec] : t;
		for (j = 0; j < 3; j++)
			s->keys[i].k[j] = s->preorder[j] == 'W'   ? w
			                  : s->preorder[j] == 'A' ? w * (double)b->size_bytes
			                                          : t;
		s->keys[i].item = b->item;
		s->keys[i].id = v[i];
	}
	qsort(s->keys, n, sizeof *s->keys, cmp_key);
	for (i = 0; i < n; i++) {
		v[i] = s->keys[i].id;
		s->rank[v[i]] = (uint32_t)i;
	}
}

/* Solve one part from scratch in its own preorder; its buffers' ranks are restored after. */
static enum dfs_result solve_part(struct dfs *s, uint32_t lo, uint32_t hi, uint32_t *v, size_t n)
{
	struct dfs_change *saved = malloc((n + 1) * sizeof *saved);
	enum dfs_result rc;
	size_t i;

	if (!saved)
		return DFS_FAILED;
	for (i = 0; i < n; i++)
		saved[i] = (struct dfs_change){.id = v[i], .old = s->rank[v[i]]};
	rank_part(s, v, n);
	rc = node(s, lo, hi, v, n, 0, 0, 0);
	for (i = 0; i < n; i++)
		s->rank[saved[i].id] = (uint32_t)saved[i].old;
	free(saved);
	return rc;
}

/* Solve the parts between cuts one by one: each is independent of the others. */
static enum dfs_result solve_parts(struct dfs *s, uint32_t p_lo, uint32_t p_hi, const uint32_t *cut,
                                   size_t n_cut, const uint32_t *ord, size_t n)
{
	uint32_t *v = malloc((n + 1) * sizeof *v);
	size_t *at = calloc(n_cut + 2, sizeof *at), i, p;
	enum dfs_result rc = DFS_FOUND;

	if (!v || !at) {
		free(v), free(at);
		return DFS_FAILED;
	}
	for (i = 0; i < n; i++)
		if (s->off[ord[i]] == PLANNED_UNPLACED)
			at[part_of(cut, n_cut, s->pb->bufs[ord[i]].s_lo) + 1]++;
	for (p = 0; p <= n_cut; p++)
		at[p + 1] += at[p];
	for (i = 0; i < n; i++)
		if (s->off[ord[i]] == PLANNED_UNPLACED)
			v[at[part_of(cut, n_cut, s->pb->bufs[ord[i]].s_lo)]++] = ord[i];
	for (p = 0; p <= n_cut && rc == DFS_FOUND; p++) {
		size_t first = p ? at[p - 1] : 0;
		uint32_t lo = p ? cut[p - 1] : p_lo, hi = p < n_cut ? cut[p] : p_hi;
		if (at[p] > first)
			rc = solve_part(s, lo, hi, v + first, at[p] - first);
	}
	free(v), free(at);
	return rc;
}

/* After placing b: go on in this part, or in the parts its placement cut apart. */
static enum dfs_result descend(struct dfs *s, uint32_t p_lo, uint32_t p_hi, const uint32_t *ord,
                               size_t n, uint32_t b)
{
	const struct planned_buf *bb = &s->pb->bufs[b];
	uint32_t *cut = NULL, sec;
	size_t n_cut = 0;
	int oom = 0;
	enum dfs_result rc;

	for (sec = bb->s_lo; sec + 1 < bb->s_hi; sec++) {
		if (--s->cuts[sec] != 0)
			continue;
		if (!cut && !oom)
			cut = malloc((bb->s_hi - bb->s_lo) * sizeof *cut);
		oom = !cut;
		if (cut)
			cut[n_cut++] = sec + 1;
	}
	if (oom)
		rc = DFS_FAILED;
	else if (n_cut == 0)
		rc = node(s, p_lo, p_hi, ord, n, 1, s->off[b], s->rank[b]);
	else
		rc = solve_parts(s, p_lo, p_hi, cut, n_cut, ord, n);
	for (sec = bb->s_lo; sec + 1 < bb->s_hi; sec++)
		s->cuts[sec]++;
	free(cut);
	return rc;
}

static enum dfs_result try_place(struct dfs *s, uint32_t p_lo, uint32_t p_hi, const uint32_t *ord,
                                 size_t n, uint32_t b, int *hatless)
{
	size_t min_mark = s->undo_min.n, floor_mark = s->undo_floor.n;
	enum dfs_result rc = DFS_NONE;
	int placed = place(s, b, hatless);

	if (placed < 0)
		rc = DFS_FAILED;
	else if (placed == 0)
		rc = descend(s, p_lo, p_hi, ord, n, b);
	unplace(s, b, min_mark, floor_mark);
	return rc;
}

static enum dfs_result node(struct dfs *s, uint32_t p_lo, uint32_t p_hi, const uint32_t *in,
                            size_t n_in, int sorted, uint64_t last_off, uint32_t last_rank)
{
	uint64_t min_top = PLANNED_UNPLACED, roomy = PLANNED_UNPLACED;
	enum dfs_result rc = DFS_NONE;
	int hatless = 0;
	size_t i, n;
	uint32_t *ord;

	if (s->nodes_left-- <= 0)
		return DFS_ABORTED;
	if (++s->n_nodes >= s->node_deadline ||
	    ((s->n_nodes & 63) == 0 && planned_now_ns() > s->deadline_ns))
		return DFS_EXPIRED;
	ord = order(s, in, n_in, sorted, &n);
	if (!ord)
		return DFS_FAILED;
	for (i = 0; i < n; i++)
		if (s->min_off[ord[i]] + s->pb->bufs[ord[i]].size_bytes < min_top)
			min_top = s->min_off[ord[i]] + s->pb->bufs[ord[i]].size_bytes;
	for (i = 0; i < n && rc == DFS_NONE && hatless != 1; i++) {
		uint32_t b = ord[i];
		uint64_t o = s->min_off[b];
		if (o >= min_top) /* a gap below that another buffer would fill */
			break;
		if (o < last_off || (o == last_off && s->rank[b] < last_rank))
			continue; /* not canonical: reached in another order */
		if (s->pb->twin_prev[b] != PLANNED_NO_TWIN &&
		    s->off[s->pb->twin_prev[b]] == PLANNED_UNPLACED)
			continue; /* its twin goes first */
		if (o != roomy && !room_at(s, p_lo, p_hi, o))
			break; /* nor at any higher offset */
		roomy = o;
		rc = try_place(s, p_lo, p_hi, ord, n, b, &hatless);
	}
	free(ord);
	return n == 0 ? DFS_FOUND : rc;
}

int dfs_init(struct dfs *s, const struct planned_problem *pb)
{
	size_t m = pb->n_bufs + 1, n_sec = pb->n_sections + 1;

	*s = (struct dfs){.pb = pb};
	s->off = malloc(m * sizeof *s->off);
	s->min_off = malloc(m * sizeof *s->min_off);
	s->sol = malloc(m * sizeof *s->sol);
	s->floor = malloc(n_sec * sizeof *s->floor);
	s->left = malloc(n_sec * sizeof *s->left);
	s->cuts = malloc(n_sec * sizeof *s->cuts);
	s->cover = calloc(n_sec, sizeof *s->cover);
	s->rank = calloc(m, sizeof *s->rank);
	s->keys = malloc(m * sizeof *s->keys);
	s->n_live = malloc(n_sec * sizeof *s->n_live);
	s->live = malloc((pb->sec_start[pb->n_sections] + 1) * sizeof *s->live);
	s->where = malloc((pb->sec_start[pb->n_sections] + 1) * sizeof *s->where);
	s->span_start = malloc(m * sizeof *s->span_start);
	s->lifted = calloc(m, sizeof *s->lifted);
	if (!s->lifted || !s->off || !s->min_off || !s->sol || !s->floor || !s->left || !s->cuts ||
	    !s->cover || !s->rank || !s->keys || !s->n_live || !s->live || !s->where ||
	    !s->span_start) {
		dfs_free(s);
		return MEMPROF_POOL_ENOMEM;
	}
	return MEMPROF_POOL_OK;
}

void dfs_free(struct dfs *s)
{
	free(s->off), free(s->min_off), free(s->sol), free(s->floor), free(s->left);
	free(s->cuts), free(s->cover), free(s->rank), free(s->keys);
	free(s->n_live), free(s->live), free(s->where), free(s->span_start), free(s->lifted);
	free(s->undo_min.v), free(s->undo_floor.v);
	*s = (struct dfs){0};
}

/* Every buffer an unplaced member of each of its sections, where[] pointing at it. */
static void reset_members(struct dfs *s)
{
	const struct planned_problem *pb = s->pb;
	uint32_t i, k, sec, span = 0;

	for (i = 0; i < pb->n_bufs; i++) {
		s->span_start[i] = span;
		span += pb->bufs[i].s_hi - pb->bufs[i].s_lo;
	}
	for (sec = 0; sec < pb->n_sections; sec++)
		for (k = pb->sec_start[sec]; k < pb->sec_start[sec + 1]; k++) {
			uint32_t c = pb->sec_bufs[k];
			s->live[k] = c;
			s->where[s->span_start[c] + sec - pb->bufs[c].s_lo] = k;
		}
}

/*
 * The state before the first choice: dominant buffers stacked at the bottom
 * (some best placement has them there), everything else unplaced.  1 when
 * they alone break cap, 0, or -1 out of memory.
 */
static int reset(struct dfs *s)
{
	const struct planned_problem *pb = s->pb;
	uint32_t i, sec, n_sec = (uint32_t)pb->n_sections;
	int hatless, rc = 0;

	for (i = 0; i < pb->n_bufs; i++)
		s->off[i] = PLANNED_UNPLACED, s->min_off[i] = 0;
	for (sec = 0; sec < n_sec; sec++) {
		s->floor[sec] = 0;
		s->left[sec] = pb->section_bytes[sec];
		s->cuts[sec] = 0;
		s->n_live[sec] = pb->sec_start[sec + 1] - pb->sec_start[sec];
	}
	reset_members(s);
	for (i = 0; i < pb->n_bufs && rc == 0; i++)
		if (pb->dominant[i])
			rc = place(s, i, &hatless);
	s->undo_min.n = s->undo_floor.n = 0; /* the base state: nothing to undo */
	for (i = 0; i < pb->n_bufs; i++)
		if (s->off[i] == PLANNED_UNPLACED)
			for (sec = pb->bufs[i].s_lo; sec + 1 < pb->bufs[i].s_hi; sec++)
				s->cuts[sec]++;
	return rc;
}

enum dfs_result dfs_run(struct dfs *s)
{
	const struct planned_problem *pb = s->pb;
	uint32_t *all = malloc((pb->n_bufs + 1) * sizeof *all), *cut, i;
	size_t n_cut = 0, n = 0;
	enum dfs_result rc;

	cut = malloc((pb->n_sections + 1) * sizeof *cut);
	if (!all || !cut) {
		free(all), free(cut);
		return DFS_FAILED;
	}
	switch (reset(s)) {
	case 0:
		for (i = 0; i < pb->n_bufs; i++)
			if (s->off[i] == PLANNED_UNPLACED)
				all[n++] = i;
		for (i = 0; i + 1 < pb->n_sections; i++)
			if (s->cuts[i] == 0)
				cut[n_cut++] = i + 1;
		rc = solve_parts(s, 0, (uint32_t)pb->n_sections, cut, n_cut, all, n);
		break;
	case 1:
		rc = DFS_NONE;
		break;
	default:
		rc = DFS_FAILED;
	}
	free(all), free(cut);
	return rc;
}
