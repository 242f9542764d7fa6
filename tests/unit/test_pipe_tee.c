/*
 * tests/unit/test_pipe_tee.c - src/util/pipe_tee.c, a stream that cannot
 * seek read twice: the second reader gets every byte from the start whether
 * the first read it all, part of it, or stopped at a write that failed (a
 * file size limit standing in for a full disk); a read error of the stream
 * is met again; with no temporary file, or only one in a tmpfs (where the
 * copy would be memory), nothing of the stream is read.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "util/pipe_tee.h"

#define N_BYTES (3u << 20) /* more than a chunk (256 KiB) many times over */

static unsigned char data[N_BYTES];

/* A pipe over data[0, n): no seek; -1 (a read error) once fail_at is read. */
struct src {
	size_t n, at, fail_at;
};

static ssize_t src_read(void *cookie, char *out, size_t size)
{
	struct src *p = cookie;
	size_t end = p->fail_at < p->n ? p->fail_at : p->n;
	size_t k = end - p->at < size ? end - p->at : size;

	if (k == 0 && p->at == p->fail_at) {
		errno = EIO;
		return -1;
	}
	memcpy(out, data + p->at, k);
	p->at += k;
	return (ssize_t)k;
}

static FILE *src_open(struct src *p, size_t n, size_t fail_at)
{
	FILE *f;

	*p = (struct src){n, 0, fail_at};
	f = fopencookie(p, "rb", (cookie_io_functions_t){.read = src_read});
	cr_assert_not_null(f);
	return f;
}

static void fill(void)
{
	uint32_t x = 12345;

	for (size_t i = 0; i < N_BYTES; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (unsigned char)(x >> 16);
	}
}

/* Read all of f into a new buffer; *n its length, *failed whether a read
 * error ended it. */
static unsigned char *read_all(FILE *f, size_t *n, int *failed)
{
	unsigned char *b = malloc(N_BYTES + 1);
	size_t k;

	cr_assert_not_null(b);
	*n = 0;
	while ((k = fread(b + *n, 1, N_BYTES + 1 - *n, f)) > 0)
		*n += k;
	*failed = ferror(f) != 0;
	return b;
}

/* A tee over a pipe of data[0, N_BYTES) that fails once fail_at is read. */
static struct mp_pipe_tee *tee_over(struct src *p, FILE **in, size_t fail_at)
{
	struct mp_pipe_tee *t;

	fill();
	*in = src_open(p, N_BYTES, fail_at);
	t = mp_pipe_tee_open(*in);
	cr_assert_not_null(t, "%s", strerror(errno));
	return t;
}

/* Read t's first reader to its end: the bytes read (data's first ones). */
static size_t read_first(struct mp_pipe_tee *t, int *failed)
{
	size_t n;
	unsigned char *b = read_all(mp_pipe_tee_first(t), &n, failed);

	cr_assert(memcmp(b, data, n) == 0, "the bytes read first differ");
	free(b);
	return n;
}

/* Read t's second reader to its end: want bytes, all data's, then an error
 * or not as want_failed says. */
static void read_again(struct mp_pipe_tee *t, size_t want, int want_failed)
{
	FILE *again = mp_pipe_tee_again(t);
	size_t n;
	int failed;
	unsigned char *b = read_all(again, &n, &failed);

	cr_assert_eq(n, want, "%zu bytes read again", n);
	cr_assert_eq(failed, want_failed);
	cr_assert(memcmp(b, data, n) == 0, "the bytes read again differ");
	free(b);
	fclose(again);
}

Test(pipe_tee, the_second_reader_gets_every_byte_the_first_read)
{
	struct src p;
	FILE *in;
	struct mp_pipe_tee *t = tee_over(&p, &in, SIZE_MAX);
	int failed;

	cr_assert_eq(read_first(t, &failed), N_BYTES);
	cr_assert_not(failed);
	read_again(t, N_BYTES, 0);
	fclose(in);
}

Test(pipe_tee, what_the_first_left_unread_comes_from_the_stream)
{
	static char part[1000];
	struct src p;
	FILE *in;
	struct mp_pipe_tee *t = tee_over(&p, &in, SIZE_MAX);

	cr_assert_eq(fread(part, 1, sizeof(part), mp_pipe_tee_first(t)), sizeof(part));
	cr_assert_lt(p.at, N_BYTES, "the first reader took only what it asked for, and a chunk");
	read_again(t, N_BYTES, 0);
	fclose(in);
}

Test(pipe_tee, a_byte_that_cannot_be_kept_ends_the_first_reader_not_the_second)
{
	struct rlimit lim = {1u << 20, 1u << 20}; /* a full disk at 1 MiB */
	struct src p;
	FILE *in;
	struct mp_pipe_tee *t;
	int failed;

	signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	t = tee_over(&p, &in, SIZE_MAX);
	cr_assert_leq(read_first(t, &failed), 1u << 20);
	cr_assert(failed, "the first reader is told");
	read_again(t, N_BYTES, 0);
	fclose(in);
}

Test(pipe_tee, a_read_error_of_the_stream_is_met_again_at_the_same_byte)
{
	struct src p;
	FILE *in;
	struct mp_pipe_tee *t = tee_over(&p, &in, 700000);
	int failed;

	cr_assert_eq(read_first(t, &failed), 700000);
	cr_assert(failed);
	read_again(t, 700000, 1);
	fclose(in);
}

Test(pipe_tee, with_no_temporary_file_nothing_of_the_stream_is_read)
{
	struct src p;
	FILE *in;

	fill();
	setenv("TMPDIR", "/nonexistent/memprof-test", 1);
	in = src_open(&p, N_BYTES, SIZE_MAX);
	errno = 0;
	cr_assert_null(mp_pipe_tee_open(in));
	cr_assert_eq(errno, ENOENT, "%s", strerror(errno));
	cr_assert_eq(p.at, 0);
	cr_assert_eq(fgetc(in), data[0]);
	fclose(in);
}

Test(pipe_tee, a_temporary_file_in_a_tmpfs_is_not_used)
{
	struct statfs sf;
	struct src p;
	FILE *in;

	if (statfs("/dev/shm", &sf) != 0 || (unsigned long)sf.f_type != TMPFS_MAGIC)
		cr_skip_test("/dev/shm is not a tmpfs here");
	fill();
	setenv("TMPDIR", "/dev/shm", 1);
	in = src_open(&p, N_BYTES, SIZE_MAX);
	errno = 0;
	cr_assert_null(mp_pipe_tee_open(in));
	cr_assert_eq(errno, EXDEV, "%s", strerror(errno));
	cr_assert_eq(p.at, 0);
	fclose(in);
}

/* A disk with less room than the reserve: the first reader is stopped
 * before anything is written, the second still reads every byte. */
Test(pipe_tee, the_copy_stops_before_the_disk_is_near_full)
{
	struct src p;
	FILE *in;
	struct mp_pipe_tee *t;
	int failed;

	fill();
	in = src_open(&p, N_BYTES, SIZE_MAX);
	t = mp_pipe_tee_open_leaving(in, UINT64_MAX / 2);
	cr_assert_not_null(t);
	cr_assert_eq(read_first(t, &failed), 0);
	cr_assert(failed, "the first reader is told");
	read_again(t, N_BYTES, 0);
	fclose(in);
}
