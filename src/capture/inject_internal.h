/*
 * capture/inject_internal.h - how inject.c, callbacks.c, activity.c,
 * phases.c, stacks.c and modules.c (the INJECT part of libmemprof-inject.so)
 * call each other, beyond capture/capture.h.  Internal to the library and
 * its unit tests, which compile these sources directly.
 */
#ifndef MP_CAPTURE_INJECT_INTERNAL_H
#define MP_CAPTURE_INJECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "capture/capture.h"
#include "capture/cupti_load.h"

/* --- inject.c -------------------------------------------------------------- */

/* What the environment asked for (MEMPROF_*), after defaults and limits. */
struct mp_capture_config {
	int stacks_mode;       /* enum mp_spool_stacks (MEMPROF_STACKS) */
	uint32_t stack_sample; /* MEMPROF_STACK_SAMPLE, >= 1 */
	uint32_t stack_depth;  /* MEMPROF_STACK_DEPTH, 1..MP_SPOOL_MAX_STACK_DEPTH */
	int dormant;           /* MEMPROF_DORMANT=1 */
	int flush_ms;          /* MEMPROF_FLUSH_MS, >= 10 */
};

/*
 * Parse the MEMPROF_* variables through get (getenv in the library).
 * Returns 0, or -1 with the first bad value named in err (c then holds the
 * defaults for what was bad).
 */
int mp_capture_parse_config(struct mp_capture_config *c, const char *(*get)(const char *),
                            char *err, size_t n);

/*
 * Every CUPTI callback brackets its work with these: mp_capture_enter
 * returns the mode (MP_CAPTURE_OFF: do nothing), and while a thread is
 * between enter and leave the spool is not closed under it.  Always call
 * mp_capture_leave after mp_capture_enter, whatever it returned.
 */
int mp_capture_enter(void);
void mp_capture_leave(void);
/* Activity records are written while recording, and during the exit flush. */
int mp_capture_accepts_activity(void);
/* cuptiActivityFlushAll(0) when CUPTI is up (cudaDeviceReset ENTER, the flusher). */
void mp_capture_flush_activity(void);
/* The calling thread's OS id (gettid), cached per thread. */
uint32_t mp_capture_thread_id(void);
/* Tests only: use spool w (may be NULL) in mode, without CUPTI. */
void mp_capture_set_for_test(struct mp_spool_writer *w, int mode);

/* --- callbacks.c ----------------------------------------------------------- */

/* One allocation or free API the callbacks decode. */
struct mp_api_desc {
	CUpti_CallbackDomain domain; /* RUNTIME_API or DRIVER_API */
	CUpti_CallbackId cbid;
	const char *name; /* the C symbol: "cudaMalloc", "cuMemAlloc_v2" */
	uint8_t kind;     /* MP_SK_API or MP_SK_VMM_* */
	uint8_t op;       /* enum mp_api_op */
	uint8_t mem_kind; /* enum mp_spool_mem_kind of what it makes */
	uint16_t flags;   /* enum mp_spool_event_flag it always carries */
	void (*decode)(const void *params, int ok, struct mp_spool_event *ev);
};
enum mp_api_op { MP_API_ALLOC = 1, MP_API_FREE = 2, MP_API_OTHER = 3 };

