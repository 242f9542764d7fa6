/*
 * cmd/attach.c - 'memprof attach PID start|stop|mark LABEL|status': drives a
 * workload started with 'memprof record' over its control socket
 * (spool/control.h).  Trusts a socket only when its directory and
 * file are the user's and closed to others, and the process serving it is
 * the user's and is PID.  One request line, one reply line.
 */
#include "spool/control.h"
#include "cmd/cmd.h"
#include "util/format.h"
#include "util/parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define ATTACH_REPLY_MS 30000 /* start and stop flush the spool: give them time */
#define PATH_BYTES      sizeof(((struct sockaddr_un *)0)->sun_path)

static void help(FILE *out)
{
	fprintf(out,
	        "usage: memprof attach PID start|stop|status|mark LABEL\n"
	        "       memprof attach list\n\n"
	        "Drive a workload started with 'memprof record' (usually with --dormant):\n"
	        "  start        start recording: the allocations live now are written first,\n"
	        "               so the trace replays from the true heap\n"
	        "  stop         stop recording and flush the spool (back to dormant)\n"
	        "  mark LABEL   write a mark into the trace (a phase 'mark: LABEL')\n"
	        "  status       what the process is doing: mode, spool, events, live memory\n"
	        "'list' shows your processes that serve a control socket, with their mode.\n\n"
	        "The process serves a Unix socket, $XDG_RUNTIME_DIR/memprof/PID.sock (else\n"
	        "/tmp/memprof-UID/PID.sock), to its own user only.  A process started\n"
	        "without memprof has none: 'memprof watch --pid PID' samples its GPU memory.\n\n"
	        "options:\n"
	        "  -h, --help   show this help\n");
}

/* The process's owner (the owner of /proc/PID); -1 with errno when none. */
static long process_uid(pid_t pid)
{
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/%ld", (long)pid);
	if (stat(proc, &st) < 0)
		return kill(pid, 0) == 0 || errno == EPERM ? (long)geteuid() : -1;
	return (long)st.st_uid;
}

/* May uid own the socket of a process of owner?  Ours, or the owner's when we are root. */
static int trusted_uid(uid_t uid, long owner)
{
	return uid == geteuid() || (geteuid() == 0 && (long)uid == owner);
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

/* Where the socket of pid is: the first of the places it may be that exists;
 * else the first place (for the message).  Returns 1 found, 0 not, -1 error. */
static int locate(pid_t pid, long owner, char *path, char *first)
{
	char alt[3][PATH_BYTES];
	int n = 0, i;

	if (mp_control_socket_path(pid, first, PATH_BYTES, NULL, 0) < 0)
		return -1;
	snprintf(alt[n++], PATH_BYTES, "%s", first);
	/* The workload may have had no XDG_RUNTIME_DIR; root may drive another user's. */
	if (fallback_socket(geteuid(), pid, alt[n]) == 0)
		n++;
	if (geteuid() == 0 && owner > 0 && fallback_socket((unsigned long)owner, pid, alt[n]) == 0)
		n++;
	for (i = 0; i < n; i++) {
		struct stat st;

		if (lstat(alt[i], &st) == 0 || errno != ENOENT) {
			memcpy(path, alt[i], PATH_BYTES);
			return 1;
		}
	}
	return 0;
}

/* Refuse a socket someone else could have placed.  Returns 0 or an error exit. */
static int check_place(pid_t pid, long owner, const char *path)
{
	char dir[PATH_BYTES];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (lstat(dir, &st) < 0)
		return mp_cmd_error(&mp_cmd_attach,
		                    "cannot use the control socket of process %ld: '%s': %s",
		                    (long)pid, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode) || !trusted_uid(st.st_uid, owner) || (st.st_mode & 077))
		return mp_cmd_error(
		        &mp_cmd_attach,
		        "refusing the control socket of process %ld: its directory '%s' "
		        "must be a directory of yours of mode 0700 (it is uid %lu, mode %04o)",
		        (long)pid, dir, (unsigned long)st.st_uid, st.st_mode & 07777);
	if (lstat(path, &st) < 0)
		return mp_cmd_error(&mp_cmd_attach,
		                    "cannot use the control socket of process %ld: '%s': %s",
		                    (long)pid, path, strerror(errno));
	if (!S_ISSOCK(st.st_mode) || !trusted_uid(st.st_uid, owner))
		return mp_cmd_error(
		        &mp_cmd_attach,
		        "refusing the control socket of process %ld: '%s' is not a socket "
		        "of yours",
		        (long)pid, path);
	return 0;
}

