/*
 * tests/unit/test_capture_numa.c - the injected library's NUMA records
 * (capture/numa_inject.c) through the subscriber callback on a real spool:
 * a cudaHostAlloc of real, partly touched memory is followed by HOST_NUMA
 * events that match the kernel's answer; cuMemCreate on a host NUMA
 * location names its node; host registration is an allocation; a failed
 * call, device memory and a plain host location write none.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/inject_internal.h"
#include "capture/numa.h"
#include "capture_helpers.h"

#define RT  CUPTI_CB_DOMAIN_RUNTIME_API
#define DRV CUPTI_CB_DOMAIN_DRIVER_API

static char dir[256], path[512];
static struct mp_spool_writer *w;

static void setup_spool(void)
{
	th_tmpdir(dir, sizeof dir);
	w = th_open_writer(dir, path, sizeof path);
	mp_capture_set_for_test(w, MP_CAPTURE_RECORDING);
}

static void teardown_spool(void)
{
	th_rmdir(dir);
}

static void read_back(struct th_spool *s)
{
	mp_capture_set_for_test(NULL, MP_CAPTURE_OFF);
	cr_assert_eq(mp_spool_writer_close(w, mp_capture_now(), 0), 0);
	th_read_spool(path, s);
	cr_assert_null(s->error, "%s", s->error);
}

/* ENTER then EXIT of (domain, cbid) with params, returning ret. */
static void call(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *params, void *ret,
                 uint32_t corr)
{
	CUpti_CallbackData cb;
	memset(&cb, 0, sizeof cb);
	cb.functionParams = params;
	cb.correlationId = corr;
	cb.callbackSite = CUPTI_API_ENTER;
	mp_callbacks_handler(NULL, d, cbid, &cb);
	cb.callbackSite = CUPTI_API_EXIT;
	cb.functionReturnValue = ret;
	mp_callbacks_handler(NULL, d, cbid, &cb);
}

static size_t count_kind(const struct th_spool *s, int kind)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_events; i++)
		n += s->events[i].kind == kind;
	return n;
}

Test(capture_numa, cudaHostAlloc_pages_are_asked_where_they_are, .init = setup_spool,
     .fini = teardown_spool)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = 8, size = n * (size_t)pg;
	char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mp_numa_placement truth;
	void *ptr = buf;
	cudaHostAlloc_v3020_params p = {&ptr, size, 0};
	cudaError_t ret = cudaSuccess;
	struct th_spool s;

	cr_assert_neq(buf, MAP_FAILED);
	memset(buf, 1, 6 * (size_t)pg); /* two pages never touched */
	if (mp_numa_query(buf, size, &truth) == -ENOSYS)
		cr_skip_test("move_pages: this kernel has no NUMA support");
	call(RT, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, &p, &ret, 77);
	read_back(&s);
	cr_assert_eq(s.events[0].kind, MP_SK_API);
	cr_assert_eq(count_kind(&s, MP_SK_HOST_NUMA), truth.n_nodes);
	uint32_t pages = 0;
	for (size_t i = 1; i < s.n_events; i++) {
		const struct mp_spool_event *e = &s.events[i];
		cr_assert_eq(e->kind, MP_SK_HOST_NUMA);
		cr_assert_eq(e->address, (uint64_t)(uintptr_t)buf);
		cr_assert_eq(e->correlation, 77);
		cr_assert_eq(e->thread, s.events[0].thread);
		cr_assert_eq(e->ts_ns, s.events[0].ts_ns + s.events[0].duration_ns,
		             "when it returned");
		cr_assert_str_eq(th_str(&s, e->name), "cudaHostAlloc");
		cr_assert_eq(e->extra, (uint64_t)truth.nodes[i - 1].node);
		cr_assert_eq(e->extra2, truth.nodes[i - 1].pages);
		cr_assert_eq(e->bytes, size / n * e->extra2, "its share of the sampled pages");
		pages += (uint32_t)e->extra2;
	}
	cr_assert_eq(pages, 6, "the untouched pages are on no node");
	th_free_spool(&s);
	munmap(buf, size);
}

Test(capture_numa, registering_pins_and_a_failed_call_asks_nothing, .init = setup_spool,
     .fini = teardown_spool)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);
	cuMemHostRegister_v2_params reg = {buf, 2 * (size_t)pg, 0};
	cuMemHostUnregister_params unreg = {buf};
	CUresult ok = CUDA_SUCCESS, bad = CUDA_ERROR_INVALID_VALUE;
	struct mp_numa_placement truth;
	struct th_spool s;

	memset(buf, 1, 2 * (size_t)pg);
	if (mp_numa_query(buf, 2 * (size_t)pg, &truth) == -ENOSYS)
		cr_skip_test("move_pages: this kernel has no NUMA support");
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, &reg, &bad, 1);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, &reg, &ok, 2);
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister, &unreg, &ok, 3);
	read_back(&s);
	cr_assert_eq(count_kind(&s, MP_SK_HOST_NUMA), truth.n_nodes);
	cr_assert_eq(s.events[0].kind, MP_SK_API);
	cr_assert_eq(s.events[0].address, 0, "failed: nothing pinned");
	cr_assert_eq(s.events[1].kind, MP_SK_API);
	cr_assert_eq(s.events[1].address, (uint64_t)(uintptr_t)buf);
	cr_assert_eq(s.events[1].mem_kind, MP_MK_PINNED);
	cr_assert_eq(s.events[1].flags, MP_SE_HOST_MEMORY | MP_SE_FROM_DRIVER);
	cr_assert_eq(s.events[2].kind, MP_SK_HOST_NUMA);
	cr_assert_eq(s.events[2].correlation, 2);
	const struct mp_spool_event *last = &s.events[s.n_events - 1];
	cr_assert_eq(last->kind, MP_SK_API);
	cr_assert_eq(last->flags, MP_SE_HOST_MEMORY | MP_SE_FROM_DRIVER | MP_SE_FREE_CALL);
	cr_assert_str_eq(th_str(&s, last->name), "cuMemHostUnregister");
	th_free_spool(&s);
	munmap(buf, 2 * (size_t)pg);
}

Test(capture_numa, cuMemCreate_on_a_host_numa_location_names_its_node, .init = setup_spool,
     .fini = teardown_spool)
{
	CUmemGenericAllocationHandle h = 0xbeef;
	CUmemAllocationProp prop;
	cuMemCreate_params p = {&h, 2u << 20, &prop, 0};
	CUresult ok = CUDA_SUCCESS;
	struct th_spool s;

	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
	prop.location.id = 3;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &p, &ok, 10);
	prop.location.type = CU_MEM_LOCATION_TYPE_HOST; /* no node named */
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &p, &ok, 11);
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	call(DRV, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &p, &ok, 12);
	read_back(&s);
	cr_assert_eq(s.n_events, 4);
	cr_assert_eq(s.events[0].kind, MP_SK_VMM_CREATE);
	cr_assert_eq(s.events[1].kind, MP_SK_HOST_NUMA);
	cr_assert_eq(s.events[1].correlation, 10);
	cr_assert_eq(s.events[1].address, 0);
	cr_assert_eq(s.events[1].extra, 3, "the location's node");
	cr_assert_eq(s.events[1].extra2, 0, "not sampled");
	cr_assert_eq(s.events[1].bytes, 2u << 20);
	cr_assert_eq(s.events[2].kind, MP_SK_VMM_CREATE);
	cr_assert_eq(s.events[3].kind, MP_SK_VMM_CREATE);
	th_free_spool(&s);
}
