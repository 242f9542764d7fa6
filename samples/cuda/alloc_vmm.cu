/* alloc_vmm.cu - the driver's virtual memory calls in the pattern of an expandable segment
 * (PyTorch's expandable_segments, NCCL's cuMem buffers; samples/cuda/README.md): one VA
 * range of 16 pages reserved, grown by 8 pages (cuMemCreate + cuMemMap + cuMemSetAccess
 * each), shrunk by 4 (cuMemUnmap + cuMemRelease, newest first), grown by 2 again into the
 * freed VA, then torn down (unmap, release, cuMemAddressFree).  A page is 2 MiB rounded up
 * to the allocation granularity.  Entry points from sample_driver.h; log: sample_log.h. */
#include "sample_driver.h"

static const char *const USAGE = "alloc_vmm";

enum { N_PAGES_VA = 16 };

static PFN_cuMemGetAllocationGranularity_v10020 p_granularity;
static PFN_cuMemAddressReserve_v10020 p_reserve;
static PFN_cuMemAddressFree_v10020 p_addr_free;
static PFN_cuMemCreate_v10020 p_create;
static PFN_cuMemRelease_v10020 p_release;
static PFN_cuMemMap_v10020 p_map;
static PFN_cuMemUnmap_v10020 p_unmap;
static PFN_cuMemSetAccess_v10020 p_set_access;

struct segment {
	CUdeviceptr va;
	uint64_t page_bytes;
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle handle[N_PAGES_VA];
	int mapped[N_PAGES_VA];
};

static void load_entry_points(void)
{
	DRV_LOAD(p_granularity, "cuMemGetAllocationGranularity");
	DRV_LOAD(p_reserve, "cuMemAddressReserve");
	DRV_LOAD(p_addr_free, "cuMemAddressFree");
	DRV_LOAD(p_create, "cuMemCreate");
	DRV_LOAD(p_release, "cuMemRelease");
	DRV_LOAD(p_map, "cuMemMap");
	DRV_LOAD(p_unmap, "cuMemUnmap");
	DRV_LOAD(p_set_access, "cuMemSetAccess");
}

static void segment_reserve(struct segment *s)
{
	size_t gran = 0;
	uint64_t bytes;

	memset(s, 0, sizeof *s);
	s->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	s->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	s->prop.location.id = 0;
	drv_check(p_granularity(&gran, &s->prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	          "cuMemGetAllocationGranularity");
	if (gran == 0)
		sample_die("cuMemGetAllocationGranularity gave 0");
	s->page_bytes = (2 * MIB + gran - 1) / gran * gran;
	bytes = s->page_bytes * N_PAGES_VA;
	drv_check(p_reserve(&s->va, bytes, 0, 0, 0), "cuMemAddressReserve");
	log_line("reserve", "cuMemAddressReserve",
	         "ptr=0x%" PRIxPTR " bytes=%" PRIu64 " device=0 granularity=%zu", (uintptr_t)s->va,
	         bytes, gran);
}

/* Back page I with a new physical allocation, map it and make it read-write. */
static void page_map(struct segment *s, int i)
{
	CUdeviceptr at = s->va + (CUdeviceptr)(s->page_bytes * (uint64_t)i);
	CUmemAccessDesc access;

	drv_check(p_create(&s->handle[i], s->page_bytes, &s->prop, 0), "cuMemCreate");
	log_line("create", "cuMemCreate", "handle=0x%llx bytes=%" PRIu64 " device=0",
	         (unsigned long long)s->handle[i], s->page_bytes);
	drv_check(p_map(at, s->page_bytes, 0, s->handle[i], 0), "cuMemMap");
	log_line("map", "cuMemMap", "ptr=0x%" PRIxPTR " bytes=%" PRIu64 " device=0 handle=0x%llx",
	         (uintptr_t)at, s->page_bytes, (unsigned long long)s->handle[i]);
	memset(&access, 0, sizeof access);
	access.location = s->prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	drv_check(p_set_access(at, s->page_bytes, &access, 1), "cuMemSetAccess");
	log_line("access", "cuMemSetAccess", "ptr=0x%" PRIxPTR " bytes=%" PRIu64 " device=0",
	         (uintptr_t)at, s->page_bytes);
	s->mapped[i] = 1;
}

static void page_unmap(struct segment *s, int i)
{
	CUdeviceptr at = s->va + (CUdeviceptr)(s->page_bytes * (uint64_t)i);

	drv_check(p_unmap(at, s->page_bytes), "cuMemUnmap");
	log_line("unmap", "cuMemUnmap", "ptr=0x%" PRIxPTR " bytes=%" PRIu64, (uintptr_t)at,
	         s->page_bytes);
	drv_check(p_release(s->handle[i]), "cuMemRelease");
	log_line("release", "cuMemRelease", "handle=0x%llx", (unsigned long long)s->handle[i]);
	s->mapped[i] = 0;
}

int main(int argc, char **argv)
{
	struct segment seg;

	sample_name = "alloc_vmm";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		sample_usage_error(argv[i], USAGE);
	}
	sample_begin("alloc_vmm", 0);
	load_entry_points();
	phase_push("reserve");
	segment_reserve(&seg);
	phase_pop("reserve");
	phase_push("grow");
	for (int i = 0; i < 8; i++)
		page_map(&seg, i);
	phase_pop("grow");
	phase_push("shrink");
	for (int i = 7; i >= 4; i--)
		page_unmap(&seg, i);
	phase_pop("shrink");
	phase_push("grow-again");
	page_map(&seg, 4);
	page_map(&seg, 5);
	phase_pop("grow-again");
	phase_push("teardown");
	for (int i = N_PAGES_VA - 1; i >= 0; i--)
		if (seg.mapped[i])
			page_unmap(&seg, i);
	drv_check(p_addr_free(seg.va, seg.page_bytes * N_PAGES_VA), "cuMemAddressFree");
	log_line("addrfree", "cuMemAddressFree", "ptr=0x%" PRIxPTR " bytes=%" PRIu64,
	         (uintptr_t)seg.va, seg.page_bytes * N_PAGES_VA);
	phase_pop("teardown");
	sample_end(0);
	return 0;
}
