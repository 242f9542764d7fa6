/*
 * import/spool.c - the importer 'spool': one spool (.mpt, written by the
 * injected library inside a workload 'memprof record' ran) becomes one
 * process of the trace, with its devices and what the spool says it lost.
 * Reads the whole spool first (events arrive out of time order); the events
 * themselves are converted by spool_events.c.
 */
#include "import/spool.h"
#include "import/torch_merge.h"
#include "spool/labels.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/intmap.h"
#include "util/satmath.h"
#include "util/trace_window.h"

static int probe(const char *path, const char *head, size_t n)
{
	(void)path;
	return n >= 8 && memcmp(head, MP_SPOOL_MAGIC, 8) == 0;
}

const char *mp_spool_text(const struct mp_spool_in *in, uint32_t id, char *buf, size_t size)
{
	size_t len = 0;
	const char *s = id ? mp_spool_reader_string(in->r, id, &len) : NULL;

	if (!s)
		len = 0;
	if (len >= size)
		len = size - 1;
	memcpy(buf, s ? s : "", len);
	buf[len] = '\0';
	return buf;
}

/* Append one item of size bytes to *arr (copying at most have bytes of it). */
static int push(void **arr, size_t *n, size_t *cap, size_t size, const void *item, size_t have)
{
	char *a;

	if (mp_array_reserve(arr, cap, *n + 1, size) < 0)
		return MP_ENOMEM;
	a = *arr;
	memset(a + *n * size, 0, size);
	memcpy(a + *n * size, item, have < size ? have : size);
	(*n)++;
	return 0;
}

/*
 * Every item of the spool.  Memory: the events are all held (96 bytes
 * each) so they can be sorted by time; the tables stay in the reader.
 */
static int read_all(struct mp_spool_in *in)
{
	const struct mp_spool_item_head *it;
	int rc;

	while ((rc = mp_spool_reader_next(in->r, &it, in->c->err)) == 1) {
		switch (it->type) {
		case MP_SI_EVENT:
			rc = push((void **)&in->events, &in->n_events, &in->cap_events,
			          sizeof(*in->events), it, it->bytes);
			break;
		case MP_SI_META:
			rc = push((void **)&in->meta, &in->n_meta, &in->cap_meta, sizeof(*in->meta),
			          it, it->bytes);
			break;
		case MP_SI_DEVICE:
			rc = push((void **)&in->devices, &in->n_devices, &in->cap_devices,
			          sizeof(*in->devices), it, it->bytes);
			break;
		default: /* the footer: the reader keeps it */
			rc = 0;
		}
		if (rc < 0)
			return mp_err(in->c->err, MP_ENOMEM, "out of memory reading '%s'",
			              in->c->path);
	}
	return rc;
}

/* The value of meta key (NUL-terminated in buf), NULL when absent. */
static const char *meta(const struct mp_spool_in *in, const char *key, char *buf, size_t size)
{
	char k[64];
	size_t i;

	for (i = 0; i < in->n_meta; i++)
		if (strcmp(mp_spool_text(in, in->meta[i].key, k, sizeof(k)), key) == 0)
			return mp_spool_text(in, in->meta[i].value, buf, size);
	return NULL;
}

/* The labels its meta pairs and modules give the spool's process. */
static void read_labels(const struct mp_spool_in *in, struct mp_spool_labels *l)
{
	char key[64], value[1024];
	size_t i, n = mp_spool_reader_n_modules(in->r);

	mp_spool_labels_init(l);
	for (i = 0; i < in->n_meta; i++)
		mp_spool_labels_meta(l, mp_spool_text(in, in->meta[i].key, key, sizeof(key)),
		                     mp_spool_text(in, in->meta[i].value, value, sizeof(value)));
	for (i = 0; i < n; i++)
		mp_spool_labels_module(l, mp_spool_text(in, mp_spool_reader_module(in->r, i)->path,
		                                        value, sizeof(value)));
}

static int write_process(struct mp_spool_in *in, const struct mp_spool_labels *l)
{
	const struct mp_spool_header *h = mp_spool_reader_header(in->r);
	char *host = malloc(256), *argv = malloc(MP_SPOOL_MAX_STRING + 1);
	struct memprof_process p = {0};
	int rc = 0;

	if (!host || !argv) {
		rc = mp_err(in->c->err, MP_ENOMEM, "out of memory");
		goto out;
	}
	p.pid = h->pid;
	p.ppid = h->ppid;
	p.host = meta(in, "host", host, 256);
	p.command = meta(in, "argv", argv, MP_SPOOL_MAX_STRING + 1);
	p.rank = l->rank;
	p.local_rank = l->local_rank;
	p.world_size = l->world_size;
	if (mp_writer_process(in->c->w, &p) < 0)
		rc = mp_err_copy(in->c->err, mp_writer_error(in->c->w));
	in->process_id = p.id;
out:
	free(host);
	free(argv);
	return rc;
}

