/*
 * capture/callbacks.c - the CUPTI subscriber callback: runtime and driver
 * allocation/free/VMM calls (api_table.c) become spool events and live-table
 * updates; NVTX calls go to phases.c; pinned host memory's placement to
 * numa_inject.c.  Runs on the application's threads: no I/O, no CUDA calls
 * (numa_inject.c's one query per device aside), no locks beyond the spool's
 * and the live table's.
 */
#include <string.h>

#include <cupti.h>

#include "capture/inject_internal.h"

/* An ENTER waiting for its EXIT on this thread. */
struct call_frame {
	CUpti_CallbackId cbid;
	CUpti_CallbackDomain domain;
	int64_t t0_ns;
	uint32_t stack;
};

#define MAX_FRAMES 8

static __thread struct call_frame tl_frames[MAX_FRAMES];
static __thread int tl_n_frames;
static __thread int tl_runtime_depth; /* inside a recorded runtime call */
static __thread int tl_busy;          /* re-entrancy guard */
static __thread CUcontext tl_ctx;     /* last context asked, and its device */
static __thread int32_t tl_ctx_device = -1;

/* API name string ids, per table entry (the writer interns them anyway). */
static _Atomic uint32_t api_name_ids[64];

static int is_oom(CUpti_CallbackDomain domain, int result)
{
	/* cudaErrorMemoryAllocation = 2, CUDA_ERROR_OUT_OF_MEMORY = 2. */
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? result == (int)cudaErrorMemoryAllocation
	                                             : result == (int)CUDA_ERROR_OUT_OF_MEMORY;
}

static int result_of(CUpti_CallbackDomain domain, const CUpti_CallbackData *cb)
{
	if (!cb->functionReturnValue)
		return 0;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return (int)*(const cudaError_t *)cb->functionReturnValue;
	return (int)*(const CUresult *)cb->functionReturnValue;
}

int mp_callbacks_decode(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *cb, struct mp_spool_event *ev)
{
	const struct mp_api_desc *d = mp_api_lookup(domain, cbid);
	if (!d || !cb || cb->callbackSite != CUPTI_API_EXIT || !cb->functionParams)
		return 0;
	int result = result_of(domain, cb);
	int ok = result == 0;
	memset(ev, 0, sizeof *ev);
	ev->kind = d->kind;
	ev->mem_kind = d->mem_kind;
	ev->flags = d->flags;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		ev->flags |= MP_SE_FROM_DRIVER;
	ev->device = -1;
	ev->correlation = cb->correlationId;
	d->decode(cb->functionParams, ok, ev);
	if (d->kind == MP_SK_API) {
		ev->extra = (uint64_t)(int64_t)result;
		if (d->op == MP_API_FREE)
			ev->bytes = 0;
	}
	if (!ok && d->op == MP_API_ALLOC && is_oom(domain, result)) {
		ev->kind = MP_SK_OOM;
		ev->address = 0;
		ev->extra = (uint64_t)(int64_t)result;
		return 1;
	}
	/* A VMM call that failed changed nothing. */
	return ok || d->kind == MP_SK_API;
}

static int32_t device_of(CUcontext ctx)
{
	if (!ctx || !mp_cupti.GetDeviceId)
		return -1;
	if (ctx == tl_ctx)
		return tl_ctx_device;
	uint32_t id = 0;
	int32_t dev = mp_cupti.GetDeviceId(ctx, &id) == CUPTI_SUCCESS ? (int32_t)id : -1;
	tl_ctx = ctx;
	tl_ctx_device = dev;
	return dev;
}

static uint32_t api_name_id(struct mp_spool_writer *w, const struct mp_api_desc *d)
{
	size_t n, i;
	const struct mp_api_desc *t = mp_api_table(&n);
	i = (size_t)(d - t);
	if (!w)
		return 0;
	if (i >= sizeof api_name_ids / sizeof api_name_ids[0])
		return mp_spool_cstring(w, d->name);
	uint32_t id = api_name_ids[i];
	if (!id) {
		id = mp_spool_cstring(w, d->name);
		api_name_ids[i] = id;
	}
	return id;
}

