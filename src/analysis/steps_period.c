/*
 * analysis/steps_period.c - steps from the period of the allocation
 * sequence (analysis/steps.h): keeps the first allocations of one process
 * and device (size, call stack, live bytes before them), searches them for
 * the smallest period that explains the longest tail, and picks an anchor
 * allocation that occurs once per period; later anchors mark later steps.
 */
#include "analysis/steps.h"
#include "util/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void free_prefix(struct mp_steps_period *p)
{
	free(p->sizes);
	free(p->stacks);
	free(p->live);
	free(p->seqs);
	free(p->ts);
	p->sizes = p->stacks = p->live = p->seqs = p->ts = NULL;
	p->n = p->cap = 0;
}

void mp_steps_period_free(struct mp_steps_period *p)
{
	free_prefix(p);
	free(p->marks);
	p->marks = NULL;
	p->n_marks = p->cap_marks = 0;
}

static int grow(int64_t **a, size_t cap)
{
	int64_t *n = realloc(*a, cap * sizeof(**a));

	if (!n)
		return MP_ENOMEM;
	*a = n;
	return 0;
}

static int prefix_push(struct mp_steps_period *p, size_t limit, const struct memprof_event *ev,
                       int64_t live)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;

		if (cap > limit)
			cap = limit;
		if (grow(&p->sizes, cap) || grow(&p->stacks, cap) || grow(&p->live, cap) ||
		    grow(&p->seqs, cap) || grow(&p->ts, cap))
			return MP_ENOMEM;
		p->cap = cap;
	}
	p->sizes[p->n] = ev->size_bytes;
	p->stacks[p->n] = ev->stack_id;
	p->live[p->n] = live;
	p->seqs[p->n] = ev->seq;
	p->ts[p->n] = ev->ts_ns;
	p->n++;
	return 0;
}

int mp_steps_period_add_mark(struct mp_steps_period *p, const struct memprof_event *ev)
{
	if (p->n_marks == MP_STEPS_MAX) {
		p->n_dropped++;
		return 0;
	}
	if (p->n_marks == p->cap_marks) {
		size_t cap = p->cap_marks ? p->cap_marks * 2 : 64;
		struct mp_step_mark *m = realloc(p->marks, cap * sizeof(*m));

		if (!m)
			return MP_ENOMEM;
		p->marks = m;
		p->cap_marks = cap;
	}
	p->marks[p->n_marks].seq = ev->seq;
	p->marks[p->n_marks].ts_ns = ev->ts_ns;
	p->n_marks++;
	return 0;
}

int mp_steps_period_is_anchor(const struct mp_steps_period *p, const struct memprof_event *ev)
{
	return p->found && ev->op == MEMPROF_OP_ALLOC && ev->process_id == p->process_id &&
	       ev->device == p->device && ev->size_bytes == p->anchor_size_bytes &&
	       ev->stack_id == p->anchor_stack_id;
}

int mp_steps_period_add(struct mp_steps_period *p, size_t cap, const struct memprof_event *ev,
                        int64_t live_before_bytes)
{
	int rc;

	if (p->n_allocs == 0) {
		p->process_id = ev->process_id;
		p->device = ev->device;
	} else if (ev->process_id != p->process_id || ev->device != p->device) {
		return 0;
	}
	p->n_allocs++;
	if (p->done) {
		if (!mp_steps_period_is_anchor(p, ev))
			return 0;
		return (rc = mp_steps_period_add_mark(p, ev)) < 0 ? rc : 1;
	}
	if ((rc = prefix_push(p, cap, ev, live_before_bytes)) < 0)
		return rc;
	if (p->n == cap && (rc = mp_steps_period_search(p)) < 0)
		return rc;
	return 1;
}

static int same(const struct mp_steps_period *p, size_t i, size_t j)
{
	return p->sizes[i] == p->sizes[j] && p->stacks[i] == p->stacks[j];
}

/* Where the tail periodic with period P begins: the least s such that
 * allocation i equals allocation i + P for every i >= s. */
static size_t periodic_from(struct mp_steps_period *p, size_t period)
{
	size_t i = p->n - period;

	while (i > 0 && same(p, i - 1, i - 1 + period) && p->work < MP_STEPS_MAX_WORK) {
		i--;
		p->work++;
	}
	p->work++;
	return i;
}

static const struct mp_steps_period *sort_ctx;

