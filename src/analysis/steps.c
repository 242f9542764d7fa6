/*
 * analysis/steps.c - step boundaries from phases (analysis/steps.h): the
 * begins of the phase named with --step, or of phase names that look like
 * steps, followed while the trace streams past; at the end, the choice of
 * a method (phase, phase name, period) and the sentence saying why.  The
 * period itself is searched by steps_period.c.
 */
#include "analysis/steps.h"
#include "util/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mp_steps_init(struct mp_steps *s, const char *step_name, size_t prefix_allocs)
{
	memset(s, 0, sizeof(*s));
	s->prefix_cap = prefix_allocs ? prefix_allocs : MP_STEPS_PREFIX_ALLOCS;
	if (step_name && !(s->step_name = strdup(step_name)))
		return MP_ENOMEM;
	return 0;
}

void mp_steps_free(struct mp_steps *s)
{
	int i;

	for (i = 0; i < s->n_cands; i++) {
		free(s->cands[i].key);
		free(s->cands[i].first_name);
		free(s->cands[i].begins);
	}
	mp_steps_period_free(&s->period);
	free(s->step_name);
	memset(s, 0, sizeof(*s));
}

const char *mp_steps_method_name(int method)
{
	switch (method) {
	case MP_STEPS_PHASE:
		return "phase";
	case MP_STEPS_PHASE_NAME:
		return "phase-name";
	case MP_STEPS_PERIOD:
		return "period";
	default:
		return "none";
	}
}

/* "step" or "iter" at i begins a word: at the start, after a character
 * that is not a letter, or in upper case after a lower-case letter. */
int mp_steps_name_like(const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];
		unsigned char prev = i ? (unsigned char)name[i - 1] : 0;
		int starts = i == 0 || !isalpha(prev) || (isupper(c) && islower(prev));

		if (starts && (strncasecmp(name + i, "step", 4) == 0 ||
		               strncasecmp(name + i, "iter", 4) == 0))
			return 1;
	}
	return 0;
}

/* The length of name without a trailing decimal number (kept whole when it
 * is all digits). */
static size_t key_len(const char *name)
{
	size_t n = strlen(name), k = n;

	while (k > 0 && isdigit((unsigned char)name[k - 1]))
		k--;
	return k == 0 ? n : k;
}

static struct mp_steps_candidate *candidate(struct mp_steps *s, const char *name, int create)
{
	size_t k = key_len(name);
	struct mp_steps_candidate *c;
	int i;

	for (i = 0; i < s->n_cands; i++)
		if (strlen(s->cands[i].key) == k && strncmp(s->cands[i].key, name, k) == 0)
			return &s->cands[i];
	if (!create)
		return NULL;
	if (s->n_cands == MP_STEPS_MAX_CANDIDATES) {
		s->n_cands_dropped++;
		return NULL;
	}
	c = &s->cands[s->n_cands];
	memset(c, 0, sizeof(*c));
	c->key = strndup(name, k);
	c->first_name = strdup(name);
	if (!c->key || !c->first_name) {
		free(c->key);
		free(c->first_name);
		return NULL;
	}
	s->n_cands++;
	return c;
}

/* With --step=NAME: a phase named NAME, or NAME and a decimal number. */
static int matches_step_name(const char *want, const char *name)
{
	size_t n = strlen(want);

	if (strncmp(want, name, n) != 0)
		return 0;
	for (name += n; *name; name++)
		if (!isdigit((unsigned char)*name))
			return 0;
	return 1;
}

/* The nesting depth of a (process, thread); NULL past MP_STEPS_MAX_THREADS. */
static int *depth_of(struct mp_steps *s, const struct memprof_event *ev)
{
	int i;

	for (i = 0; i < s->n_depths; i++)
		if (s->depths[i].process_id == ev->process_id && s->depths[i].thread == ev->thread)
			return &s->depths[i].depth;
	if (s->n_depths == MP_STEPS_MAX_THREADS)
		return NULL;
	s->depths[s->n_depths].process_id = ev->process_id;
	s->depths[s->n_depths].thread = ev->thread;
	s->depths[s->n_depths].depth = 0;
	return &s->depths[s->n_depths++].depth;
}

