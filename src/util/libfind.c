/*
 * util/libfind.c - finds CUPTI and NCCL where users have them (libfind.h):
 * explicit paths, CUDA toolkits, and the Python wheels of the python3 in use,
 * learnt by running it once with a time limit.  Never prints, never exits.
 */
#include "util/libfind.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Prints the interpreter's import directories, one per line. */
static const char roots_program[] = "import site, sys\n"
                                    "d = []\n"
                                    "try: d += site.getsitepackages()\n"
                                    "except Exception: pass\n"
                                    "try: d.append(site.getusersitepackages())\n"
                                    "except Exception: pass\n"
                                    "d += [p for p in sys.path if p]\n"
                                    "print('\\n'.join(d))\n";

int mp_libfind_roots_add(struct mp_libfind_roots *r, const char *dir)
{
	char **grown;

	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->dirs[i], dir) == 0)
			return 0;
	if (!(grown = realloc(r->dirs, (r->n + 1) * sizeof *grown)))
		return -1;
	r->dirs = grown;
	if (!(r->dirs[r->n] = strdup(dir)))
		return -1;
	r->n++;
	return 0;
}

void mp_libfind_roots_free(struct mp_libfind_roots *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->dirs[i]);
	free(r->dirs);
	r->dirs = NULL;
	r->n = 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run python with the program; its stdout (at most cap - 1 bytes) in buf. -1: no answer. */
