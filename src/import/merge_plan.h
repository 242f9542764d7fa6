/*
 * import/merge_plan.h - what 'memprof merge' decides before it copies a single
 * event: the inputs (memprof traces) in the order they are read, which job
 * device each input's (process, ordinal) becomes, and how far each input's
 * timestamps are shifted to put them on one clock.  merge_plan.c builds the
 * plan, merge_meta.c writes it to the merged trace's meta table, and the
 * importer 'trace' (trace_db.c) follows it while copying events.
 */
#ifndef MP_IMPORT_MERGE_PLAN_H
#define MP_IMPORT_MERGE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "import/import.h"
#include "memprof/trace.h"
#include "store/store.h"
#include "util/error.h"

#define MP_MERGE_NO_RANK INT64_MAX /* lowest_rank of an input without ranks */

/* One device row of an input and the job device it becomes. */
struct mp_merge_device {
	struct memprof_device d; /* as in the input; strings owned */
	int32_t job;             /* the merged trace's ordinal */
};

/* One input trace, open for reading. */
struct mp_merge_input {
	const char *path; /* as given */
	struct mp_store *s;
	char *source, *clock; /* meta values, "" when absent */
	const char *host;     /* the host of all its processes, NULL when unknown or mixed */
	int has_offset;       /* meta clock_unix_offset_ns given */
	int64_t offset_ns;
	int64_t first_ns, last_ns, n_events, n_replay_runs;
	int64_t lowest_rank; /* MP_MERGE_NO_RANK when none of its processes has one */
	struct memprof_process *procs;
	size_t n_procs;
	struct mp_merge_device *devs;
	size_t n_devs;
	int64_t shift_ns; /* added to every timestamp */
};

enum mp_merge_clock {
	MP_MERGE_CLOCK_KEPT,    /* every input on one clock already */
	MP_MERGE_CLOCK_UNIX,    /* put on the Unix epoch (monotonic + clock_unix_offset_ns) */
	MP_MERGE_CLOCK_ALIGNED, /* not comparable: each input's first event at 0 */
};

struct mp_merge_plan {
	struct mp_merge_input *in; /* in the order they are read: lowest rank, then as given */
	size_t n;
	const char **paths;    /* in[i].path, for mp_import_files */
	int renumbered;        /* devices renumbered 0..G-1 (ordinals clashed) */
	int32_t n_job_devices; /* distinct job devices (not the highest number + 1) */
	enum mp_merge_clock clock_mode;
	char *clock;       /* the merged trace's clock meta */
	char *clock_why;   /* for meta merge_clock */
	int has_offset;    /* clock kept and every input had the same clock_unix_offset_ns */
	int64_t offset_ns; /* that offset */
};

/*
 * Open the n traces and decide the plan.  out_path (may be NULL) must not be
 * one of them.  Refuses, naming the file: a file that is not a memprof
 * trace or is of a newer schema, and two inputs that hold the same process
 * (same host, pid and rank: the same trace given twice).  On failure the
 * plan is freed and err says why.
 */
int mp_merge_plan_build(const char *const *paths, int n, const char *out_path,
                        struct mp_merge_plan *plan, struct mp_error *err);
void mp_merge_plan_free(struct mp_merge_plan *plan);

/* The steps of mp_merge_plan_build: the job devices (merge_devices.c) and
 * the clock (merge_clock.c).  0 or MP_ENOMEM. */
int mp_merge_devices_plan(struct mp_merge_plan *plan);
int mp_merge_clock_plan(struct mp_merge_plan *plan);

/* The job device of the input's (process, ordinal); -1 when the input has
 * no such devices row. */
int32_t mp_merge_job_device(const struct mp_merge_input *in, int64_t process_id, int32_t ordinal);
/* Give the input's (process, ordinal), which has no devices row, a job
 * device: its own ordinal unless renumbered, else the next free one. */
int32_t mp_merge_add_device(struct mp_merge_plan *plan, struct mp_merge_input *in,
                            int64_t process_id, int32_t ordinal);

/* "8 = 'b.db' process 3 (rank 1, host nodeb, pid 4242) device 0", one line
 * per job device, malloc'd (NULL when out of memory). */
char *mp_merge_devices_text(const struct mp_merge_plan *plan);

/* What the inputs said about themselves, carried into s (each naming its
 * file): import_warnings, import_notes, record_disabled appended; truncated,
 * dropped records into st; lossy.  0 or MP_ENOMEM / MP_EIO. */
int mp_merge_carry(const struct mp_merge_plan *plan, struct mp_store *s,
                   struct mp_import_stats *st);

/*
 * The mp_import_opts.after hook of a merge (shared is the plan): writes
 * meta source-independent keys of the merge (merged_from, merged_devices,
 * merge_clock, clock, what the inputs carried) and the notes.
 */
int mp_merge_after(void *shared, struct mp_store *s, struct mp_import_stats *st,
                   struct mp_error *err);

#endif
