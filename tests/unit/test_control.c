/*
 * tests/unit/test_control.c - the control socket (capture/control.c) driven
 * by a real client over a real Unix socket, and the live table
 * (capture/live_table.c).  The capture calls behind the socket come from
 * tests/unit/fake_inject.c, a test double of src/capture/inject.c (another
 * part's file), so the socket is tested alone.  Criterion runs every test
 * in a process of its own: the library's global state starts fresh.
 */
#include "capture/capture.h"
#include "spool/control.h"
#include "spool/reader.h"
#include "fake_inject.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char xdg[64];
static pid_t server_pid; /* the test's own pid: children connect to it */

/* A fresh XDG_RUNTIME_DIR, so the socket is XDG/memprof/PID.sock. */
static void fresh_runtime_dir(void)
{
	snprintf(xdg, sizeof(xdg), "/tmp/mp-test-control.XXXXXX");
	cr_assert_not_null(mkdtemp(xdg));
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	server_pid = getpid();
	fake_inject_reset(MP_CAPTURE_DORMANT, NULL, NULL);
}

static void remove_runtime_dir(void)
{
	char cmd[128];

	mp_control_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", xdg);
	(void)!system(cmd);
}

static void sock_path(char *buf, size_t n, char *dir, size_t dir_n)
{
	cr_assert_eq(mp_control_socket_path(server_pid, buf, n, dir, dir_n), 0);
}

