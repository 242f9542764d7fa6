/*
 * plugins/planned/problem.c - builds the placement problem from the plan's
 * lifetimes: buffers sorted by start, sections (distinct start times), the
 * lower bound (peak of live bytes), the count of overlapping pairs, and, when
 * that count is small enough, overlap lists and section members.
 * O(n log n) plus O(pairs) for the lists.  Never talks to the host.
 */
#include <stdlib.h>
#include <string.h>

#include "planned.h"

static int cmp_buf(const void *a, const void *b)
{
	const struct planned_buf *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* First position in the sorted array v[0..n) whose value is >= x. */
static size_t lower_bound(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The latest time the items name (ts: their own times, else steps), and
 * whether their own times are usable: every item has them, none ends before
 * it starts, and not all are equal.
 */
static int items_timed(const struct memprof_pool_lifetime *items, size_t n, int64_t *ts_max)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct memprof_pool_lifetime *it = &items[i];
		if (it->alloc_ts == MEMPROF_POOL_NO_TIME || it->free_ts == MEMPROF_POOL_NO_TIME ||
		    it->free_ts < it->alloc_ts)
			return 0;
		lo = it->alloc_ts < lo ? it->alloc_ts : lo;
		hi = it->alloc_ts > hi ? it->alloc_ts : hi;
		if (it->free_ts != INT64_MAX && it->free_ts > hi)
			hi = it->free_ts;
	}
	*ts_max = hi;
	return n > 0 && hi > lo && hi < INT64_MAX;
}

static double width_of(const struct memprof_pool_lifetime *it, const struct planned_buf *b,
                       int timed, int64_t ts_max)
{
	if (!timed)
		return (double)((uint64_t)b->end - (uint64_t)b->start);
	return (double)((uint64_t)(it->free_ts == INT64_MAX ? ts_max + 1 : it->free_ts) -
	                (uint64_t)it->alloc_ts);
}

static int collect_bufs(struct planned_problem *pb, const struct memprof_pool_lifetime *items,
                        size_t n_items, uint64_t align_bytes)
{
	int64_t t_max = INT64_MIN, ts_max = 0;
	size_t i, m = 0;

	for (i = 0; i < n_items; i++) {
		if (items[i].alloc_at > t_max)
			t_max = items[i].alloc_at;
		if (items[i].free_at != INT64_MAX && items[i].free_at > t_max)
			t_max = items[i].free_at;
	}
	pb->timed = items_timed(items, n_items, &ts_max);
	pb->bufs = malloc((n_items ? n_items : 1) * sizeof *pb->bufs);
	if (!pb->bufs)
		return MEMPROF_POOL_ENOMEM;
	for (i = 0; i < n_items; i++) {
		const struct memprof_pool_lifetime *it = &items[i];
		struct planned_buf *b = &pb->bufs[m];

		if (it->size_bytes == 0 || it->free_at <= it->alloc_at)
			continue;
		b->size_bytes = (it->size_bytes + align_bytes - 1) / align_bytes * align_bytes;
		b->start = it->alloc_at;
		b->end = it->free_at == INT64_MAX && t_max < INT64_MAX ? t_max + 1 : it->free_at;
		b->item = (uint32_t)i;
		b->width = width_of(it, b, pb->timed, ts_max);
		pb->gcd_bytes = gcd64(pb->gcd_bytes, b->size_bytes);
		m++;
	}
	pb->n_bufs = m;
	for (i = 1; i < m && pb->bufs[i - 1].start <= pb->bufs[i].start; i++)
		;
	if (i < m) /* else already in (start, item) order, as the host's items come */
		qsort(pb->bufs, m, sizeof *pb->bufs, cmp_buf);
	return MEMPROF_POOL_OK;
}

/*
 * The sections after each end by a table of the steps from the first start to
 * the last (uint32 each, in the scratch), when there are at most twice as many
 * steps as buffers: a section's number at each step; else 0.
 */
