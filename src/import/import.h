/*
 * import/import.h - turning files users already have into trace databases.
 *
 * Each foreign format is one importer (one file in src/import/) listed in the
 * table in import.c.  mp_import_files writes the new trace to a temporary file
 * and renames it into place only when the whole input was read: a bad input
 * leaves nothing behind.
 */
#ifndef MP_IMPORT_IMPORT_H
#define MP_IMPORT_IMPORT_H

#include <stdint.h>
#include <stdio.h>

#include "store/writer.h"
#include "util/error.h"

/*
 * Things an importer noticed and worked around.  Each is counted, printed as
 * a warning by 'memprof import' and written to the trace's meta table
 * (key import_warnings), so a trace always says what was done to it.
 */
enum mp_import_warning {
	MP_WARN_UNMATCHED_FREE,    /* a free whose alloc was never seen: kept */
	MP_WARN_UNMATCHED_RELEASE, /* a segment release whose reserve was never seen: kept */
	MP_WARN_DUPLICATE_ALLOC,   /* an alloc at an address still live: implied free added */
	MP_WARN_DUPLICATE_RESERVE, /* a reserve at an address still reserved: implied release */
	MP_WARN_SKIPPED_HOST,      /* host (pageable, pinned) records: not GPU memory, skipped */
	MP_WARN_SKIPPED_UNKNOWN,   /* records of a kind memprof does not know: skipped */
	MP_WARN_STATE_MISMATCH,    /* final allocator state disagrees with the trace */
	MP_WARN_CLOCK_WRAP,        /* a time of day that went backwards: taken as midnight */
	MP_WARN_SIZE_MISMATCH,     /* a free whose size differs from its alloc's: alloc's kept */
	MP_WARN_PARTIAL_LINE,      /* a cut-off last line (a log lost its tail): dropped */
	MP_WARN_N
};

struct mp_import_stats {
	int64_t n_events;
	int64_t n_allocs; /* alloc and preexisting events */
	int64_t n_warnings[MP_WARN_N];
	/* Appended for recorded traces (spools); 0 for the other formats. */
	int64_t n_dropped;   /* records the source itself says it lost: meta dropped_records */
	int64_t n_truncated; /* inputs cut short, read up to the cut: meta truncated, lossy */
	int unsorted;        /* an importer appended events out of time order: sort them */
	char notes[2048];    /* warnings in words, one per line, each naming its input;
	                      * cut (ending "...") when full: mp_import_note */
};

/* Add a line to st->notes (printf format, no newline). */
void mp_import_note(struct mp_import_stats *st, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* The phrase for a warning, to follow its count: "412 frees of ..." */
const char *mp_import_warning_text(enum mp_import_warning w);
/* Does this warning mean data was dropped or inferred (meta lossy = 1)? */
int mp_import_warning_is_lossy(enum mp_import_warning w);

/* What an importer works with. */
struct mp_import_ctx {
	FILE *in;              /* the input, positioned at its start */
	const char *path;      /* its name in messages ("<stdin>" for standard input) */
	const char *file_path; /* its path on disk, NULL when it is a stream */
	struct mp_writer *w;
	struct mp_store *store; /* for mp_store_set_meta; events go through w */
	struct mp_import_stats *st;
	struct mp_error *err;
	void *shared;    /* mp_import_opts.shared: state across the inputs, or NULL */
	int input_index; /* which of the inputs this is, from 0 */
};

struct mp_importer {
	const char *name;        /* --format value */
	const char *description; /* one line for --help */
	/* Does a file starting with these n bytes look like this format? */
	int (*probe)(const char *path, const char *head, size_t n);
	/*
	 * Read c->in and append events to c->w.  May set meta keys of its own
	 * (clock, source details); import.c writes the common ones after it.
	 * Returns 0, or a negative MP_E* code with c->err filled.
	 */
	int (*run)(struct mp_import_ctx *c);
	/* Reads c->file_path itself, not c->in: needs a file, not a stream. */
	int by_path;
};

/* The importers, NULL-terminated. */
extern const struct mp_importer *const mp_importers[];

const struct mp_importer *mp_importer_find(const char *name);

struct mp_import_opts {
	const char *format; /* NULL: detect from the content */
	int overwrite;      /* replace an existing output */
	const char *tool_version;
	const char *command_line; /* recorded in meta; may be NULL */
	FILE *progress;           /* where to show progress (a terminal), or NULL */
	const char *source; /* meta source instead of the importers' names ("record"), or NULL */
	/* Labels for every process imported (memprof_process fields, -1 / NULL:
	 * keep the process's own), or NULL. */
	const struct memprof_process *labels;
	const char *cmd_name; /* in progress lines: "memprof <cmd_name>:"; NULL: "import" */
	void *shared;         /* handed to each importer as mp_import_ctx.shared */
	/* Called after every input was read, before the events are sorted and
	 * the common meta keys written (may set meta keys, add notes); or NULL. */
	int (*after)(void *shared, struct mp_store *s, struct mp_import_stats *st,
	             struct mp_error *err);
};

/*
 * Import the n files in_paths into one new trace at out_path ("-" reads
 * standard input).  Each file keeps its own processes; with several files
 * the events are put in timestamp order (their clocks must be comparable).
 * st sums over the files.
 */
int mp_import_files(const char *const *in_paths, int n, const char *out_path,
                    const struct mp_import_opts *o, struct mp_import_stats *st,
                    struct mp_error *err);

/* The importers, one per file in src/import/. */
extern const struct mp_importer mp_importer_csv;
extern const struct mp_importer mp_importer_torch;
extern const struct mp_importer mp_importer_minimalloc;
extern const struct mp_importer mp_importer_nsys;
extern const struct mp_importer mp_importer_rmm;
extern const struct mp_importer mp_importer_spool;
extern const struct mp_importer mp_importer_trace;

#endif
