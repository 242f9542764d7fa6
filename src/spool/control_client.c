/*
 * spool/control_client.c - the client of the control socket
 * (spool/control_client.h): locating a process's socket, the checks of its
 * directory, file and server, one request and its reply, the PyTorch mark
 * file beside the spool.  Never prints.
 */
#include "spool/control_client.h"
#include "spool/control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_BYTES MP_CONTROL_PATH_BYTES

int mp_control_peer(pid_t pid, struct mp_control_peer *p)
{
	char proc[32];
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(proc, sizeof(proc), "/proc/%ld", (long)pid);
	if (stat(proc, &st) < 0)
		p->owner = kill(pid, 0) == 0 || errno == EPERM ? (long)geteuid() : -1;
	else
		p->owner = (long)st.st_uid;
	return p->owner < 0 ? -1 : 0;
}

/* May uid own the socket of a process of owner?  Ours, or the owner's when we are root. */
static int trusted_uid(uid_t uid, long owner)
{
	return uid == geteuid() || (geteuid() == 0 && (long)uid == owner);
}

int mp_control_ours(const struct mp_control_peer *p)
{
	return trusted_uid((uid_t)p->owner, p->owner);
}

/* pid's socket in uid's fallback directory, into path (PATH_BYTES).  0 or -1. */
static int fallback_socket(unsigned long uid, pid_t pid, char *path)
{
	char dir[PATH_BYTES];

	if (mp_control_fallback_dir(uid, dir, sizeof(dir)) < 0 ||
	    (size_t)snprintf(path, PATH_BYTES, "%s/%ld.sock", dir, (long)pid) >= PATH_BYTES)
		return -1;
	return 0;
}

int mp_control_locate(struct mp_control_peer *p, char *first, struct mp_error *err)
{
	char alt[3][PATH_BYTES];
	int n = 0, i;

	if (mp_control_socket_path(p->pid, first, PATH_BYTES, NULL, 0) < 0)
		return mp_err(err, MP_EINVAL, "the control socket path of process %ld is too long",
		              (long)p->pid);
	snprintf(alt[n++], PATH_BYTES, "%s", first);
	/* The workload may have had no XDG_RUNTIME_DIR; root may drive another user's. */
	if (fallback_socket(geteuid(), p->pid, alt[n]) == 0)
		n++;
	if (geteuid() == 0 && p->owner > 0 &&
	    fallback_socket((unsigned long)p->owner, p->pid, alt[n]) == 0)
		n++;
	for (i = 0; i < n; i++) {
		struct stat st;

		if (lstat(alt[i], &st) == 0 || errno != ENOENT) {
			memcpy(p->path, alt[i], PATH_BYTES);
			return 1;
		}
	}
	return 0;
}

int mp_control_check_place(const struct mp_control_peer *p, struct mp_error *err)
{
	char dir[PATH_BYTES];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", p->path);
	*strrchr(dir, '/') = '\0';
	if (lstat(dir, &st) < 0)
		return mp_err(err, MP_EIO, "cannot use the control socket of process %ld: '%s': %s",
		              (long)p->pid, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode) || !trusted_uid(st.st_uid, p->owner) || (st.st_mode & 077))
		return mp_err(
		        err, MP_EIO,
		        "refusing the control socket of process %ld: its directory '%s' "
		        "must be a directory of yours of mode 0700 (it is uid %lu, mode %04o)",
		        (long)p->pid, dir, (unsigned long)st.st_uid, st.st_mode & 07777);
	if (lstat(p->path, &st) < 0)
		return mp_err(err, MP_EIO, "cannot use the control socket of process %ld: '%s': %s",
		              (long)p->pid, p->path, strerror(errno));
	if (!S_ISSOCK(st.st_mode) || !trusted_uid(st.st_uid, p->owner))
		return mp_err(err, MP_EIO,
		              "refusing the control socket of process %ld: '%s' is not a socket "
		              "of yours",
		              (long)p->pid, p->path);
	return 0;
}

