/*
 * util/outfile.c - temporary file, then rename: no half-written outputs.
 */
#include "util/outfile.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int mp_file_default_mode(int fd)
{
	mode_t mask = umask(077);

	umask(mask);
	return fchmod(fd, 0666 & ~mask);
}

/* A destination that is a device or a pipe: opened as it is, never replaced. */
static int open_direct(struct mp_outfile *o, const char *path, struct mp_error *err)
{
	if (!(o->f = fopen(path, "w")))
		return mp_err(err, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
	if (!(o->path = strdup(path))) {
		fclose(o->f);
		o->f = NULL;
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	o->direct = 1;
	return 0;
}

/* An unnamed file (O_TMPFILE) in the directory of path, mode 0666 less the
 * umask; -1 where there is none (the kernel, the file system, no /proc to
 * link it by): the caller falls back to a named temporary file. */
static int open_unnamed(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (access("/proc/self/fd", X_OK) < 0)
		return -1;
	if (!slash)
		dir = strdup(".");
	else
		dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir)
		return -1;
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	free(dir);
	return fd;
}

/* Give the unnamed file open at fd the name to: 0, or -1 with errno. */
static int link_unnamed(int fd, const char *to)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}

/* Replace o->path by the unnamed file: linked under a fresh temporary name
 * (known to util/cleanup for that instant), renamed over the destination. */
static int replace_unnamed(struct mp_outfile *o, int fd)
{
	size_t n = strlen(o->temp_path);
	int i, rc = -1, e;

	for (i = 0; i < 100 && rc < 0; i++) {
		static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
		unsigned v = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^
		             (unsigned)rand() ^ (unsigned)i * 40503u;
		int k;

		for (k = 0; k < 6; k++, v /= 36)
			o->temp_path[n - 6 + k] = abc[v % 36];
		o->cleanup_slot = mp_cleanup_remember(o->temp_path);
		rc = link_unnamed(fd, o->temp_path);
		if (rc < 0) {
			e = errno;
			mp_cleanup_forget(o->cleanup_slot);
			o->cleanup_slot = -1;
			errno = e;
			if (e != EEXIST)
				return -1;
		}
	}
	if (rc < 0)
		return -1;
	if (rename(o->temp_path, o->path) < 0) {
		e = errno;
		unlink(o->temp_path);
		errno = e;
		return -1;
	}
	return 0;
}

/* Close the unnamed file, written and synced, and name it o->path: 0, or
 * the error. */
static int commit_unnamed(struct mp_outfile *o, struct mp_error *err)
{
	int fd = dup(fileno(o->f)), rc, e, code;

	rc = fclose(o->f);
	o->f = NULL;
	if (fd < 0 || rc != 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return mp_err(err, MP_EIO, "cannot write '%s': %s", o->path, strerror(e));
	}
	rc = o->overwrite ? replace_unnamed(o, fd) : link_unnamed(fd, o->path);
	e = errno;
	close(fd);
	if (rc == 0)
		return 0;
	code = e == EEXIST ? MP_EEXIST : e == ENOSPC ? MP_EFULL : MP_EIO;
	return mp_err(err, code, "cannot write '%s': %s%s", o->path, strerror(e),
	              e == EEXIST ? " (it appeared while writing; use --force to replace it)" : "");
}

