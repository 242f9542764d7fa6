/*
 * tests/unit/fake_libnvml.c - a fake NVML for tests/cli/watch-*.sh, loaded
 * by 'memprof watch' through MEMPROF_LIBNVML: the entry points memprof uses,
 * with a memory curve scripted by the environment:
 *   FAKE_NVML_DEVICES   number of devices (default 1)
 *   FAKE_NVML_PID       the pid listed on every device
 *   FAKE_NVML_CURVE<D>  comma-separated bytes of that pid on device D, one
 *                       per sample (the last repeats; "na": not available;
 *                       "-": not listed); default 0
 *   FAKE_NVML_OTHERS    other processes listed on each device (pids 900000,
 *                       900001, ... of 1 MiB each; default 0): more than
 *                       memprof's first array holds, to make it grow
 *   FAKE_NVML_INIT      an error code for nvmlInit_v2 to return
 * Device D's total is (D + 1) * 16 GiB; its used bytes are 512 MiB plus
 * every listed process.  A sample advances when the processes are read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_DEVICES 8
#define MIB              (1024ull * 1024ull)

struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_process_v1 {
	unsigned int pid;
	unsigned long long usedGpuMemory;
};

static long n_samples[FAKE_MAX_DEVICES]; /* process lists handed out so far */

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int rc);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev);
int nvmlDeviceGetName(void *dev, char *name, unsigned int n);
int nvmlDeviceGetMemoryInfo(void *dev, struct nvml_memory *m);
int nvmlDeviceGetComputeRunningProcesses(void *dev, unsigned int *count,
                                         struct nvml_process_v1 *infos);

static unsigned env_count(const char *name, unsigned dflt)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

static unsigned device_of(void *dev)
{
	return (unsigned)((unsigned long)dev - 1);
}

/* The pid's bytes on device d at sample k: 1 listed, 0 not, -1 not available. */
static int curve(unsigned d, long k, unsigned long long *bytes)
{
	char name[32], buf[4096], *tok, *save = NULL, *last = NULL;
	const char *v;
	long i = 0;

	snprintf(name, sizeof(name), "FAKE_NVML_CURVE%u", d);
	v = getenv(name);
	*bytes = 0;
	if (!v || !*v)
		return 1;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
		last = tok;
		if (i == k)
			break;
	}
	if (!last || strcmp(last, "-") == 0)
		return 0;
	if (strcmp(last, "na") == 0)
		return -1;
	*bytes = strtoull(last, NULL, 10);
	return 1;
}

int nvmlInit_v2(void)
{
	return (int)env_count("FAKE_NVML_INIT", 0);
}

int nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(int rc)
{
	return rc == 9 ? "Driver Not Loaded" : rc == 0 ? "Success" : "Unknown Error";
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = env_count("FAKE_NVML_DEVICES", 1);
	if (*n > FAKE_MAX_DEVICES)
		*n = FAKE_MAX_DEVICES;
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	unsigned n;

	nvmlDeviceGetCount_v2(&n);
	if (i >= n)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*dev = (void *)(unsigned long)(i + 1);
	return 0;
}

int nvmlDeviceGetName(void *dev, char *name, unsigned int n)
{
	snprintf(name, n, "Fake GPU %u", device_of(dev));
	return 0;
}

int nvmlDeviceGetMemoryInfo(void *dev, struct nvml_memory *m)
{
	unsigned d = device_of(dev);
	unsigned long long bytes;
	long k = n_samples[d] > 0 ? n_samples[d] - 1 : 0;

	m->total = (d + 1) * 16384 * MIB;
	m->used = 512 * MIB + env_count("FAKE_NVML_OTHERS", 0) * MIB;
	if (curve(d, k, &bytes) > 0)
		m->used += bytes;
	m->free = m->total - m->used;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses(void *dev, unsigned int *count,
                                         struct nvml_process_v1 *infos)
{
	unsigned d = device_of(dev), others = env_count("FAKE_NVML_OTHERS", 0), n, i;
	unsigned long long bytes;
	int listed = curve(d, n_samples[d], &bytes);

	n = others + (listed != 0);
	if (*count < n) {
		*count = n;
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	for (i = 0; i < others; i++) {
		infos[i].pid = 900000 + i;
		infos[i].usedGpuMemory = MIB;
	}
	if (listed) {
		infos[others].pid = env_count("FAKE_NVML_PID", 0);
		infos[others].usedGpuMemory = listed < 0 ? ~0ull : bytes;
	}
	*count = n;
	n_samples[d]++;
	return 0;
}
