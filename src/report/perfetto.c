/*
 * report/perfetto.c - the trace-event JSON document: its head and tail
 * (with the metadata), the tracks (synthetic pids named by metadata
 * events), the counter samples of every device and the OOM instants, and
 * the listener that drives it all.  Never reads the store; allocation
 * slices are in perfetto_slices.c, phases in perfetto_phases.c.
 */
#include "report/perfetto_internal.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_MAX_BYTES 120 /* of a command line in a process name */
#define GPU_SORT_BASE     1000

int pf_reserve(void **arr, size_t n, size_t *cap, size_t elem_size)
{
	size_t c = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = realloc(*arr, c * elem_size)))
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

int pf_status(const struct mp_perfetto *w)
{
	if (w->nomem || (w->j.failed && w->j.saved_errno == ENOMEM))
		return MP_ENOMEM;
	return w->j.failed ? MP_EIO : 0;
}

static void separator(struct mp_perfetto *w)
{
	if (w->st.n_events++)
		mp_jstream_lit(&w->j, ",\n");
}

void pf_event_head(struct mp_perfetto *w, char ph, int64_t ts_ns, int64_t jpid, int64_t jtid)
{
	char head[] = "{\"ph\":\"?\",\"ts\":";

	separator(w);
	head[7] = ph;
	mp_jstream_raw(&w->j, head, sizeof(head) - 1);
	mp_jstream_ts_us(&w->j, ts_ns);
	mp_jstream_lit(&w->j, ",\"pid\":");
	mp_jstream_i64(&w->j, jpid);
	mp_jstream_lit(&w->j, ",\"tid\":");
	mp_jstream_i64(&w->j, jtid);
}

void pf_meta_head(struct mp_perfetto *w, const char *name, int64_t jpid, int64_t jtid)
{
	separator(w);
	mp_jstream_lit(&w->j, "{\"ph\":\"M\",\"pid\":");
	mp_jstream_i64(&w->j, jpid);
	mp_jstream_lit(&w->j, ",\"tid\":");
	mp_jstream_i64(&w->j, jtid);
	mp_jstream_lit(&w->j, ",\"name\":");
	mp_jstream_str(&w->j, name);
}

static void sort_index(struct mp_perfetto *w, int64_t jpid, int64_t index)
{
	pf_meta_head(w, "process_sort_index", jpid, jpid);
	mp_jstream_lit(&w->j, ",\"args\":{\"sort_index\":");
	mp_jstream_i64(&w->j, index);
	mp_jstream_lit(&w->j, "}}");
}

static const char *device_name(const struct mp_perfetto *w, int32_t ordinal)
{
	size_t i;

	for (i = 0; i < w->o.n_devices; i++)
		if (w->o.devices[i].ordinal == ordinal && w->o.devices[i].name)
			return w->o.devices[i].name;
	return NULL;
}

struct pf_device *pf_device(struct mp_perfetto *w, int32_t ordinal)
{
	struct pf_device *d;
	const char *label;
	char name[32];
	size_t i;

	for (i = 0; i < w->n_devs; i++)
		if (w->devs[i].ordinal == ordinal)
			return &w->devs[i];
	if (pf_reserve((void **)&w->devs, w->n_devs, &w->cap_devs, sizeof(*d)) < 0) {
		w->nomem = 1;
		return NULL;
	}
	d = &w->devs[w->n_devs++];
	memset(d, 0, sizeof(*d));
	d->ordinal = ordinal;
	d->jpid = w->next_jid++;
	snprintf(name, sizeof(name), "GPU %d", (int)ordinal);
	pf_meta_head(w, "process_name", d->jpid, d->jpid);
	mp_jstream_lit(&w->j, ",\"args\":{\"name\":");
	mp_jstream_str(&w->j, name);
	mp_jstream_lit(&w->j, "}}");
	sort_index(w, d->jpid, GPU_SORT_BASE + (int64_t)ordinal);
	if ((label = device_name(w, ordinal))) {
		pf_meta_head(w, "process_labels", d->jpid, d->jpid);
		mp_jstream_lit(&w->j, ",\"args\":{\"labels\":");
		mp_jstream_str(&w->j, label);
		mp_jstream_lit(&w->j, "}}");
	}
	return d;
}

/* "rank 1: python train.py (pid 4242)", or "pid 4242" without a command;
 * the command cut at a character boundary past COMMAND_MAX_BYTES. */