static int run_python(const char *python, int timeout_ms, char *buf, size_t cap)
{
	int fds[2];
	size_t len = 0;
	long deadline = now_ms() + timeout_ms;
	pid_t pid;
	int status;

	posix_spawn_file_actions_t fa;
	/* no -I or -E: PYTHONPATH and the user's site count, as they will for the workload */
	char *const argv[] = {(char *)python, "-c", (char *)roots_program, NULL};
	int spawned;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	spawned = posix_spawnp(&pid, python, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (spawned != 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		long left = deadline - now_ms();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		k = read(fds[0], buf + len, cap - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || (len += (size_t)k) >= cap - 1)
			break;
	}
	close(fds[0]);
	kill(pid, SIGKILL); /* it has answered (or never will); a no-op when it exited */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	return len > 0 ? 0 : -1;
}

int mp_libfind_python_roots(const char *python, int timeout_ms, struct mp_libfind_roots *out)
{
	char *buf = malloc(65536), *line, *save = NULL;
	struct stat st;
	int rc;

	memset(out, 0, sizeof *out);
	if (!buf)
		return -1;
	rc = run_python(python && *python ? python : "python3", timeout_ms, buf, 65536);
	for (line = rc == 0 ? strtok_r(buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != '/' || stat(line, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (mp_libfind_roots_add(out, line) != 0) {
			rc = -1;
			break;
		}
	}
	free(buf);
	if (rc == 0 && out->n == 0)
		rc = -1;
	return rc;
}

char *mp_libfind_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (!dir || !*dir || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
	    access(path, R_OK) != 0)
		return NULL;
	return realpath(path, NULL);
}

char *mp_libfind_glob(const struct mp_libfind_roots *r, const char *pattern)
{
	char pat[PATH_MAX];
	char *hit = NULL;

	for (size_t i = 0; r && i < r->n && !hit; i++) {
		glob_t g;

		if (snprintf(pat, sizeof pat, "%s/%s", r->dirs[i], pattern) >= (int)sizeof pat)
			continue;
		if (glob(pat, 0, NULL, &g) == 0) /* sorted */
			for (size_t k = 0; k < g.gl_pathc && !hit; k++)
				if (access(g.gl_pathv[k], R_OK) == 0)
					hit = realpath(g.gl_pathv[k], NULL);
		globfree(&g);
	}
	return hit;
}

int mp_libfind_torch_root(const struct mp_libfind_roots *r)
{
	char path[PATH_MAX];

	for (size_t i = 0; r && i < r->n; i++)
		if (snprintf(path, sizeof path, "%s/torch/__init__.py", r->dirs[i]) <
		            (int)sizeof path &&
		    access(path, R_OK) == 0)
			return (int)i;
	return -1;
}

/* A toolkit directory's copy of name: lib64, then (CUPTI) extras/CUPTI/lib64. */
static char *in_toolkit(const char *dir, const char *name)
{
	char sub[PATH_MAX];
	char *hit;

	if (!dir || !*dir)
		return NULL;
	snprintf(sub, sizeof sub, "%s/lib64", dir);
	if ((hit = mp_libfind_file(sub, name)))
		return hit;
	snprintf(sub, sizeof sub, "%s/extras/CUPTI/lib64", dir);
	return mp_libfind_file(sub, name);
}

/* Set hit from the first toolkit (CUDA_HOME, CUDA_PATH, the build's) that has name. */
static int from_toolkits(const struct mp_libfind_query *q, const char *name,
                         struct mp_libfind_hit *hit)
{
	if ((hit->path = in_toolkit(q->cuda_home, name)))
		hit->source = "CUDA_HOME";
	else if ((hit->path = in_toolkit(q->cuda_path, name)))
		hit->source = "CUDA_PATH";
	else if ((hit->path = in_toolkit(q->cuda_dir, name)))
		hit->source = "the CUDA toolkit";
	return hit->path != NULL;
}

/* PyTorch's own copy: under the root that holds torch, in torch/lib or its nvidia wheels. */
static char *torch_cupti(const struct mp_libfind_roots *r)
{
	int k = mp_libfind_torch_root(r);
	struct mp_libfind_roots one;
	char *hit;

	if (k < 0)
		return NULL;
	one.dirs = &r->dirs[k];
	one.n = 1;
	if (!(hit = mp_libfind_glob(&one, "torch/lib/libcupti.so.13*")))
		hit = mp_libfind_glob(&one, "nvidia/*/lib/libcupti.so.13*");
	return hit;
}

void mp_libfind_cupti(const struct mp_libfind_query *q, struct mp_libfind_hit *hit)
{
	hit->path = NULL;
	hit->source = NULL;
	if (q->explicit_path && *q->explicit_path) {
		char *real = realpath(q->explicit_path, NULL);

		hit->path = real ? real : strdup(q->explicit_path);
		hit->source = "--cupti/MEMPROF_CUPTI";
		return;
	}
	if (q->torch_workload && (hit->path = torch_cupti(q->roots))) {
		hit->source = "PyTorch's wheel";
		return;
	}
	if (from_toolkits(q, "libcupti.so.13", hit))
		return;
	if ((hit->path = mp_libfind_glob(q->roots, "nvidia/*/lib/libcupti.so.13*")))
		hit->source = "a Python wheel";
}

void mp_libfind_nccl(const struct mp_libfind_query *q, struct mp_libfind_hit *hit)
{
	hit->path = NULL;
	hit->source = NULL;
	if (q->explicit_path && *q->explicit_path) {
		char *real = realpath(q->explicit_path, NULL);

		hit->path = real ? real : strdup(q->explicit_path);
		hit->source = "MEMPROF_LIBNCCL";
		return;
	}
	if ((hit->path = mp_libfind_glob(q->roots, "nvidia/nccl/lib/libnccl.so.2*"))) {
		hit->source = "a Python wheel";
		return;
	}
	from_toolkits(q, "libnccl.so.2", hit);
}

/* basename matches python, python3, python3.12, pythonw...; or a launcher of PyTorch's. */
static int python_name(const char *base)
{
	static const char *const launchers[] = {"torchrun", "accelerate", "deepspeed"};

	if (strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == strlen(base + 6))
		return 1;
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
		if (strcmp(base, launchers[i]) == 0)
			return 1;
	return 0;
}

/* argv0 as the shell would run it: a path as is, a name found on PATH. */
static int resolve(const char *argv0, char *out, size_t n)
{
	const char *path = getenv("PATH");

	if (strchr(argv0, '/'))
		return snprintf(out, n, "%s", argv0) < (int)n ? 0 : -1;
	while (path && *path) {
		size_t len = strcspn(path, ":");

		if (snprintf(out, n, "%.*s/%s", (int)len, path, argv0) < (int)n &&
		    access(out, X_OK) == 0)
			return 0;
		path += len + (path[len] == ':');
	}
	return -1;
}

int mp_libfind_runs_python(const char *argv0)
{
	char path[PATH_MAX], line[256];
	const char *base;
	FILE *f;
	int yes = 0;

	if (!argv0 || !*argv0)
		return 0;
	base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
	if (python_name(base))
		return 1;
	if (resolve(argv0, path, sizeof path) != 0 || !(f = fopen(path, "r")))
		return 0;
	if (fgets(line, sizeof line, f) && strncmp(line, "#!", 2) == 0 && strstr(line, "python"))
		yes = 1;
	fclose(f);
	return yes;
}