static int connect_control(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	sock_path(sa.sun_path, sizeof(sa.sun_path), NULL, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Read the reply line (newline dropped) until the server closes. */
static void read_reply(int fd, char *reply, size_t n)
{
	size_t len = 0;
	ssize_t got;

	while (len < n - 1 && (got = recv(fd, reply + len, n - 1 - len, 0)) > 0)
		len += (size_t)got;
	reply[len] = '\0';
	cr_assert(len > 0 && reply[len - 1] == '\n', "reply not one line: '%s'", reply);
	reply[len - 1] = '\0';
	cr_assert_null(strchr(reply, '\n'), "more than one line: '%s'", reply);
}

/* Send req (len bytes, as is) on a new connection; the reply into reply. */
static void request_bytes(const char *req, size_t len, char *reply, size_t n)
{
	int fd = connect_control();

	cr_assert_geq(fd, 0, "connect: %s", strerror(-fd));
	cr_assert_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	shutdown(fd, SHUT_WR);
	read_reply(fd, reply, n);
	close(fd);
}

static void request(const char *req, char *reply, size_t n)
{
	request_bytes(req, strlen(req), reply, n);
}

static void expect_reply(const char *req, const char *want)
{
	char reply[2048];

	request(req, reply, sizeof(reply));
	cr_expect_str_eq(reply, want, "request '%s'", req);
}

TestSuite(control, .init = fresh_runtime_dir, .fini = remove_runtime_dir);

Test(control, each_command)
{
	char want[256];

	mp_live_add(0x1000, 1024, 0, MP_MK_DEVICE, 0, 0, 0);
	mp_live_add(0x2000, 2048, 0, MP_MK_DEVICE, 0, 0, 0);
	cr_assert_eq(mp_control_start(), 0);
	snprintf(want, sizeof(want),
	         "ok mode=dormant pid=%ld spool=- events=0 dropped=0 live_allocations=2 "
	         "live_bytes=3072",
	         (long)getpid());
	expect_reply("status\n", want);
	expect_reply("mark too early\n",
	             "error not recording: a mark belongs inside a recording window");
	expect_reply("start\n", "ok recording, 2 live allocations written first");
	cr_expect_eq(mp_capture_mode(), MP_CAPTURE_RECORDING);
	expect_reply("start\n", "error already recording");
	expect_reply("mark epoch 1\n", "ok");
	cr_expect_str_eq(fake_inject_last_mark(), "epoch 1");
	expect_reply("mark    spaced label  \r\n", "ok");
	cr_expect_str_eq(fake_inject_last_mark(), "spaced label");
	expect_reply("stop\n", "ok dormant");
	cr_expect_eq(mp_capture_mode(), MP_CAPTURE_DORMANT);
	expect_reply("stop\n", "error not recording");
	expect_reply("status", want); /* no newline: the end of the connection ends the line */
	cr_expect_eq(fake_inject_n_calls("start"), 2);
	cr_expect_eq(fake_inject_n_calls("stop"), 2);
	cr_expect_eq(fake_inject_n_calls("mark"), 3);
	cr_expect_eq(fake_inject_n_calls("status"), 2);
}

Test(control, bad_requests)
{
	char line[1100];

	cr_assert_eq(mp_control_start(), 0);
	expect_reply("mark\n", "error mark needs a label");
	expect_reply("mark    \n", "error mark needs a label");
	expect_reply("hello\n",
	             "error unknown request 'hello' (start, stop, status or mark LABEL)");
	expect_reply("START\n",
	             "error unknown request 'START' (start, stop, status or mark LABEL)");
	expect_reply("\x01\xff\n", "error request holds a control character at byte 0");
	request_bytes("st\0art\n", 7, line, sizeof(line));
	cr_expect_str_eq(line, "error request holds a control character at byte 2");
	expect_reply("status\tx\n", "error request holds a control character at byte 6");
	expect_reply("\n", "error unknown request '' (start, stop, status or mark LABEL)");
	cr_expect_eq(fake_inject_n_calls("start") + fake_inject_n_calls("mark"), 0);
}

Test(control, long_lines)
{
	static char big[5000];
	char reply[2048], want[256];

	cr_assert_eq(mp_control_start(), 0);
	memset(big, 'a', sizeof(big));
	request_bytes(big, sizeof(big), reply, sizeof(reply));
	cr_expect_str_eq(reply, "error request longer than 1024 bytes");
	/* 1023 bytes and the newline: the longest line there may be. */
	memcpy(big, "mark ", 5);
	big[1023] = '\n';
	request_bytes(big, 1024, reply, sizeof(reply));
	cr_expect_str_eq(reply, "error not recording: a mark belongs inside a recording window");
	cr_expect_eq(fake_inject_n_calls("mark"), 1);
	big[1023] = 'a';
	big[1024] = '\n';
	request_bytes(big, 1025, reply, sizeof(reply));
	cr_expect_str_eq(reply, "error request longer than 1024 bytes");
	cr_expect_eq(fake_inject_n_calls("mark"), 1);
	snprintf(want, sizeof(want), "ok mode=dormant pid=%ld", (long)getpid());
	request("status\n", reply, sizeof(reply));
	cr_expect_eq(strncmp(reply, want, strlen(want)), 0, "after long lines: '%s'", reply);
}

/* A client that connects and says nothing gets an error after the timeout;
 * one queued behind it is served after it. */
Test(control, silent_client, .timeout = 30)
{
	char reply[256];
	int silent, queued;

	cr_assert_eq(mp_control_start(), 0);
	silent = connect_control();
	cr_assert_geq(silent, 0);
	queued = connect_control();
	cr_assert_geq(queued, 0);
	cr_assert_eq(send(queued, "status\n", 7, MSG_NOSIGNAL), 7);
	read_reply(silent, reply, sizeof(reply));
	cr_expect_str_eq(reply, "error no request line received in time");
	read_reply(queued, reply, sizeof(reply));
	cr_expect_eq(strncmp(reply, "ok mode=dormant ", 16), 0, "queued client: '%s'", reply);
	close(silent);
	close(queued);
	/* A client that closes without a word leaves the server serving. */
	close(connect_control());
	expect_reply("stop\n", "error not recording");
}

Test(control, permissions)
{
	char path[108], dir[108], want[160];
	struct stat st;

	cr_assert_eq(mp_control_start(), 0);
	sock_path(path, sizeof(path), dir, sizeof(dir));
	snprintf(want, sizeof(want), "%s/memprof/%ld.sock", xdg, (long)getpid());
	cr_expect_str_eq(path, want);
	cr_assert_eq(lstat(dir, &st), 0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0700, "directory mode %o", st.st_mode & 07777);
	cr_expect_eq(st.st_uid, geteuid());
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect(S_ISSOCK(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0600, "socket mode %o", st.st_mode & 07777);
	cr_expect_eq(st.st_uid, geteuid());
	cr_expect_eq(mp_control_start(), -EALREADY);
	mp_control_stop();
	cr_expect_eq(lstat(path, &st), -1, "the socket outlives mp_control_stop");
	cr_expect_eq(connect_control(), -ENOENT);
	/* A stale socket of ours (its server gone) is replaced. */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(fd);
	}
	cr_expect_eq(mp_control_start(), 0);
	expect_reply("stop\n", "error not recording");
}

Test(control, socket_path_rules)
{
	char path[108], dir[108], want[104];

	setenv("XDG_RUNTIME_DIR", "relative/dir", 1);
	sock_path(path, sizeof(path), dir, sizeof(dir));
	snprintf(want, sizeof(want), "/tmp/memprof-%lu", (unsigned long)geteuid());
	cr_expect_str_eq(dir, want);
	unsetenv("XDG_RUNTIME_DIR");
	cr_assert_eq(mp_control_socket_path(42, path, sizeof(path), NULL, 0), 0);
	snprintf(want, sizeof(want), "/tmp/memprof-%lu/42.sock", (unsigned long)geteuid());
	cr_expect_str_eq(path, want);
	cr_expect_eq(mp_control_socket_path(42, path, 10, NULL, 0), -ENAMETOOLONG);
	cr_expect_eq(mp_control_socket_path(42, path, sizeof(path), dir, 5), -ENAMETOOLONG);
	memset(want, 'x', sizeof(want));
	want[0] = '/';
	want[sizeof(want) - 1] = '\0';
	setenv("XDG_RUNTIME_DIR", want, 1); /* 103 + "/memprof/42.sock" > sun_path */
	cr_expect_eq(mp_control_socket_path(42, path, sizeof(path), NULL, 0), -ENAMETOOLONG);
	want[90] = '\0'; /* 90 + 16 = 106 bytes and a NUL: fits */
	setenv("XDG_RUNTIME_DIR", want, 1);
	cr_expect_eq(mp_control_socket_path(42, path, sizeof(path), NULL, 0), 0);
}

/* Directories that are not ours, or open to others, are never used. */
Test(control, refuses_foreign_directories)
{
	char path[108], dir[108], other[128];
	struct stat st;

	sock_path(path, sizeof(path), dir, sizeof(dir));
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_expect_eq(mp_control_start(), -EPERM);
	cr_expect_eq(lstat(path, &st), -1, "a socket was made in a 0755 directory");
	cr_assert_eq(chmod(dir, 0710), 0);
	cr_expect_eq(mp_control_start(), -EPERM);
	cr_assert_eq(rmdir(dir), 0);
	/* A symbolic link to a good directory is not a directory. */
	snprintf(other, sizeof(other), "%s/real", xdg);
	cr_assert_eq(mkdir(other, 0700), 0);
	cr_assert_eq(symlink(other, dir), 0);
	cr_expect_eq(mp_control_start(), -ENOTDIR);
	cr_assert_eq(unlink(dir), 0);
	cr_assert_eq(close(open(dir, O_CREAT | O_WRONLY, 0600)), 0);
	cr_expect_eq(mp_control_start(), -ENOTDIR);
	cr_assert_eq(unlink(dir), 0);
	if (geteuid() == 0) { /* a 0700 directory of another user */
		cr_assert_eq(mkdir(dir, 0700), 0);
		cr_assert_eq(chown(dir, 65534, 65534), 0);
		cr_expect_eq(mp_control_start(), -EPERM);
		cr_assert_eq(rmdir(dir), 0);
	}
	/* Something that is not a socket where the socket goes is left alone. */
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(close(open(path, O_CREAT | O_WRONLY, 0600)), 0);
	cr_expect_eq(mp_control_start(), -EEXIST);
	cr_expect_eq(lstat(path, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_assert_eq(unlink(path), 0);
	cr_expect_eq(mp_control_start(), 0);
}

/* A live server at our path (another process with our pid, in another pid
 * namespace) is never taken over. */
Test(control, live_socket_kept)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[108];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	sock_path(sa.sun_path, sizeof(sa.sun_path), dir, sizeof(dir));
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(fd, 1), 0);
	cr_expect_eq(mp_control_start(), -EADDRINUSE);
	close(fd);
}

/* Run client in a child of uid and gid 65534; the reply (or "connect: ERR") back. */
static void request_as_nobody(const char *req, char *reply, size_t n)
{
	int p[2], status;
	pid_t pid;
	ssize_t got;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char buf[256] = "";
		int fd;

		close(p[0]);
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		fd = connect_control();
		if (fd < 0) {
			snprintf(buf, sizeof(buf), "connect: %s", strerror(-fd));
		} else {
			size_t len = 0;
			ssize_t r;

			(void)!send(fd, req, strlen(req), MSG_NOSIGNAL);
			while (len < sizeof(buf) - 1 &&
			       (r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0)
				len += (size_t)r;
			buf[len] = '\0';
		}
		(void)!write(p[1], buf, strlen(buf));
		_exit(0);
	}
	close(p[1]);
	got = read(p[0], reply, n - 1);
	reply[got > 0 ? got : 0] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client child failed");
}

Test(control, other_user_refused)
{
	char path[108], dir[108], reply[256];

	if (geteuid() != 0)
		cr_skip_test("needs root to run a client of another uid");
	cr_assert_eq(mp_control_start(), 0);
	sock_path(path, sizeof(path), dir, sizeof(dir));
	/* The kernel refuses first: the directory is 0700. */
	cr_assert_eq(chmod(xdg, 0755), 0);
	request_as_nobody("start\n", reply, sizeof(reply));
	cr_expect_str_eq(reply, "connect: Permission denied");
	/* Loosened by hand, the server itself still refuses. */
	cr_assert_eq(chmod(dir, 0711), 0);
	cr_assert_eq(chmod(path, 0666), 0);
	request_as_nobody("start\n", reply, sizeof(reply));
	cr_expect_str_eq(reply, "error permission denied\n");
	cr_expect_eq(fake_inject_n_calls("start"), 0);
	cr_expect_eq(mp_capture_mode(), MP_CAPTURE_DORMANT);
	expect_reply("start\n", "ok recording, 0 live allocations written first");
}

/* A forked child neither serves nor removes its parent's socket. */
Test(control, fork_child_forgets)
{
	char path[108];
	struct stat st;
	int status;
	pid_t pid;

	cr_assert_eq(mp_control_start(), 0);
	sock_path(path, sizeof(path), NULL, 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		mp_control_forget_after_fork();
		mp_live_forget_after_fork();
		mp_control_stop();
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect_eq(lstat(path, &st), 0, "the child removed its parent's socket");
	expect_reply("mark x\n", "error not recording: a mark belongs inside a recording window");
}

/* --- live table -------------------------------------------------------------------- */

Test(live, add_remove_totals)
{
	uint64_t n, bytes;

	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 0);
	cr_expect_eq(bytes, 0);
	mp_live_add(0x7f0000001000, 100, 0, MP_MK_DEVICE, 0, 0, 0);
	mp_live_add(0x7f0000002000, 200, 1, MP_MK_MANAGED, MP_SE_MANAGED, 7, 3);
	mp_live_add(0x7f0000003000, 300, 0, MP_MK_DEVICE, MP_SE_ASYNC, 9, 0);
	mp_live_add(0, 999, 0, MP_MK_DEVICE, 0, 0, 0); /* never an allocation */
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 3);
	cr_expect_eq(bytes, 600);
	cr_expect_eq(mp_live_remove(0x7f0000002000), 1);
	cr_expect_eq(mp_live_remove(0x7f0000002000), 0);
	cr_expect_eq(mp_live_remove(0x7f0000002001), 0);
	cr_expect_eq(mp_live_remove(0), 0);
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 2);
	cr_expect_eq(bytes, 400);
	/* The same address again (its free was missed): replaced, not doubled. */
	mp_live_add(0x7f0000001000, 4096, 0, MP_MK_DEVICE, 0, 0, 0);
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 2);
	cr_expect_eq(bytes, 4096 + 300);
	/* In a forked child (the table is left to the parent's pages on purpose). */
	{
		pid_t pid = fork();
		int status;

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			mp_live_forget_after_fork();
			mp_live_totals(&n, &bytes);
			if (n != 0 || bytes != 0)
				_exit(1);
			mp_live_add(0x10, 1, 0, MP_MK_DEVICE, 0, 0, 0);
			mp_live_totals(&n, &bytes);
			_exit(n == 1 && bytes == 1 && mp_live_remove(0x10) == 1 ? 0 : 2);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x",
		          status);
	}
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 2, "the parent's table changed");
}