/* Connect to path and check who serves it.  Returns the socket, or -1 after a message. */
static int connect_to(pid_t pid, long owner, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		mp_cmd_error(&mp_cmd_attach, "cannot connect to process %ld at '%s': %s%s",
		             (long)pid, path, strerror(errno),
		             errno == ECONNREFUSED
		                     ? " (its socket is left from a process that ended)"
		                     : "");
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		mp_cmd_error(&mp_cmd_attach, "cannot check who serves '%s': %s", path,
		             strerror(errno));
		goto fail;
	}
	if (!trusted_uid(cred.uid, owner)) {
		mp_cmd_error(&mp_cmd_attach, "refusing '%s': it is served by uid %lu, not by you",
		             path, (unsigned long)cred.uid);
		goto fail;
	}
	if (cred.pid != pid) {
		mp_cmd_error(&mp_cmd_attach, "refusing '%s': it is served by process %ld, not %ld",
		             path, (long)cred.pid, (long)pid);
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Send line, read the reply line (newline dropped).  0, or -1 after a message. */
static int exchange(int fd, pid_t pid, const char *path, const char *line, char *reply, size_t n)
{
	size_t len = 0;
	char *nl = NULL;

	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 || shutdown(fd, SHUT_WR) < 0) {
		mp_cmd_error(&mp_cmd_attach, "cannot send to process %ld at '%s': %s", (long)pid,
		             path, strerror(errno));
		return -1;
	}
	while (!nl && len < n - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t got;
		int ready = poll(&p, 1, ATTACH_REPLY_MS);

		if (ready == 0) {
			mp_cmd_error(&mp_cmd_attach, "process %ld did not answer within %d s (%s)",
			             (long)pid, ATTACH_REPLY_MS / 1000, path);
			return -1;
		}
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
	if (!nl) {
		mp_cmd_error(&mp_cmd_attach, "process %ld closed '%s' without a whole answer",
		             (long)pid, path);
		return -1;
	}
	*nl = '\0';
	return 0;
}

/* The status reply "ok key=value ..." as one readable line per field. */
static void print_status(pid_t pid, char *fields)
{
	static const char *const names[][2] = {
	        {"mode", "mode"},
	        {"pid", "pid"},
	        {"spool", "spool"},
	        {"events", "events written"},
	        {"dropped", "events lost"},
	        {"live_allocations", "live allocations"},
	        {"live_bytes", "live bytes"},
	};
	char *tok, *save = NULL, *key = NULL, value[MP_CONTROL_MAX_LINE] = "", human[32];
	size_t i;

	printf("process %ld\n", (long)pid);
	for (tok = strtok_r(fields, " ", &save);; tok = strtok_r(NULL, " ", &save)) {
		char *eq = tok ? strchr(tok, '=') : NULL;

		if (tok && !eq && key) { /* a value with spaces: glue it back */
			snprintf(value + strlen(value), sizeof(value) - strlen(value), " %s", tok);
			continue;
		}
		if (key) {
			const char *label = key;

			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
				if (strcmp(names[i][0], key) == 0)
					label = names[i][1];
			if (strcmp(key, "live_bytes") == 0)
				printf("  %-18s %s (%s)\n", label, value,
				       mp_format_bytes(human, sizeof(human),
				                       strtoll(value, NULL, 10)));
			else
				printf("  %-18s %s\n", label, value);
		}
		if (!tok)
			break;
		key = eq ? tok : NULL;
		if (eq) {
			*eq = '\0';
			snprintf(value, sizeof(value), "%s", eq + 1);
		} else {
			printf("  %s\n", tok);
		}
	}
}

static void print_ok(pid_t pid, const char *what, const char *label, const char *detail)
{
	if (strcmp(what, "start") == 0)
		printf("process %ld: recording started", (long)pid);
	else if (strcmp(what, "stop") == 0)
		printf("process %ld: recording stopped", (long)pid);
	else
		printf("process %ld: mark '%s' written", (long)pid, label);
	printf("%s%s\n", *detail ? ": " : "", detail);
}

/* Check the request words; the line to send into line.  0 or a usage exit. */
static int request_line(int argc, char **argv, char *line, size_t n)
{
	const char *what = argv[0], *p;

	if (strcmp(what, "start") != 0 && strcmp(what, "stop") != 0 &&
	    strcmp(what, "status") != 0 && strcmp(what, "mark") != 0)
		return mp_cmd_usage(&mp_cmd_attach,
		                    "unknown request '%s' (start, stop, status or mark LABEL)",
		                    what);
	if (strcmp(what, "mark") == 0 && argc < 2)
		return mp_cmd_usage(&mp_cmd_attach, "mark needs a LABEL");
	if (argc > (strcmp(what, "mark") == 0 ? 2 : 1))
		return mp_cmd_usage(&mp_cmd_attach, "unexpected argument '%s' after '%s'",
		                    argv[strcmp(what, "mark") == 0 ? 2 : 1], what);
	if (argc == 2) {
		for (p = argv[1]; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return mp_cmd_usage(&mp_cmd_attach,
				                    "the label holds a control character");
		if (argv[1][strspn(argv[1], " ")] == '\0')
			return mp_cmd_usage(&mp_cmd_attach, "the label is empty");
		if (strlen(argv[1]) + 6 >= n)
			return mp_cmd_usage(&mp_cmd_attach, "the label is longer than %zu bytes",
			                    n - 7);
		snprintf(line, n, "mark %s\n", argv[1]);
	} else {
		snprintf(line, n, "%s\n", what);
	}
	return 0;
}

/*
 * After a mark: leave torch-mark-PID (holding the label) in the directory of
 * the process's spool, which the spool directory's sitecustomize watches to
 * write PyTorch's snapshot then (memprof-record(1), PyTorch's own history).
 * The spool comes from the process's status; 1 when left, 0 when not.
 */
static int leave_torch_mark(pid_t pid, long owner, const char *path, const char *label)
{
	char reply[MP_CONTROL_MAX_LINE + 1], file[PATH_MAX], *spool, *end, *slash;
	int fd = connect_to(pid, owner, path), out;

	if (fd < 0)
		return 0;
	out = exchange(fd, pid, path, "status\n", reply, sizeof(reply));
	close(fd);
	if (out < 0 || !(spool = strstr(reply, " spool=")))
		return 0;
	spool += 7;
	if ((end = strchr(spool, ' ')))
		*end = '\0';
	if (!(slash = strrchr(spool, '/')) || slash == spool)
		return 0;
	*slash = '\0';
	if ((size_t)snprintf(file, sizeof(file), "%s/torch-mark-%ld", spool, (long)pid) >=
	    sizeof(file))
		return 0;
	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return 0;
	if (write(out, label, strlen(label)) < 0) {
		close(out);
		return 0;
	}
	return close(out) == 0;
}

static int drive(pid_t pid, char **req, const char *line)
{
	char path[PATH_BYTES], first[PATH_BYTES], reply[MP_CONTROL_MAX_LINE + 1];
	long owner = process_uid(pid);
	int fd, found, rc;

	if (owner < 0)
		return mp_cmd_error(&mp_cmd_attach, "no process %ld", (long)pid);
	found = locate(pid, owner, path, first);
	if (found < 0)
		return mp_cmd_error(&mp_cmd_attach,
		                    "the control socket path of process %ld is too long",
		                    (long)pid);
	if (found == 0)
		return mp_cmd_error(
		        &mp_cmd_attach,
		        "process %ld was not started with memprof record (no control socket "
		        "at %s); 'memprof watch --pid %ld' can sample its GPU memory through "
		        "NVML",
		        (long)pid, first, (long)pid);
	if (check_place(pid, owner, path) != 0)
		return MP_EXIT_ERROR;
	fd = connect_to(pid, owner, path);
	if (fd < 0)
		return MP_EXIT_ERROR;
	rc = exchange(fd, pid, path, line, reply, sizeof(reply));
	close(fd);
	if (rc < 0)
		return MP_EXIT_ERROR;
	if (strncmp(reply, "error", 5) == 0 && (reply[5] == ' ' || reply[5] == '\0'))
		return mp_cmd_error(&mp_cmd_attach, "process %ld (%s): %s", (long)pid, path,
		                    reply[5] ? reply + 6 : "error");
	if (strncmp(reply, "ok", 2) != 0 || (reply[2] != ' ' && reply[2] != '\0'))
		return mp_cmd_error(&mp_cmd_attach,
		                    "process %ld (%s) answered '%.80s', not ok or error", (long)pid,
		                    path, reply);
	if (strcmp(req[0], "status") == 0)
		print_status(pid, reply + 2);
	else
		print_ok(pid, req[0], req[1], reply[2] ? reply + 3 : "");
	if (strcmp(req[0], "mark") == 0)
		leave_torch_mark(pid, owner, path,
		                 req[1]); /* best effort: no PyTorch, no watcher */
	return MP_EXIT_OK;
}

/* The command line of pid, arguments joined by spaces, at most n bytes. */
static void command_of(pid_t pid, char *buf, size_t n)
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

/* One line for the process serving path: its pid, mode and command. */
static void list_one(pid_t pid, const char *path, int *n_shown)
{
	char reply[MP_CONTROL_MAX_LINE + 1], command[160], *mode, *end;
	long owner = process_uid(pid);
	int fd;

	if (owner < 0 || !trusted_uid((uid_t)owner, owner))
		return; /* a socket left by a process that ended, or not ours */
	if (check_place(pid, owner, path) != 0 || (fd = connect_to(pid, owner, path)) < 0)
		return; /* the message is out */
	if (exchange(fd, pid, path, "status\n", reply, sizeof(reply)) < 0) {
		close(fd);
		return;
	}
	close(fd);
	mode = strstr(reply, "mode=");
	mode = mode ? mode + 5 : "?";
	if ((end = strchr(mode, ' ')))
		*end = '\0';
	command_of(pid, command, sizeof(command));
	if ((*n_shown)++ == 0)
		printf("%-8s %-10s %s\n", "PID", "MODE", "COMMAND");
	printf("%-8ld %-10s %s\n", (long)pid, mode, command);
}

/* Every process of ours serving a control socket, in the places attach looks. */
static int list(void)
{
	char dirs[2][PATH_BYTES], path[PATH_BYTES], any[PATH_BYTES];
	int n_dirs = 0, n_found = 0, i;

	if (mp_control_socket_path(0, any, sizeof(any), dirs[0], sizeof(dirs[0])) == 0)
		n_dirs++;
	if (mp_control_fallback_dir((unsigned long)geteuid(), dirs[n_dirs], PATH_BYTES) == 0 &&
	    (n_dirs == 0 || strcmp(dirs[0], dirs[n_dirs]) != 0))
		n_dirs++;
	for (i = 0; i < n_dirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);

			if (pid <= 0 || end == e->d_name || strcmp(end, ".sock") != 0 ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", dirs[i], e->d_name) >=
			            sizeof(path))
				continue;
			list_one((pid_t)pid, path, &n_found);
		}
		if (d)
			closedir(d);
	}
	if (n_found == 0)
		printf("no process of yours serves a memprof control socket (looked in %s%s%s)\n",
		       dirs[0], n_dirs > 1 ? " and " : "", n_dirs > 1 ? dirs[1] : "");
	return MP_EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	char line[MP_CONTROL_MAX_LINE + 1];
	int64_t pid;
	int ch, rc;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (ch != 'h')
			return mp_cmd_bad_option(&mp_cmd_attach, argv, ch);
		help(stdout);
		return MP_EXIT_OK;
	}
	if (argc - optind == 1 && strcmp(argv[optind], "list") == 0)
		return list();
	if (argc - optind < 2)
		return mp_cmd_usage(&mp_cmd_attach,
		                    optind == argc ? "no PID given" : "no request given");
	if (mp_parse_count(argv[optind], 1, INT_MAX, &pid) < 0)
		return mp_cmd_usage(&mp_cmd_attach, "invalid PID '%s'", argv[optind]);
	rc = request_line(argc - optind - 1, argv + optind + 1, line, sizeof(line));
	if (rc != 0)
		return rc;
	return drive((pid_t)pid, argv + optind + 1, line);
}

const struct mp_cmd mp_cmd_attach = {
        .name = "attach",
        .summary = "start, stop or mark the recording of a running 'memprof record' job",
        .usage = "memprof attach PID start|stop|status|mark LABEL | list",
        .help = help,
        .run = run,
};