static int add_begin(struct mp_steps_candidate *c, const struct memprof_event *ev, int top)
{
	if (c->n_begins == 0 && c->n_other_processes == 0)
		c->process_id = ev->process_id;
	if (ev->process_id != c->process_id) {
		c->n_other_processes++;
		return 0;
	}
	c->n_begins++;
	c->n_top_level += top;
	c->end.seq = c->end.ts_ns = 0;
	if (c->n_marks == MP_STEPS_MAX) {
		c->n_dropped++;
		return 0;
	}
	if (c->n_marks == c->cap_marks) {
		size_t cap = c->cap_marks ? c->cap_marks * 2 : 64;
		struct mp_step_mark *m = realloc(c->begins, cap * sizeof(*m));

		if (!m)
			return MP_ENOMEM;
		c->begins = m;
		c->cap_marks = cap;
	}
	c->begins[c->n_marks].seq = ev->seq;
	c->begins[c->n_marks].ts_ns = ev->ts_ns;
	c->n_marks++;
	return 1;
}

static int on_phase(struct mp_steps *s, const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	int *depth = depth_of(s, ev), top = !depth || *depth == 0, follow;
	struct mp_steps_candidate *c = NULL;

	if (ev->op == MEMPROF_OP_PHASE_BEGIN) {
		s->n_phase_names_seen++;
		if (depth)
			(*depth)++;
	} else if (depth && *depth > 0) {
		(*depth)--;
	}
	if (!rec->phase)
		return 0;
	follow = s->step_name ? matches_step_name(s->step_name, rec->phase)
	                      : mp_steps_name_like(rec->phase);
	if (!follow)
		return 0;
	c = candidate(s, rec->phase, ev->op == MEMPROF_OP_PHASE_BEGIN);
	if (!c)
		return ev->op == MEMPROF_OP_PHASE_BEGIN && s->n_cands < MP_STEPS_MAX_CANDIDATES
		               ? MP_ENOMEM
		               : 0;
	if (strcmp(c->first_name, rec->phase) != 0)
		c->numbered = 1;
	if (ev->op == MEMPROF_OP_PHASE_BEGIN)
		return add_begin(c, ev, top);
	if (ev->process_id != c->process_id || c->n_marks == 0 || c->end.seq)
		return 0;
	c->end.seq = ev->seq; /* the end of the phase begun last, unless another begins */
	c->end.ts_ns = ev->ts_ns;
	return 1;
}

int mp_steps_feed(struct mp_steps *s, const struct memprof_record *rec, int64_t live_before_bytes)
{
	const struct memprof_event *ev = &rec->ev;

	if (ev->op == MEMPROF_OP_PHASE_BEGIN || ev->op == MEMPROF_OP_PHASE_END)
		return on_phase(s, rec);
	if (ev->op == MEMPROF_OP_ALLOC && !s->step_name)
		return mp_steps_period_add(&s->period, s->prefix_cap, ev, live_before_bytes);
	return 0;
}