Test(live, hundred_thousand_with_growth)
{
	const uint64_t base = 0x7f0000000000ull, count = 100000;
	uint64_t i, n, bytes, sum = 0;

	for (i = 0; i < count; i++)
		mp_live_add(base + i * 512, i + 1, 0, MP_MK_DEVICE, 0, 0, 0);
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, count);
	cr_expect_eq(bytes, count * (count + 1) / 2);
	for (i = 0; i < count; i += 2)
		cr_expect_eq(mp_live_remove(base + i * 512), 1, "entry %lu", (unsigned long)i);
	for (i = 1; i < count; i += 2)
		sum += i + 1;
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, count / 2);
	cr_expect_eq(bytes, sum);
	for (i = 0; i < count; i++)
		cr_expect_eq(mp_live_remove(base + i * 512), (int)(i % 2), "entry %lu",
		             (unsigned long)i);
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 0);
	cr_expect_eq(bytes, 0);
}

/* Random adds and removes over a small set of addresses, against a model. */
Test(live, random_against_model)
{
	enum { N_ADDR = 3000, N_OPS = 300000 };
	static uint64_t model[N_ADDR]; /* bytes + 1 when live, 0 when not */
	uint64_t seed = 12345, n, bytes, want_n = 0, want_bytes = 0;
	int i;

	for (i = 0; i < N_OPS; i++) {
		uint64_t r, k;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		r = seed >> 33;
		k = r % N_ADDR;
		if ((r >> 20) % 3 != 0) {
			if (model[k]) {
				want_bytes -= model[k] - 1;
				want_n--;
			}
			model[k] = (r & 0xffff) + 1;
			want_bytes += model[k] - 1;
			want_n++;
			mp_live_add((k + 1) * 0x200000ull, model[k] - 1, 0, MP_MK_DEVICE, 0, 0, 0);
		} else {
			int had = model[k] != 0;

			if (had) {
				want_bytes -= model[k] - 1;
				want_n--;
			}
			model[k] = 0;
			cr_assert_eq(mp_live_remove((k + 1) * 0x200000ull), had, "op %d", i);
		}
	}
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, want_n);
	cr_expect_eq(bytes, want_bytes);
}

