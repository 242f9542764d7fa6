/*
 * import/trace_db.c - the importer 'trace': a memprof trace database read
 * back through store/reader and written into the new trace, its processes,
 * devices, names, stacks and events copied.  Under 'memprof merge' it follows
 * the merge plan (mp_import_ctx.shared): job device numbers and the clock
 * shift.  Alone ('memprof import --format=trace x.db') it copies the trace
 * as it is, with any labels given.  Pinned host buffers, their NUMA
 * placement and the devices' nearest nodes go with it.  Memory grows with
 * names and stacks, not events.
 */
#include "import/merge_plan.h"
#include "store/host_buffers.h"
#include "store/reader.h"
#include "util/intmap.h"
#include "util/limits.h"
#include "util/satmath.h"

#include <stdlib.h>
#include <string.h>

/*
 * Never detected: 'memprof import' refuses a memprof trace as an unknown
 * format unless --format=trace names it (copying a trace is rarely what was
 * meant); 'memprof merge' names it.
 */
static int probe(const char *path, const char *head, size_t n)
{
	(void)path;
	(void)head;
	(void)n;
	return 0;
}

/* Input ids -> ids in the new trace. */
struct copy {
	struct mp_import_ctx *c;
	struct mp_merge_plan *plan;
	struct mp_merge_input *in;
	struct mp_intmap procs, phases, apis, stacks;
};

static int writer_failed(struct copy *k)
{
	return mp_err_copy(k->c->err, mp_writer_error(k->c->w));
}

static int copy_processes(struct copy *k)
{
	size_t i;

	for (i = 0; i < k->in->n_procs; i++) {
		struct memprof_process p = k->in->procs[i];

		if (mp_writer_process(k->c->w, &p) < 0)
			return writer_failed(k);
		if (mp_intmap_put(&k->procs, (uint64_t)k->in->procs[i].id, (uint64_t)p.id) < 0)
			return mp_err(k->c->err, MP_ENOMEM, "out of memory");
	}
	return 0;
}

static int copy_devices(struct copy *k)
{
	size_t i;
	uint64_t id;

	for (i = 0; i < k->in->n_devs; i++) {
		struct memprof_device d = k->in->devs[i].d;

		if (!mp_intmap_get(&k->procs, (uint64_t)d.process_id, &id))
			return mp_err(k->c->err, MP_ENOTTRACE,
			              "corrupt trace '%s': a device of process %lld, which it does "
			              "not list",
			              k->in->path, (long long)d.process_id);
		d.process_id = (int64_t)id;
		d.ordinal = k->in->devs[i].job;
		if (mp_writer_device(k->c->w, &d) < 0)
			return writer_failed(k);
	}
	return 0;
}

/* The new id of an input id through map, interning with fn on first sight. */
static int64_t mapped(struct copy *k, struct mp_intmap *m, int64_t id, const char *name,
                      int64_t (*fn)(struct mp_writer *, const char *, size_t))
{
	uint64_t v;
	int64_t out;

	if (id == 0 || !name)
		return 0;
	if (mp_intmap_get(m, (uint64_t)id, &v))
		return (int64_t)v;
	if ((out = fn(k->c->w, name, strlen(name))) < 0)
		return writer_failed(k);
	if (mp_intmap_put(m, (uint64_t)id, (uint64_t)out) < 0)
		return mp_err(k->c->err, MP_ENOMEM, "out of memory");
	return out;
}

static int64_t mapped_stack(struct copy *k, const struct memprof_record *rec)
{
	uint64_t v;
	int64_t out;

	if (rec->ev.stack_id == 0 || !rec->stack)
		return 0;
	if (mp_intmap_get(&k->stacks, (uint64_t)rec->ev.stack_id, &v))
		return (int64_t)v;
	if ((out = mp_writer_stack(k->c->w, rec->stack)) < 0)
		return writer_failed(k);
	if (mp_intmap_put(&k->stacks, (uint64_t)rec->ev.stack_id, (uint64_t)out) < 0)
		return mp_err(k->c->err, MP_ENOMEM, "out of memory");
	return out;
}

/* The job device of an event, giving one to a (process, ordinal) with no
 * devices row (and writing that row). */
