/*
 * capture/numa_inject.c - the injected library's NUMA records: right after
 * a call that pinned host memory returned, where its pages are (one
 * MP_SK_HOST_NUMA event per node holding some); each GPU's nearest host
 * node (the driver's CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, else sysfs through
 * cuDeviceGetPCIBusId), written in a device item; the node distances as a
 * meta pair.  Never fails the workload's call: what cannot be learnt is
 * left unknown.  The driver is reached with dlopen(RTLD_NOLOAD), never loaded.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include <cupti.h>

#include "capture/inject_internal.h"
#include "capture/numa.h"

#define MAX_DEVICES 64
#define SYSFS_ROOT  "/sys"

/* Per ordinal: 0 not asked yet, 1 unknown, node + 2. */
static _Atomic int gpu_node[MAX_DEVICES];
/* Per ordinal: its node's device item is in the spool. */
static _Atomic int gpu_node_written[MAX_DEVICES];

typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*device_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*device_bus_fn)(char *, int, CUdevice);

/* The driver's answer for ordinal, else sysfs's; -1 unknown. */
static int ask_gpu_node(int ordinal)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	device_get_fn get;
	device_attr_fn attr;
	device_bus_fn bus;
	CUdevice dev;
	char id[64];
	int node = -1;

	if (!h)
		return -1;
	get = (device_get_fn)dlsym(h, "cuDeviceGet");
	attr = (device_attr_fn)dlsym(h, "cuDeviceGetAttribute");
	bus = (device_bus_fn)dlsym(h, "cuDeviceGetPCIBusId");
	if (get && get(&dev, ordinal) == CUDA_SUCCESS) {
		if (!attr || attr(&node, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev) != CUDA_SUCCESS)
			node = -1;
		if (node < 0 && bus && bus(id, (int)sizeof(id), dev) == CUDA_SUCCESS) {
			id[sizeof(id) - 1] = 0;
			node = mp_numa_pci_node(SYSFS_ROOT, id);
		}
	}
	dlclose(h); /* RTLD_NOLOAD: only drops the reference it took */
	return node;
}

uint32_t mp_numa_device_item_node(int32_t ordinal)
{
	if (ordinal < 0 || ordinal >= MAX_DEVICES)
		return 0;
	int v = atomic_load(&gpu_node[ordinal]);
	return v >= 2 ? (uint32_t)(v - 1) : 0;
}

/* Learn ordinal's node once; write it in a device item once per spool. */
static void note_device(struct mp_spool_writer *w, int32_t ordinal)
{
	struct mp_spool_device dev;
	int v;

	if (ordinal < 0 || ordinal >= MAX_DEVICES)
		return;
	if (!(v = atomic_load(&gpu_node[ordinal]))) {
		int node = ask_gpu_node(ordinal);
		v = node >= 0 ? node + 2 : 1;
		atomic_store(&gpu_node[ordinal], v);
	}
	if (v < 2 || atomic_exchange(&gpu_node_written[ordinal], 1))
		return;
	memset(&dev, 0, sizeof(dev));
	dev.head.type = MP_SI_DEVICE;
	dev.head.bytes = sizeof(dev);
	dev.ordinal = ordinal;
	dev.host_node = (uint32_t)(v - 1);
	mp_spool_append(w, &dev, sizeof(dev));
}

/* One MP_SK_HOST_NUMA event of api's buffer: bytes on node, pages of it sampled. */
static void write_node(struct mp_spool_writer *w, const struct mp_spool_event *api, int node,
                       uint64_t bytes, uint32_t pages)
{
	struct mp_spool_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = MP_SK_HOST_NUMA;
	ev.mem_kind = MP_MK_PINNED;
	ev.flags = api->flags & MP_SE_FROM_DRIVER;
	ev.device = api->device;
	ev.thread = api->thread;
	ev.correlation = api->correlation;
	ev.name = api->name;
	ev.phase = api->phase;
	/* Stamped when the call returned, after every record the call made. */
	ev.ts_ns = api->ts_ns + (api->duration_ns > 0 ? api->duration_ns : 0);
	ev.address = api->address;
	ev.bytes = bytes;
	ev.extra = (uint64_t)node;
	ev.extra2 = pages;
	mp_spool_event(w, &ev);
}

static void pinned_pages(struct mp_spool_writer *w, const struct mp_spool_event *api)
{
	struct mp_numa_placement pl;
	uint32_t k;

	if (mp_numa_query((const void *)(uintptr_t)api->address, api->bytes, &pl) != 0)
		return;
	for (k = 0; k < pl.n_nodes; k++)
		write_node(w, api, pl.nodes[k].node,
		           mp_numa_share_bytes(api->bytes, pl.nodes[k].pages, pl.n_sampled),
		           pl.nodes[k].pages);
}

/* cuMemCreate on a host NUMA location: the node is the location's (no pages to ask). */
static void vmm_host_node(struct mp_spool_writer *w, const CUpti_CallbackData *cb,
                          const struct mp_spool_event *api)
{
	const cuMemCreate_params *p = cb->functionParams;
	int node = -1;

	if (!p || !p->prop)
		return;
	if (p->prop->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
		node = p->prop->location.id;
	else if (p->prop->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
		node = mp_numa_current_node();
	if (node >= 0)
		write_node(w, api, node, api->bytes, 0);
}

void mp_numa_after_call(struct mp_spool_writer *w, const struct mp_api_desc *d,
                        const CUpti_CallbackData *cb, const struct mp_spool_event *ev)
{
	if (!w)
		return;
	if (ev->device >= 0)
		note_device(w, ev->device);
	if (!(ev->flags & MP_SE_HOST_MEMORY))
		return;
	if (ev->kind == MP_SK_API && d->op == MP_API_ALLOC && ev->extra == 0 && ev->address &&
	    ev->bytes)
		pinned_pages(w, ev);
	else if (ev->kind == MP_SK_VMM_CREATE && d->domain == CUPTI_CB_DOMAIN_DRIVER_API &&
	         d->cbid == CUPTI_DRIVER_TRACE_CBID_cuMemCreate)
		vmm_host_node(w, cb, ev);
}

void mp_numa_write_meta(struct mp_spool_writer *w)
{
	char buf[8192];
	if (mp_numa_read_distances(SYSFS_ROOT, buf, sizeof(buf)) > 0)
		mp_spool_meta(w, "numa_distances", buf);
}