/* Keep the live table in step with a call that returned (every mode). */
static void update_live(const struct mp_api_desc *d, const struct mp_spool_event *ev, uint32_t api)
{
	if (ev->kind == MP_SK_API && ev->extra == 0 && ev->address) {
		if (d->op == MP_API_ALLOC)
			mp_live_add(ev->address, ev->bytes, ev->device, ev->mem_kind, ev->flags,
			            ev->stream, api);
		else if (d->op == MP_API_FREE)
			mp_live_remove(ev->address);
	} else if (ev->kind == MP_SK_VMM_MAP) {
		mp_live_add(ev->address, ev->bytes, ev->device, MP_MK_DEVICE,
		            (uint16_t)(ev->flags | MP_SE_MAPPING), 0, api);
	} else if (ev->kind == MP_SK_VMM_UNMAP) {
		mp_live_remove(ev->address);
	}
}

static void api_enter(const struct mp_api_desc *d, int mode)
{
	if (d->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		tl_runtime_depth++;
	if (tl_n_frames >= MAX_FRAMES)
		return;
	struct call_frame *f = &tl_frames[tl_n_frames++];
	f->cbid = d->cbid;
	f->domain = d->domain;
	f->t0_ns = mp_capture_now();
	f->stack = mode == MP_CAPTURE_RECORDING ? mp_stacks_capture(mp_capture_spool()) : 0;
}

static void api_exit(const struct mp_api_desc *d, const CUpti_CallbackData *cb, int mode)
{
	int64_t t1 = mp_capture_now();
	struct call_frame f = {d->cbid, d->domain, t1, 0};
	if (d->domain == CUPTI_CB_DOMAIN_RUNTIME_API && tl_runtime_depth > 0)
		tl_runtime_depth--;
	if (tl_n_frames > 0 && tl_frames[tl_n_frames - 1].cbid == d->cbid &&
	    tl_frames[tl_n_frames - 1].domain == d->domain)
		f = tl_frames[--tl_n_frames];

	struct mp_spool_event ev;
	if (!mp_callbacks_decode(d->domain, d->cbid, cb, &ev))
		return;
	if (ev.device < 0)
		ev.device = device_of(cb->context);
	struct mp_spool_writer *w = mp_capture_spool();
	uint32_t api = api_name_id(w, d);
	update_live(d, &ev, api);
	if (mode != MP_CAPTURE_RECORDING || !w)
		return;
	mp_modules_maybe_rescan(w);
	ev.name = api;
	ev.ts_ns = f.t0_ns;
	ev.duration_ns = t1 - f.t0_ns;
	ev.thread = mp_capture_thread_id();
	ev.stack = f.stack;
	ev.phase = mp_phase_current();
	mp_spool_event(w, &ev);
	mp_numa_after_call(w, d, cb, &ev);
}

static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb,
                   int mode)
{
	const struct mp_api_desc *d = mp_api_lookup(domain, cbid);
	if (!d) {
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
		    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
		    cb->callbackSite == CUPTI_API_ENTER)
			mp_capture_flush_activity();
		return;
	}
	/* A driver call made inside a recorded runtime call is that call's own work. */
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && tl_runtime_depth > 0)
		return;
	if (cb->callbackSite == CUPTI_API_ENTER)
		api_enter(d, mode);
	else
		api_exit(d, cb, mode);
}

void CUPTIAPI mp_callbacks_handler(void *userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if (tl_busy || !data)
		return;
	int mode = mp_capture_enter();
	if (mode != MP_CAPTURE_OFF) {
		tl_busy = 1;
		if (domain == CUPTI_CB_DOMAIN_NVTX)
			mp_phases_handle(cbid, data, mode);
		else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API ||
		         domain == CUPTI_CB_DOMAIN_DRIVER_API)
			on_api(domain, cbid, data, mode);
		tl_busy = 0;
	}
	mp_capture_leave();
}

CUptiResult mp_callbacks_enable(CUpti_SubscriberHandle sub, const char **failed_name)
{
	size_t n;
	const struct mp_api_desc *t = mp_api_table(&n);
	for (size_t i = 0; i < n; i++) {
		CUptiResult r = mp_cupti.EnableCallback(1, sub, t[i].domain, t[i].cbid);
		if (r != CUPTI_SUCCESS) {
			*failed_name = t[i].name;
			return r;
		}
	}
	CUptiResult r = mp_cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
	if (r != CUPTI_SUCCESS)
		*failed_name = "cudaDeviceReset";
	return r;
}