/*
 * The device items of ordinal merged (spool_format.h: the CUPTI record and
 * the library's node item name one device): the first known name, uuid and
 * size, and host node.  Returns how many items named it.
 */
static size_t merge_device(const struct mp_spool_in *in, int32_t ordinal,
                           struct mp_spool_device *out)
{
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	out->ordinal = ordinal;
	for (i = 0; i < in->n_devices; i++) {
		const struct mp_spool_device *sd = &in->devices[i];

		if (sd->ordinal != ordinal)
			continue;
		n++;
		out->name = out->name ? out->name : sd->name;
		out->uuid = out->uuid ? out->uuid : sd->uuid;
		out->total_bytes = out->total_bytes ? out->total_bytes : sd->total_bytes;
		out->host_node = out->host_node ? out->host_node : sd->host_node;
	}
	return n;
}

/* One devices row: from the device items of ordinal, or (none) from the events. */
static int write_device(struct mp_spool_in *in, int32_t ordinal)
{
	struct memprof_device d = {in->process_id, ordinal, NULL, NULL, 0};
	struct mp_spool_device sd;
	char name[256], uuid[128];

	merge_device(in, ordinal, &sd);
	d.name = sd.name ? mp_spool_text(in, sd.name, name, sizeof(name)) : NULL;
	d.uuid = sd.uuid ? mp_spool_text(in, sd.uuid, uuid, sizeof(uuid)) : NULL;
	d.total_bytes = sd.total_bytes > INT64_MAX ? 0 : (int64_t)sd.total_bytes;
	if (mp_writer_device(in->c->w, &d) < 0)
		return mp_err_copy(in->c->err, mp_writer_error(in->c->w));
	if (sd.host_node > 0 && sd.host_node <= INT32_MAX &&
	    mp_store_set_device_node(in->c->store, in->process_id, ordinal,
	                             (int32_t)(sd.host_node - 1)) < 0)
		return mp_err_copy(in->c->err, mp_store_error(in->c->store));
	return 0;
}

/* A devices row for each device item, then for each other device events use. */
static int write_devices(struct mp_spool_in *in)
{
	struct mp_intmap seen;
	size_t i;
	int rc = 0;

	mp_intmap_init(&seen);
	for (i = 0; rc == 0 && i < in->n_devices + in->n_events; i++) {
		int32_t ordinal = i < in->n_devices ? in->devices[i].ordinal
		                                    : in->events[i - in->n_devices].device;

		if (ordinal < 0 || mp_intmap_get(&seen, (uint32_t)ordinal, NULL))
			continue;
		if (mp_intmap_put(&seen, (uint32_t)ordinal, 1) < 0)
			rc = mp_err(in->c->err, MP_ENOMEM, "out of memory");
		else
			rc = write_device(in, ordinal);
	}
	mp_intmap_free(&seen);
	return rc;
}

/* The modules, for symbolising stacks (only when some event has one). */
static int load_symbols(struct mp_spool_in *in)
{
	size_t i, n = mp_spool_reader_n_modules(in->r);
	char path[4096], build_id[130];

	for (i = 0; i < in->n_events && !in->events[i].stack; i++)
		;
	if (i == in->n_events)
		return 0;
	if (!(in->sym = mp_symbols_new()))
		return mp_err(in->c->err, MP_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct mp_spool_module *m = mp_spool_reader_module(in->r, i);

		if (mp_symbols_add_module(
		            in->sym, mp_spool_text(in, m->path, path, sizeof(path)), m->base,
		            m->start, m->end,
		            mp_spool_text(in, m->build_id, build_id, sizeof(build_id))) < 0)
			return mp_err(in->c->err, MP_ENOMEM, "out of memory");
	}
	return 0;
}

/* The host's node distances (the first spool's: one host's processes agree). */
static int meta_numa(struct mp_spool_in *in)
{
	char *had = mp_store_get_meta(in->c->store, "numa_distances");
	char buf[8192];
	int rc = 0;

	if (!had && meta(in, "numa_distances", buf, sizeof(buf)) && buf[0])
		rc = mp_store_set_meta(in->c->store, "numa_distances", buf);
	free(had);
	return rc;
}

