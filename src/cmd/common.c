/*
 * cmd/common.c - error and usage messages shared by the subcommands, in the
 * house format "memprof <cmd>: <problem> '<subject>': <cause>" plus hints.
 */
#include "analysis/pass.h"
#include "cmd/cmd.h"
#include "import/import.h"
#include "store/store.h"
#include "util/visible.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char command_line[4096];

/* A message on stderr, its subjects made visible (util/visible): a name
 * from a trace may hold terminal escapes. */
static void say(const char *msg)
{
	mp_visible_write(stderr, msg, strlen(msg));
	fputc('\n', stderr);
}

int mp_cmd_error(const struct mp_cmd *c, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	fprintf(stderr, "memprof %s: ", c->name);
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	say(n < 0 ? "out of memory" : msg);
	free(msg);
	return MP_EXIT_ERROR;
}

static const char *hint_for(const struct mp_error *e)
{
	switch (e->code) {
	case MP_ENEWER:
		return "this trace was written by a newer memprof; install that version to read it";
	case MP_ENOTTRACE:
		return "memprof reads the trace databases it writes itself (see 'memprof import')";
	case MP_EFULL:
		return "free some space or write elsewhere";
	default:
		return NULL;
	}
}

int mp_cmd_fail(const struct mp_cmd *c, const struct mp_error *e)
{
	const char *hint = hint_for(e);

	fprintf(stderr, "memprof %s: ", c->name);
	say(e->msg[0] ? e->msg : "unknown error");
	if (hint)
		fprintf(stderr, "hint: %s\n", hint);
	return MP_EXIT_ERROR;
}

int mp_cmd_usage(const struct mp_cmd *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "memprof %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s\ntry 'memprof %s --help'\n", c->usage, c->name);
	return MP_EXIT_USAGE;
}

int mp_cmd_bad_option(const struct mp_cmd *c, char **argv, int ch)
{
	const char *arg = argv[optind - 1];

	if (ch == ':')
		return mp_cmd_usage(c, "option '%s' needs a value", arg);
	if (optopt && strncmp(arg, "--", 2) != 0)
		return mp_cmd_usage(c, "invalid option '-%c'", optopt);
	return mp_cmd_usage(c, "invalid option '%s'", arg);
}

void mp_cmd_set_line(int argc, char **argv)
{
	size_t len = 0;
	int i;

	command_line[0] = '\0';
	for (i = 0; i < argc && len + 2 < sizeof(command_line); i++) {
		int n = snprintf(command_line + len, sizeof(command_line) - len, "%s%s",
		                 i ? " " : "", argv[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len >= sizeof(command_line))
		command_line[sizeof(command_line) - 1] = '\0';
}

void mp_cmd_print_notes(const struct mp_cmd *c, const char *notes)
{
	while (*notes) {
		int len = (int)strcspn(notes, "\n");

		fprintf(stderr, "memprof %s: warning: %.*s\n", c->name, len, notes);
		notes += len + (notes[len] == '\n');
	}
}

void mp_cmd_import_opts(struct mp_import_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->tool_version = PACKAGE_VERSION;
	o->command_line = mp_cmd_line();
	o->progress = isatty(STDERR_FILENO) ? stderr : NULL;
}

void mp_cmd_print_import_warnings(const struct mp_cmd *c, const struct mp_import_stats *st)
{
	int w;

	for (w = 0; w < MP_WARN_N; w++)
		if (st->n_warnings[w])
			fprintf(stderr, "memprof %s: warning: %lld %s\n", c->name,
			        (long long)st->n_warnings[w], mp_import_warning_text(w));
	mp_cmd_print_notes(c, st->notes);
}

int mp_cmd_open_trace(const struct mp_cmd *c, struct mp_store **s, const char *path,
                      struct mp_error *err)
{
	int rc = mp_store_open(s, path, err);

	if (rc == 0 && mp_store_rolled_back(*s))
		fprintf(stderr,
		        "memprof %s: warning: the last write to '%s' was interrupted (a process "
		        "stopped while saving): it was rolled back, so what that write added "
		        "(replay results) is not in the trace\n",
		        c->name, path);
	return rc;
}

const char *mp_cmd_line(void)
{
	return command_line;
}

int mp_cmd_read_trace(struct mp_store *s, struct mp_reader *r, const struct mp_memstate *ms,
                      struct mp_error *err)
{
	return mp_pass_read(s, r, ms, err);
}

int mp_cmd_device_list(struct mp_store *s, const char *path, int32_t device, char *list,
                       size_t size, struct mp_error *err)
{
	struct mp_store *mine = NULL;
	int32_t have[16];
	size_t n = 0, i, len = 0;
	int found = 0;

	if (!s && mp_store_open(&mine, path, err) < 0)
		return -1;
	if (mp_store_event_devices(s ? s : mine, have, 16, &n) < 0) {
		mp_err_copy(err, mp_store_error(s ? s : mine));
		mp_store_close(mine);
		return -1;
	}
	mp_store_close(mine);
	list[0] = '\0';
	for (i = 0; i < n && i < 16; i++) {
		found |= have[i] == device;
		if (len < size)
			len += (size_t)snprintf(list + len, size - len, "%s%d", i ? ", " : "",
			                        (int)have[i]);
	}
	if (n > 16 && len < size)
		snprintf(list + len, size - len, ", ...");
	if (n == 0)
		snprintf(list, size, "none (no events)");
	return found;
}

int mp_cmd_check_device(const struct mp_cmd *c, struct mp_store *s, const char *path,
                        int32_t device)
{
	struct mp_error err = {0};
	char list[200];
	int found;

	if (device < 0)
		return MP_EXIT_OK;
	if ((found = mp_cmd_device_list(s, path, device, list, sizeof(list), &err)) < 0)
		return mp_cmd_fail(c, &err);
	if (found)
		return MP_EXIT_OK;
	return mp_cmd_error(c, "no device %d in '%s': its devices: %s", (int)device, path, list);
}
