/*
 * cmd/record_setup.c - what 'memprof record' checks and prepares before it
 * runs anything (the output, the injected library, CUPTI, the spool
 * directory, the environment) and finds afterwards (the spools).  Paths
 * handed to the command are absolute: it may change directory.
 */
#include "cmd/cmd.h"
#include "cmd/record.h"
#include "util/libfind.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int mp_record_number(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The name a recording of cmd gets: its base name, the script's stem for
 * "python[3] script.py", the module for "python -m mod"; [A-Za-z0-9._-] only. */
static void command_name(char *const *cmd, char *name, size_t size)
{
	const char *base = strrchr(cmd[0], '/'), *pick, *slash;
	size_t i, len;

	base = base ? base + 1 : cmd[0];
	pick = base;
	if (strncmp(base, "python", 6) == 0 && cmd[1]) {
		if (strcmp(cmd[1], "-m") == 0 && cmd[2])
			pick = cmd[2];
		else if (cmd[1][0] != '-')
			pick = (slash = strrchr(cmd[1], '/')) ? slash + 1 : cmd[1];
	}
	len = strlen(pick);
	if (pick != base && len > 3 && strcmp(pick + len - 3, ".py") == 0)
		len -= 3;
	if (len >= size)
		len = size - 1;
	for (i = 0; i < len; i++) {
		char c = pick[i];

		name[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
		                  ? c
		                  : '_';
	}
	name[len] = '\0';
	if (!name[0])
		snprintf(name, size, "cmd");
}

static char *default_output(char *const *cmd)
{
	char name[64], stamp[32], *out = NULL;
	time_t now = time(NULL);
	struct tm tm;

	command_name(cmd, name, sizeof(name));
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	return asprintf(&out, "memprof-%s-%s.db", name, stamp) < 0 ? NULL : out;
}

/* The output must not exist (unless --force) and its directory must take a new file. */
static int check_output(struct mp_record_opts *o)
{
	char *copy, *dir, *probe = NULL;
	struct stat st;
	int fd, e;

	if (!o->output && !(o->output = o->output_owned = default_output(o->cmd)))
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	if (lstat(o->output, &st) == 0 && (S_ISDIR(st.st_mode) || !o->force)) {
		mp_cmd_error(&mp_cmd_record, "output '%s' %s", o->output,
		             S_ISDIR(st.st_mode) ? "is a directory" : "exists");
		if (!S_ISDIR(st.st_mode))
			fprintf(stderr, "hint: --force replaces it; -o names another file\n");
		return MP_EXIT_ERROR;
	}
	if (!(copy = strdup(o->output)))
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	dir = dirname(copy);
	if (asprintf(&probe, "%s/.memprof-record-XXXXXX", dir) < 0) {
		free(copy);
		return mp_cmd_error(&mp_cmd_record, "out of memory");
	}
	fd = mkstemp(probe);
	e = errno;
	if (fd >= 0) {
		close(fd);
		unlink(probe);
	} else {
		mp_cmd_error(&mp_cmd_record, "cannot write the trace in '%s': %s", dir,
		             strerror(e));
	}
	free(probe);
	free(copy);
	return fd >= 0 ? 0 : MP_EXIT_ERROR;
}

/* dir/name when it is a readable file: its absolute path (malloc'd), else NULL. */
static char *found(const char *dir, const char *name)
{
	char path[PATH_MAX], *abs;

	if (snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "") >=
	            (int)sizeof(path) ||
	    access(path, R_OK) != 0)
		return NULL;
	abs = realpath(path, NULL);
	return abs;
}

/* The directory of the running memprof binary (a build tree has its libraries beside it). */
static int exe_dir(char *dir, size_t size)
{
	ssize_t len = readlink("/proc/self/exe", dir, size - 1);
	char *slash;

	if (len <= 0)
		return -1;
	dir[len] = '\0';
	if (!(slash = strrchr(dir, '/')))
		return -1;
	*slash = '\0';
	return 0;
}

#define INJECT_SO "libmemprof-inject.so"