/* The CUPTI file each process used ('memprof record' finds it; several differing: all, once each).
 */
static int meta_cupti(struct mp_spool_in *in)
{
	char *had = mp_store_get_meta(in->c->store, "cupti"), *both = NULL;
	char buf[4096];
	int rc = 0;

	if (!meta(in, "cupti", buf, sizeof(buf)) || !buf[0])
		;
	else if (!had)
		rc = mp_store_set_meta(in->c->store, "cupti", buf);
	else if (!strstr(had, buf))
		rc = asprintf(&both, "%s; %s", had, buf) < 0
		             ? -1
		             : mp_store_set_meta(in->c->store, "cupti", both);
	free(both);
	free(had);
	return rc;
}

/* PyTorch's allocator setting from the workload's environment, for 'memprof tune': the
 * first spool's (the processes of one job share their environment). */
static int meta_alloc_conf(struct mp_spool_in *in)
{
	static const char *const keys[] = {"env:PYTORCH_CUDA_ALLOC_CONF", "env:PYTORCH_ALLOC_CONF"};
	char buf[4096], *had;
	int rc = 0;

	for (size_t i = 0; i < 2 && rc == 0; i++) {
		had = mp_store_get_meta(in->c->store, keys[i]);
		if (!had && meta(in, keys[i], buf, sizeof(buf)))
			rc = mp_store_set_meta(in->c->store, keys[i], buf);
		free(had);
	}
	return rc;
}

/* record_disabled: each spool's reason, "; " between. */
static int meta_disabled(struct mp_spool_in *in)
{
	char *had = mp_store_get_meta(in->c->store, "record_disabled"), *text = NULL;
	char why[512];
	int rc;

	mp_spool_text(in, in->disabled_why, why, sizeof(why));
	if (asprintf(&text, "%s%s'%s' (pid %" PRId64 "): %s", had ? had : "", had ? "; " : "",
	             in->c->path, mp_spool_reader_header(in->r)->pid,
	             why[0] ? why : "no reason given") < 0)
		text = NULL;
	free(had);
	rc = text ? mp_store_set_meta(in->c->store, "record_disabled", text) : MP_ENOMEM;
	free(text);
	return rc;
}

/*
 * clock_unix_offset_ns: CLOCK_REALTIME - CLOCK_MONOTONIC when the library
 * started (header start_unix_ns - start_mono_ns), what turns this trace's
 * times into Unix time.  Several spools of one import are taken to be of one
 * host: the first spool's offset is kept, and a spool whose offset differs
 * by more than 1 ms (another host, or a clock step) is noted.
 */
static int meta_clock_offset(struct mp_spool_in *in)
{
	const struct mp_spool_header *h = mp_spool_reader_header(in->r);
	int64_t offset, had_ns, diff;
	char *had, buf[24];
	int rc = 0;

	if (__builtin_sub_overflow(h->start_unix_ns, h->start_mono_ns, &offset)) {
		mp_import_note(in->c->st,
		               "'%s': its start times (Unix %" PRId64 " ns, monotonic %" PRId64
		               " ns) give no offset in 64 bits: the trace has no "
		               "clock_unix_offset_ns",
		               in->c->path, h->start_unix_ns, h->start_mono_ns);
		return 0;
	}
	had = mp_store_get_meta(in->c->store, "clock_unix_offset_ns");
	if (!had) {
		snprintf(buf, sizeof(buf), "%" PRId64, offset);
		return mp_store_set_meta(in->c->store, "clock_unix_offset_ns", buf);
	}
	had_ns = strtoll(had, NULL, 10);
	diff = mp_sat_sub(offset, had_ns);
	if (diff > 1000000 || diff < -1000000)
		mp_import_note(in->c->st,
		               "'%s': its clock's offset to Unix time differs from the first "
		               "spool's by %.3f ms (another host?): the first one's was kept",
		               in->c->path, ((double)offset - (double)had_ns) / 1e6);
	free(had);
	return rc;
}