static int32_t event_device(struct copy *k, const struct memprof_event *in, int64_t process)
{
	struct memprof_device d = {process, 0, NULL, NULL, 0};
	int32_t job = mp_merge_job_device(k->in, in->process_id, in->device);

	if (job >= 0)
		return job;
	if (in->device < 0) /* a job number of -1 would read as "out of memory" */
		return mp_err(k->c->err, MP_ENOTTRACE,
		              "corrupt trace '%s': event %lld is on device %d (devices are 0 or "
		              "more)",
		              k->in->path, (long long)in->seq, (int)in->device);
	if ((job = mp_merge_add_device(k->plan, k->in, in->process_id, in->device)) < 0)
		return mp_err(k->c->err, MP_ENOMEM, "out of memory");
	d.ordinal = job;
	return mp_writer_device(k->c->w, &d) < 0 ? writer_failed(k) : job;
}

static int copy_event(struct copy *k, const struct memprof_record *rec)
{
	struct memprof_event ev = rec->ev;
	uint64_t process;
	int64_t id;

	if (!mp_intmap_get(&k->procs, (uint64_t)ev.process_id, &process))
		return mp_err(k->c->err, MP_ENOTTRACE,
		              "corrupt trace '%s': event %lld of process %lld, which it does not "
		              "list",
		              k->in->path, (long long)ev.seq, (long long)ev.process_id);
	if (!mp_size_ok(ev.size_bytes) || !mp_size_ok(ev.requested_bytes))
		return mp_err(k->c->err, MP_EFORMAT,
		              "invalid size '%s': event %lld has %lld bytes (requested %lld): "
		              "sizes are 0 to 2^56 - 1",
		              k->in->path, (long long)ev.seq, (long long)ev.size_bytes,
		              (long long)ev.requested_bytes);
	ev.process_id = (int64_t)process;
	if ((id = event_device(k, &rec->ev, ev.process_id)) < 0)
		return (int)id;
	ev.device = (int32_t)id;
	if ((ev.phase_id = mapped(k, &k->phases, ev.phase_id, rec->phase, mp_writer_phase)) < 0 ||
	    (ev.api_id = mapped(k, &k->apis, ev.api_id, rec->api, mp_writer_api)) < 0 ||
	    (ev.stack_id = mapped_stack(k, rec)) < 0)
		return k->c->err->code;
	ev.ts_ns += k->in->shift_ns;
	if (mp_writer_event(k->c->w, &ev) < 0)
		return writer_failed(k);
	k->c->st->n_events++;
	k->c->st->n_allocs += ev.op == MEMPROF_OP_ALLOC || ev.op == MEMPROF_OP_PREEXISTING;
	return 0;
}

static int copy_record(void *ctx, const struct memprof_record *rec)
{
	return copy_event(ctx, rec);
}

/* Every event of the input, by the reader's push pass (its page decoder). */
static int copy_events(struct copy *k)
{
	struct mp_consumer c = {"copy", k, MP_READ_STACKS, copy_record, NULL};
	struct mp_reader *r;
	int rc;

	if (mp_reader_open(k->in->s, MP_READ_STACKS, &r) < 0)
		return mp_err_copy(k->c->err, mp_store_error(k->in->s));
	if ((rc = mp_reader_add(r, &c)) == 0)
		rc = mp_reader_run(r);
	if (rc < 0 && !k->c->err->code)
		mp_err_copy(k->c->err, mp_store_error(k->in->s));
	mp_reader_close(r);
	return rc < 0 ? k->c->err->code : 0;
}

/* The devices' nearest host NUMA nodes, on the job's device numbers. */
static int copy_device_nodes(struct copy *k)
{
	struct mp_device_node *d;
	size_t i, n;
	uint64_t process;
	int rc = 0;

	if (mp_store_device_nodes(k->in->s, &d, &n) < 0)
		return mp_err_copy(k->c->err, mp_store_error(k->in->s));
	for (i = 0; i < n && rc == 0; i++) {
		int32_t job = mp_merge_job_device(k->in, d[i].process_id, d[i].ordinal);

		if (d[i].node < 0 || job < 0 ||
		    !mp_intmap_get(&k->procs, (uint64_t)d[i].process_id, &process))
			continue;
		if (mp_store_set_device_node(k->c->store, (int64_t)process, job, d[i].node) < 0)
			rc = mp_err_copy(k->c->err, mp_store_error(k->c->store));
	}
	free(d);
	return rc;
}