/* Who serves fd: p's process, as the user.  0, or MP_EIO with err set. */
static int check_server(int fd, const struct mp_control_peer *p, struct mp_error *err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return mp_err(err, MP_EIO, "cannot check who serves '%s': %s", p->path,
		              strerror(errno));
	if (!trusted_uid(cred.uid, p->owner))
		return mp_err(err, MP_EIO, "refusing '%s': it is served by uid %lu, not by you",
		              p->path, (unsigned long)cred.uid);
	if (cred.pid != p->pid)
		return mp_err(err, MP_EIO, "refusing '%s': it is served by process %ld, not %ld",
		              p->path, (long)cred.pid, (long)p->pid);
	return 0;
}

int mp_control_connect(const struct mp_control_peer *p, struct mp_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		mp_err(err, MP_EIO, "cannot connect to process %ld at '%s': %s%s", (long)p->pid,
		       p->path, strerror(errno),
		       errno == ECONNREFUSED ? " (its socket is left from a process that ended)"
		                             : "");
	} else if (check_server(fd, p, err) == 0) {
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return MP_EIO;
}

int mp_control_exchange(int fd, const struct mp_control_peer *p, const char *line, char *reply,
                        size_t n, struct mp_error *err)
{
	size_t len = 0;
	char *nl = NULL;

	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 || shutdown(fd, SHUT_WR) < 0)
		return mp_err(err, MP_EIO, "cannot send to process %ld at '%s': %s", (long)p->pid,
		              p->path, strerror(errno));
	while (!nl && len < n - 1) {
		struct pollfd pl = {.fd = fd, .events = POLLIN};
		ssize_t got;
		int ready = poll(&pl, 1, MP_CONTROL_REPLY_MS);

		if (ready == 0)
			return mp_err(err, MP_EIO, "process %ld did not answer within %d s (%s)",
			              (long)p->pid, MP_CONTROL_REPLY_MS / 1000, p->path);
		got = ready < 0 ? -1 : recv(fd, reply + len, n - 1 - len, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		reply[len + (size_t)got] = '\0';
		nl = strchr(reply + len, '\n');
		len += (size_t)got;
	}
	reply[len] = '\0';
	if (!nl)
		return mp_err(err, MP_EIO, "process %ld closed '%s' without a whole answer",
		              (long)p->pid, p->path);
	*nl = '\0';
	return 0;
}

/* Write label into a new file (mode 0600, no link followed); 1 when written. */
static int write_mark(const char *file, const char *label)
{
	int out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (out < 0)
		return 0;
	if (write(out, label, strlen(label)) < 0) {
		close(out);
		return 0;
	}
	return close(out) == 0;
}

int mp_control_leave_torch_mark(const struct mp_control_peer *p, const char *label,
                                struct mp_error *err)
{
	char reply[MP_CONTROL_MAX_LINE + 1], file[PATH_MAX], *spool, *end, *slash;
	int fd = mp_control_connect(p, err), rc;

	if (fd < 0)
		return fd;
	rc = mp_control_exchange(fd, p, "status\n", reply, sizeof(reply), err);
	close(fd);
	if (rc < 0)
		return rc;
	if (!(spool = strstr(reply, " spool=")))
		return 0;
	spool += 7;
	if ((end = strchr(spool, ' ')))
		*end = '\0';
	if (!(slash = strrchr(spool, '/')) || slash == spool)
		return 0;
	*slash = '\0';
	if ((size_t)snprintf(file, sizeof(file), "%s/torch-mark-%ld", spool, (long)p->pid) >=
	    sizeof(file))
		return 0;
	return write_mark(file, label);
}

void mp_control_command_of(pid_t pid, char *buf, size_t n)
{
	char proc[64];
	size_t len = 0, i;
	FILE *f;

	snprintf(proc, sizeof(proc), "/proc/%ld/cmdline", (long)pid);
	buf[0] = '\0';
	if (!(f = fopen(proc, "r")))
		return;
	len = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (i = 0; i + 1 < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

int mp_control_dirs(char dirs[][MP_CONTROL_PATH_BYTES])
{
	char any[PATH_BYTES];
	int n_dirs = 0;

	if (mp_control_socket_path(0, any, sizeof(any), dirs[0], PATH_BYTES) == 0)
		n_dirs++;
	if (mp_control_fallback_dir((unsigned long)geteuid(), dirs[n_dirs], PATH_BYTES) == 0 &&
	    (n_dirs == 0 || strcmp(dirs[0], dirs[n_dirs]) != 0))
		n_dirs++;
	return n_dirs;
}
