/*
 * load/trace_export_perfetto.c - a trace as Chrome trace-event JSON for
 * Perfetto: the reader feeds the memory state, which feeds report/'s
 * Perfetto writer, so the counters are memprof's own figures; the trace's
 * processes, devices and meta name the tracks and fill the metadata.
 */
#include "analysis/pass.h"
#include "load/trace_export.h"
#include "store/reader.h"

#include <stdlib.h>

static int run(struct mp_store *s, struct mp_perfetto *w, struct mp_error *err)
{
	struct mp_memstate *ms = malloc(sizeof(*ms));
	struct mp_mem_listener l;
	struct mp_consumer c;
	struct mp_reader *r;
	int rc;

	if (!ms)
		return mp_err(err, MP_ENOMEM, "out of memory");
	mp_memstate_init(ms);
	l = mp_perfetto_listener(w, ms);
	c = mp_memstate_consumer(ms);
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		rc = mp_err_copy(err, mp_store_error(s));
	} else {
		mp_memstate_listen(ms, &l);
		mp_reader_add(r, &c);
		rc = mp_pass_read(s, r, ms, err);
		mp_reader_close(r);
	}
	mp_memstate_free(ms);
	free(ms);
	return rc;
}

int mp_export_perfetto(struct mp_store *s, struct mp_outfile *of, int64_t min_size_bytes,
                       struct mp_perfetto_stats *st, struct mp_error *err)
{
	static const char *const keys[] = {"source",       "source_file", "tool_version", "created",
	                                   "command_line", "truncated",   "lossy"};
	struct mp_perfetto_opts o = {.min_size_bytes = min_size_bytes};
	const char *meta[2 * 9];
	char *values[7] = {0};
	struct memprof_process *procs = NULL;
	struct memprof_device *devs = NULL;
	struct mp_perfetto *w = NULL;
	size_t i;
	int rc = 0;

	if (mp_store_processes(s, &procs, &o.n_processes) < 0 ||
	    mp_store_devices(s, &devs, &o.n_devices) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	meta[0] = "trace";
	meta[1] = mp_store_path(s);
	meta[2] = "exported_by";
	meta[3] = "memprof " PACKAGE_VERSION;
	for (i = 0; i < 7; i++) {
		meta[4 + 2 * i] = keys[i];
		meta[5 + 2 * i] = values[i] = mp_store_get_meta(s, keys[i]);
	}
	o.processes = procs;
	o.devices = devs;
	o.meta = meta;
	o.n_meta = 9;
	if (rc == 0 && !(w = mp_perfetto_open(of->f, &o)))
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	if (rc == 0)
		rc = run(s, w, err);
	/* a failed write also stops the reader, with no message of its own */
	if (w && mp_perfetto_close(w, st) < 0 && (rc >= 0 || !err->msg[0]))
		rc = mp_export_write_failed(of, err);
	for (i = 0; i < 7; i++)
		free(values[i]);
	mp_store_free_processes(procs, o.n_processes);
	mp_store_free_devices(devs, o.n_devices);
	return rc;
}
