/*
 * util/libfind.h - where the CUDA libraries memprof loads at run time live on
 * a machine: CUPTI for 'memprof record', NCCL for the cuda backend of
 * 'memprof replay'.  A library may be named explicitly, sit in a CUDA toolkit
 * (CUDA_HOME, CUDA_PATH, the toolkit memprof was built with) or only inside
 * the Python wheels a PyTorch install pulls in (site-packages/nvidia/NAME/lib).
 *
 * The policy (mp_libfind_cupti, mp_libfind_nccl) is a pure function of a
 * struct mp_libfind_query, so it is tested against fake directory layouts;
 * mp_libfind_python_roots fills the query's wheel roots by asking a Python
 * interpreter (bounded in time).  Nothing here prints or exits.
 */
#ifndef MP_UTIL_LIBFIND_H
#define MP_UTIL_LIBFIND_H

#include <stddef.h>

/* Directories a Python interpreter imports from (site-packages and sys.path), in its order. */
struct mp_libfind_roots {
	char **dirs;
	size_t n;
};

/*
 * Ask python (a command name looked up on PATH, or a path) for its import
 * directories: runs it with a fixed one-line program, stdin and stderr on
 * /dev/null, for at most timeout_ms (killed after).  Existing directories
 * only, duplicates dropped.  0 (out may be empty), or -1 when the
 * interpreter could not be run or answered nothing usable.
 */
int mp_libfind_python_roots(const char *python, int timeout_ms, struct mp_libfind_roots *out);
/* Append one directory (tests, and callers that know a root). 0 or -1 (no memory). */
int mp_libfind_roots_add(struct mp_libfind_roots *r, const char *dir);
void mp_libfind_roots_free(struct mp_libfind_roots *r);

/*
 * The first readable file matching pattern (a glob relative to a root, such
 * as "nvidia/ * /lib/libcupti.so.13*" without the spaces) under the roots, in
 * root order and sorted within a root; its realpath (malloc'd), or NULL.
 */
char *mp_libfind_glob(const struct mp_libfind_roots *r, const char *pattern);
/* dir/name when readable, as its realpath (malloc'd), or NULL. */
char *mp_libfind_file(const char *dir, const char *name);

/* Everything the lookups depend on; NULL members are absent. */
struct mp_libfind_query {
	const char *explicit_path; /* --cupti or MEMPROF_CUPTI / MEMPROF_LIBNCCL */
	const char *cuda_home;     /* $CUDA_HOME */
	const char *cuda_path;     /* $CUDA_PATH */
	const char *cuda_dir;      /* the toolkit memprof was built with (/usr/local/cuda) */
	const struct mp_libfind_roots *roots; /* the wheels of the python3 in use */
	int torch_workload; /* the recorded command runs PyTorch: prefer its copy */
};

/* What a lookup found: the file (malloc'd) and where it came from (static text). */
struct mp_libfind_hit {
	char *path;         /* NULL: nothing found (the library then tries its soname) */
	const char *source; /* "--cupti/MEMPROF_CUPTI", "CUDA_HOME", "PyTorch's wheel", ... */
};

/*
 * libcupti.so.13: the explicit path (returned even when unreadable, so the
 * caller can name it), then, for a PyTorch workload, the copy in PyTorch's
 * wheels (one process must never hold two CUPTIs), then CUDA_HOME,
 * CUDA_PATH, the build's toolkit (lib64, then extras/CUPTI/lib64), then any
 * wheel.  hit->path NULL when nothing was found.
 */
void mp_libfind_cupti(const struct mp_libfind_query *q, struct mp_libfind_hit *hit);
/* libnccl.so.2: the explicit path, the wheel's nvidia/nccl/lib, CUDA_HOME, CUDA_PATH, the
 * build's toolkit lib64.  hit->path NULL when nothing was found. */
void mp_libfind_nccl(const struct mp_libfind_query *q, struct mp_libfind_hit *hit);

/* Whether argv0 runs Python: python, python3.12, torchrun, or a script whose #! names python. */
int mp_libfind_runs_python(const char *argv0);
/* The root (index into r) that holds an importable torch package, or -1. */
int mp_libfind_torch_root(const struct mp_libfind_roots *r);

#endif
