/*
 * analysis/plan.c - the plan metrics' listener (analysis/plan.h): keeps
 * each device's fragmentation figures after its last event, copies them
 * before every record the step detector may need, counts call times and
 * OOM verdicts; after the run, lays the steps out and fits each device's
 * trend.  Reads analysis/frag's figures; computes no holes itself.
 */
#include "analysis/plan.h"
#include "util/error.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

enum { SNAP_INLINE = 2 };

struct mp_plan_snap {
	int64_t seq;
	int n;                     /* slots known then */
	struct mp_plan_point *pts; /* n > SNAP_INLINE: the copy; else NULL, the copy in few */
	struct mp_plan_point few[SNAP_INLINE];
};

/* A copy's points (a trace of one or two devices, the common case, needs no
 * array of its own). */
static const struct mp_plan_point *snap_points(const struct mp_plan_snap *s)
{
	return s->n <= SNAP_INLINE ? s->few : s->pts;
}

int mp_plan_init(struct mp_plan *p, const struct mp_memstate *ms, const struct mp_frag *frag,
                 const char *step_name, int32_t device, size_t prefix_allocs)
{
	memset(p, 0, sizeof(*p));
	p->ms = ms;
	p->frag = frag;
	p->device_filter = device;
	p->prune_at = 1024;
	return mp_steps_init(&p->steps, step_name, prefix_allocs);
}

void mp_plan_free(struct mp_plan *p)
{
	size_t i;
	int k, c;

	for (i = 0; i < p->n_snaps; i++)
		free(p->snaps[i].pts);
	free(p->snaps);
	for (i = 0; i < p->n_spare; i++)
		free(p->spare[i]);
	free(p->spare);
	for (k = 0; k < p->n_devices; k++)
		free(p->devices[k].at_end);
	for (c = 0; c < MP_CALL_KINDS; c++) {
		mp_hist_free(&p->overhead.all[c]);
		for (k = 0; k < MP_PLAN_SIZE_CLASSES; k++)
			mp_hist_free(&p->overhead.by_class[c][k]);
	}
	free(p->step_list);
	mp_steps_free(&p->steps);
}

int64_t mp_plan_span_ns(const struct mp_plan *p)
{
	int64_t end = p->ms->last_ts_ns;

	if (!p->ms->n_events)
		return 0;
	if (p->overhead.n_with_duration && p->overhead.last_end_ns > end)
		end = p->overhead.last_end_ns;
	return mp_sat_sub(end, p->ms->first_ts_ns); /* any int64 times */
}

int mp_plan_class_common(const struct mp_plan *p, int k)
{
	const struct mp_plan_overhead *o = &p->overhead;

	return o->all[MP_CALL_ALLOC].n > 0 &&
	       (double)o->by_class[MP_CALL_ALLOC][k].n >=
	               MP_PLAN_COMMON_SHARE * (double)o->all[MP_CALL_ALLOC].n;
}

int mp_plan_alloc_target_met(const struct mp_plan *p)
{
	int k;

	if (p->overhead.all[MP_CALL_ALLOC].n == 0)
		return -1;
	for (k = 0; k < MP_PLAN_SIZE_CLASSES; k++)
		if (mp_plan_class_common(p, k) &&
		    mp_hist_quantile(&p->overhead.by_class[MP_CALL_ALLOC][k], 0.5) >=
		            MP_PLAN_TARGET_ALLOC_NS)
			return 0;
	return 1;
}

/* A copy no longer needed: kept for reuse when it has the size the next
 * copies will have, else freed. */
static void drop_points(struct mp_plan *p, struct mp_plan_snap *s)
{
	if (!s->pts)
		return;
	if (s->n != p->n_slots || p->n_spare == p->cap_spare) {
		free(s->pts);
		return;
	}
	p->spare[p->n_spare++] = s->pts;
}

/* Drop the copies the detector no longer needs. */
static void prune(struct mp_plan *p)
{
	size_t i, kept = 0;

	if (p->spare_n != p->n_slots) { /* the spares are of an old size */
		for (i = 0; i < p->n_spare; i++)
			free(p->spare[i]);
		p->n_spare = 0;
		p->spare_n = p->n_slots;
	}
	if (p->cap_spare < p->n_snaps) {
		struct mp_plan_point **sp = realloc(p->spare, p->n_snaps * sizeof(*sp));

		if (sp) {
			p->spare = sp;
			p->cap_spare = p->n_snaps;
		}
	}
	for (i = 0; i < p->n_snaps; i++) {
		if (mp_steps_needed(&p->steps, p->snaps[i].seq))
			p->snaps[kept++] = p->snaps[i];
		else
			drop_points(p, &p->snaps[i]);
	}
	p->n_snaps = kept;
	p->prune_at = kept * 2 > 1024 ? kept * 2 : 1024;
}