static int section_table(const struct planned_problem *pb, uint32_t *table)
{
	int64_t lo = pb->bufs[0].start, hi = pb->bufs[pb->n_bufs - 1].start;
	uint64_t range = (uint64_t)hi - (uint64_t)lo, k;
	uint32_t run = 0;

	if (range >= 2 * (uint64_t)pb->n_bufs)
		return 0;
	memset(table, 0, (range + 1) * sizeof *table);
	for (size_t i = 0; i < pb->n_bufs; i++)
		table[(uint64_t)pb->bufs[i].start - (uint64_t)lo] = 1;
	for (k = 0; k <= range; k++) { /* the distinct starts below each step */
		uint32_t here = table[k];
		table[k] = run;
		run += here;
	}
	return 1;
}

/* The first section whose start is at or past end: by the table, else a binary search. */
static uint32_t section_after(const struct planned_problem *pb, const void *scratch, int dense,
                              int64_t end)
{
	int64_t lo = pb->bufs[0].start, hi = pb->bufs[pb->n_bufs - 1].start;

	if (!dense)
		return (uint32_t)lower_bound(scratch, pb->n_sections, end);
	if (end > hi)
		return (uint32_t)pb->n_sections;
	return end <= lo ? 0 : ((const uint32_t *)scratch)[(uint64_t)end - (uint64_t)lo];
}

/*
 * Sections, each buffer's section range, the bytes live in each and the
 * peak.  scratch has room for n_bufs + 1 int64s (or twice as many uint32s).
 */
static int build_sections(struct planned_problem *pb, void *scratch)
{
	size_t i, s = 0, m = pb->n_bufs;
	uint64_t run = 0;
	int64_t *starts = scratch;
	int dense = m > 0 && section_table(pb, scratch);

	for (i = 0; i < m; i++)
		if (i == 0 || pb->bufs[i].start != pb->bufs[i - 1].start) {
			if (!dense)
				starts[s] = pb->bufs[i].start;
			s++;
		}
	pb->n_sections = s;
	pb->section_bytes = calloc(s + 1, sizeof *pb->section_bytes);
	if (!pb->section_bytes)
		return MEMPROF_POOL_ENOMEM;
	for (i = 0, s = 0; i < m; i++) {
		struct planned_buf *b = &pb->bufs[i];
		if (i > 0 && b->start != pb->bufs[i - 1].start)
			s++;
		b->s_lo = (uint32_t)s;
		b->s_hi = section_after(pb, scratch, dense, b->end);
		pb->section_bytes[b->s_lo] += b->size_bytes; /* a difference array first */
		pb->section_bytes[b->s_hi] -= b->size_bytes;
	}
	for (s = 0; s < pb->n_sections; s++) {
		run += pb->section_bytes[s];
		pb->section_bytes[s] = run;
		if (run > pb->lower_bound_bytes)
			pb->lower_bound_bytes = run;
	}
	return MEMPROF_POOL_OK;
}

/* Overlap lists: buffer i overlaps the later-starting j in (i, last[i]). */
static int build_overlaps(struct planned_problem *pb, const size_t *last)
{
	size_t i, j, m = pb->n_bufs;
	uint32_t *fill;

	pb->adj_start = calloc(m + 1, sizeof *pb->adj_start);
	pb->adj = malloc((2 * pb->n_pairs + 1) * sizeof *pb->adj);
	fill = malloc((m + 1) * sizeof *fill);
	if (!pb->adj_start || !pb->adj || !fill) {
		free(fill);
		return MEMPROF_POOL_ENOMEM;
	}
	for (i = 0; i < m; i++) {
		pb->adj_start[i + 1] += (uint32_t)(last[i] - i - 1);
		for (j = i + 1; j < last[i]; j++)
			pb->adj_start[j + 1]++;
	}
	for (i = 0; i < m; i++)
		pb->adj_start[i + 1] += pb->adj_start[i];
	memcpy(fill, pb->adj_start, (m + 1) * sizeof *fill);
	for (i = 0; i < m; i++)
		for (j = i + 1; j < last[i]; j++) {
			pb->adj[fill[i]++] = (uint32_t)j;
			pb->adj[fill[j]++] = (uint32_t)i;
		}
	free(fill);
	return MEMPROF_POOL_OK;
}