/* --inject, MEMPROF_INJECT, $(pkglibdir), then beside an uninstalled binary. */
static int find_inject(struct mp_record_opts *o)
{
	const char *given = o->inject ? o->inject : getenv("MEMPROF_INJECT");
	char dir[PATH_MAX], sub[PATH_MAX + 32];

	if (given && *given) {
		if ((o->inject_path = found(given, NULL)))
			return 0;
		return mp_cmd_error(&mp_cmd_record, "no injected library '%s': %s", given,
		                    strerror(errno));
	}
	if ((o->inject_path = found(MEMPROF_PKGLIBDIR, INJECT_SO)))
		return 0;
	if (exe_dir(dir, sizeof(dir)) == 0) {
		snprintf(sub, sizeof(sub), "%s/.libs", dir);
		if ((o->inject_path = found(sub, INJECT_SO)))
			return 0;
		snprintf(sub, sizeof(sub), "%s/src/capture/.libs", dir);
		if ((o->inject_path = found(sub, INJECT_SO)))
			return 0;
	}
	mp_cmd_error(&mp_cmd_record, "no injected library '%s/%s': %s", MEMPROF_PKGLIBDIR,
	             INJECT_SO, strerror(ENOENT));
	fprintf(stderr, "hint: it is built with the CUDA toolkit (configure --with-cuda); "
	                "--inject=PATH or MEMPROF_INJECT names another\n");
	return MP_EXIT_ERROR;
}

/* The python the command runs (its argv[0] when that is a python), else python3 on PATH. */
static const char *workload_python(const struct mp_record_opts *o)
{
	const char *given = getenv("MEMPROF_PYTHON");
	const char *a0 = o->cmd && o->cmd[0] ? o->cmd[0] : "";
	const char *base = strrchr(a0, '/') ? strrchr(a0, '/') + 1 : a0;

	if (given && *given)
		return given;
	return strncmp(base, "python", 6) == 0 ? a0 : "python3";
}

/*
 * CUPTI (util/libfind.h has the order): --cupti or MEMPROF_CUPTI; for a
 * PyTorch workload the copy PyTorch loads; CUDA_HOME, CUDA_PATH, the toolkit
 * memprof was built with; a wheel's.  NULL: the library tries libcupti.so.13
 * itself.  The injected library uses a CUPTI already in the process first,
 * and the trace's meta 'cupti' names the file used.
 */
static int find_cupti(struct mp_record_opts *o)
{
	const char *given = o->cupti ? o->cupti : getenv("MEMPROF_CUPTI");
	struct mp_libfind_roots roots = {0};
	struct mp_libfind_query q = {.explicit_path = given,
	                             .cuda_home = getenv("CUDA_HOME"),
	                             .cuda_path = getenv("CUDA_PATH"),
	                             .roots = &roots};
	struct mp_libfind_hit hit;
	int python = o->cmd && mp_libfind_runs_python(o->cmd[0]);

#ifdef MEMPROF_CUDA_DIR
	q.cuda_dir = MEMPROF_CUDA_DIR;
#endif
	if (given && *given && access(given, R_OK) != 0)
		return mp_cmd_error(&mp_cmd_record, "no CUPTI library '%s': %s", given,
		                    strerror(errno));
	if (!(given && *given))
		(void)mp_libfind_python_roots(workload_python(o), 10000, &roots);
	q.torch_workload = python && mp_libfind_torch_root(&roots) >= 0;
	mp_libfind_cupti(&q, &hit);
	mp_libfind_roots_free(&roots);
	o->cupti_path = hit.path;
	return 0;
}

static int add_name(char ***names, size_t *n, const char *name)
{
	char **grown = realloc(*names, (*n + 1) * sizeof(**names));

	if (!grown)
		return -1;
	*names = grown;
	if (!(grown[*n] = strdup(name)))
		return -1;
	(*n)++;
	return 0;
}

static int is_spool_name(const char *name)
{
	size_t len = strlen(name);

	return len > 4 && strcmp(name + len - 4, ".mpt") == 0;
}