/* Keep the state before rec: every device's figures after its last event. */
static int keep(struct mp_plan *p, const struct memprof_event *ev)
{
	struct mp_plan_snap *s;

	if (p->n_snaps >= p->prune_at)
		prune(p);
	if (p->n_snaps == p->cap_snaps) {
		size_t cap = p->cap_snaps ? p->cap_snaps * 2 : 256;

		if (!(s = realloc(p->snaps, cap * sizeof(*s))))
			return MP_ENOMEM;
		p->snaps = s;
		p->cap_snaps = cap;
	}
	s = &p->snaps[p->n_snaps];
	s->seq = ev->seq;
	s->n = p->n_slots;
	s->pts = NULL;
	if (s->n <= SNAP_INLINE) {
		memcpy(s->few, p->last, (size_t)s->n * sizeof(*s->few));
		p->n_snaps++;
		return 0;
	}
	if (s->n > 0 && s->n == p->spare_n && p->n_spare > 0)
		s->pts = p->spare[--p->n_spare];
	else if (s->n > 0 && !(s->pts = malloc((size_t)s->n * sizeof(*s->pts))))
		return MP_ENOMEM;
	if (s->n > 0)
		memcpy(s->pts, p->last, (size_t)s->n * sizeof(*s->pts));
	p->n_snaps++;
	return 0;
}

static int is_call(int op, int *kind)
{
	switch (op) {
	case MEMPROF_OP_ALLOC:
	case MEMPROF_OP_RESERVE:
	case MEMPROF_OP_MAP:
	case MEMPROF_OP_OOM:
		*kind = MP_CALL_ALLOC;
		return 1;
	case MEMPROF_OP_FREE:
	case MEMPROF_OP_RELEASE:
	case MEMPROF_OP_UNMAP:
		*kind = MP_CALL_FREE;
		return 1;
	default:
		return 0;
	}
}

static int size_class(int64_t size_bytes)
{
	int k = 0;

	while (size_bytes > 0 && k < MP_PLAN_SIZE_CLASSES - 1) {
		size_bytes >>= 1;
		k++;
	}
	return k;
}

/* An allocation or free call: its duration, when the trace has one. */
static int add_call(struct mp_plan_overhead *o, const struct memprof_event *ev)
{
	int kind, rc;
	int64_t size;

	if (!is_call(ev->op, &kind))
		return 0;
	o->n_calls++;
	o->n_by_kind[kind]++;
	if (ev->duration_ns <= 0)
		return 0;
	if (o->n_with_duration++ == 0 || ev->ts_ns > o->last_end_ns - ev->duration_ns)
		o->last_end_ns = ev->ts_ns > INT64_MAX - ev->duration_ns
		                         ? INT64_MAX
		                         : ev->ts_ns + ev->duration_ns;
	o->time_ns =
	        ev->duration_ns > INT64_MAX - o->time_ns ? INT64_MAX : o->time_ns + ev->duration_ns;
	size = ev->op == MEMPROF_OP_OOM && ev->requested_bytes > 0 ? ev->requested_bytes
	                                                           : ev->size_bytes;
	if ((rc = mp_hist_add(&o->all[kind], ev->duration_ns)) < 0)
		return rc;
	return mp_hist_add(&o->by_class[kind][size_class(size)], ev->duration_ns);
}

static void take(struct mp_plan_point *pt, const struct mp_frag_point *f)
{
	pt->seen = 1;
	pt->live_bytes = f->live_bytes;
	pt->reserved_bytes = f->reserved_bytes;
	pt->free_in_reserved_bytes = f->free_in_reserved_bytes;
	pt->largest_free_bytes = f->largest_free_bytes;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *d,
                    unsigned changes)
{
	struct mp_plan *p = ctx;
	const struct memprof_event *ev = &rec->ev;
	int slot = d ? (int)(d - p->ms->devices) : -1, rc;
	const struct mp_frag_point *now;

	(void)changes;
	while (slot >= p->n_slots && p->n_slots < MP_MEM_MAX_DEVICES)
		memset(&p->last[p->n_slots++], 0, sizeof(p->last[0]));
	rc = mp_steps_feed(&p->steps, rec, slot >= 0 ? p->last[slot].live_bytes : 0);
	if (rc > 0)
		rc = keep(p, ev);
	if (rc < 0)
		return rc;
	if (slot >= 0 && (now = mp_frag_now(p->frag, d)))
		take(&p->last[slot], now);
	if (p->device_filter >= 0 && ev->device != p->device_filter)
		return 0;
	if (ev->op == MEMPROF_OP_OOM) {
		int64_t req = ev->requested_bytes > 0 ? ev->requested_bytes : ev->size_bytes;

		if (slot < 0 || !p->last[slot].seen)
			p->n_ooms[MP_OOM_UNKNOWN]++;
		else
			p->n_ooms[mp_plan_oom_verdict(req, p->last[slot].free_in_reserved_bytes,
			                              p->last[slot].largest_free_bytes)]++;
	}
	return add_call(&p->overhead, ev);
}