static int build_members(struct planned_problem *pb)
{
	size_t i, s, n_sec = pb->n_sections;
	uint32_t *fill;

	pb->sec_start = calloc(n_sec + 1, sizeof *pb->sec_start);
	fill = malloc((n_sec + 1) * sizeof *fill);
	if (!pb->sec_start || !fill) {
		free(fill);
		return MEMPROF_POOL_ENOMEM;
	}
	for (i = 0; i < pb->n_bufs; i++)
		for (s = pb->bufs[i].s_lo; s < pb->bufs[i].s_hi; s++)
			pb->sec_start[s + 1]++;
	for (s = 0; s < n_sec; s++)
		pb->sec_start[s + 1] += pb->sec_start[s];
	pb->sec_bufs = malloc((pb->sec_start[n_sec] + 1) * sizeof *pb->sec_bufs);
	if (!pb->sec_bufs) {
		free(fill);
		return MEMPROF_POOL_ENOMEM;
	}
	memcpy(fill, pb->sec_start, (n_sec + 1) * sizeof *fill);
	for (i = 0; i < pb->n_bufs; i++)
		for (s = pb->bufs[i].s_lo; s < pb->bufs[i].s_hi; s++)
			pb->sec_bufs[fill[s]++] = (uint32_t)i;
	free(fill);
	return MEMPROF_POOL_OK;
}

static void mark_dominant(struct planned_problem *pb)
{
	size_t i, k;

	for (i = 0; i < pb->n_bufs; i++) {
		const struct planned_buf *b = &pb->bufs[i];
		pb->dominant[i] = 1;
		for (k = pb->adj_start[i]; k < pb->adj_start[i + 1] && pb->dominant[i]; k++) {
			const struct planned_buf *c = &pb->bufs[pb->adj[k]];
			pb->dominant[i] = b->start <= c->start && c->end <= b->end;
		}
	}
}

struct twin_key {
	int64_t start, end;
	uint64_t size_bytes;
	uint32_t item, id;
};

static int cmp_twin(const void *a, const void *b)
{
	const struct twin_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->size_bytes != y->size_bytes)
		return x->size_bytes < y->size_bytes ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* Twins: equal neighbours once sorted by (start, end, size, item). */
static int build_twins(struct planned_problem *pb)
{
	struct twin_key *k = malloc((pb->n_bufs + 1) * sizeof *k);
	size_t i;

	if (!k)
		return MEMPROF_POOL_ENOMEM;
	for (i = 0; i < pb->n_bufs; i++) {
		const struct planned_buf *b = &pb->bufs[i];
		k[i] = (struct twin_key){b->start, b->end, b->size_bytes, b->item, (uint32_t)i};
		pb->twin_prev[i] = PLANNED_NO_TWIN;
	}
	qsort(k, pb->n_bufs, sizeof *k, cmp_twin);
	for (i = 1; i < pb->n_bufs; i++)
		if (k[i].start == k[i - 1].start && k[i].end == k[i - 1].end &&
		    k[i].size_bytes == k[i - 1].size_bytes)
			pb->twin_prev[k[i].id] = k[i - 1].id;
	free(k);
	return MEMPROF_POOL_OK;
}

/*
 * The overlapping pairs are counted first; only when there are few enough
 * for lists is where each buffer's overlaps end kept (8 bytes a buffer).
 * Buffer i overlaps those after it up to the first of its section s_hi:
 * first[] (in the scratch) holds each section's first buffer.
 */
