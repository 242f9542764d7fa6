/*
 * capture/cupti_load.h - libcupti loaded at run time (dlopen, never
 * dlclose: CUPTI 13.0-13.1 crashes at exit when unloaded), with every CUPTI
 * function the injected library calls resolved into one table, each pointer
 * typed from the prototype in the CUPTI headers.
 */
#ifndef MP_CAPTURE_CUPTI_LOAD_H
#define MP_CAPTURE_CUPTI_LOAD_H

#include <stddef.h>

#include <cupti.h>

/* One pointer per CUPTI function used; all NULL until mp_cupti_load succeeds. */
struct mp_cupti {
	__typeof__(&cuptiGetVersion) GetVersion;
	__typeof__(&cuptiGetResultString) GetResultString;
	__typeof__(&cuptiSubscribe_v2) Subscribe_v2;
	__typeof__(&cuptiEnableCallback) EnableCallback;
	__typeof__(&cuptiEnableAllDomains) EnableAllDomains;
	__typeof__(&cuptiGetDeviceId) GetDeviceId;
	__typeof__(&cuptiSetThreadIdType) SetThreadIdType;
	__typeof__(&cuptiActivityEnable) ActivityEnable;
	__typeof__(&cuptiActivityEnableAndDump) ActivityEnableAndDump;
	__typeof__(&cuptiActivityDisable) ActivityDisable;
	__typeof__(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks;
	__typeof__(&cuptiActivityRegisterTimestampCallback) ActivityRegisterTimestampCallback;
	__typeof__(&cuptiActivityFlushAll) ActivityFlushAll;
	__typeof__(&cuptiActivityGetNextRecord) ActivityGetNextRecord;
	__typeof__(&cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords;
	__typeof__(&cuptiGetTimestamp) GetTimestamp;
};

/* The table; read it only after mp_cupti_load returned 0. */
extern struct mp_cupti mp_cupti;

/*
 * Load libcupti and resolve the table: the libcupti.so.13 the process
 * already holds when there is one (PyTorch loads its wheel's copy: one
 * process must not hold two), else path (NULL or "": $MEMPROF_CUPTI, else
 * the soname libcupti.so.13).  Returns 0, or -1 with a one-line
 * reason in err (the dlopen error, or the missing symbol).  Loading twice
 * returns the first outcome.  The path actually loaded: mp_cupti_path().
 */
int mp_cupti_load(const char *path, char *err, size_t n);
const char *mp_cupti_path(void);

/* "CUPTI_ERROR_UNKNOWN (999)" for r; works before loading too ("CUPTI error 999"). */
const char *mp_cupti_result_name(CUptiResult r, char *buf, size_t n);

#endif
