/*
 * capture/phases.c - NVTX ranges as phases: push/pop ranges keep a
 * per-thread stack of phase names (string ids) that stamps each allocation;
 * every range start and end is also a PHASE_PUSH/PHASE_POP event while
 * recording.  Called from the CUPTI NVTX callbacks on the application's
 * threads: no I/O, short locks only (domain and registered-string names).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "capture/inject_internal.h"

#define MAX_DEPTH 64
#define MAX_TEXT  512
#define UNNAMED   "<unnamed range>"

struct phase_entry {
	uint32_t name;    /* string id */
	uint8_t recorded; /* its PHASE_PUSH was written */
};

static __thread struct phase_entry tl_stack[MAX_DEPTH];
static __thread uint32_t tl_depth; /* may exceed MAX_DEPTH: those entries are counted only */

/* Names learnt from nvtxDomainCreateA and nvtxDomainRegisterStringA. */
struct named_handle {
	const void *handle;
	char *text;
};
#define MAX_DOMAINS 256
#define MAX_STRINGS 4096
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct named_handle domains[MAX_DOMAINS];
static struct named_handle strings[MAX_STRINGS];
static size_t n_domains, n_strings;

uint32_t mp_phase_current(void)
{
	if (tl_depth == 0)
		return 0;
	return tl_stack[(tl_depth > MAX_DEPTH ? MAX_DEPTH : tl_depth) - 1].name;
}

static void remember(struct named_handle *t, size_t *n, size_t max, const void *h, const char *text)
{
	if (!h || !text)
		return;
	char *copy = strndup(text, MAX_TEXT - 1);
	if (!copy)
		return;
	pthread_mutex_lock(&names_lock);
	if (*n < max) {
		t[*n].handle = h;
		t[(*n)++].text = copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&names_lock);
	free(copy);
}

/* Copy the name of handle h into buf; 0 when unknown. */
static int lookup(const struct named_handle *t, const size_t *n, const void *h, char *buf,
                  size_t len)
{
	int found = 0;
	pthread_mutex_lock(&names_lock);
	for (size_t i = *n; i-- > 0;)
		if (t[i].handle == h) {
			snprintf(buf, len, "%s", t[i].text);
			found = 1;
			break;
		}
	pthread_mutex_unlock(&names_lock);
	return found;
}

/* Wide text as ASCII: characters outside it become '?'. */
static void from_wide(const wchar_t *w, char *buf, size_t len)
{
	size_t i = 0;
	for (; w[i] && i + 1 < len; i++)
		buf[i] = (w[i] > 0 && w[i] < 128) ? (char)w[i] : '?';
	buf[i] = 0;
}

static void text_of_attrib(const nvtxEventAttributes_t *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s", UNNAMED);
	if (!a)
		return;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
		snprintf(buf, len, "%s", a->message.ascii);
	else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode)
		from_wide(a->message.unicode, buf, len);
	else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED &&
	         !lookup(strings, &n_strings, a->message.registered, buf, len))
		snprintf(buf, len, "%s", UNNAMED);
	if (!buf[0])
		snprintf(buf, len, "%s", UNNAMED);
}

/* "DOMAIN: text" for a range of a domain other than the default one. */
static void prefix_domain(nvtxDomainHandle_t dom, char *buf, size_t len)
{
	if (!dom)
		return;
	char name[128];
	if (!lookup(domains, &n_domains, dom, name, sizeof name))
		snprintf(name, sizeof name, "nvtx domain %p", (void *)dom);
	size_t k = strlen(name) + 2, text_len = strlen(buf);
	if (k >= len)
		return;
	if (text_len > len - 1 - k)
		text_len = len - 1 - k; /* cut the text, keep the domain */
	memmove(buf + k, buf, text_len);
	buf[k + text_len] = 0;
	memcpy(buf, name, k - 2);
	buf[k - 2] = ':';
	buf[k - 1] = ' ';
}

static void write_phase(int kind, uint32_t name, uint64_t range_id, int start_end)
{
	struct mp_spool_writer *w = mp_capture_spool();
	if (!w)
		return;
	struct mp_spool_event ev;
	memset(&ev, 0, sizeof ev);
	ev.kind = (uint8_t)kind;
	ev.device = -1;
	ev.thread = mp_capture_thread_id();
	ev.name = name;
	ev.phase = mp_phase_current();
	ev.ts_ns = mp_capture_now();
	ev.extra = range_id;
	ev.extra2 = start_end ? 1 : 0;
	mp_spool_event(w, &ev);
}

