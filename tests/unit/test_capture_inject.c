/*
 * tests/unit/test_capture_inject.c - the built libmemprof-inject.so without
 * a GPU driver: dlopened in a forked child per case (InitializeInjection
 * runs once per process) with the environment of the case; the child's
 * stderr and the spool it leaves are checked here.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spool/reader.h"
#include "capture_helpers.h"

#ifndef TEST_INJECT_LIB
#error "TEST_INJECT_LIB: the path of the built .libs/libmemprof-inject.so"
#endif

static char dir[256];
static char child_err[8192];

/*
 * In a child: set each "NAME=VALUE" of env (NAME= alone unsets), dlopen the
 * library, call InitializeInjection n_calls times, exit 0 when each call
 * returned 1 (atexit handlers run).  Returns the child's exit status; its
 * stderr is in child_err.
 */
/*
 * Remove the lines a sanitizer runtime writes ("==PID==..."): a child forked
 * from this threaded test process makes LeakSanitizer warn at its exit that
 * threads were not suspended.  They are not the library's output.
 */
static void drop_sanitizer_lines(char *text)
{
	char *in = text, *out = text;

	while (*in) {
		char *end = strchr(in, '\n');
		size_t len = end ? (size_t)(end - in) + 1 : strlen(in);
		int pid_len = 0;

		if (in[0] == '=' && in[1] == '=') {
			while (in[2 + pid_len] >= '0' && in[2 + pid_len] <= '9')
				pid_len++;
		}
		if (!(pid_len > 0 && in[2 + pid_len] == '=' && in[3 + pid_len] == '=')) {
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	*out = '\0';
}

static int run_child_forking(const char *const *env, int n_calls, int fork_after)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		unsetenv("MEMPROF_SPOOL_DIR");
		unsetenv("MEMPROF_DISABLE");
		unsetenv("MEMPROF_CUPTI");
		for (size_t i = 0; env[i]; i++) {
			char *kv = strdup(env[i]);
			char *eq = strchr(kv, '=');
			*eq = 0;
			if (eq[1])
				setenv(kv, eq + 1, 1);
			else
				unsetenv(kv);
			free(kv);
		}
		/* TEST_PRELOAD=PATH: a library the workload loaded before the driver loads us. */
		const char *pre = getenv("TEST_PRELOAD");
		if (pre && *pre && !dlopen(pre, RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "dlopen %s: %s\n", pre, dlerror());
			_exit(7);
		}
		void *h = dlopen(TEST_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			_exit(3);
		}
		int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
		if (!init)
			_exit(4);
		if (dlsym(h, "mp_capture_mode") || dlsym(h, "mp_spool_event"))
			_exit(5); /* internals must stay hidden */
		for (int i = 0; i < n_calls; i++)
			if (init() != 1)
				_exit(6);
		if (fork_after) {
			/* A child of the workload exits first: it must not touch the spool. */
			pid_t g = fork();
			if (g == 0)
				exit(0);
			waitpid(g, NULL, 0);
		}
		exit(0);
	}
	close(pfd[1]);
	size_t n = 0;
	ssize_t k;
	while ((k = read(pfd[0], child_err + n, sizeof child_err - 1 - n)) > 0)
		n += (size_t)k;
	child_err[n] = 0;
	drop_sanitizer_lines(child_err);
	close(pfd[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died: status %d; stderr: %s", status, child_err);
	return WEXITSTATUS(status);
}

static int run_child(const char *const *env, int n_calls)
{
	return run_child_forking(env, n_calls, 0);
}

static void setup(void)
{
	th_tmpdir(dir, sizeof dir);
}

static void teardown(void)
{
	th_rmdir(dir);
}

static int count_lines(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The spool reader of the CLI agrees: complete, n_events events, DISABLED last. */
static void check_with_reader(const char *path, size_t n_events, const char *why_part)
{
	struct mp_spool_reader *r = NULL;
	struct mp_error err;
	memset(&err, 0, sizeof err);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_assert_eq(mp_spool_reader_open(&r, f, path, &err), 0);
	const struct mp_spool_item_head *item;
	struct mp_spool_event last;
	size_t n = 0;
	int rc;
	while ((rc = mp_spool_reader_next(r, &item, &err)) == 1)
		if (item->type == MP_SI_EVENT) {
			memcpy(&last, item, sizeof last);
			n++;
		}
	cr_assert_eq(rc, 0);
	cr_assert(mp_spool_reader_complete(r), "the reader finds the footer");
	cr_assert_eq(n, n_events);
	cr_assert_eq(last.kind, MP_SK_DISABLED);
	cr_assert(strstr(mp_spool_reader_string(r, last.name, NULL), why_part));
	cr_assert_eq(mp_spool_reader_footer(r)->disabled, 1);
	mp_spool_reader_close(r);
	fclose(f);
}

/* The spool of a run that disabled itself: complete, DISABLED last, naming why. */
static void check_disabled_spool(const char *why_part, struct th_spool *s)
{
	char path[512];
	cr_assert_eq(th_find_spool(dir, path, sizeof path), 1, "one spool in %s", dir);
	th_read_spool(path, s);
	cr_assert_null(s->error, "%s", s->error);
	cr_assert(s->has_footer, "the spool has a footer");
	cr_assert_eq(s->footer.disabled, 1);
	cr_assert_geq(s->n_events, 1);
	const struct mp_spool_event *last = &s->events[s->n_events - 1];
	cr_assert_eq(last->kind, MP_SK_DISABLED, "last event kind %d", last->kind);
	cr_assert(strstr(th_str(s, last->name), why_part), "DISABLED says '%s', wanted '%s'",
	          th_str(s, last->name), why_part);
	cr_assert_eq(s->footer.n_events, s->n_events);
	check_with_reader(path, s->n_events, why_part);
	cr_assert_eq(count_lines(child_err, "memprof: recording stopped: "), 1, "stderr: %s",
	             child_err);
	cr_assert(strstr(child_err, why_part), "stderr: %s", child_err);
}

Test(capture_inject, no_driver_cupti_refuses_and_the_library_disables_itself, .init = setup,
     .fini = teardown)
{
	char spool_env[300], cupti_env[4200];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	snprintf(cupti_env, sizeof cupti_env, "MEMPROF_CUPTI=%s", th_cupti_path());
	const char *env[] = {spool_env,
	                     cupti_env,
	                     "RANK=3",
	                     "MEMPROF_STACKS=sampled",
	                     "MEMPROF_STACK_SAMPLE=4",
	                     "MEMPROF_STACK_DEPTH=500",
	                     NULL};
	cr_assert_eq(run_child(env, 2), 0, "stderr: %s", child_err);
	struct th_spool s;
	check_disabled_spool("CUPTI_ERROR_", &s);
	/* The header and meta of the process. */
	cr_assert_eq(s.header.stacks_mode, MP_STACKS_SAMPLED);
	cr_assert_eq(s.header.stack_sample, 4);
	cr_assert_eq(s.header.stack_depth, MP_SPOOL_MAX_STACK_DEPTH, "500 is cut to the most");
	cr_assert_geq(s.header.cupti_version, 13, "cuptiGetVersion: %u", s.header.cupti_version);
	cr_assert_eq(s.header.ppid, getpid());
	cr_assert_gt(s.header.start_mono_ns, 0);
	cr_assert_gt(s.header.start_unix_ns, 0);
	cr_assert_eq(s.header.flags, 0);
	cr_assert_str_eq(th_meta(&s, "env:RANK"), "3");
	cr_assert_str_eq(th_meta(&s, "cupti"), th_cupti_path());
	cr_assert_not_null(th_meta(&s, "argv"));
	/* The child's command line is this process's: its first word starts argv. */
	char first[4096] = "";
	FILE *f = fopen("/proc/self/cmdline", "r");
	cr_assert_not_null(f);
	cr_assert_gt(fread(first, 1, sizeof first - 1, f), 0);
	fclose(f);
	cr_assert_gt(strlen(first), 0);
	cr_assert_eq(strncmp(th_meta(&s, "argv"), first, strlen(first)), 0, "argv '%s', first '%s'",
	             th_meta(&s, "argv"), first);
	cr_assert_not_null(th_meta(&s, "host"));
	cr_assert(strstr(th_meta(&s, "exe"), "test_capture_inject"), "exe %s", th_meta(&s, "exe"));
	cr_assert_null(th_meta(&s, "env:WORLD_SIZE"), "unset variables are not written");
	/* Modules: the program itself, libc, the library with its build id. */
	int saw_lib = 0;
	for (size_t i = 0; i < s.n_modules; i++) {
		const struct mp_spool_module *m = &s.modules[i];
		cr_assert_leq(m->start, m->end);
		if (strstr(th_str(&s, m->path), "libmemprof-inject.so")) {
			saw_lib = 1;
			cr_assert_gt(strlen(th_str(&s, m->build_id)), 16, "build id");
		}
	}
	cr_assert_geq(s.n_modules, 3);
	cr_assert(saw_lib, "the library's own module is listed");
	/* Called twice: one spool, one message (checked above). */
	th_free_spool(&s);
}

Test(capture_inject, memprof_disable_writes_nothing, .init = setup, .fini = teardown)
{
	char spool_env[300];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	const char *env[] = {spool_env, "MEMPROF_DISABLE=1", NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	char path[512];
	cr_assert_eq(th_find_spool(dir, path, sizeof path), 0);
	cr_assert_str_eq(child_err, "");
}

Test(capture_inject, no_spool_dir_is_one_line_and_no_spool, .init = setup, .fini = teardown)
{
	const char *env[] = {"MEMPROF_SPOOL_DIR=", NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	char path[512];
	cr_assert_eq(th_find_spool(dir, path, sizeof path), 0);
	cr_assert(strstr(child_err, "MEMPROF_SPOOL_DIR"), "stderr: %s", child_err);
	cr_assert_eq(count_lines(child_err, "\n"), 1, "stderr: %s", child_err);
}

Test(capture_inject, bad_cupti_path_disables_with_the_dlopen_error, .init = setup, .fini = teardown)
{
	char spool_env[300];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	const char *env[] = {spool_env, "MEMPROF_CUPTI=/nonexistent/libcupti.so.13", NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	struct th_spool s;
	check_disabled_spool("cannot load CUPTI '/nonexistent/libcupti.so.13'", &s);
	cr_assert(strstr(th_str(&s, s.events[s.n_events - 1].name), "No such file"), "%s",
	          th_str(&s, s.events[s.n_events - 1].name));
	cr_assert_eq(s.header.cupti_version, 0);
	cr_assert_null(th_meta(&s, "cupti"));
	th_free_spool(&s);
}

/*
 * PyTorch loads its wheel's libcupti.so.13 before the driver loads memprof:
 * the injected library must use that copy, not dlopen a second one from
 * MEMPROF_CUPTI (here a path that does not exist, so a second load would
 * fail), and the spool's meta names the copy used.
 */
Test(capture_inject, a_cupti_already_in_the_process_is_the_one_used, .init = setup,
     .fini = teardown)
{
	char spool_env[300], copy[300], pre_env[320], cmd[1024];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	snprintf(copy, sizeof copy, "%s/wheel/libcupti.so.13", dir);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/wheel' && cp '%s' '%s'", dir, th_cupti_path(),
	         copy);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(pre_env, sizeof pre_env, "TEST_PRELOAD=%s", copy);
	const char *env[] = {spool_env, pre_env, "MEMPROF_CUPTI=/nonexistent/libcupti.so.13", NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	struct th_spool s;
	check_disabled_spool("CUPTI_ERROR_", &s); /* no driver here: CUPTI itself refuses */
	cr_assert_geq(s.header.cupti_version, 13);
	cr_assert_str_eq(th_meta(&s, "cupti"), copy);
	th_free_spool(&s);
	unlink(copy);
}

Test(capture_inject, bad_setting_disables_naming_it, .init = setup, .fini = teardown)
{
	char spool_env[300], cupti_env[4200];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	snprintf(cupti_env, sizeof cupti_env, "MEMPROF_CUPTI=%s", th_cupti_path());
	const char *env[] = {spool_env, cupti_env, "MEMPROF_STACKS=some", NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	struct th_spool s;
	check_disabled_spool("MEMPROF_STACKS='some'", &s);
	th_free_spool(&s);
}

Test(capture_inject, unwritable_spool_dir_is_one_line, .init = setup, .fini = teardown)
{
	char spool_env[300];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s/missing/deeper", dir);
	const char *env[] = {spool_env, NULL};
	cr_assert_eq(run_child(env, 1), 0, "stderr: %s", child_err);
	cr_assert_eq(count_lines(child_err, "memprof: recording stopped: cannot create spool"), 1,
	             "stderr: %s", child_err);
}

Test(capture_inject, a_forked_child_leaves_the_spool_alone, .init = setup, .fini = teardown)
{
	char spool_env[300];
	snprintf(spool_env, sizeof spool_env, "MEMPROF_SPOOL_DIR=%s", dir);
	const char *env[] = {spool_env, "MEMPROF_CUPTI=/nonexistent/libcupti.so.13", NULL};
	cr_assert_eq(run_child_forking(env, 1, 1), 0, "stderr: %s", child_err);
	struct th_spool s;
	/* One footer, written by the process that initialised, after its child exited. */
	check_disabled_spool("cannot load CUPTI", &s);
	th_free_spool(&s);
}