static void process_name(struct mp_perfetto *w, const struct memprof_process *p)
{
	const char *cmd = p && p->command && *p->command ? p->command : NULL;
	char tmp[64];
	size_t n;

	mp_jstream_str_begin(&w->j);
	if (p && p->rank >= 0) {
		snprintf(tmp, sizeof(tmp), "rank %lld: ", (long long)p->rank);
		mp_jstream_str_part(&w->j, tmp, strlen(tmp));
	}
	if (cmd) {
		n = strlen(cmd);
		if (n > COMMAND_MAX_BYTES) {
			n = COMMAND_MAX_BYTES;
			while (n && ((unsigned char)cmd[n] & 0xc0) == 0x80)
				n--;
		}
		mp_jstream_str_part(&w->j, cmd, n);
		if (n < strlen(cmd))
			mp_jstream_lit(&w->j, "...");
	}
	if (p && p->pid)
		snprintf(tmp, sizeof(tmp), cmd ? " (pid %lld)" : "pid %lld", (long long)p->pid);
	else
		snprintf(tmp, sizeof(tmp), cmd ? " (pid unknown)" : "pid unknown");
	mp_jstream_str_part(&w->j, tmp, strlen(tmp));
	mp_jstream_str_end(&w->j);
}

struct pf_process *pf_process(struct mp_perfetto *w, int64_t process_id)
{
	const struct memprof_process *known = NULL;
	struct pf_process *p;
	size_t i;

	for (i = 0; i < w->n_procs; i++)
		if (w->procs[i].process_id == process_id)
			return &w->procs[i];
	if (pf_reserve((void **)&w->procs, w->n_procs, &w->cap_procs, sizeof(*p)) < 0) {
		w->nomem = 1;
		return NULL;
	}
	p = &w->procs[w->n_procs++];
	p->process_id = process_id;
	p->jpid = w->next_jid++;
	for (i = 0; i < w->o.n_processes; i++)
		if (w->o.processes[i].id == process_id)
			known = &w->o.processes[i];
	pf_meta_head(w, "process_name", p->jpid, p->jpid);
	mp_jstream_lit(&w->j, ",\"args\":{\"name\":");
	process_name(w, known);
	mp_jstream_lit(&w->j, "}}");
	sort_index(w, p->jpid, (int64_t)w->n_procs - 1);
	return p;
}

/* One counter sample: {"ph":"C",...,"name":"live","args":{"bytes":N}} */
static void counter(struct mp_perfetto *w, const struct pf_device *d, int64_t ts_ns,
                    const char *name, int64_t bytes)
{
	pf_event_head(w, 'C', ts_ns, d->jpid, d->jpid);
	mp_jstream_lit(&w->j, ",\"name\":");
	mp_jstream_str(&w->j, name);
	mp_jstream_lit(&w->j, ",\"args\":{\"bytes\":");
	mp_jstream_i64(&w->j, bytes);
	mp_jstream_lit(&w->j, "}}");
	w->st.n_counter_samples++;
}

/* A sample of each figure of a device that changed since the last one. */
static void sample(struct mp_perfetto *w, const struct mp_mem_device *md, int slot, int64_t ts_ns)
{
	struct pf_device *d;

	if (!w->slot_dev[slot]) {
		if (!(d = pf_device(w, md->device)))
			return;
		w->slot_dev[slot] = (int)(d - w->devs) + 1;
	}
	d = &w->devs[w->slot_dev[slot] - 1];
	if (!d->sampled || md->live_bytes != d->live_bytes) {
		d->live_bytes = md->live_bytes;
		counter(w, d, ts_ns, "live", d->live_bytes);
	}
	if (!d->sampled || md->requested_bytes != d->requested_bytes) {
		d->requested_bytes = md->requested_bytes;
		counter(w, d, ts_ns, "requested", d->requested_bytes);
	}
	if (md->has_segments && (!d->reserved_sampled || md->reserved_bytes != d->reserved_bytes)) {
		d->reserved_bytes = md->reserved_bytes;
		counter(w, d, ts_ns, "reserved", d->reserved_bytes);
		d->reserved_sampled = 1;
	}
	d->sampled = 1;
}

static void oom(struct mp_perfetto *w, const struct memprof_record *rec,
                const struct mp_mem_device *md)
{
	const struct memprof_event *ev = &rec->ev;
	const struct pf_stack *s = pf_stack(w, ev->stack_id, rec->stack);
	struct pf_device *d = pf_device(w, ev->device);

	if (!d || !s)
		return;
	pf_event_head(w, 'i', ev->ts_ns, d->jpid, d->jpid);
	mp_jstream_lit(&w->j,
	               ",\"s\":\"p\",\"cat\":\"oom\",\"name\":\"OOM\",\"args\":{\"requested\":");
	mp_jstream_i64(&w->j, ev->requested_bytes);
	mp_jstream_lit(&w->j, ",\"device_free\":");
	if (ev->device_free_bytes >= 0)
		mp_jstream_i64(&w->j, ev->device_free_bytes);
	else
		mp_jstream_lit(&w->j, "null");
	mp_jstream_lit(&w->j, ",\"live\":");
	mp_jstream_i64(&w->j, md ? md->live_bytes : 0);
	mp_jstream_lit(&w->j, ",\"reserved\":");
	if (md && md->has_segments)
		mp_jstream_i64(&w->j, md->reserved_bytes);
	else
		mp_jstream_lit(&w->j, "null");
	pf_context_args(w, rec, s);
	mp_jstream_lit(&w->j, "}}");
	w->st.n_ooms++;
}