/* --spool-dir (made if missing; its old spools are not this run's), else a new one. */
static int spool_dir(const struct mp_record_opts *o, struct mp_record_spools *sp)
{
	const char *tmp = getenv("TMPDIR");
	char template[PATH_MAX];
	struct dirent *d;
	DIR *dir;

	if (!o->spool_dir) {
		snprintf(template, sizeof(template), "%s/memprof-record-XXXXXX",
		         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(template))
			return mp_cmd_error(&mp_cmd_record,
			                    "cannot make a spool directory '%s': %s", template,
			                    strerror(errno));
		sp->created = 1;
		sp->dir = realpath(template, NULL);
		return sp->dir ? 0 : mp_cmd_error(&mp_cmd_record, "out of memory");
	}
	if (mkdir(o->spool_dir, 0700) == 0)
		sp->created = 1;
	else if (errno != EEXIST)
		return mp_cmd_error(&mp_cmd_record, "cannot make the spool directory '%s': %s",
		                    o->spool_dir, strerror(errno));
	if (!(sp->dir = realpath(o->spool_dir, NULL)) || !(dir = opendir(sp->dir)))
		return mp_cmd_error(&mp_cmd_record, "cannot use the spool directory '%s': %s",
		                    o->spool_dir, strerror(errno));
	while ((d = readdir(dir)))
		if (is_spool_name(d->d_name) && add_name(&sp->before, &sp->n_before, d->d_name) < 0)
			break;
	closedir(dir);
	if (access(sp->dir, W_OK) != 0)
		return mp_cmd_error(&mp_cmd_record, "cannot write spools in '%s': %s", sp->dir,
		                    strerror(errno));
	return 0;
}

int mp_record_prepare(struct mp_record_opts *o, struct mp_record_spools *sp)
{
	int rc;

	if ((rc = check_output(o)) || (rc = find_inject(o)) || (rc = find_cupti(o)) ||
	    (rc = spool_dir(o, sp)))
		return rc;
	return 0;
}

char **mp_record_env(const struct mp_record_opts *o, const char *dir)
{
	char **env = calloc(16, sizeof(*env));
	int n = 0, bad = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (asprintf(&env[n], __VA_ARGS__) < 0) {                                          \
			env[n] = NULL;                                                             \
			bad = 1;                                                                   \
		} else {                                                                           \
			n++;                                                                       \
		}                                                                                  \
	} while (0)
	if (!env)
		return NULL;
	ADD("CUDA_INJECTION64_PATH=%s", o->inject_path); /* the driver loads it at cuInit */
	ADD("MEMPROF_SPOOL_DIR=%s", dir);
	if (o->cupti_path) {
		ADD("MEMPROF_CUPTI=%s", o->cupti_path);
		ADD("NVTX_INJECTION64_PATH=%s", o->cupti_path); /* NVTX ranges reach CUPTI */
	}
	if (o->stacks)
		ADD("MEMPROF_STACKS=%s", o->stacks);
	if (o->stack_sample)
		ADD("MEMPROF_STACK_SAMPLE=%ld", o->stack_sample);
	if (o->stack_depth)
		ADD("MEMPROF_STACK_DEPTH=%ld", o->stack_depth);
	if (o->dormant)
		ADD("MEMPROF_DORMANT=1");
	if (o->no_cache) {
		ADD("PYTORCH_NO_CUDA_MEMORY_CACHING=1");
		ADD("XLA_PYTHON_CLIENT_ALLOCATOR=platform");
		ADD("XLA_PYTHON_CLIENT_PREALLOCATE=false");
		ADD("TF_GPU_ALLOCATOR=cuda_malloc_async");
	}
#undef ADD
	if (bad) {
		mp_record_free(NULL, NULL, env);
		return NULL;
	}
	return env;
}

static int was_before(const struct mp_record_spools *sp, const char *name)
{
	size_t i;

	for (i = 0; i < sp->n_before; i++)
		if (strcmp(sp->before[i], name) == 0)
			return 1;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mp_record_list_spools(struct mp_record_spools *sp)
{
	char path[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir = opendir(sp->dir);

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (!is_spool_name(d->d_name) || was_before(sp, d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sp->dir, d->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (add_name(&sp->paths, &sp->n, path) < 0) {
			closedir(dir);
			errno = ENOMEM;
			return -1;
		}
	}
	closedir(dir);
	if (sp->n)
		qsort(sp->paths, sp->n, sizeof(*sp->paths), by_name);
	return 0;
}

void mp_record_remove_spools(struct mp_record_spools *sp, int spools)
{
	size_t i;

	for (i = 0; spools && i < sp->n; i++)
		unlink(sp->paths[i]);
	if (sp->created && sp->dir)
		rmdir(sp->dir); /* fails, harmlessly, when something else was left in it */
}

static void free_names(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void mp_record_free(struct mp_record_opts *o, struct mp_record_spools *sp, char **env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
	if (o) {
		free(o->output_owned);
		free(o->inject_path);
		free(o->cupti_path);
	}
	if (sp) {
		free(sp->dir);
		free_names(sp->before, sp->n_before);
		free_names(sp->paths, sp->n);
	}
}
