/*
 * import/import.h - turning files users already have into trace databases.
 *
 * Each foreign format is one importer (one file in src/import/) listed in the
 * table in import.c.  mp_import_file writes the new trace to a temporary file
 * and renames it into place only when the whole input was read: a bad input
 * leaves nothing behind.
 */
#ifndef MP_IMPORT_IMPORT_H
#define MP_IMPORT_IMPORT_H

#include <stdint.h>
#include <stdio.h>

#include "store/writer.h"
#include "util/error.h"

struct mp_import_stats {
	int64_t n_events;
	int64_t n_allocs;             /* alloc and preexisting events */
	int64_t n_unmatched_frees;    /* frees whose alloc was never seen */
	int64_t n_unmatched_releases; /* segment releases whose reserve was never seen */
};

struct mp_importer {
	const char *name;        /* --format value */
	const char *description; /* one line for --help */
	/* Does a file starting with these n bytes look like this format? */
	int (*probe)(const char *path, const char *head, size_t n);
	/* Read in (named path) and append to w.  Error detail in err. */
	int (*run)(FILE *in, const char *path, struct mp_writer *w, struct mp_import_stats *st,
	           struct mp_error *err);
};

/* The importers, NULL-terminated. */
extern const struct mp_importer *const mp_importers[];

const struct mp_importer *mp_importer_find(const char *name);

struct mp_import_opts {
	const char *format; /* NULL: detect from the content */
	int overwrite;      /* replace an existing output */
	const char *tool_version;
	const char *command_line; /* recorded in meta; may be NULL */
};

/* Import in_path into a new trace at out_path ("-" reads standard input). */
int mp_import_file(const char *in_path, const char *out_path, const struct mp_import_opts *o,
                   struct mp_import_stats *st, struct mp_error *err);

/* The importer of memprof's own CSV format (csv_import.c). */
extern const struct mp_importer mp_importer_csv;

#endif