/* The table entry of (domain, cbid), NULL when it is not one of ours. */
const struct mp_api_desc *mp_api_lookup(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
/* Every entry: *n_out of them. */
const struct mp_api_desc *mp_api_table(size_t *n_out);

/*
 * Decode the EXIT of an allocation/free/VMM call into ev: kind (API, OOM or
 * VMM_*), mem_kind, flags, address, bytes, stream, extra, extra2,
 * correlation, device (the VMM location, else -1: the caller asks CUPTI
 * for the context's device).  ts, duration, thread, name, stack and phase
 * are left 0 for the caller.  Returns 1 when ev is an event to write, 0
 * when (domain, cbid) is not ours, the site is not EXIT, or the call was a
 * failed VMM call that did nothing.
 */
int mp_callbacks_decode(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *cb, struct mp_spool_event *ev);

/* The subscriber callback: runtime, driver and NVTX domains. */
void CUPTIAPI mp_callbacks_handler(void *userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId cbid, const void *data);

/* Enable the runtime and driver callbacks of the table (and cudaDeviceReset). */
CUptiResult mp_callbacks_enable(CUpti_SubscriberHandle sub, const char **failed_name);

/* --- activity.c ------------------------------------------------------------ */

/*
 * Translate one activity record: MEMORY2 -> MEM_ALLOC/MEM_FREE, MEMORY_POOL
 * -> POOL_*.  Returns 1 with ev filled (name left 0: see
 * mp_activity_name), 0 for any other record (DEVICE included).
 */
int mp_activity_translate(const CUpti_Activity *rec, struct mp_spool_event *ev);
/* A MEMORY2 record's variable name (static allocations), else NULL. */
const char *mp_activity_name(const CUpti_Activity *rec);
/*
 * A DEVICE record: ordinal and total bytes into dev (name/uuid ids left 0),
 * its name into *name, its UUID as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
 * into uuid (at least 41 bytes).  Returns 1, or 0 when rec is not a device.
 */
int mp_activity_translate_device(const CUpti_Activity *rec, struct mp_spool_device *dev,
                                 const char **name, char *uuid, size_t uuid_n);
/*
 * Walk a completed buffer with cuptiActivityGetNextRecord and append what it
 * holds to w.  Returns the number of records walked.
 */
size_t mp_activity_consume(struct mp_spool_writer *w, uint8_t *buf, size_t valid_bytes);
/* Register the buffer callbacks. */
CUptiResult mp_activity_register(void);
/*
 * MEMORY2, MEMORY_POOL and DEVICE: on=0 disable, 1 enable, 2 enable and have
 * CUPTI write the DEVICE records of devices already known (attach start).
 * On failure *failed_kind names the kind.
 */
CUptiResult mp_activity_enable(int on, const char **failed_kind);

/* --- phases.c -------------------------------------------------------------- */

/* String id of the innermost NVTX range open on this thread, 0 none. */
uint32_t mp_phase_current(void);
/* An NVTX callback (domain CUPTI_CB_DOMAIN_NVTX). */
void mp_phases_handle(CUpti_CallbackId cbid, const CUpti_NvtxData *d, int mode);
/* Enable the NVTX callbacks phases.c handles. */
CUptiResult mp_phases_enable(CUpti_SubscriberHandle sub);

/* --- stacks.c -------------------------------------------------------------- */

/* Configure and warm backtrace() (its first call loads libgcc_s). */
void mp_stacks_init(int stacks_mode, uint32_t sample, uint32_t depth);
/* The calling thread's stack as a stack id of w; 0 when off or not sampled. */
uint32_t mp_stacks_capture(struct mp_spool_writer *w);

/* --- numa_inject.c (capture/numa.h has the pure queries) ----------------- */

/*
 * After an allocation or VMM call's EXIT event ev was written to w: learn
 * the device's nearest host node (once per device, the driver then sysfs)
 * and write it as a device item (once per spool); when the call pinned host
 * memory, write where its pages are (MP_SK_HOST_NUMA events).  w may be NULL.
 */
void mp_numa_after_call(struct mp_spool_writer *w, const struct mp_api_desc *d,
                        const CUpti_CallbackData *cb, const struct mp_spool_event *ev);
/* A device item's host_node for ordinal as known now (node + 1, 0 unknown): no lookup. */
uint32_t mp_numa_device_item_node(int32_t ordinal);
/* The numa_distances meta pair, when sysfs has a node table. */
void mp_numa_write_meta(struct mp_spool_writer *w);

/* --- modules.c ------------------------------------------------------------- */

/* Write every loaded module not yet written to w; returns how many were new. */
int mp_modules_scan(struct mp_spool_writer *w);
/* From the callbacks: rescan when something was loaded (checked at most every 100 ms). */
void mp_modules_maybe_rescan(struct mp_spool_writer *w);

#endif
