/*
 * util/pipe_tee.c - a stream read twice through an unlinked temporary file:
 * the first reader's bytes are written there as they come; the second reads
 * the file from its start, then whatever the first read but could not keep,
 * then the stream itself.
 */
#include "util/pipe_tee.h"

#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#define CHUNK (256u << 10) /* the most the first reader takes from in at once */
#define ROOM_EVERY ((uint64_t)64 << 20) /* bytes kept between two looks at the room left */
#define RESERVE ((uint64_t)1 << 30)     /* free bytes the copy leaves on its disk, at least */

struct mp_pipe_tee {
	FILE *in;
	int fd;              /* the kept bytes; -1 once the second reader read them */
	int unkept;          /* a write failed, or the disk is near full: the first reader ends there */
	uint64_t kept;       /* bytes written to fd */
	uint64_t room_until; /* kept may reach this before the room left is looked at again */
	uint64_t reserve;    /* free bytes the copy leaves on its disk */
	int lost;            /* the kept bytes cannot be read back from their start */
	unsigned char *held; /* read but not kept: held[at, n); then the buffers */
	unsigned char *first_buf, *again_buf; /* the streams' (stdio's own read 8 KiB) */
	size_t at, n;
	FILE *first, *again;
};

/* Write all of b[0, n) to fd: how many bytes were written. */
static size_t write_all(int fd, const char *b, size_t n)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = write(fd, b + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		done += (size_t)k;
	}
	return done;
}

/* Whether the file system of fd keeps more than reserve bytes free after
 * n more are written; a file system that cannot say is taken to. */
static int room_for(int fd, uint64_t n, uint64_t reserve)
{
	struct statfs sf;
	uint64_t unit, total, avail;

	if (fstatfs(fd, &sf) != 0)
		return 1;
	unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
	total = (uint64_t)sf.f_blocks * unit;
	avail = (uint64_t)sf.f_bavail * unit;
	if (reserve < total / 20)
		reserve = total / 20; /* and never the last 5% of the disk */
	return avail > reserve && avail - reserve > n;
}

static ssize_t first_read(void *cookie, char *out, size_t size)
{
	struct mp_pipe_tee *t = cookie;
	size_t k, w = 0;

	if (t->unkept)
		return -1;
	k = fread(out, 1, size < CHUNK ? size : CHUNK, t->in);
	if (k == 0)
		return ferror(t->in) ? -1 : 0;
	/* the room left is looked at before the copy passes each mark, every
	 * ROOM_EVERY bytes: none left, and nothing more is written */
	if (t->kept + k > t->room_until && room_for(t->fd, ROOM_EVERY, t->reserve))
		t->room_until = t->kept + ROOM_EVERY;
	if (t->kept + k <= t->room_until) {
		w = write_all(t->fd, out, k);
		t->kept += w;
	}
	if (w < k) {
		memcpy(t->held, out + w, k - w); /* for the second reader */
		t->n = k - w;
		t->unkept = 1;
		errno = ENOSPC;
		return -1;
	}
	return (ssize_t)k;
}

static ssize_t again_read(void *cookie, char *out, size_t size)
{
	struct mp_pipe_tee *t = cookie;
	size_t k;

	if (t->lost) {
		errno = EIO;
		return -1;
	}
	if (t->fd >= 0) {
		ssize_t got;

		do
			got = read(t->fd, out, size);
		while (got < 0 && errno == EINTR);
		if (got != 0)
			return got; /* the bytes, or -1 */
		close(t->fd);
		t->fd = -1;
	}
	if (t->at < t->n) {
		k = t->n - t->at < size ? t->n - t->at : size;
		memcpy(out, t->held + t->at, k);
		t->at += k;
		return (ssize_t)k;
	}
	k = fread(out, 1, size, t->in);
	return k == 0 && ferror(t->in) ? -1 : (ssize_t)k;
}

static int first_close(void *cookie)
{
	(void)cookie; /* the tee lives on for the second reader */
	return 0;
}

static int again_close(void *cookie)
{
	struct mp_pipe_tee *t = cookie;

	if (t->first)
		fclose(t->first);
	if (t->fd >= 0)
		close(t->fd);
	free(t->held);
	free(t);
	return 0;
}

/* Whether fd's file system keeps its files in memory (tmpfs, ramfs). */
static int in_memory(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 &&
	       ((unsigned long)sf.f_type == TMPFS_MAGIC || (unsigned long)sf.f_type == RAMFS_MAGIC);
}

/* An unlinked file in $TMPDIR (else /tmp) on a disk: its descriptor, or -1
 * (EXDEV when the directory is a tmpfs: a copy there would take more
 * memory than it saves). */
static int temp_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/memprof-pipe-XXXXXX", dir && *dir ? dir : "/tmp") >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) < 0)
		return -1;
	unlink(path);
	if (in_memory(fd)) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	return fd;
}

struct mp_pipe_tee *mp_pipe_tee_open(FILE *in)
{
	return mp_pipe_tee_open_leaving(in, RESERVE);
}

struct mp_pipe_tee *mp_pipe_tee_open_leaving(FILE *in, uint64_t reserve)
{
	static const cookie_io_functions_t first_io = {first_read, NULL, NULL, first_close};
	static const cookie_io_functions_t again_io = {again_read, NULL, NULL, again_close};
	struct mp_pipe_tee *t = calloc(1, sizeof(*t));
	int e;

	if (!t)
		return NULL;
	t->in = in;
	t->fd = -1;
	t->reserve = reserve;
	if (!(t->held = malloc(3 * (size_t)CHUNK)) || (t->fd = temp_fd()) < 0 ||
	    !(t->first = fopencookie(t, "rb", first_io)) ||
	    !(t->again = fopencookie(t, "rb", again_io))) {
		e = errno;
		if (t->first)
			fclose(t->first);
		if (t->fd >= 0)
			close(t->fd);
		free(t->held);
		free(t);
		errno = e;
		return NULL;
	}
	t->first_buf = t->held + CHUNK;
	t->again_buf = t->held + 2 * (size_t)CHUNK;
	/* reads of a chunk, not of stdio's 8 KiB */
	setvbuf(t->first, (char *)t->first_buf, _IOFBF, CHUNK);
	setvbuf(t->again, (char *)t->again_buf, _IOFBF, CHUNK);
	return t;
}

FILE *mp_pipe_tee_first(struct mp_pipe_tee *t)
{
	return t->first;
}

FILE *mp_pipe_tee_again(struct mp_pipe_tee *t)
{
	if (t->first) {
		fclose(t->first);
		t->first = NULL;
	}
	t->lost = lseek(t->fd, 0, SEEK_SET) != 0;
	return t->again;
}