static void *add_remove_range(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg, i;

	for (i = 0; i < 20000; i++)
		mp_live_add(base + i * 256, 256, 0, MP_MK_DEVICE, 0, 0, 0);
	for (i = 0; i < 20000; i += 4)
		mp_live_remove(base + i * 256);
	return NULL;
}

Test(live, threads)
{
	pthread_t t[4];
	uint64_t n, bytes;
	int i;

	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, add_remove_range,
		               (void *)(uintptr_t)(0x100000000ull * (uint64_t)(i + 1)));
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	mp_live_totals(&n, &bytes);
	cr_expect_eq(n, 4 * 15000);
	cr_expect_eq(bytes, 4 * 15000 * 256);
}

/* PREEXISTING events written to a real spool, read back with the reader. */
Test(live, preexisting_in_a_spool)
{
	char path[] = "/tmp/mp-test-live.XXXXXX";
	struct mp_spool_header h = {.pid = 77};
	struct mp_spool_writer *w;
	struct mp_spool_reader *r;
	struct mp_error err = {0};
	const struct mp_spool_item_head *item;
	int seen[3] = {0}, n_events = 0, fd;
	uint32_t api;
	FILE *f;

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(path); /* the writer creates it O_EXCL */
	cr_assert_eq(mp_spool_writer_open(&w, path, &h, NULL), 0);
	api = mp_spool_cstring(w, "cudaMalloc");
	cr_assert_neq(api, 0);
	mp_live_add(0xa000, 4096, 0, MP_MK_DEVICE, 0, 0, api);
	mp_live_add(0xb000, 8192, 1, MP_MK_MANAGED, MP_SE_MANAGED, 5, api);
	mp_live_add(0xc000, 1 << 20, 2, MP_MK_DEVICE, MP_SE_ASYNC | MP_SE_FROM_DRIVER, 9, 0);
	mp_live_add(0xd000, 1, 0, MP_MK_DEVICE, 0, 0, 0);
	cr_assert_eq(mp_live_remove(0xd000), 1);
	cr_assert_eq(mp_live_write_preexisting(w, 123456789), 0);
	cr_assert_eq(mp_spool_writer_close(w, 123456790, 0), 0);

	f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), 0, "%s", err.msg);
	while (mp_spool_reader_next(r, &item, &err) == 1) {
		const struct mp_spool_event *ev = (const void *)item;
		const char *name;
		size_t len;

		if (item->type != MP_SI_EVENT)
			continue;
		n_events++;
		cr_expect_eq(ev->kind, MP_SK_PREEXISTING);
		cr_expect_eq(ev->ts_ns, 123456789);
		name = ev->name ? mp_spool_reader_string(r, ev->name, &len) : NULL;
		if (ev->address == 0xa000) {
			seen[0]++;
			cr_expect_eq(ev->bytes, 4096);
			cr_expect_eq(ev->device, 0);
			cr_expect_eq(ev->mem_kind, MP_MK_DEVICE);
			cr_expect(name && len == 10 && memcmp(name, "cudaMalloc", 10) == 0);
		} else if (ev->address == 0xb000) {
			seen[1]++;
			cr_expect_eq(ev->bytes, 8192);
			cr_expect_eq(ev->device, 1);
			cr_expect_eq(ev->mem_kind, MP_MK_MANAGED);
			cr_expect_eq(ev->flags, MP_SE_MANAGED);
			cr_expect_eq(ev->stream, 5);
			cr_expect_eq(ev->name, api);
		} else if (ev->address == 0xc000) {
			seen[2]++;
			cr_expect_eq(ev->bytes, 1 << 20);
			cr_expect_eq(ev->device, 2);
			cr_expect_eq(ev->flags, MP_SE_ASYNC | MP_SE_FROM_DRIVER);
			cr_expect_eq(ev->stream, 9);
			cr_expect_eq(ev->name, 0);
		} else {
			cr_expect_fail("unexpected address %#llx", (unsigned long long)ev->address);
		}
	}
	cr_expect_eq(n_events, 3);
	cr_expect(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
	cr_expect(mp_spool_reader_complete(r));
	mp_spool_reader_close(r);
	fclose(f);
	unlink(path);
}