static int on_event(void *ctx, const struct memprof_record *rec, const struct mp_mem_device *md,
                    unsigned changes)
{
	struct mp_perfetto *w = ctx;
	int64_t ts = rec->ev.ts_ns;
	int i;

	(void)changes;
	if (!w->have_ts || ts > w->max_ts_ns)
		w->max_ts_ns = ts;
	if (!w->have_ts)
		w->first_ts_ns = ts;
	w->have_ts = 1;
	/* a free or release may change another device than the event's */
	for (i = 0; i < w->ms->n_devices; i++)
		sample(w, &w->ms->devices[i], i, ts);
	switch (rec->ev.op) {
	case MEMPROF_OP_OOM:
		oom(w, rec, md);
		break;
	case MEMPROF_OP_PHASE_BEGIN:
		return pf_phase_begin(w, rec);
	case MEMPROF_OP_PHASE_END:
		return pf_phase_end(w, rec);
	default:
		break;
	}
	return pf_status(w);
}

static void meta_int(struct mp_perfetto *w, const char *key, int64_t v)
{
	mp_jstream_lit(&w->j, ",");
	mp_jstream_str(&w->j, key);
	mp_jstream_lit(&w->j, ":");
	mp_jstream_i64(&w->j, v);
}

/* The end of traceEvents and the metadata object. */
static void tail(struct mp_perfetto *w)
{
	size_t i;

	mp_jstream_lit(&w->j, "\n],\n\"metadata\":{\"format\":\"memprof trace-event export\"");
	for (i = 0; i < w->o.n_meta; i++) {
		if (!w->o.meta[2 * i + 1])
			continue;
		mp_jstream_lit(&w->j, ",");
		mp_jstream_str(&w->j, w->o.meta[2 * i]);
		mp_jstream_lit(&w->j, ":");
		mp_jstream_str(&w->j, w->o.meta[2 * i + 1]);
	}
	meta_int(w, "min_size_bytes", w->o.min_size_bytes);
	meta_int(w, "n_slices", w->st.n_slices);
	meta_int(w, "n_slices_skipped", w->st.n_slices_skipped);
	meta_int(w, "n_live_at_end", w->st.n_live_at_end);
	meta_int(w, "n_counter_samples", w->st.n_counter_samples);
	meta_int(w, "n_phases", w->st.n_phases);
	meta_int(w, "n_phase_ends_unmatched", w->st.n_phase_ends_unmatched);
	meta_int(w, "n_ooms", w->st.n_ooms);
	if (w->have_ts) {
		meta_int(w, "first_ts_ns", w->first_ts_ns);
		meta_int(w, "last_ts_ns", w->max_ts_ns);
	}
	mp_jstream_lit(&w->j, "}}\n");
}

static int on_end(void *ctx)
{
	struct mp_perfetto *w = ctx;
	int rc;

	if ((rc = pf_slices_finish(w)) < 0 || (rc = pf_phases_finish(w)) < 0)
		return rc;
	tail(w);
	w->finished = 1;
	return pf_status(w);
}

struct mp_perfetto *mp_perfetto_open(FILE *out, const struct mp_perfetto_opts *o)
{
	struct mp_perfetto *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (mp_jstream_init(&w->j, out) < 0) {
		free(w);
		return NULL;
	}
	w->o = *o;
	w->next_jid = 1;
	mp_intmap_init(&w->stacks);
	pf_slices_init(w);
	mp_jstream_lit(&w->j, "{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n");
	return w;
}

struct mp_mem_listener mp_perfetto_listener(struct mp_perfetto *w, const struct mp_memstate *ms)
{
	struct mp_mem_listener l = {.ctx = w,
	                            .on_alloc = pf_slice_begin,
	                            .on_free = pf_slice_end,
	                            .on_event = on_event,
	                            .on_end = on_end};

	w->ms = ms;
	return l;
}

int mp_perfetto_close(struct mp_perfetto *w, struct mp_perfetto_stats *st)
{
	int rc = mp_jstream_flush(&w->j), saved = errno;

	w->st.n_bytes = w->j.n_bytes;
	if (st)
		*st = w->st;
	pf_slices_free(w);
	pf_stacks_free(w);
	pf_threads_free(w);
	free(w->devs);
	free(w->procs);
	mp_jstream_free(&w->j);
	free(w);
	errno = saved;
	return rc;
}
