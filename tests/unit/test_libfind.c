/*
 * tests/unit/test_libfind.c - util/libfind: where CUPTI and NCCL are found,
 * against fake directory layouts (a toolkit, CUDA_HOME, Python wheels with and
 * without PyTorch) and fake Python interpreters (one that answers, one that
 * hangs).  No real library is loaded.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/libfind.h"

static char dir[256];

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/libfind-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Make dir/rel (and its directories) with text; returns the absolute path in a static buffer. */
static const char *touch(const char *rel, const char *text)
{
	static char path[1024];
	char cmd[2200];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
	cr_assert_eq(system(cmd), 0);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	return path;
}

static char *sub(const char *rel)
{
	static char path[4][1024];
	static int k;
	char *p = path[k++ % 4];

	snprintf(p, 1024, "%s/%s", dir, rel);
	return p;
}

/* A machine with everything: a toolkit, CUDA_HOME, and site-packages with PyTorch's wheels. */
static void machine(void)
{
	touch("cuda/lib64/libcupti.so.13", "");
	touch("cuda/lib64/libnccl.so.2", "");
	touch("home/extras/CUPTI/lib64/libcupti.so.13", "");
	touch("site/torch/__init__.py", "");
	touch("site/nvidia/cu13/lib/libcupti.so.13", "");
	touch("site/nvidia/nccl/lib/libnccl.so.2", "");
}

static void roots_of(struct mp_libfind_roots *r, const char *const *rels)
{
	memset(r, 0, sizeof *r);
	for (size_t i = 0; rels[i]; i++)
		cr_assert_eq(mp_libfind_roots_add(r, sub(rels[i])), 0);
}

static void expect(const struct mp_libfind_hit *h, const char *rel, const char *source)
{
	char *want = realpath(sub(rel), NULL);

	cr_assert_not_null(want, "%s", rel);
	cr_assert_not_null(h->path, "nothing found; expected %s", rel);
	cr_assert_str_eq(h->path, want);
	cr_assert_str_eq(h->source, source);
	free(want);
}

Test(libfind, an_explicit_cupti_wins_over_everything, .init = setup, .fini = teardown)
{
	const char *rels[] = {"site", NULL};
	struct mp_libfind_roots r;
	struct mp_libfind_hit h;

	machine();
	touch("mine/libcupti.so.13", "");
	roots_of(&r, rels);
	struct mp_libfind_query q = {.explicit_path = sub("mine/libcupti.so.13"),
	                             .cuda_home = sub("home"),
	                             .cuda_dir = sub("cuda"),
	                             .roots = &r,
	                             .torch_workload = 1};
	mp_libfind_cupti(&q, &h);
	expect(&h, "mine/libcupti.so.13", "--cupti/MEMPROF_CUPTI");
	free(h.path);
	mp_libfind_roots_free(&r);
}

Test(libfind, a_pytorch_workload_gets_the_cupti_pytorch_loads, .init = setup, .fini = teardown)
{
	const char *rels[] = {"other", "site", NULL};
	struct mp_libfind_roots r;
	struct mp_libfind_hit h;

	machine();
	touch("other/nvidia/cuda_cupti/lib/libcupti.so.13",
	      ""); /* a wheel without torch beside it */
	roots_of(&r, rels);
	struct mp_libfind_query q = {.cuda_home = sub("home"),
	                             .cuda_dir = sub("cuda"),
	                             .roots = &r,
	                             .torch_workload = 1};
	mp_libfind_cupti(&q, &h);
	expect(&h, "site/nvidia/cu13/lib/libcupti.so.13", "PyTorch's wheel");
	free(h.path);
	/* torch/lib's own copy comes before the wheels beside it */
	touch("site/torch/lib/libcupti.so.13", "");
	mp_libfind_cupti(&q, &h);
	expect(&h, "site/torch/lib/libcupti.so.13", "PyTorch's wheel");
	free(h.path);
	mp_libfind_roots_free(&r);
}

