/*
 * util/outfile.h - output files that appear whole or not at all: written to
 * an unnamed file in the destination's directory (O_TMPFILE), linked into
 * place on commit, so a process killed even by SIGKILL leaves nothing; where
 * the file system has no unnamed files, to a temporary NAME.tmp-XXXXXX
 * renamed into place (removed on the signals of util/cleanup).
 * "-" means standard output (no rename).  A destination that exists and is
 * not a regular file (/dev/null, /dev/stdout, a FIFO) is written to directly:
 * renaming onto it would replace the device node or pipe with a file.
 */
#ifndef MP_UTIL_OUTFILE_H
#define MP_UTIL_OUTFILE_H

#include <stdio.h>

#include "util/error.h"

struct mp_outfile {
	FILE *f;
	char *path;      /* destination, or NULL for standard output */
	int direct;      /* writing straight to path (not a regular file) */
	char *temp_path; /* where it is written until commit */
	int overwrite;
	int unnamed;      /* f is an O_TMPFILE file: temp_path only names it at commit */
	int cleanup_slot; /* the temporary file is deleted if a signal kills us */
};

/* Give a file made by mkstemp (mode 0600) the mode a new file gets: 0666
 * less the umask.  Reads the umask by setting it: not thread-safe. */
int mp_file_default_mode(int fd);

/* The rule of every output file, checked before any work is done: MP_EEXIST
 * when path exists and overwrite is 0; MP_EINVAL when path is one of inputs
 * (the same file by any name: a link, a symbolic link), even with overwrite.
 * inputs ends with NULL and may be NULL.  "-" and devices pass. */
int mp_outfile_check(const char *path, int overwrite, const char *const *inputs,
                     struct mp_error *err);
/* Open path for writing after mp_outfile_check. */
int mp_outfile_open(struct mp_outfile *o, const char *path, int overwrite,
                    const char *const *inputs, struct mp_error *err);
/* After a writer to o->f returned rc < 0: the error naming what ("report")
 * and the file (or standard output) with errno's reason, MP_EFULL for a
 * full disk or file-size limit.  Returns the code; call before anything
 * else touches errno. */
int mp_outfile_write_error(const struct mp_outfile *o, int rc, const char *what,
                           struct mp_error *err);
/* Flush, sync and rename into place; on failure the temporary file is removed. */
int mp_outfile_commit(struct mp_outfile *o, struct mp_error *err);
/* Close and remove the temporary file. */
void mp_outfile_abort(struct mp_outfile *o);

#endif
