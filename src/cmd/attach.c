/*
 * cmd/attach.c - 'memprof attach PID start|stop|mark LABEL|status': drives a
 * workload started with 'memprof record' over its control socket.  The
 * request words, the messages and the printed replies only: finding,
 * trusting and talking to the socket is spool/control_client.c.
 */
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "spool/control.h"
#include "spool/control_client.h"
#include "util/format.h"
#include "util/parse.h"

#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_BYTES MP_CONTROL_PATH_BYTES

static const struct mp_cmd_opt options[] = {
        {'h', "help", NULL, "show this help"},
        {0, NULL, NULL, NULL},
};

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
	        "options:\n");
	mp_cmd_opts_help(out, options);
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

/* The reply to line from p's process (located and trusted); 0 or MP_EXIT_ERROR said. */
static int ask(struct mp_control_peer *p, const char *line, char *reply, size_t n)
{
	char first[PATH_BYTES];
	struct mp_error err = {0};
	int fd, found = mp_control_locate(p, first, &err);

	if (found < 0)
		return mp_cmd_fail(&mp_cmd_attach, &err);
	if (found == 0)
		return mp_cmd_error(
		        &mp_cmd_attach,
		        "process %ld was not started with memprof record (no control socket "
		        "at %s); 'memprof watch --pid %ld' can sample its GPU memory through "
		        "NVML",
		        (long)p->pid, first, (long)p->pid);
	if (mp_control_check_place(p, &err) < 0 || (fd = mp_control_connect(p, &err)) < 0)
		return mp_cmd_fail(&mp_cmd_attach, &err);
	found = mp_control_exchange(fd, p, line, reply, n, &err);
	close(fd);
	return found < 0 ? mp_cmd_fail(&mp_cmd_attach, &err) : 0;
}

static int drive(pid_t pid, char **req, const char *line)
{
	char reply[MP_CONTROL_MAX_LINE + 1];
	struct mp_control_peer p;
	struct mp_error err = {0};

	if (mp_control_peer(pid, &p) < 0)
		return mp_cmd_error(&mp_cmd_attach, "no process %ld", (long)pid);
	if (ask(&p, line, reply, sizeof(reply)) != 0)
		return MP_EXIT_ERROR;
	if (strncmp(reply, "error", 5) == 0 && (reply[5] == ' ' || reply[5] == '\0'))
		return mp_cmd_error(&mp_cmd_attach, "process %ld (%s): %s", (long)pid, p.path,
		                    reply[5] ? reply + 6 : "error");
	if (strncmp(reply, "ok", 2) != 0 || (reply[2] != ' ' && reply[2] != '\0'))
		return mp_cmd_error(&mp_cmd_attach,
		                    "process %ld (%s) answered '%.80s', not ok or error", (long)pid,
		                    p.path, reply);
	if (strcmp(req[0], "status") == 0)
		print_status(pid, reply + 2);
	else
		print_ok(pid, req[0], req[1], reply[2] ? reply + 3 : "");
	/* best effort: no PyTorch, no watcher */
	if (strcmp(req[0], "mark") == 0 && mp_control_leave_torch_mark(&p, req[1], &err) < 0)
		mp_cmd_fail(&mp_cmd_attach, &err);
	return MP_EXIT_OK;
}

/* One line for the process serving path: its pid, mode and command. */
static void list_one(pid_t pid, const char *path, int *n_shown)
{
	char reply[MP_CONTROL_MAX_LINE + 1], command[160], *mode, *end;
	struct mp_control_peer p;
	struct mp_error err = {0};
	int fd, rc;

	if (mp_control_peer(pid, &p) < 0 || !mp_control_ours(&p))
		return; /* a socket left by a process that ended, or not ours */
	snprintf(p.path, sizeof(p.path), "%s", path);
	if (mp_control_check_place(&p, &err) < 0 || (fd = mp_control_connect(&p, &err)) < 0) {
		mp_cmd_fail(&mp_cmd_attach, &err);
		return;
	}
	rc = mp_control_exchange(fd, &p, "status\n", reply, sizeof(reply), &err);
	close(fd);
	if (rc < 0) {
		mp_cmd_fail(&mp_cmd_attach, &err);
		return;
	}
	mode = strstr(reply, "mode=");
	mode = mode ? mode + 5 : "?";
	if ((end = strchr(mode, ' ')))
		*end = '\0';
	mp_control_command_of(pid, command, sizeof(command));
	if ((*n_shown)++ == 0)
		printf("%-8s %-10s %s\n", "PID", "MODE", "COMMAND");
	printf("%-8ld %-10s %s\n", (long)pid, mode, command);
}

/* Every process of ours serving a control socket, in the places attach looks. */
static int list(void)
{
	char dirs[2][PATH_BYTES], path[PATH_BYTES];
	int n_dirs = mp_control_dirs(dirs), n_found = 0, i;

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
	struct mp_cmd_getopt g;
	char line[MP_CONTROL_MAX_LINE + 1], shortopts[sizeof(g.shortopts) + 1];
	int64_t pid;
	int ch, rc;

	mp_cmd_getopt_init(&g, options);
	snprintf(shortopts, sizeof(shortopts), "+%s", g.shortopts); /* options before PID only */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shortopts, g.longopts, NULL)) != -1) {
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
