/*
 * load/trace_export.c - a trace's events streamed out of the store into
 * report/'s CSV and MiniMalloc writers; for MiniMalloc, the one process
 * and device chosen (load/trace_export.h).
 */
#include "load/trace_export.h"
#include "report/csv_writer.h"
#include "store/reader.h"

#include <errno.h>
#include <string.h>

int mp_export_write_failed(const struct mp_outfile *of, struct mp_error *err)
{
	return mp_err(err,
	              errno == ENOSPC || errno == EFBIG ? MP_EFULL
	              : errno == ENOMEM                 ? MP_ENOMEM
	                                                : MP_EIO,
	              "cannot write '%s': %s", of->path ? of->path : "<stdout>", strerror(errno));
}

/* A writer fed by the reader's push: the first record it failed to take
 * (a write or memory failure, its errno kept) stops the read. */
struct export_sink {
	void *w;
	int (*take)(void *w, const struct memprof_record *rec); /* 0, or -1 with errno */
	int failed_errno;
};

static int sink_record(void *ctx, const struct memprof_record *rec)
{
	struct export_sink *k = ctx;

	if (k->take(k->w, rec) == 0)
		return 0;
	k->failed_errno = errno ? errno : EIO;
	return MP_ESTOP;
}

static int csv_take(void *w, const struct memprof_record *rec)
{
	return mp_csv_writer_record(w, rec);
}

static int minimalloc_take(void *w, const struct memprof_record *rec)
{
	return mp_minimalloc_writer_record(w, rec);
}

/* Push every record of r to c (its ctx an export_sink); 0, or an error in err. */
static int push_all(struct mp_store *s, struct mp_reader *r, const struct mp_consumer *c,
                    const struct mp_outfile *of, struct mp_error *err)
{
	const struct export_sink *k = c->ctx;
	int rc = mp_reader_add(r, c);

	if (rc == 0)
		rc = mp_reader_run(r);
	if (rc == MP_ESTOP && k->failed_errno) {
		errno = k->failed_errno;
		return mp_export_write_failed(of, err);
	}
	if (rc < 0)
		mp_err_copy(err, mp_store_error(s));
	return rc;
}

int mp_export_csv(struct mp_store *s, struct mp_outfile *of, struct mp_error *err)
{
	struct export_sink sink = {NULL, csv_take, 0};
	struct mp_csv_writer *w;
	struct mp_reader *r;
	int rc, durations = 0;

	if (mp_store_has_durations(s, &durations) < 0 || mp_reader_open(s, MP_READ_STACKS, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	w = mp_csv_writer_open(of->f, durations);
	if (!w) {
		mp_reader_close(r);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	sink.w = w;
	rc = push_all(s, r, &(struct mp_consumer){"csv", &sink, MP_READ_STACKS, sink_record, NULL},
	              of, err);
	if (mp_csv_writer_close(w) < 0 && rc >= 0)
		rc = mp_export_write_failed(of, err);
	mp_reader_close(r);
	return rc < 0 ? rc : 0;
}

/* The pid of device d's process. */
static int64_t pid_of(const struct memprof_device *d, const struct memprof_process *p, size_t n_p)
{
	int64_t pid = 0;
	size_t j;

	for (j = 0; j < n_p; j++)
		if (p[j].id == d->process_id)
			pid = p[j].pid;
	return pid;
}

/* "pid 7 device 0, pid 7 device 1" (the first 8) into buf */
static void device_list(const struct memprof_device *d, size_t n, const struct memprof_process *p,
                        size_t n_p, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && i < 8 && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%spid %lld device %d",
		                        i ? ", " : "", (long long)pid_of(&d[i], p, n_p),
		                        (int)d[i].ordinal);
	if (n > 8 && len < size)
		snprintf(buf + len, size - len, ", ...");
}

/* The one (process, device) pair sel leaves, or the only one: 0, 1 or 2 (several). */
static int choose(const struct memprof_device *d, size_t n, const struct memprof_process *p,
                  size_t n_p, const struct mp_export_select *sel, struct mp_minimalloc_opts *o)
{
	size_t i, n_match = 0;

	for (i = 0; i < n; i++) {
		if ((sel->have_pid && pid_of(&d[i], p, n_p) != sel->pid) ||
		    (sel->have_device && d[i].ordinal != sel->device))
			continue;
		if (n_match++ == 0) {
			o->process_id = d[i].process_id;
			o->device = d[i].ordinal;
		}
	}
	o->select = n_match == 1;
	return (int)(n_match < 2 ? n_match : 2);
}

/* MiniMalloc plans one address space: pick one process and device. */
static int select_device(struct mp_store *s, const struct mp_export_select *sel,
                         struct mp_minimalloc_opts *o, struct mp_error *err)
{
	struct memprof_process *procs = NULL;
	struct memprof_device *devs = NULL;
	size_t n_procs = 0, n_devs = 0;
	char list[512];
	int rc = 0, found;

	if (mp_store_processes(s, &procs, &n_procs) < 0 || mp_store_devices(s, &devs, &n_devs) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0 && (n_devs || sel->have_pid || sel->have_device)) {
		found = choose(devs, n_devs, procs, n_procs, sel, o);
		device_list(devs, n_devs, procs, n_procs, list, sizeof(list));
		if (found == 0)
			rc = mp_err(err, MP_EINVAL,
			            "no such device '%s': none matches --pid and "
			            "--device (devices: %s)",
			            mp_store_path(s), n_devs ? list : "none");
		else if (found > 1)
			rc = mp_err(
			        err, MP_EINVAL,
			        "several devices '%s': MiniMalloc plans one address space, choose "
			        "one with --device=N (and --pid=PID) (devices: %s)",
			        mp_store_path(s), list);
	}
	mp_store_free_processes(procs, n_procs);
	mp_store_free_devices(devs, n_devs);
	return rc;
}

int mp_export_minimalloc(struct mp_store *s, struct mp_outfile *of, int time_ns,
                         const struct mp_export_select *sel, struct mp_minimalloc_stats *st,
                         struct mp_error *err)
{
	struct mp_minimalloc_opts o = {0};
	struct export_sink sink = {NULL, minimalloc_take, 0};
	struct mp_minimalloc_writer *w;
	struct mp_reader *r;
	int rc;

	o.time = time_ns ? MP_MINIMALLOC_TIME_NS : MP_MINIMALLOC_TIME_SEQ;
	if ((rc = select_device(s, sel, &o, err)) < 0)
		return rc;
	if (mp_reader_open(s, 0, &r) < 0)
		return mp_err_copy(err, mp_store_error(s));
	w = mp_minimalloc_writer_open(of->f, &o);
	if (!w) {
		mp_reader_close(r);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	sink.w = w;
	rc = push_all(s, r, &(struct mp_consumer){"minimalloc", &sink, 0, sink_record, NULL}, of,
	              err);
	if (mp_minimalloc_writer_close(w, st) < 0 && rc >= 0)
		rc = mp_export_write_failed(of, err);
	mp_reader_close(r);
	return rc < 0 ? rc : 0;
}