static int cmp_pos(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct mp_steps_period *p = sort_ctx;

	if (p->sizes[i] != p->sizes[j])
		return p->sizes[i] < p->sizes[j] ? -1 : 1;
	if (p->stacks[i] != p->stacks[j])
		return p->stacks[i] < p->stacks[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The anchor: of the allocations that occur once in the first period, the
 * one with the fewest live bytes before it (the earliest of equals). */
static int pick_anchor(struct mp_steps_period *p, size_t start, size_t period)
{
	size_t *pos = malloc(period * sizeof(*pos)), k, best = SIZE_MAX;

	if (!pos)
		return MP_ENOMEM;
	for (k = 0; k < period; k++)
		pos[k] = start + k;
	sort_ctx = p;
	qsort(pos, period, sizeof(*pos), cmp_pos);
	for (k = 0; k < period; k++) {
		size_t i = pos[k];

		if ((k > 0 && same(p, i, pos[k - 1])) || (k + 1 < period && same(p, i, pos[k + 1])))
			continue;
		if (best == SIZE_MAX || p->live[i] < p->live[best] ||
		    (p->live[i] == p->live[best] && i < best))
			best = i;
	}
	free(pos);
	if (best == SIZE_MAX)
		return 0; /* every allocation of the period repeats within it */
	p->anchor_index = (int64_t)best;
	p->anchor_size_bytes = p->sizes[best];
	p->anchor_stack_id = p->stacks[best];
	return 1;
}

/*
 * Whether the repeats of a period are steps.  A training step frees within
 * itself most of what it allocates (activations, gradients, temporaries), so
 * the live bytes before its anchor change from one step to the next by far
 * less than it allocates: by nothing in a steady state, by a leak's bytes
 * otherwise.  Repeats inside one step do not: each layer of a forward pass
 * keeps its activations, each layer of a backward pass frees the forward's.
 * So the live bytes before the anchors may change, per repeat on average, by
 * at most a quarter of the bytes one repeat allocates.  Records the last
 * period rejected and its figures.
 */
static int level_holds(struct mp_steps_period *p, size_t start, size_t period)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN, volume = 0, n_anchors = 0;
	size_t i;

	for (i = (size_t)p->anchor_index; i < p->n; i += period, n_anchors++) {
		lo = p->live[i] < lo ? p->live[i] : lo;
		hi = p->live[i] > hi ? p->live[i] : hi;
	}
	for (i = start; i < start + period; i++)
		volume += p->sizes[i] > 0 ? p->sizes[i] : 0;
	if (n_anchors < 2 || (double)(hi - lo) <= (double)volume / 4 * (double)(n_anchors - 1))
		return 1;
	p->rejected_period = (int64_t)period;
	p->rejected_repeats = n_anchors;
	p->rejected_drift_bytes = (hi - lo) / (n_anchors - 1);
	p->rejected_volume_bytes = volume;
	return 0;
}

/*
 * The smallest period whose periodic tail starts earliest, holding at least
 * two periods and a quarter of the allocations, with an anchor, whose repeats
 * begin at one memory level; multiples of a period found are not tried
 * (their tails start no later).
 */
static int search_period(struct mp_steps_period *p, size_t *best_period, size_t *best_start)
{
	size_t n = p->n, period, s;
	int rc;

	*best_period = 0;
	*best_start = n;
	for (period = 1; period <= n / 2 && *best_start > 0; period++) {
		if (*best_period && period % *best_period == 0)
			continue;
		if (p->work >= MP_STEPS_MAX_WORK) {
			p->work_exhausted = 1;
			break;
		}
		s = periodic_from(p, period);
		if (!(n - s >= 2 * period && (n - s) * 4 >= n && s < *best_start))
			continue;
		if ((rc = pick_anchor(p, s, period)) < 0)
			return rc;
		if (rc == 0 || !level_holds(p, s, period))
			continue;
		*best_period = period;
		*best_start = s;
		p->best_anchor_index = p->anchor_index;
	}
	if (*best_period) { /* the anchor of the period chosen (later tries moved it) */
		p->anchor_index = p->best_anchor_index;
		p->anchor_size_bytes = p->sizes[p->anchor_index];
		p->anchor_stack_id = p->stacks[p->anchor_index];
	}
	return 0;
}

int mp_steps_period_search(struct mp_steps_period *p)
{
	size_t period = 0, start = 0, i;
	int rc = 0;

	p->done = 1;
	p->n_searched = (int64_t)p->n;
	if (p->n >= 2 && (rc = search_period(p, &period, &start)) < 0)
		return rc;
	if (period > 0) {
		p->found = 1;
		p->period = (int64_t)period;
		p->start_index = (int64_t)start;
		for (i = (size_t)p->anchor_index; i < p->n && rc >= 0; i += period) {
			struct memprof_event ev = {.seq = p->seqs[i], .ts_ns = p->ts[i]};

			rc = mp_steps_period_add_mark(p, &ev);
		}
	}
	free_prefix(p);
	return rc < 0 ? rc : 0;
}
