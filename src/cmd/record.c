/*
 * cmd/record.c - 'memprof record': check the output can be written and
 * prepare the launch (sys/record.h), run the command with the injected
 * library in its environment (sys/launch.c), then turn the spools its
 * processes wrote into one trace (the importer 'spool').  Exits with the
 * command's own status.  Options: cmd/record_args.c.
 */
#include "cmd/cmd.h"
#include "sys/launch.h"
#include "cmd/record.h"
#include "cmd/record_live.h"
#include "import/import.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "memprof record: 'CMD' was killed by signal 15 (Terminated)"; the status to exit with. */
static int command_status(const struct mp_record_opts *o, int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws)) {
		fprintf(stderr, "memprof record: '%s' was killed by signal %d (%s)%s\n", o->cmd[0],
		        WTERMSIG(ws), strsignal(WTERMSIG(ws)),
		        WCOREDUMP(ws) ? ", core dumped" : "");
		return 128 + WTERMSIG(ws);
	}
	return MP_EXIT_ERROR;
}

/* No spool: say why nothing was recorded. */
static void nothing_recorded(const struct mp_record_opts *o)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!cuda) {
		const char *why = dlerror();

		fprintf(stderr, "memprof record: no GPU driver (%s): nothing was recorded\n",
		        why ? why : "libcuda.so.1: cannot be loaded");
		return;
	}
	dlclose(cuda);
	fprintf(stderr, "memprof record: '%s' made no CUDA call: nothing was recorded\n",
	        o->cmd[0]);
	fprintf(stderr, "hint: a process that uses CUDA writes a spool once it calls the driver; "
	                "a CUDA tool already attached (nsys, ncu, torch.profiler) keeps memprof "
	                "out\n");
}

/* Warnings, notes and the summary line of a converted trace. */
static void report(const struct mp_record_opts *o, const struct mp_import_stats *st, size_t n)
{
	int w;

	for (w = 0; w < MP_WARN_N; w++)
		if (st->n_warnings[w])
			fprintf(stderr, "memprof record: warning: %lld %s\n",
			        (long long)st->n_warnings[w], mp_import_warning_text(w));
	mp_cmd_print_notes(&mp_cmd_record, st->notes);
	if (o->quiet)
		return;
	fprintf(stderr, "memprof record: %lld events of %zu process%s -> %s",
	        (long long)st->n_events, n, n == 1 ? "" : "es", o->output);
	if (st->n_truncated)
		fprintf(stderr, " (truncated)");
	if (st->n_dropped)
		fprintf(stderr, " (%lld records dropped)", (long long)st->n_dropped);
	fprintf(stderr, "\n");
}

/* The spools -> o->output.  Returns 0, or MP_EXIT_ERROR having said why. */
static int convert(const struct mp_record_opts *o, struct mp_record_spools *sp)
{
	struct mp_import_opts io = {.format = "spool",
	                            .overwrite = o->force,
	                            .tool_version = PACKAGE_VERSION,
	                            .command_line = mp_cmd_line(),
	                            .progress = isatty(STDERR_FILENO) ? stderr : NULL,
	                            .source = "record"};
	struct mp_import_stats st;
	struct mp_error err = {0};

	if (mp_import_files((const char *const *)sp->paths, (int)sp->n, o->output, &io, &st, &err) <
	    0) {
		mp_cmd_fail(&mp_cmd_record, &err);
		fprintf(stderr, "memprof record: the spools are kept in '%s'\n", sp->dir);
		return MP_EXIT_ERROR;
	}
	report(o, &st, sp->n);
	return 0;
}

/* After the command: its spools -> the trace, or why there is none. */
static int finish(const struct mp_record_opts *o, struct mp_record_spools *sp, int status)
{
	int rc;

	if (mp_record_list_spools(sp) < 0)
		return mp_cmd_error(&mp_cmd_record, "cannot read the spool directory '%s': %s",
		                    sp->dir, strerror(errno));
	if (sp->n == 0) {
		nothing_recorded(o);
		mp_record_remove_spools(sp, 0);
		return status;
	}
	if ((rc = convert(o, sp)) != 0)
		return status ? status : rc;
	if (o->keep_spool) {
		if (!o->quiet)
			fprintf(stderr, "memprof record: spools kept in '%s'\n", sp->dir);
	} else {
		mp_record_torch_remove(sp->dir);
		mp_record_remove_spools(sp, 1);
	}
	return status;
}

/* What the user should know before the command runs. */
static void notices(const struct mp_record_opts *o)
{
	if (o->quiet)
		return;
	if (o->no_cache)
		fprintf(stderr,
		        "memprof record: --no-framework-cache: PyTorch, JAX and TensorFlow now "
		        "send each tensor to CUDA; this changes the workload's own memory "
		        "behaviour and speed\n");
	if (o->dormant)
		fprintf(stderr, "memprof record: --dormant: nothing is recorded until 'memprof "
		                "attach PID start'; 'memprof attach list' shows the processes\n");
}

/* What the launch needs (sys/record.h); 0, or MP_EXIT_ERROR said. */
static int prepare(struct mp_record_opts *o, struct mp_record_spools *sp)
{
	struct mp_error err = {0};
	const char *hint;
	char why[PATH_MAX + 128];

	if (mp_record_prepare(o, sp, &hint, &err) < 0) {
		mp_cmd_fail(&mp_cmd_record, &err);
		if (hint)
			fprintf(stderr, "hint: %s\n", hint);
		return MP_EXIT_ERROR;
	}
	if (mp_record_torch_prepare(o, why, sizeof(why)) && !o->quiet)
		fprintf(stderr, "memprof record: warning: %s\n", why);
	return 0;
}

static int run(int argc, char **argv)
{
	struct mp_record_opts o = {0};
	struct mp_record_spools sp = {0};
	struct mp_launch_hooks hooks = {-1, -1, -1, NULL, NULL};
	struct mp_record_live *live = NULL;
	char **env = NULL;
	int rc, ws = 0, err_no = 0, exec_failed = 0;

	if ((rc = mp_record_args_parse(argc, argv, &o)) >= 0)
		return rc;
	if ((rc = prepare(&o, &sp)) != 0)
		return rc;
	if ((rc = mp_record_live_prepare(&live, &o, &sp)) != 0) {
		mp_record_live_free(live);
		mp_record_remove_spools(&sp, 0);
		mp_record_free(&o, &sp, NULL);
		return rc;
	}
	if (live)
		mp_record_live_hooks(live, &hooks);
	if (!(env = mp_record_env(&o, sp.dir))) {
		mp_record_live_free(live);
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	}
	notices(&o);
	if (mp_launch_run(o.cmd, env, &hooks, &ws, &err_no, &exec_failed) < 0) {
		mp_record_live_free(live);
		mp_record_remove_spools(&sp, 0);
		mp_record_free(&o, &sp, env);
		if (!exec_failed)
			return mp_cmd_error(&mp_cmd_record, "cannot start '%s': %s", o.cmd[0],
			                    strerror(err_no));
		fprintf(stderr, "memprof record: cannot run '%s': %s\n", o.cmd[0],
		        strerror(err_no));
		return err_no == ENOENT ? 127 : 126;
	}
	mp_record_live_finish(live, 1);
	rc = finish(&o, &sp, command_status(&o, ws));
	mp_record_live_free(live);
	mp_record_free(&o, &sp, env);
	return rc;
}

const struct mp_cmd mp_cmd_record = {
        .name = "record",
        .summary = "run a command and record every GPU allocation it makes (CUPTI)",
        .usage = "memprof record [options] -- CMD [ARGS...]",
        .help = mp_record_args_help,
        .run = run,
};
