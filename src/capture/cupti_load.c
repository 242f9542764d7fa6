/*
 * capture/cupti_load.c - dlopen libcupti and resolve the CUPTI functions the
 * injected library uses (capture/cupti_load.h).  Never dlcloses; never
 * calls into CUPTI itself except cuptiGetResultString for names.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cupti_load.h"

#define MP_CUPTI_SONAME "libcupti.so.13"

struct mp_cupti mp_cupti;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_state; /* 0 not tried, 1 loaded, -1 failed */
static char load_error[512];
static char load_path[4096];

/* Resolve every entry of the table from handle; NULL when all were found, else the missing name. */
static const char *resolve_all(void *handle, struct mp_cupti *t)
{
#define MP_SYM(field, name)                                                                        \
	do {                                                                                       \
		void *p = dlsym(handle, name);                                                     \
		if (!p)                                                                            \
			return name;                                                               \
		memcpy(&t->field, &p, sizeof p);                                                   \
	} while (0)
	MP_SYM(GetVersion, "cuptiGetVersion");
	MP_SYM(GetResultString, "cuptiGetResultString");
	MP_SYM(Subscribe_v2, "cuptiSubscribe_v2");
	MP_SYM(EnableCallback, "cuptiEnableCallback");
	MP_SYM(EnableAllDomains, "cuptiEnableAllDomains");
	MP_SYM(GetDeviceId, "cuptiGetDeviceId");
	MP_SYM(SetThreadIdType, "cuptiSetThreadIdType");
	MP_SYM(ActivityEnable, "cuptiActivityEnable");
	MP_SYM(ActivityEnableAndDump, "cuptiActivityEnableAndDump");
	MP_SYM(ActivityDisable, "cuptiActivityDisable");
	MP_SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	MP_SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
	MP_SYM(GetTimestamp, "cuptiGetTimestamp");
	MP_SYM(ActivityFlushAll, "cuptiActivityFlushAll");
	MP_SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	MP_SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
#undef MP_SYM
	return NULL;
}

static int load_locked(const char *path)
{
	if (!path || !*path)
		path = getenv("MEMPROF_CUPTI");
	if (!path || !*path)
		path = MP_CUPTI_SONAME;
	snprintf(load_path, sizeof load_path, "%s", path);
	dlerror();
	/* A CUPTI the process already holds (PyTorch's, through its own RPATH) comes first:
	 * two CUPTIs in one process fight over the driver's callbacks. */
	void *handle = dlopen(MP_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (handle && !dlsym(handle, "cuptiGetVersion"))
		handle = NULL;
	if (!handle)
		handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();
		snprintf(load_error, sizeof load_error, "cannot load CUPTI '%s': %s", path,
		         why ? why : "unknown dlopen error");
		return -1;
	}
	struct mp_cupti t;
	memset(&t, 0, sizeof t);
	const char *missing = resolve_all(handle, &t);
	if (missing) {
		/* Keep the handle: unloading CUPTI is what crashes. */
		snprintf(load_error, sizeof load_error, "CUPTI '%s' has no symbol '%s'", path,
		         missing);
		return -1;
	}
	mp_cupti = t;
	/* The file the loader found (a soname becomes its path). */
	Dl_info info;
	void *sym;
	memcpy(&sym, &t.GetVersion, sizeof sym);
	if (dladdr(sym, &info) && info.dli_fname && info.dli_fname[0] == '/')
		snprintf(load_path, sizeof load_path, "%s", info.dli_fname);
	return 0;
}

int mp_cupti_load(const char *path, char *err, size_t n)
{
	pthread_mutex_lock(&load_lock);
	if (load_state == 0)
		load_state = load_locked(path) == 0 ? 1 : -1;
	int state = load_state;
	pthread_mutex_unlock(&load_lock);
	if (state < 0 && err && n)
		snprintf(err, n, "%s", load_error);
	return state > 0 ? 0 : -1;
}

const char *mp_cupti_path(void)
{
	return load_state > 0 ? load_path : NULL;
}

const char *mp_cupti_result_name(CUptiResult r, char *buf, size_t n)
{
	const char *s = NULL;
	if (load_state > 0 && mp_cupti.GetResultString &&
	    mp_cupti.GetResultString(r, &s) != CUPTI_SUCCESS)
		s = NULL;
	if (s)
		snprintf(buf, n, "%s (%d)", s, (int)r);
	else
		snprintf(buf, n, "CUPTI error %d", (int)r);
	return buf;
}
