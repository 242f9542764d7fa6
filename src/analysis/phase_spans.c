/*
 * analysis/phase_spans.c - pairs phase_begin and phase_end events into the
 * top-level spans of each device (analysis/phase_spans.h), merging
 * neighbouring spans pairwise when a device holds too many.  Reads only
 * phase events; never prints.
 */
#include "analysis/phase_spans.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

struct mp_phase_open {
	int64_t process_id, thread, phase_id;
	int64_t begin_ts_ns;
	const char *name;
};

void mp_phase_spans_init(struct mp_phase_spans *p, size_t max_spans)
{
	memset(p, 0, sizeof(*p));
	p->max_spans = max_spans ? (int64_t)max_spans : MP_PHASE_MAX_SPANS;
	if (p->max_spans < 2)
		p->max_spans = 2;
}

void mp_phase_spans_free(struct mp_phase_spans *p)
{
	int i;

	for (i = 0; i < p->n_devices; i++) {
		free(p->devices[i].spans);
		free(p->devices[i].open);
	}
	p->n_devices = 0;
}

const struct mp_phase_device *mp_phase_spans_device(const struct mp_phase_spans *p, int32_t device)
{
	int i;

	for (i = 0; i < p->n_devices; i++)
		if (p->devices[i].device == device)
			return &p->devices[i];
	return NULL;
}

static struct mp_phase_device *device_of(struct mp_phase_spans *p, int32_t device)
{
	struct mp_phase_device *d = (struct mp_phase_device *)mp_phase_spans_device(p, device);

	if (d)
		return d;
	if (p->n_devices == MP_PHASE_MAX_DEVICES) {
		p->devices_truncated = 1;
		return NULL;
	}
	d = &p->devices[p->n_devices++];
	memset(d, 0, sizeof(*d));
	d->device = device;
	return d;
}

/* Merge neighbours pairwise: half as many spans, covering the same time. */
static void halve(struct mp_phase_device *d)
{
	size_t i, j = 0;

	for (i = 0; i + 1 < d->n_spans; i += 2) {
		struct mp_phase_span *a = &d->spans[i], *b = &d->spans[i + 1], m = *a;

		if (b->begin_ts_ns < m.begin_ts_ns)
			m.begin_ts_ns = b->begin_ts_ns;
		if (b->end_ts_ns > m.end_ts_ns)
			m.end_ts_ns = b->end_ts_ns;
		if (!a->name || !b->name || strcmp(a->name, b->name) != 0)
			m.name = NULL;
		m.n_phases = a->n_phases + b->n_phases;
		d->spans[j++] = m;
	}
	if (i < d->n_spans)
		d->spans[j++] = d->spans[i];
	d->n_spans = j;
}

static int add_span(struct mp_phase_spans *p, struct mp_phase_device *d,
                    const struct mp_phase_open *o, int64_t end_ts_ns)
{
	struct mp_phase_span *s;

	if (d->n_spans == (size_t)p->max_spans)
		halve(d);
	if (d->n_spans == d->cap_spans) {
		size_t cap = d->cap_spans ? d->cap_spans * 2 : 64;

		if (cap > (size_t)p->max_spans)
			cap = (size_t)p->max_spans;
		if (!(s = realloc(d->spans, cap * sizeof(*s))))
			return MP_ENOMEM;
		d->spans = s;
		d->cap_spans = cap;
	}
	s = &d->spans[d->n_spans++];
	s->begin_ts_ns = o->begin_ts_ns;
	s->end_ts_ns = end_ts_ns < o->begin_ts_ns ? o->begin_ts_ns : end_ts_ns;
	s->name = o->name;
	s->n_phases = 1;
	d->n_phases++;
	return 0;
}

static int begin(struct mp_phase_device *d, const struct memprof_record *rec)
{
	struct mp_phase_open *o;

	if (d->n_open == MP_PHASE_MAX_OPEN) {
		d->n_too_deep++;
		return 0;
	}
	if (!d->open && !(d->open = calloc(MP_PHASE_MAX_OPEN, sizeof(*d->open))))
		return MP_ENOMEM;
	o = &d->open[d->n_open++];
	o->process_id = rec->ev.process_id;
	o->thread = rec->ev.thread;
	o->phase_id = rec->ev.phase_id;
	o->begin_ts_ns = rec->ev.ts_ns;
	o->name = rec->phase;
	return 0;
}

static int same_place(const struct mp_phase_open *o, const struct memprof_event *ev)
{
	return o->process_id == ev->process_id && o->thread == ev->thread;
}

/* Close the innermost open phase of the event's name in its place; a span
 * when no phase of that place was open before it. */
static int end(struct mp_phase_spans *p, struct mp_phase_device *d,
               const struct memprof_record *rec)
{
	const struct memprof_event *ev = &rec->ev;
	struct mp_phase_open o;
	size_t i, j;
	int top = 1;

	for (i = d->n_open; i > 0; i--)
		if (same_place(&d->open[i - 1], ev) && d->open[i - 1].phase_id == ev->phase_id)
			break;
	if (i == 0) {
		d->n_unmatched_ends++;
		return 0;
	}
	o = d->open[--i];
	for (j = 0; j < i && top; j++)
		top = !same_place(&d->open[j], ev);
	memmove(&d->open[i], &d->open[i + 1], (d->n_open - i - 1) * sizeof(*d->open));
	d->n_open--;
	return top ? add_span(p, d, &o, ev->ts_ns) : 0;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *md,
                    unsigned changes)
{
	struct mp_phase_spans *p = ctx;
	struct mp_phase_device *d;

	(void)md;
	(void)changes;
	if (rec->ev.ts_ns > p->last_ts_ns)
		p->last_ts_ns = rec->ev.ts_ns;
	if (rec->ev.op != MEMPROF_OP_PHASE_BEGIN && rec->ev.op != MEMPROF_OP_PHASE_END)
		return 0;
	if (!(d = device_of(p, rec->ev.device)))
		return 0;
	return rec->ev.op == MEMPROF_OP_PHASE_BEGIN ? begin(d, rec) : end(p, d, rec);
}

/* Phases still open end at the last timestamp; the outer ones are spans. */
static int on_end(void *ctx)
{
	struct mp_phase_spans *p = ctx;
	int k, rc;

	for (k = 0; k < p->n_devices; k++) {
		struct mp_phase_device *d = &p->devices[k];
		size_t i, j;

		for (i = 0; i < d->n_open; i++) {
			int top = 1;

			for (j = 0; j < i && top; j++)
				top = !(d->open[j].process_id == d->open[i].process_id &&
				        d->open[j].thread == d->open[i].thread);
			if (!top)
				continue;
			d->n_open_at_end++;
			if ((rc = add_span(p, d, &d->open[i], p->last_ts_ns)) < 0)
				return rc;
		}
		d->n_open = 0;
	}
	return 0;
}

struct mp_mem_listener mp_phase_spans_listener(struct mp_phase_spans *p)
{
	struct mp_mem_listener l;

	memset(&l, 0, sizeof(l));
	l.ctx = p;
	l.on_event = on_event;
	l.on_end = on_end;
	return l;
}