static void push(const char *text, int mode)
{
	struct mp_spool_writer *w = mp_capture_spool();
	uint32_t id = w ? mp_spool_cstring(w, text) : 0;
	if (tl_depth < MAX_DEPTH) {
		tl_stack[tl_depth].name = id;
		tl_stack[tl_depth].recorded = mode == MP_CAPTURE_RECORDING;
	}
	tl_depth++;
	if (mode == MP_CAPTURE_RECORDING)
		write_phase(MP_SK_PHASE_PUSH, id, 0, 0);
}

static void pop(int mode)
{
	if (tl_depth == 0)
		return; /* pushed before the library was there */
	tl_depth--;
	if (tl_depth >= MAX_DEPTH)
		return;
	struct phase_entry e = tl_stack[tl_depth];
	if (mode == MP_CAPTURE_RECORDING && e.recorded)
		write_phase(MP_SK_PHASE_POP, e.name, 0, 0);
}

/* nvtxRangeStartA/Ex and nvtxRangeEnd: not nested per thread; events only, keyed by the range id.
 */
static void start_range(const char *text, const void *ret, int mode)
{
	uint64_t id = ret ? *(const nvtxRangeId_t *)ret : 0;
	struct mp_spool_writer *w = mp_capture_spool();
	if (mode == MP_CAPTURE_RECORDING && w)
		write_phase(MP_SK_PHASE_PUSH, mp_spool_cstring(w, text), id, 1);
}

static void end_range(nvtxRangeId_t id, int mode)
{
	if (mode == MP_CAPTURE_RECORDING)
		write_phase(MP_SK_PHASE_POP, 0, id, 1);
}

static void learn_names(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	const void *ret = d->functionReturnValue;
	if (cbid == CUPTI_CBID_NVTX_nvtxDomainCreateA && ret) {
		const nvtxDomainCreateA_params *p = d->functionParams;
		remember(domains, &n_domains, MAX_DOMAINS, *(const nvtxDomainHandle_t *)ret,
		         p->name);
	} else if (cbid == CUPTI_CBID_NVTX_nvtxDomainRegisterStringA && ret) {
		const nvtxDomainRegisterStringA_params *p = d->functionParams;
		remember(strings, &n_strings, MAX_STRINGS, *(const nvtxStringHandle_t *)ret,
		         p->string);
	}
}

void mp_phases_handle(CUpti_CallbackId cbid, const CUpti_NvtxData *d, int mode)
{
	char text[MAX_TEXT];
	if (!d || !d->functionParams)
		return;
	const void *params = d->functionParams;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA: {
		const char *m = ((const nvtxRangePushA_params *)params)->message;
		push(m && *m ? m : UNNAMED, mode);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePushW: {
		const wchar_t *m = ((const nvtxRangePushW_params *)params)->message;
		if (m)
			from_wide(m, text, sizeof text);
		push(m && text[0] ? text : UNNAMED, mode);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		text_of_attrib(((const nvtxRangePushEx_params *)params)->eventAttrib, text,
		               sizeof text);
		push(text, mode);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *p = params;
		text_of_attrib(p->core.eventAttrib, text, sizeof text);
		prefix_domain(p->domain, text, sizeof text);
		push(text, mode);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		pop(mode);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA: {
		const char *m = ((const nvtxRangeStartA_params *)params)->message;
		start_range(m && *m ? m : UNNAMED, d->functionReturnValue, mode);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		text_of_attrib(((const nvtxRangeStartEx_params *)params)->eventAttrib, text,
		               sizeof text);
		start_range(text, d->functionReturnValue, mode);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
		const nvtxDomainRangeStartEx_params *p = params;
		text_of_attrib(p->core.eventAttrib, text, sizeof text);
		prefix_domain(p->domain, text, sizeof text);
		start_range(text, d->functionReturnValue, mode);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		end_range(((const nvtxRangeEnd_params *)params)->id, mode);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		end_range(((const nvtxDomainRangeEnd_params *)params)->core.id, mode);
		break;
	default:
		learn_names(cbid, d);
		break;
	}
}

CUptiResult mp_phases_enable(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId ids[] = {
	        CUPTI_CBID_NVTX_nvtxRangePushA,
	        CUPTI_CBID_NVTX_nvtxRangePushW,
	        CUPTI_CBID_NVTX_nvtxRangePushEx,
	        CUPTI_CBID_NVTX_nvtxRangePop,
	        CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
	        CUPTI_CBID_NVTX_nvtxDomainRangePop,
	        CUPTI_CBID_NVTX_nvtxRangeStartA,
	        CUPTI_CBID_NVTX_nvtxRangeStartEx,
	        CUPTI_CBID_NVTX_nvtxRangeEnd,
	        CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
	        CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
	        CUPTI_CBID_NVTX_nvtxDomainCreateA,
	        CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
	};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		CUptiResult r = mp_cupti.EnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, ids[i]);
		if (r != CUPTI_SUCCESS)
			return r;
	}
	return CUPTI_SUCCESS;
}