static int build_pairs(struct planned_problem *pb, uint32_t *first)
{
	size_t i, m = pb->n_bufs, *last = NULL;
	int rc = MEMPROF_POOL_OK;

	for (i = 0; i < m; i++)
		if (i == 0 || pb->bufs[i].s_lo != pb->bufs[i - 1].s_lo)
			first[pb->bufs[i].s_lo] = (uint32_t)i;
	first[pb->n_sections] = (uint32_t)m;
	for (i = 0; i < m; i++)
		pb->n_pairs += first[pb->bufs[i].s_hi] - i - 1;
	if (pb->n_pairs <= PLANNED_PAIR_LIMIT) {
		if (!(last = malloc((m + 1) * sizeof *last)))
			return MEMPROF_POOL_ENOMEM;
		for (i = 0; i < m; i++)
			last[i] = first[pb->bufs[i].s_hi];
		rc = build_overlaps(pb, last);
		pb->dominant = malloc(m + 1);
		if (rc == MEMPROF_POOL_OK && !pb->dominant)
			rc = MEMPROF_POOL_ENOMEM;
		if (rc == MEMPROF_POOL_OK)
			mark_dominant(pb);
	}
	if (rc == MEMPROF_POOL_OK && pb->adj_start && m <= PLANNED_SEARCH_MAX_BUFS) {
		rc = build_members(pb);
		pb->twin_prev = malloc((m + 1) * sizeof *pb->twin_prev);
		if (rc == MEMPROF_POOL_OK && !pb->twin_prev)
			rc = MEMPROF_POOL_ENOMEM;
		if (rc == MEMPROF_POOL_OK)
			rc = build_twins(pb);
	}
	free(last);
	return rc;
}

int planned_problem_build(struct planned_problem *pb, const struct memprof_pool_lifetime *items,
                          size_t n_items, uint64_t align_bytes)
{
	void *scratch; /* n_bufs + 1 int64s: the sections' starts, then each one's first buffer */
	int rc;

	memset(pb, 0, sizeof *pb);
	rc = collect_bufs(pb, items, n_items, align_bytes ? align_bytes : 1);
	if (rc != MEMPROF_POOL_OK)
		return rc;
	scratch = malloc((pb->n_bufs + 1) * sizeof(int64_t));
	if (!scratch)
		return MEMPROF_POOL_ENOMEM;
	rc = build_sections(pb, scratch);
	if (rc == MEMPROF_POOL_OK)
		rc = build_pairs(pb, scratch);
	free(scratch);
	if (pb->gcd_bytes == 0)
		pb->gcd_bytes = 1;
	return rc;
}

void planned_problem_free_all_but_bufs(struct planned_problem *pb)
{
	free(pb->section_bytes);
	free(pb->adj_start);
	free(pb->adj);
	free(pb->sec_start);
	free(pb->sec_bufs);
	free(pb->dominant);
	free(pb->twin_prev);
	pb->section_bytes = NULL;
	pb->adj_start = pb->adj = pb->sec_start = pb->sec_bufs = pb->twin_prev = NULL;
	pb->dominant = NULL;
}

void planned_problem_free(struct planned_problem *pb)
{
	planned_problem_free_all_but_bufs(pb);
	free(pb->bufs);
	memset(pb, 0, sizeof *pb);
}

int planned_problem_check(const struct planned_problem *pb, const uint64_t *off)
{
	size_t i, k;

	if (!pb->adj_start)
		return -1;
	for (i = 0; i < pb->n_bufs; i++)
		for (k = pb->adj_start[i]; k < pb->adj_start[i + 1]; k++) {
			size_t j = pb->adj[k];
			if (off[i] < off[j] + pb->bufs[j].size_bytes &&
			    off[j] < off[i] + pb->bufs[i].size_bytes)
				return -1;
		}
	return 0;
}

uint64_t planned_makespan(const struct planned_problem *pb, const uint64_t *off)
{
	uint64_t top = 0;
	size_t i;

	for (i = 0; i < pb->n_bufs; i++)
		if (off[i] + pb->bufs[i].size_bytes > top)
			top = off[i] + pb->bufs[i].size_bytes;
	return top;
}