int mp_outfile_check(const char *path, int overwrite, const char *const *inputs,
                     struct mp_error *err)
{
	struct stat st, in;

	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return mp_err(err, MP_EIO, "cannot write '%s': it is a directory", path);
	if (!S_ISREG(st.st_mode))
		return 0;
	for (; inputs && *inputs; inputs++)
		if (stat(*inputs, &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
			return mp_err(err, MP_EINVAL,
			              "output is an input '%s': it would be overwritten, even with "
			              "--force; name another file",
			              path);
	if (!overwrite)
		return mp_err(err, MP_EEXIST, "output exists '%s': use --force to replace it",
		              path);
	return 0;
}

int mp_outfile_open(struct mp_outfile *o, const char *path, int overwrite,
                    const char *const *inputs, struct mp_error *err)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	o->cleanup_slot = -1;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if ((fd = mp_outfile_check(path, overwrite, inputs, err)) < 0)
		return fd;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return open_direct(o, path, err);
	o->overwrite = overwrite;
	o->path = strdup(path);
	if (!o->path || asprintf(&o->temp_path, "%s.tmp-XXXXXX", path) < 0) {
		free(o->path);
		o->path = NULL;
		o->temp_path = NULL;
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	if ((fd = open_unnamed(path)) >= 0) {
		if ((o->f = fdopen(fd, "w"))) {
			o->unnamed = 1;
			return 0;
		}
		close(fd);
	}
	fd = mp_cleanup_mkstemp(o->temp_path, &o->cleanup_slot);
	if (fd < 0 || mp_file_default_mode(fd) < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0) {
			close(fd);
			unlink(o->temp_path);
		}
		mp_cleanup_forget(o->cleanup_slot);
		o->cleanup_slot = -1;
		free(o->path);
		free(o->temp_path);
		o->path = o->temp_path = NULL;
		return mp_err(err, e == ENOSPC ? MP_EFULL : MP_EIO, "cannot create '%s': %s", path,
		              strerror(e));
	}
	return 0;
}

int mp_outfile_write_error(const struct mp_outfile *o, int rc, const char *what,
                           struct mp_error *err)
{
	int e = errno;

	if (rc == MP_ENOMEM)
		return mp_err(err, MP_ENOMEM, "cannot write %s '%s': out of memory", what,
		              o->path ? o->path : "standard output");
	return mp_err(err, e == ENOSPC || e == EFBIG ? MP_EFULL : MP_EIO,
	              "cannot write %s '%s': %s", what, o->path ? o->path : "standard output",
	              e ? strerror(e) : "write error");
}

int mp_outfile_commit(struct mp_outfile *o, struct mp_error *err)
{
	int rc = 0, e;

	if (o->direct) {
		if (fclose(o->f) != 0)
			rc = mp_err(err, MP_EIO, "cannot write '%s': %s", o->path, strerror(errno));
		o->f = NULL;
		mp_outfile_abort(o); /* frees path; there is no temporary file */
		return rc;
	}
	if (!o->path) {
		if (fflush(o->f) != 0)
			return mp_err(err, MP_EIO, "cannot write to standard output: %s",
			              strerror(errno));
		return 0;
	}
	if (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0) {
		e = errno;
		rc = mp_err(err, e == ENOSPC || e == EFBIG ? MP_EFULL : MP_EIO,
		            "cannot write '%s': %s", o->path, strerror(e));
		mp_outfile_abort(o);
		return rc;
	}
	if (o->unnamed) {
		if ((rc = commit_unnamed(o, err)) < 0) {
			mp_outfile_abort(o);
			return rc;
		}
	} else if (fclose(o->f) != 0) {
		o->f = NULL;
		rc = mp_err(err, MP_EIO, "cannot write '%s': %s", o->path, strerror(errno));
		mp_outfile_abort(o);
		return rc;
	}
	o->f = NULL;
	if (o->unnamed) {
		/* named by commit_unnamed */
	} else if (!o->overwrite && link(o->temp_path, o->path) == 0) {
		unlink(o->temp_path);
	} else if (!o->overwrite && errno != EPERM && errno != ENOTSUP && errno != ENOSYS) {
		/* EEXIST: it appeared meanwhile; anything else: cannot place it safely */
		e = errno;
		rc = mp_err(err, e == EEXIST ? MP_EEXIST : MP_EIO, "cannot write '%s': %s%s",
		            o->path, strerror(e),
		            e == EEXIST ? " (it appeared while writing; use --force to replace it)"
		                        : "");
		mp_outfile_abort(o);
		return rc;
	} else if (rename(o->temp_path, o->path) < 0) { /* no hard links here */
		rc = mp_err(err, MP_EIO, "cannot rename '%s' to '%s': %s", o->temp_path, o->path,
		            strerror(errno));
		mp_outfile_abort(o);
		return rc;
	}
	mp_cleanup_forget(o->cleanup_slot);
	o->cleanup_slot = -1;
	free(o->path);
	free(o->temp_path);
	o->path = o->temp_path = NULL;
	return 0;
}

void mp_outfile_abort(struct mp_outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	o->direct = 0;
	if (o->temp_path && !o->unnamed)
		unlink(o->temp_path);
	o->unnamed = 0;
	mp_cleanup_forget(o->cleanup_slot);
	o->cleanup_slot = -1;
	free(o->path);
	free(o->temp_path);
	o->path = o->temp_path = NULL;
}
