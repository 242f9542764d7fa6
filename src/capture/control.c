/*
 * capture/control.c - the control socket of a recorded workload (capture.h,
 * spool/control.h): a thread with every signal blocked accepts one
 * connection at a time from the same user (or root), reads one request line
 * and answers one line through mp_capture_start/stop/mark/status.  It never
 * serves a directory or socket someone else could have made, and never
 * prints: failures are return codes and reply lines.
 */
#include "capture/capture.h"
#include "spool/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_READ_MS 2000 /* a client has this long to send its line */
#define CONTROL_BACKLOG 8

static struct {
	int running;
	int listen_fd;
	int stop_fd[2]; /* a byte written to [1] stops the thread */
	pthread_t thread;
	dev_t dev; /* the socket file we made: removed at stop only if still it */
	ino_t ino;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} ctl = {.listen_fd = -1, .stop_fd = {-1, -1}};

/* Make dir (0700) or accept it only when it is ours, a directory, and closed
 * to group and others.  Returns 0 or -errno. */
static int check_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0 && chmod(dir, 0700) < 0)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0)
		return -EPERM;
	return 0;
}

/* A socket file left at path by a process of ours that had our pid: remove
 * it, unless something still answers there.  Returns 0 or -errno. */
static int remove_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (rc == 0)
		return -EADDRINUSE;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

/* Bind and listen at path (0600).  Returns the socket, or -errno. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = remove_stale(path, &sa);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	if (chmod(path, 0600) < 0 || lstat(path, &st) < 0 || listen(fd, CONTROL_BACKLOG) < 0) {
		rc = -errno;
		unlink(path);
		close(fd);
		return rc;
	}
	ctl.dev = st.st_dev;
	ctl.ino = st.st_ino;
	return fd;
fail:
	rc = -errno;
	close(fd);
	return rc;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Read one line from fd into buf (NUL-terminated, newline dropped) within
 * CONTROL_READ_MS.  Returns its length, -1 when the client sent nothing
 * usable in time or closed, -2 when it is longer than MP_CONTROL_MAX_LINE,
 * -3 when the library is stopping.
 */
static int read_line(int fd, char *buf, size_t n)
{
	int64_t deadline = now_ms() + CONTROL_READ_MS;
	size_t len = 0;

	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
		                      {.fd = ctl.stop_fd[0], .events = POLLIN}};
		int64_t left = deadline - now_ms();
		ssize_t got;
		char *nl;

		if (left <= 0 || (poll(p, 2, (int)left) < 0 && errno != EINTR))
			return -1;
		if (p[1].revents)
			return -3;
		if (!p[0].revents)
			continue;
		got = recv(fd, buf + len, n - 1 - len, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) /* closed: a last line without a newline still counts */
			return len > 0 ? (int)len : -1;
		nl = memchr(buf + len, '\n', (size_t)got);
		len += (size_t)got;
		buf[len] = '\0';
		if (nl) {
			*nl = '\0';
			return (int)(nl - buf);
		}
		if (len >= n - 1)
			return -2;
	}
}

/* The reply to one request line, without the newline. */
static void dispatch(char *line, size_t len, char *reply, size_t n)
{
	char msg[MP_CONTROL_MAX_LINE] = "";
	size_t i;
	int rc;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	for (i = 0; i < len; i++) {
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) { /* NUL included */
			snprintf(reply, n, "error request holds a control character at byte %zu",
			         i);
			return;
		}
	}
	if (strcmp(line, "start") == 0) {
		rc = mp_capture_start(msg, sizeof(msg));
	} else if (strcmp(line, "stop") == 0) {
		rc = mp_capture_stop(msg, sizeof(msg));
	} else if (strcmp(line, "status") == 0) {
		mp_capture_status(msg, sizeof(msg));
		rc = 0;
	} else if (strncmp(line, "mark ", 5) == 0 && line[5 + strspn(line + 5, " ")] != '\0') {
		rc = mp_capture_mark(line + 5 + strspn(line + 5, " "), msg, sizeof(msg));
	} else if (strcmp(line, "mark") == 0 || strncmp(line, "mark ", 5) == 0) {
		snprintf(reply, n, "error mark needs a label");
		return;
	} else {
		snprintf(reply, n,
		         "error unknown request '%.64s' (start, stop, status or mark LABEL)", line);
		return;
	}
	if (rc < 0)
		snprintf(reply, n, "error %s", msg[0] ? msg : "failed");
	else
		snprintf(reply, n, "ok%s%s", msg[0] ? " " : "", msg);
}