Test(libfind, otherwise_the_toolkits_come_in_order_then_any_wheel, .init = setup, .fini = teardown)
{
	const char *rels[] = {"site", NULL};
	struct mp_libfind_roots r;
	struct mp_libfind_hit h;

	machine();
	touch("path/lib64/libcupti.so.13", "");
	roots_of(&r, rels);
	struct mp_libfind_query q = {.cuda_home = sub("home"),
	                             .cuda_path = sub("path"),
	                             .cuda_dir = sub("cuda"),
	                             .roots = &r};
	mp_libfind_cupti(&q, &h);
	expect(&h, "home/extras/CUPTI/lib64/libcupti.so.13", "CUDA_HOME");
	free(h.path);
	q.cuda_home = sub("nowhere");
	mp_libfind_cupti(&q, &h);
	expect(&h, "path/lib64/libcupti.so.13", "CUDA_PATH");
	free(h.path);
	q.cuda_path = NULL;
	mp_libfind_cupti(&q, &h);
	expect(&h, "cuda/lib64/libcupti.so.13", "the CUDA toolkit");
	free(h.path);
	q.cuda_dir = sub("nowhere");
	mp_libfind_cupti(&q, &h);
	expect(&h, "site/nvidia/cu13/lib/libcupti.so.13", "a Python wheel");
	free(h.path);
	q.roots = NULL;
	mp_libfind_cupti(&q, &h);
	cr_assert_null(h.path, "nothing anywhere: the library tries its soname");
	mp_libfind_roots_free(&r);
}

Test(libfind, nccl_comes_from_the_wheel_before_the_toolkit, .init = setup, .fini = teardown)
{
	const char *rels[] = {"site", NULL};
	struct mp_libfind_roots r;
	struct mp_libfind_hit h;

	machine();
	roots_of(&r, rels);
	struct mp_libfind_query q = {.cuda_dir = sub("cuda"), .roots = &r};
	mp_libfind_nccl(&q, &h);
	expect(&h, "site/nvidia/nccl/lib/libnccl.so.2", "a Python wheel");
	free(h.path);
	q.roots = NULL;
	mp_libfind_nccl(&q, &h);
	expect(&h, "cuda/lib64/libnccl.so.2", "the CUDA toolkit");
	free(h.path);
	q.explicit_path = "/nonexistent/libnccl.so.2";
	mp_libfind_nccl(&q, &h);
	cr_assert_str_eq(h.path, "/nonexistent/libnccl.so.2", "named as given, to be reported");
	cr_assert_str_eq(h.source, "MEMPROF_LIBNCCL");
	free(h.path);
	mp_libfind_roots_free(&r);
}

Test(libfind, a_python_is_asked_for_its_import_directories, .init = setup, .fini = teardown)
{
	struct mp_libfind_roots r;
	char text[2048];
	const char *py;

	touch("site/torch/__init__.py", "");
	touch("user/.keep", "");
	/* It prints what a real one would: some directories twice, some missing, a zip. */
	snprintf(text, sizeof text,
	         "#!/bin/sh\n[ \"$1\" = -c ] || exit 9\n"
	         "printf '%%s\\n' %s/site %s/missing %s/user /usr/lib/python3.zip %s/site\n",
	         dir, dir, dir, dir);
	py = touch("bin/python3", text);
	chmod(py, 0755);
	cr_assert_eq(mp_libfind_python_roots(py, 5000, &r), 0);
	cr_assert_eq(r.n, 2, "existing directories once each: %zu", r.n);
	cr_assert_str_eq(r.dirs[0], sub("site"));
	cr_assert_str_eq(r.dirs[1], sub("user"));
	cr_assert_eq(mp_libfind_torch_root(&r), 0);
	mp_libfind_roots_free(&r);
	cr_assert_eq(mp_libfind_python_roots(sub("bin/none"), 5000, &r), -1, "no interpreter");
	cr_assert_eq(r.n, 0);
}

/* Killed at its limit, never waited for (a hang here fails by the test's timeout). */
Test(libfind, a_python_that_hangs_is_given_up_on, .init = setup, .fini = teardown, .timeout = 20)
{
	struct mp_libfind_roots r;
	const char *py = touch("bin/python3", "#!/bin/sh\nexec sleep 60\n");

	chmod(py, 0755);
	cr_assert_eq(mp_libfind_python_roots(py, 300, &r), -1);
	cr_assert_eq(r.n, 0);
}

Test(libfind, which_commands_run_python, .init = setup, .fini = teardown)
{
	const char *script = touch("bin/train", "#!/usr/bin/env python3\nimport torch\n");
	const char *shell = touch("bin/run.sh", "#!/bin/sh\necho hi\n");

	chmod(script, 0755);
	chmod(shell, 0755);
	cr_assert(mp_libfind_runs_python("python3"));
	cr_assert(mp_libfind_runs_python("/usr/bin/python3.12"));
	cr_assert(mp_libfind_runs_python("torchrun"));
	cr_assert(mp_libfind_runs_python(sub("bin/train")), "a script whose #! names python");
	cr_assert_not(mp_libfind_runs_python(sub("bin/run.sh")));
	cr_assert_not(mp_libfind_runs_python("pythonista"));
	cr_assert_not(mp_libfind_runs_python(""));
	cr_assert_not(mp_libfind_runs_python(sub("bin/absent")));
}