static const struct mp_plan_snap *find_snap(const struct mp_plan *p, int64_t seq)
{
	size_t lo = 0, hi = p->n_snaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->snaps[mid].seq == seq)
			return &p->snaps[mid];
		if (p->snaps[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The steps from the detector's starts: each ends where the next starts;
 * the last where the detector says, or at the trace's end. */
static int lay_out_steps(struct mp_plan *p)
{
	const struct mp_steps_result *r = &p->steps.result;
	size_t i;

	p->n_steps = r->n_steps;
	if (r->n_steps == 0)
		return 0;
	if (!(p->step_list = calloc(r->n_steps, sizeof(*p->step_list))))
		return MP_ENOMEM;
	for (i = 0; i < r->n_steps; i++) {
		p->step_list[i].start = r->starts[i];
		if (i + 1 < r->n_steps)
			p->step_list[i].end = r->starts[i + 1];
		else
			p->step_list[i].end = r->last_end;
	}
	return 0;
}

static void fit_trend(struct mp_plan_device *pd, size_t n_steps, double *x, double *y)
{
	struct mp_plan_frag_trend *t = &pd->trend;
	size_t i, n = 0;
	double v;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n_steps; i++) {
		if ((v = mp_plan_frag_ratio(&pd->at_end[i])) < 0)
			continue;
		x[n] = (double)(i + 1);
		y[n++] = v;
		t->last_step = (int64_t)(i + 1);
		t->last_ratio = v;
	}
	t->n_known = (int64_t)n;
	mp_trend_fit(x, y, n, &t->fit);
	if (n_steps >= MP_PLAN_TARGET_STEP &&
	    (v = mp_plan_frag_ratio(&pd->at_end[MP_PLAN_TARGET_STEP - 1])) >= 0) {
		t->has_target = t->target_measured = 1;
		t->target_ratio = v;
	} else if (t->fit.has_slope) {
		v = t->fit.intercept + t->fit.slope * MP_PLAN_TARGET_STEP;
		t->has_target = 1;
		t->target_ratio = v < 0 ? 0 : v > 1 ? 1 : v;
	}
}

/* A device's state at the end of each step. */
static int device_steps(struct mp_plan *p, struct mp_plan_device *pd, double *x, double *y)
{
	size_t i;

	if (p->n_steps && !(pd->at_end = calloc(p->n_steps, sizeof(*pd->at_end))))
		return MP_ENOMEM;
	for (i = 0; i < p->n_steps; i++) {
		const struct mp_plan_step *st = &p->step_list[i];
		const struct mp_plan_snap *s = st->end.seq ? find_snap(p, st->end.seq) : NULL;

		if (!st->end.seq)
			pd->at_end[i] = p->last[pd->slot];
		else if (s && pd->slot < s->n)
			pd->at_end[i] = snap_points(s)[pd->slot];
	}
	fit_trend(pd, p->n_steps, x, y);
	return 0;
}

static int on_end(void *ctx)
{
	struct mp_plan *p = ctx;
	double *x = NULL, *y = NULL;
	int i, j, rc;

	if ((rc = mp_steps_finish(&p->steps)) < 0 || (rc = lay_out_steps(p)) < 0)
		return rc;
	if (p->n_steps &&
	    (!(x = malloc(p->n_steps * sizeof(*x))) || !(y = malloc(p->n_steps * sizeof(*y))))) {
		free(x);
		return MP_ENOMEM;
	}
	for (i = 0; i < p->ms->n_devices && rc == 0; i++) {
		const struct mp_mem_device *d = &p->ms->devices[i];
		const struct mp_frag_device *fd = mp_frag_device(p->frag, d->device);
		struct mp_plan_device *pd;

		if (!fd || fd->model == MP_FRAG_NONE ||
		    (p->device_filter >= 0 && d->device != p->device_filter))
			continue;
		for (j = p->n_devices; j > 0 && p->devices[j - 1].device > d->device; j--)
			p->devices[j] = p->devices[j - 1];
		pd = &p->devices[j];
		memset(pd, 0, sizeof(*pd));
		pd->device = d->device;
		pd->slot = i;
		pd->model = fd->model;
		p->n_devices++;
		rc = device_steps(p, pd, x, y);
	}
	free(x);
	free(y);
	return rc;
}

struct mp_mem_listener mp_plan_listener(struct mp_plan *p)
{
	struct mp_mem_listener l = {.ctx = p, .on_event = on_event, .on_end = on_end};

	return l;
}