static int copy_host_buffer(void *ctx, const struct mp_host_buffer *b)
{
	struct copy *k = ctx;
	struct mp_host_buffer out = *b;
	struct memprof_record rec = {.ev = {.stack_id = b->stack_id}, .stack = b->stack};
	uint64_t process;

	if (!mp_intmap_get(&k->procs, (uint64_t)b->process_id, &process))
		return mp_err(k->c->err, MP_ENOTTRACE,
		              "corrupt trace '%s': a pinned host buffer of process %lld, which it "
		              "does not list",
		              k->in->path, (long long)b->process_id);
	out.process_id = (int64_t)process;
	if (b->device >= 0)
		out.device = mp_merge_job_device(k->in, b->process_id, b->device);
	if ((out.api_id = mapped(k, &k->apis, b->api_id, b->api, mp_writer_api)) < 0 ||
	    (out.stack_id = mapped_stack(k, &rec)) < 0)
		return k->c->err->code;
	out.alloc_ts_ns = mp_sat_add(out.alloc_ts_ns, k->in->shift_ns);
	if (out.free_ts_ns >= 0)
		out.free_ts_ns = mp_sat_add(out.free_ts_ns, k->in->shift_ns);
	if (mp_store_add_host_buffer(k->c->store, &out) < 0)
		return mp_err_copy(k->c->err, mp_store_error(k->c->store));
	return 0;
}

/* Pinned host buffers and where their pages are; the first input's node distances. */
static int copy_host(struct copy *k)
{
	char *had, *v;
	int rc;

	if ((rc = copy_device_nodes(k)) < 0 ||
	    (rc = mp_store_each_host_buffer(k->in->s, copy_host_buffer, k)) < 0)
		return k->c->err->code ? k->c->err->code
		                       : mp_err_copy(k->c->err, mp_store_error(k->in->s));
	had = mp_store_get_meta(k->c->store, "numa_distances");
	v = had ? NULL : mp_store_get_meta(k->in->s, "numa_distances");
	if (v && mp_store_set_meta(k->c->store, "numa_distances", v) < 0)
		rc = mp_err(k->c->err, MP_EIO, "cannot write the trace's metadata");
	free(had);
	free(v);
	return rc;
}

/* Alone (not under merge): the trace's own clock goes with it. */
static int copy_clock_meta(struct copy *k)
{
	static const char *const keys[] = {"clock", "clock_unix_offset_ns", "allocator_settings",
	                                   "pytorch_caching_allocator"};
	size_t i;
	char *v;
	int rc = 0;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && rc == 0; i++)
		if ((v = mp_store_get_meta(k->in->s, keys[i]))) {
			rc = mp_store_set_meta(k->c->store, keys[i], v) < 0 ? MP_EIO : 0;
			free(v);
		}
	return rc ? mp_err(k->c->err, rc, "cannot write the trace's metadata") : 0;
}

static int run(struct mp_import_ctx *c)
{
	struct mp_merge_plan alone = {0};
	const char *path = c->file_path;
	struct copy k = {c, c->shared, NULL, {0}, {0}, {0}, {0}};
	int rc;

	if (!k.plan) {
		if ((rc = mp_merge_plan_build(&path, 1, NULL, &alone, c->err)) < 0)
			return rc;
		k.plan = &alone;
	}
	if (k.plan != &alone && (c->input_index < 0 || (size_t)c->input_index >= k.plan->n)) {
		rc = mp_err(c->err, MP_EINVAL, "no merge plan for input '%s'", c->path);
		goto out;
	}
	k.in = &k.plan->in[k.plan == &alone ? 0 : c->input_index];
	mp_intmap_init(&k.procs);
	mp_intmap_init(&k.phases);
	mp_intmap_init(&k.apis);
	mp_intmap_init(&k.stacks);
	if ((rc = copy_processes(&k)) == 0 && (rc = copy_devices(&k)) == 0 &&
	    (rc = copy_events(&k)) == 0)
		rc = copy_host(&k);
	if (rc == 0 && k.plan == &alone && (rc = copy_clock_meta(&k)) == 0 &&
	    (rc = mp_merge_carry(k.plan, c->store, c->st)) < 0)
		rc = mp_err(c->err, rc, "cannot write the trace's metadata");
	mp_intmap_free(&k.procs);
	mp_intmap_free(&k.phases);
	mp_intmap_free(&k.apis);
	mp_intmap_free(&k.stacks);
out:
	if (k.plan == &alone)
		mp_merge_plan_free(&alone);
	return rc;
}

const struct mp_importer mp_importer_trace = {
        .name = "trace",
        .description = "memprof traces, to relabel one ('memprof merge' combines several)",
        .probe = probe,
        .run = run,
        .by_path = 1,
};
