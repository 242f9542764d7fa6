/*
 * replay/cuda_nccl.c - loads NCCL at run time for the cuda backend's
 * collectives (cuda_nccl.h), names its failures, waits on non-blocking
 * communicators with a timeout, and makes the unique id of 'replay --mpi'
 * (cuda_nccl_id.h; without CUDA that one only says memprof has none).
 */
#include "replay/cuda_nccl_id.h"

#ifndef HAVE_CUDA

int mp_cuda_nccl_unique_id(unsigned char id[MP_NCCL_UNIQUE_ID_BYTES], struct mp_error *err)
{
	(void)id;
	return mp_err(err, MP_EIO, "no NCCL unique id: memprof was built without CUDA");
}

#else /* HAVE_CUDA */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memprof/pool.h"
#include "replay/cuda_nccl.h"
#include "util/libfind.h"

#define DEFAULT_TIMEOUT_S 120.0

static const struct {
	size_t offset;
	const char *name;
	int optional;
} nccl_symbols[] = {
        {offsetof(struct mp_nccl_api, GetUniqueId), "ncclGetUniqueId", 0},
        {offsetof(struct mp_nccl_api, CommInitAll), "ncclCommInitAll", 0},
        {offsetof(struct mp_nccl_api, CommInitRank), "ncclCommInitRank", 0},
        {offsetof(struct mp_nccl_api, CommDestroy), "ncclCommDestroy", 0},
        {offsetof(struct mp_nccl_api, AllGather), "ncclAllGather", 0},
        {offsetof(struct mp_nccl_api, ReduceScatter), "ncclReduceScatter", 0},
        {offsetof(struct mp_nccl_api, GroupStart), "ncclGroupStart", 0},
        {offsetof(struct mp_nccl_api, GroupEnd), "ncclGroupEnd", 0},
        {offsetof(struct mp_nccl_api, GetErrorString), "ncclGetErrorString", 0},
        {offsetof(struct mp_nccl_api, CommInitRankConfig), "ncclCommInitRankConfig", 1},
        {offsetof(struct mp_nccl_api, CommGetAsyncError), "ncclCommGetAsyncError", 1},
        {offsetof(struct mp_nccl_api, CommAbort), "ncclCommAbort", 1},
        {offsetof(struct mp_nccl_api, CommFinalize), "ncclCommFinalize", 1},
        {offsetof(struct mp_nccl_api, GetLastError), "ncclGetLastError", 1},
};

struct mp_nccl_api mp_nccl;
static void *nccl_dl;        /* loaded once per process, never unloaded */
static char nccl_path[4096]; /* the file loaded (or the soname) */

const char *mp_nccl_path(void)
{
	return nccl_dl ? nccl_path : NULL;
}

/* MEMPROF_LIBNCCL, the wheel of the python3 on PATH, the toolkits (util/libfind.h); NULL: the
 * soname. */
static char *find_nccl(void)
{
	struct mp_libfind_roots roots = {0};
	struct mp_libfind_query q = {.explicit_path = getenv("MEMPROF_LIBNCCL"),
	                             .cuda_home = getenv("CUDA_HOME"),
	                             .cuda_path = getenv("CUDA_PATH"),
	                             .roots = &roots};
	struct mp_libfind_hit hit;

#ifdef MEMPROF_CUDA_DIR
	q.cuda_dir = MEMPROF_CUDA_DIR;
#endif
	if (!(q.explicit_path && *q.explicit_path)) {
		const char *py = getenv("MEMPROF_PYTHON");

		(void)mp_libfind_python_roots(py && *py ? py : "python3", 10000, &roots);
	}
	mp_libfind_nccl(&q, &hit);
	mp_libfind_roots_free(&roots);
	return hit.path;
}

int mp_nccl_load(char *why, size_t why_size)
{
	char *found;
	const char *lib, *e;
	void *dl;

	if (nccl_dl)
		return 1;
	found = find_nccl();
	lib = found ? found : "libnccl.so.2";
	dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		e = dlerror();
		snprintf(why, why_size, "NCCL not found (%s)", e ? e : lib);
		free(found);
		return 0;
	}
	snprintf(nccl_path, sizeof nccl_path, "%s", lib);
	free(found);
	for (size_t i = 0; i < sizeof nccl_symbols / sizeof nccl_symbols[0]; i++) {
		void *sym = dlsym(dl, nccl_symbols[i].name);

		if (!sym && !nccl_symbols[i].optional) {
			snprintf(why, why_size, "%s is not NCCL 2: it has no %s", nccl_path,
			         nccl_symbols[i].name);
			dlclose(dl);
			memset(&mp_nccl, 0, sizeof mp_nccl);
			return 0;
		}
		memcpy((char *)&mp_nccl + nccl_symbols[i].offset, &sym, sizeof sym);
	}
	nccl_dl = dl;
	return 1;
}

int mp_nccl_failed(struct mp_error *err, const char *call, ncclResult_t rc, ncclComm_t comm)
{
	const char *last = mp_nccl.GetLastError ? mp_nccl.GetLastError(comm) : NULL;

	if (last && *last)
		mp_err(err, MP_EIO, "cuda backend: %s failed: %s (NCCL: %s)", call,
		       mp_nccl.GetErrorString(rc), last);
	else
		mp_err(err, MP_EIO, "cuda backend: %s failed: %s", call,
		       mp_nccl.GetErrorString(rc));
	return MEMPROF_POOL_EFAULT;
}

double mp_nccl_timeout_s(void)
{
	const char *s = getenv("MEMPROF_NCCL_TIMEOUT");
	char *end;
	double v;

	if (!s || !*s)
		return DEFAULT_TIMEOUT_S;
	v = strtod(s, &end);
	return *end == '\0' && v > 0 ? v : DEFAULT_TIMEOUT_S;
}

double mp_nccl_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mp_nccl_nap(void)
{
	struct timespec ts = {0, 200000}; /* 0.2 ms */

	nanosleep(&ts, NULL);
}

int mp_nccl_wait(ncclComm_t comm, double timeout_s, ncclResult_t *state)
{
	double until = mp_nccl_now_s() + timeout_s;

	*state = ncclSuccess;
	if (!mp_nccl.CommGetAsyncError)
		return 1;
	for (;;) {
		ncclResult_t rc = mp_nccl.CommGetAsyncError(comm, state);

		if (rc != ncclSuccess) {
			*state = rc;
			return 1;
		}
		if (*state != ncclInProgress)
			return 1;
		if (mp_nccl_now_s() > until)
			return 0;
		mp_nccl_nap();
	}
}

int mp_cuda_nccl_unique_id(unsigned char id[MP_NCCL_UNIQUE_ID_BYTES], struct mp_error *err)
{
	char why[512];
	ncclUniqueId u;
	ncclResult_t rc;

	if (!mp_nccl_load(why, sizeof why))
		return mp_err(err, MP_EIO, "no NCCL unique id: %s", why);
	memset(&u, 0, sizeof u);
	rc = mp_nccl.GetUniqueId(&u);
	if (rc != ncclSuccess) {
		mp_nccl_failed(err, "ncclGetUniqueId", rc, NULL);
		return MP_EIO;
	}
	memcpy(id, u.internal, MP_NCCL_UNIQUE_ID_BYTES);
	return 0;
}

#endif /* HAVE_CUDA */
