/*
 * sys/nvml.c - NVML loaded at run time (sys/nvml.h).  The prototypes are
 * declared here by hand.  Processes are read with the v1 entry point
 * nvmlDeviceGetComputeRunningProcesses, whose element is the 16-byte
 * {unsigned int pid; unsigned long long usedGpuMemory}: the later _v2/_v3
 * layouts differ between header copies, and a wrong stride corrupts memory.
 */
#include "sys/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_NAME_BYTES = 96, /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
	NVML_MAX_DEVICES = 64,
};
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

typedef int nvmlReturn_t;
typedef struct nvml_device *nvmlDevice_t;
struct nvml_memory { /* nvmlMemory_t (v1) */
	unsigned long long total, free, used;
};
struct nvml_process_v1 { /* nvmlProcessInfo_v1_t */
	unsigned int pid;
	unsigned long long usedGpuMemory;
};

struct mp_nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*memory)(nvmlDevice_t, struct nvml_memory *);
	nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int *, struct nvml_process_v1 *);
	unsigned n_devices;
	nvmlDevice_t devices[NVML_MAX_DEVICES];
	char names[NVML_MAX_DEVICES][NVML_NAME_BYTES];
	struct nvml_process_v1 *procs;
	unsigned n_procs_cap;
};

static const char *nvml_error(const struct mp_nvml *nv, nvmlReturn_t rc, char *buf, size_t n)
{
	const char *s = nv->error_string ? nv->error_string(rc) : NULL;

	snprintf(buf, n, "%s, error %d", s ? s : "unknown error", rc);
	return buf;
}

static int resolve(struct mp_nvml *nv, const char *lib, char *why, size_t n)
{
	static const char *const names[] = {
	        "nvmlInit_v2",
	        "nvmlShutdown",
	        "nvmlDeviceGetCount_v2",
	        "nvmlDeviceGetHandleByIndex_v2",
	        "nvmlDeviceGetName",
	        "nvmlDeviceGetMemoryInfo",
	        "nvmlDeviceGetComputeRunningProcesses",
	};
	void *sym[sizeof(names) / sizeof(names[0])];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sym[i] = dlsym(nv->lib, names[i]);
		if (!sym[i]) {
			snprintf(why, n, "cannot load NVML (%s: no symbol %s)", lib, names[i]);
			return -1;
		}
	}
	/* Object pointers to function pointers: POSIX dlsym's documented use. */
	memcpy(&nv->init, &sym[0], sizeof(sym[0]));
	memcpy(&nv->shutdown, &sym[1], sizeof(sym[0]));
	memcpy(&nv->count, &sym[2], sizeof(sym[0]));
	memcpy(&nv->handle, &sym[3], sizeof(sym[0]));
	memcpy(&nv->name, &sym[4], sizeof(sym[0]));
	memcpy(&nv->memory, &sym[5], sizeof(sym[0]));
	memcpy(&nv->processes, &sym[6], sizeof(sym[0]));
	sym[0] = dlsym(nv->lib, "nvmlErrorString");
	memcpy(&nv->error_string, &sym[0], sizeof(sym[0]));
	return 0;
}

static int start(struct mp_nvml *nv, char *why, size_t n)
{
	char err[128];
	unsigned i;
	nvmlReturn_t rc = nv->init();

	if (rc != NVML_SUCCESS) {
		snprintf(why, n, "NVML did not start (nvmlInit_v2: %s)",
		         nvml_error(nv, rc, err, sizeof(err)));
		return -1;
	}
	rc = nv->count(&nv->n_devices);
	if (rc != NVML_SUCCESS) {
		snprintf(why, n, "NVML did not start (nvmlDeviceGetCount_v2: %s)",
		         nvml_error(nv, rc, err, sizeof(err)));
		nv->shutdown();
		return -1;
	}
	if (nv->n_devices > NVML_MAX_DEVICES)
		nv->n_devices = NVML_MAX_DEVICES;
	for (i = 0; i < nv->n_devices; i++) {
		rc = nv->handle(i, &nv->devices[i]);
		if (rc != NVML_SUCCESS) {
			snprintf(why, n,
			         "NVML did not start (nvmlDeviceGetHandleByIndex_v2(%u): %s)", i,
			         nvml_error(nv, rc, err, sizeof(err)));
			nv->shutdown();
			return -1;
		}
		if (nv->name(nv->devices[i], nv->names[i], NVML_NAME_BYTES) != NVML_SUCCESS)
			snprintf(nv->names[i], NVML_NAME_BYTES, "?");
		nv->names[i][NVML_NAME_BYTES - 1] = '\0';
	}
	return 0;
}