static int marks_have(const struct mp_step_mark *m, size_t n, int64_t seq)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m[mid].seq == seq)
			return 1;
		if (m[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int mp_steps_needed(const struct mp_steps *s, int64_t seq)
{
	const struct mp_steps_period *p = &s->period;
	int i;

	for (i = 0; i < s->n_cands; i++)
		if (s->cands[i].end.seq == seq ||
		    marks_have(s->cands[i].begins, s->cands[i].n_marks, seq))
			return 1;
	if (!p->done && p->n > 0 && seq >= p->seqs[0])
		return 1;
	return marks_have(p->marks, p->n_marks, seq);
}

/* The step-like name to take: the most top-level begins, then the most
 * begins, then the first seen; NULL when none begins twice. */
static struct mp_steps_candidate *pick_candidate(struct mp_steps *s)
{
	struct mp_steps_candidate *best = NULL;
	int i;

	for (i = 0; i < s->n_cands; i++) {
		struct mp_steps_candidate *c = &s->cands[i];

		if (c->n_begins < 2)
			continue;
		if (!best || c->n_top_level > best->n_top_level ||
		    (c->n_top_level == best->n_top_level && c->n_begins > best->n_begins))
			best = c;
	}
	return best;
}

static void use_candidate(struct mp_steps *s, struct mp_steps_candidate *c, int method)
{
	struct mp_steps_result *r = &s->result;
	size_t n = strlen(c->key) + 2;
	char *shown = malloc(n);

	r->method = method;
	if (shown && c->numbered) { /* "ProfilerStep#N" */
		snprintf(shown, n, "%sN", c->key);
		free(c->first_name);
		c->first_name = shown;
	} else {
		free(shown);
	}
	r->name = c->first_name;
	r->starts = c->begins;
	r->n_steps = c->n_marks;
	r->n_dropped = c->n_dropped;
	r->last_end = c->end;
}

static void why_phase_name(struct mp_steps *s, const struct mp_steps_candidate *c)
{
	int n_like = 0, i;

	for (i = 0; i < s->n_cands; i++)
		n_like += s->cands[i].n_begins >= 2;
	snprintf(s->result.why, sizeof(s->result.why),
	         "phase '%s' looks like a training step (its name has 'step' or 'iter') and "
	         "begins %lld times, %lld at the top level%s",
	         s->result.name, (long long)c->n_begins, (long long)c->n_top_level,
	         n_like > 1 ? ": of the step-like names begun twice or more, the one begun most "
	                      "often at the top level"
	                    : "");
}

static void why_none(struct mp_steps *s)
{
	const struct mp_steps_period *p = &s->period;
	char period[420];

	if (p->n_allocs == 0)
		snprintf(period, sizeof(period), "the trace has no block-level allocations");
	else if (p->n_searched < 2)
		snprintf(period, sizeof(period), "there are too few allocations to repeat");
	else if (p->rejected_period)
		snprintf(period, sizeof(period),
		         "the first %lld allocations of the first process and device repeat every "
		         "%lld allocations (%lld times), but live bytes change by %lld bytes a "
		         "repeat, over a quarter of the %lld bytes a repeat allocates: repeats "
		         "inside "
		         "one step (layers), not steps",
		         (long long)p->n_searched, (long long)p->rejected_period,
		         (long long)p->rejected_repeats, (long long)p->rejected_drift_bytes,
		         (long long)p->rejected_volume_bytes);
	else
		snprintf(period, sizeof(period),
		         "the first %lld allocations of the first process and device repeat no "
		         "sequence twice over a quarter of them%s",
		         (long long)p->n_searched,
		         p->work_exhausted ? " (the search stopped at its work limit)" : "");
	snprintf(s->result.why, sizeof(s->result.why),
	         "no steps found: no phase name with 'step' or 'iter' begins twice (%lld phase "
	         "begins in the trace), and %s",
	         (long long)s->n_phase_names_seen, period);
}

int mp_steps_finish(struct mp_steps *s)
{
	struct mp_steps_result *r = &s->result;
	struct mp_steps_candidate *c;
	int rc;

	memset(r, 0, sizeof(*r));
	if (s->step_name) {
		c = s->n_cands ? &s->cands[0] : NULL; /* the one name followed */
		if (!c) {
			snprintf(r->why, sizeof(r->why),
			         "no steps found: no phase named '%s' begins in the trace (--step)",
			         s->step_name);
			return 0;
		}
		use_candidate(s, c, MP_STEPS_PHASE);
		snprintf(r->why, sizeof(r->why), "each begin of phase '%s' starts a step (--step)",
		         r->name);
		return 0;
	}
	if ((c = pick_candidate(s))) {
		use_candidate(s, c, MP_STEPS_PHASE_NAME);
		why_phase_name(s, c);
		return 0;
	}
	if (!s->period.done && s->period.n_allocs > 0 &&
	    (rc = mp_steps_period_search(&s->period)) < 0)
		return rc;
	if (!s->period.found) {
		why_none(s);
		return 0;
	}
	r->method = MP_STEPS_PERIOD;
	r->starts = s->period.marks;
	r->n_steps = s->period.n_marks;
	r->n_dropped = s->period.n_dropped;
	snprintf(r->why, sizeof(r->why),
	         "no phase name looks like a step; the allocation sequence repeats every %lld "
	         "allocations from allocation %lld on, and each step starts at the allocation of "
	         "%lld bytes that occurs once per period",
	         (long long)s->period.period, (long long)s->period.start_index + 1,
	         (long long)s->period.anchor_size_bytes);
	return 0;
}