static int write_meta(struct mp_spool_in *in)
{
	struct mp_store *s = in->c->store;
	char clock[16];
	int cupti_clock = meta(in, "clock", clock, sizeof(clock)) && strcmp(clock, "cupti") == 0;
	int rc;

	/* The library stamps with CLOCK_MONOTONIC unless CUPTI refused it. */
	rc = mp_store_set_meta(s, "clock",
	                       cupti_clock
	                               ? "cupti_ns (CUPTI's own clock: it refused CLOCK_MONOTONIC)"
	                               : "monotonic_ns") < 0 ||
	     mp_store_add_meta(s, "host_records_skipped",
	                       in->c->st->n_warnings[MP_WARN_SKIPPED_HOST]) < 0 ||
	     mp_store_add_meta(s, "host_buffers", in->n_host_buffers) < 0 || meta_numa(in) < 0 ||
	     meta_cupti(in) < 0 || meta_alloc_conf(in) < 0 ||
	     mp_store_add_meta(s, "vmm_reserve_calls", in->n_vmm_reserve) < 0 ||
	     mp_store_add_meta(s, "vmm_address_free_calls", in->n_vmm_address_free) < 0 ||
	     mp_store_add_meta(s, "vmm_create_calls", in->n_vmm_create) < 0 ||
	     mp_store_add_meta(s, "vmm_release_calls", in->n_vmm_release) < 0 ||
	     (in->torch_segments && mp_store_set_meta(s, "pytorch_caching_allocator", "1") < 0) ||
	     (in->disabled_why && meta_disabled(in) < 0) ||
	     ((in->windowed || (mp_spool_reader_header(in->r)->flags & MP_SPOOL_F_DORMANT)) &&
	      mp_store_set_meta(s, MP_WINDOW_META, mp_window_dormant) < 0) ||
	     (!cupti_clock && meta_clock_offset(in) < 0);
	return rc ? mp_err(in->c->err, MP_EIO, "cannot write the trace's metadata") : 0;
}

/* What the spool lost, into the import's stats and notes. */
static void account_losses(struct mp_spool_in *in)
{
	const struct mp_spool_footer *f = mp_spool_reader_footer(in->r);
	const char *why, *path;
	uint64_t offset = 0;
	int n;

	in->c->st->n_dropped += in->n_dropped_events + (f ? (int64_t)f->n_dropped : 0);
	if (!mp_spool_reader_complete(in->r)) {
		why = mp_spool_reader_damage(in->r, &offset);
		in->c->st->n_truncated++;
		mp_import_note(in->c->st,
		               "'%s': ends early at byte %" PRIu64 " (%s): the %zu records before "
		               "it were kept and the trace is marked truncated",
		               in->c->path, offset, why ? why : "no footer", in->n_events);
	}
	if (in->disabled_why) {
		/* Recording ended before the process did: the trace is incomplete. */
		if (mp_spool_reader_complete(in->r))
			in->c->st->n_truncated++;
		mp_import_note(in->c->st,
		               "'%s': the recording library turned itself off "
		               "(see meta record_disabled): events after that are missing and "
		               "the trace is marked truncated",
		               in->c->path);
	}
	if (in->torch_segments && !in->merge)
		mp_import_note(in->c->st,
		               "PyTorch's caching allocator was on: the trace holds its segments, "
		               "not tensors; record with --no-framework-cache to see each tensor "
		               "(this changes the workload's memory behaviour)");
	if (in->sym && (n = mp_symbols_n_unusable(in->sym, &path, &why)) > 0)
		mp_import_note(in->c->st,
		               "'%s': %d module(s) of the recorded process could not be read for "
		               "symbols, their frames are left as addresses (first '%s': %s)",
		               in->c->path, n, path, why);
}

static void spool_in_free(struct mp_spool_in *in)
{
	mp_symbols_free(in->sym);
	mp_torch_merge_free(in->merge);
	free(in->events);
	free(in->meta);
	free(in->devices);
	mp_spool_reader_close(in->r);
}

static int run(struct mp_import_ctx *c)
{
	struct mp_spool_in in = {0};
	struct mp_spool_labels labels;
	int rc;

	in.c = c;
	if ((rc = mp_spool_reader_open(&in.r, c->in, c->path, c->err)) < 0)
		return rc;
	if ((rc = read_all(&in)) < 0)
		goto out;
	read_labels(&in, &labels);
	if ((rc = write_process(&in, &labels)) < 0 || (rc = write_devices(&in)) < 0 ||
	    (rc = load_symbols(&in)) < 0)
		goto out;
	in.torch_segments = mp_spool_labels_torch_caching(&labels);
	if ((rc = mp_torch_merge_open(&in)) < 0 || (rc = mp_spool_convert(&in)) < 0 ||
	    (in.merge && (rc = mp_torch_merge_write(&in)) < 0))
		goto out;
	account_losses(&in);
	rc = write_meta(&in);
out:
	spool_in_free(&in);
	return rc;
}

const struct mp_importer mp_importer_spool = {
        .name = "spool",
        .description = "spools written by 'memprof record' (.mpt, one per process)",
        .probe = probe,
        .run = run,
};