int mp_nvml_open(struct mp_nvml **out, char *why, size_t n)
{
	const char *lib = getenv("MEMPROF_LIBNVML");
	struct mp_nvml *nv = calloc(1, sizeof(*nv));

	*out = NULL;
	if (!lib || !*lib)
		lib = "libnvidia-ml.so.1";
	if (!nv) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	nv->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!nv->lib) {
		const char *e = dlerror();

		if (e && strncmp(e, lib, strlen(lib)) == 0)
			snprintf(why, n, "cannot load NVML (%s)", e);
		else
			snprintf(why, n, "cannot load NVML (%s: %s)", lib, e ? e : "dlopen failed");
		free(nv);
		return -1;
	}
	if (resolve(nv, lib, why, n) < 0 || start(nv, why, n) < 0) {
		free(nv); /* the library stays loaded */
		return -1;
	}
	*out = nv;
	return 0;
}

void mp_nvml_close(struct mp_nvml *nv)
{
	if (!nv)
		return;
	nv->shutdown();
	free(nv->procs);
	free(nv);
}

unsigned mp_nvml_n_devices(const struct mp_nvml *nv)
{
	return nv->n_devices;
}

const char *mp_nvml_device_name(const struct mp_nvml *nv, unsigned i)
{
	return i < nv->n_devices ? nv->names[i] : "?";
}

int mp_nvml_memory(struct mp_nvml *nv, unsigned i, uint64_t *used, uint64_t *total, char *why,
                   size_t n)
{
	struct nvml_memory m;
	char err[128];
	nvmlReturn_t rc = nv->memory(nv->devices[i], &m);

	if (rc != NVML_SUCCESS) {
		snprintf(why, n, "nvmlDeviceGetMemoryInfo: %s",
		         nvml_error(nv, rc, err, sizeof(err)));
		return -1;
	}
	*used = m.used;
	*total = m.total;
	return 0;
}

/* The processes of device i into nv->procs; their number, or -1 with why. */
static int list_processes(struct mp_nvml *nv, unsigned i, char *why, size_t n)
{
	char err[128];
	int tries;

	for (tries = 0; tries < 8; tries++) {
		unsigned int count = nv->n_procs_cap;
		nvmlReturn_t rc = nv->processes(nv->devices[i], &count, nv->procs);

		if (rc == NVML_SUCCESS)
			return count <= nv->n_procs_cap ? (int)count : (int)nv->n_procs_cap;
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE) {
			snprintf(why, n, "nvmlDeviceGetComputeRunningProcesses: %s",
			         nvml_error(nv, rc, err, sizeof(err)));
			return -1;
		}
		/* More processes than room: grow past what NVML asked (it may grow too). */
		{
			unsigned cap = (count > nv->n_procs_cap ? count : nv->n_procs_cap) * 2 + 16;
			void *p = realloc(nv->procs, cap * sizeof(*nv->procs));

			if (!p) {
				snprintf(why, n, "out of memory");
				return -1;
			}
			nv->procs = p;
			nv->n_procs_cap = cap;
		}
	}
	snprintf(why, n, "nvmlDeviceGetComputeRunningProcesses: the list keeps growing");
	return -1;
}

int mp_nvml_process_bytes(struct mp_nvml *nv, unsigned i, const unsigned *pids, size_t n_pids,
                          uint64_t *bytes, char *why, size_t n)
{
	int count = list_processes(nv, i, why, n), k, found = 0;
	size_t j;

	if (count < 0)
		return -1;
	*bytes = 0;
	for (k = 0; k < count; k++) {
		for (j = 0; j < n_pids && nv->procs[k].pid != pids[j]; j++)
			;
		if (j == n_pids)
			continue;
		found = 1;
		if (nv->procs[k].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ||
		    *bytes == MP_NVML_UNKNOWN)
			*bytes = MP_NVML_UNKNOWN;
		else
			*bytes += nv->procs[k].usedGpuMemory;
	}
	return found;
}