/* Send reply as one line: control characters (a newline in a message) become
 * spaces, and it is cut to MP_CONTROL_MAX_LINE bytes. */
static void send_reply(int fd, const char *reply)
{
	char out[MP_CONTROL_MAX_LINE];
	size_t i;

	for (i = 0; reply[i] && i < sizeof(out) - 1; i++)
		out[i] = (unsigned char)reply[i] < 0x20 ? ' ' : reply[i];
	out[i++] = '\n';
	(void)!send(fd, out, i, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void serve_one(int fd)
{
	char line[MP_CONTROL_MAX_LINE + 1], reply[MP_CONTROL_MAX_LINE];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int got;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		send_reply(fd, "error permission denied");
		return;
	}
	got = read_line(fd, line, sizeof(line));
	if (got == -3)
		return;
	if (got == -2) {
		snprintf(reply, sizeof(reply), "error request longer than %d bytes",
		         MP_CONTROL_MAX_LINE);
		send_reply(fd, reply);
		return;
	}
	if (got < 0) {
		send_reply(fd, "error no request line received in time");
		return;
	}
	dispatch(line, (size_t)got, reply, sizeof(reply));
	send_reply(fd, reply);
}

static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = ctl.listen_fd, .events = POLLIN},
		                      {.fd = ctl.stop_fd[0], .events = POLLIN}};
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		if (!p[0].revents)
			continue;
		fd = accept4(ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue; /* a client that gave up, or no descriptors left for now */
		serve_one(fd);
		close(fd);
	}
}

static void close_fds(void)
{
	if (ctl.listen_fd >= 0)
		close(ctl.listen_fd);
	if (ctl.stop_fd[0] >= 0)
		close(ctl.stop_fd[0]);
	if (ctl.stop_fd[1] >= 0)
		close(ctl.stop_fd[1]);
	ctl.listen_fd = ctl.stop_fd[0] = ctl.stop_fd[1] = -1;
}

/* Start the thread with every signal blocked (the workload's handlers must
 * never run on it).  Returns 0 or -errno. */
static int start_thread(void)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ctl.thread, NULL, serve, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

int mp_control_start(void)
{
	char dir[sizeof(ctl.path)];
	int rc;

	if (ctl.running)
		return -EALREADY;
	rc = mp_control_socket_path(getpid(), ctl.path, sizeof(ctl.path), dir, sizeof(dir));
	if (rc == 0)
		rc = check_dir(dir);
	if (rc < 0)
		return rc;
	if (pipe2(ctl.stop_fd, O_CLOEXEC) < 0)
		return -errno;
	ctl.listen_fd = listen_at(ctl.path);
	if (ctl.listen_fd < 0) {
		rc = ctl.listen_fd;
		ctl.listen_fd = -1;
		close_fds();
		return rc;
	}
	rc = start_thread();
	if (rc < 0) {
		unlink(ctl.path);
		close_fds();
		return rc;
	}
	ctl.running = 1;
	return 0;
}

void mp_control_stop(void)
{
	struct timespec deadline;
	struct stat st;

	if (!ctl.running)
		return;
	ctl.running = 0;
	if (lstat(ctl.path, &st) == 0 && st.st_dev == ctl.dev && st.st_ino == ctl.ino)
		unlink(ctl.path);
	(void)!write(ctl.stop_fd[1], "x", 1);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 3;
	if (pthread_timedjoin_np(ctl.thread, NULL, &deadline) != 0) {
		/* Stuck inside a capture call: leave it its descriptors, never wait. */
		pthread_detach(ctl.thread);
		return;
	}
	close_fds();
}

/* The thread is the parent's: the child closes its copies of the descriptors
 * (the parent's stay open) and never removes the parent's socket file. */
void mp_control_forget_after_fork(void)
{
	if (!ctl.running)
		return;
	ctl.running = 0;
	close_fds();
	ctl.path[0] = '\0';
}
