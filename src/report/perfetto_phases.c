/*
 * report/perfetto_phases.c - phases as B/E slices on a thread track of the
 * process that opened them, always nested: an end that closes a phase
 * below the innermost one closes those above it too and opens them again
 * at the same time.  Keeps the open phases of each thread only.
 */
#include "report/perfetto_internal.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

static const char *phase_name(const struct memprof_record *rec)
{
	return rec->phase && *rec->phase ? rec->phase : "phase";
}

static struct pf_thread *find_thread(struct mp_perfetto *w, int64_t process_id, int64_t thread)
{
	size_t i;

	if (w->last_thread < w->n_threads && w->threads[w->last_thread].process_id == process_id &&
	    w->threads[w->last_thread].thread == thread)
		return &w->threads[w->last_thread];
	for (i = 0; i < w->n_threads; i++)
		if (w->threads[i].process_id == process_id && w->threads[i].thread == thread) {
			w->last_thread = i;
			return &w->threads[i];
		}
	return NULL;
}

/* The thread's track, created with its name on first use. */
static struct pf_thread *thread_track(struct mp_perfetto *w, int64_t process_id, int64_t thread)
{
	struct pf_thread *t = find_thread(w, process_id, thread);
	struct pf_process *p;
	char name[48];

	if (t)
		return t;
	if (!(p = pf_process(w, process_id)) ||
	    pf_reserve((void **)&w->threads, w->n_threads, &w->cap_threads, sizeof(*t)) < 0) {
		w->nomem = 1;
		return NULL;
	}
	t = &w->threads[w->n_threads];
	memset(t, 0, sizeof(*t));
	t->process_id = process_id;
	t->thread = thread;
	t->jpid = p->jpid;
	t->jtid = w->next_jid++;
	w->last_thread = w->n_threads++;
	if (thread)
		snprintf(name, sizeof(name), "phases, thread %lld", (long long)thread);
	else
		snprintf(name, sizeof(name), "phases");
	pf_meta_head(w, "thread_name", t->jpid, t->jtid);
	mp_jstream_lit(&w->j, ",\"args\":{\"name\":");
	mp_jstream_str(&w->j, name);
	mp_jstream_lit(&w->j, "}}");
	return t;
}

static void begin(struct mp_perfetto *w, const struct pf_thread *t, const struct pf_open_phase *o,
                  int reopened)
{
	pf_event_head(w, 'B', o->begin_ts_ns, t->jpid, t->jtid);
	mp_jstream_lit(&w->j, ",\"cat\":\"phase\",\"name\":");
	mp_jstream_str(&w->j, o->name);
	mp_jstream_lit(&w->j, ",\"args\":{\"device\":");
	mp_jstream_i64(&w->j, o->device);
	if (reopened)
		mp_jstream_lit(&w->j, ",\"reopened\":true");
	mp_jstream_lit(&w->j, "}}");
}

static void end(struct mp_perfetto *w, const struct pf_thread *t, const struct pf_open_phase *o,
                int64_t ts_ns, int open_at_end)
{
	pf_event_head(w, 'E', ts_ns, t->jpid, t->jtid);
	mp_jstream_lit(&w->j, ",\"cat\":\"phase\",\"name\":");
	mp_jstream_str(&w->j, o->name);
	if (open_at_end)
		mp_jstream_lit(&w->j, ",\"args\":{\"open_at_end\":true}");
	mp_jstream_lit(&w->j, "}");
}

int pf_phase_begin(struct mp_perfetto *w, const struct memprof_record *rec)
{
	struct pf_thread *t = thread_track(w, rec->ev.process_id, rec->ev.thread);
	struct pf_open_phase *o;

	if (!t || pf_reserve((void **)&t->open, t->n_open, &t->cap_open, sizeof(*o)) < 0) {
		w->nomem = 1;
		return pf_status(w);
	}
	o = &t->open[t->n_open++];
	o->name = phase_name(rec);
	o->begin_ts_ns = rec->ev.ts_ns;
	o->device = rec->ev.device;
	begin(w, t, o, 0);
	w->st.n_phases++;
	return pf_status(w);
}

/* The innermost open phase named name in t, or -1. */
static long find_open(const struct pf_thread *t, const char *name)
{
	size_t k;

	for (k = t->n_open; k-- > 0;)
		if (t->open[k].name == name || strcmp(t->open[k].name, name) == 0)
			return (long)k;
	return -1;
}

/* Close t's phase idx at ts_ns (or at the latest begin above it), and
 * open again those above it, in the same order. */
static void close_at(struct mp_perfetto *w, struct pf_thread *t, size_t idx, int64_t ts_ns)
{
	size_t k;

	for (k = idx; k < t->n_open; k++)
		if (t->open[k].begin_ts_ns > ts_ns)
			ts_ns = t->open[k].begin_ts_ns;
	for (k = t->n_open; k-- > idx;)
		end(w, t, &t->open[k], ts_ns, 0);
	memmove(&t->open[idx], &t->open[idx + 1], (t->n_open - idx - 1) * sizeof(t->open[0]));
	t->n_open--;
	for (k = idx; k < t->n_open; k++) {
		t->open[k].begin_ts_ns = ts_ns;
		begin(w, t, &t->open[k], 1);
	}
}

int pf_phase_end(struct mp_perfetto *w, const struct memprof_record *rec)
{
	const char *name = phase_name(rec);
	struct pf_thread *t = find_thread(w, rec->ev.process_id, rec->ev.thread);
	long idx = t ? find_open(t, name) : -1;
	size_t i;

	/* an end on another thread than its begin: any thread of the process */
	for (i = 0; idx < 0 && i < w->n_threads; i++) {
		t = &w->threads[i];
		if (t->process_id == rec->ev.process_id)
			idx = find_open(t, name);
	}
	if (idx < 0) {
		w->st.n_phase_ends_unmatched++;
		return pf_status(w);
	}
	close_at(w, t, (size_t)idx, rec->ev.ts_ns);
	return pf_status(w);
}

int pf_phases_finish(struct mp_perfetto *w)
{
	size_t i, k;

	for (i = 0; i < w->n_threads; i++) {
		struct pf_thread *t = &w->threads[i];

		for (k = t->n_open; k-- > 0;) {
			int64_t ts = t->open[k].begin_ts_ns > w->max_ts_ns ? t->open[k].begin_ts_ns
			                                                   : w->max_ts_ns;

			end(w, t, &t->open[k], ts, 1);
			w->st.n_phases_open_at_end++;
		}
		t->n_open = 0;
	}
	return pf_status(w);
}

void pf_threads_free(struct mp_perfetto *w)
{
	size_t i;

	for (i = 0; i < w->n_threads; i++)
		free(w->threads[i].open);
	free(w->threads);
}
