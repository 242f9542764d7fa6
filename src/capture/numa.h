/*
 * capture/numa.h - where pinned host memory sits (NUMA placement), for the
 * injected library: the page query (move_pages(2) with nodes=NULL, through
 * syscall(2): the library never links libnuma), the sysfs readers (a GPU's
 * nearest node from its PCI device, the node distance table) and what
 * numa_inject.c writes to the spool from them.
 *
 * numa.c is pure Linux (no CUDA, no CUPTI, no spool): its unit test runs
 * anywhere.  Every function is safe from any thread, returns within a few
 * system calls and never fails the caller's work: errors are return codes.
 */
#ifndef MP_CAPTURE_NUMA_H
#define MP_CAPTURE_NUMA_H

#include <stddef.h>
#include <stdint.h>

/* Pages asked about per buffer: every page when fewer, else this many evenly spread. */
#define MP_NUMA_MAX_SAMPLES 64

struct mp_numa_node_pages {
	int32_t node;
	uint32_t pages; /* sampled pages found on node */
};

/* Where a buffer's sampled pages are. */
struct mp_numa_placement {
	uint32_t n_sampled;  /* pages asked about */
	uint32_t n_unplaced; /* not faulted in yet (-ENOENT) or not queryable */
	uint32_t n_nodes;    /* entries of nodes[], in increasing node order */
	struct mp_numa_node_pages nodes[MP_NUMA_MAX_SAMPLES];
};

/*
 * Ask the kernel where the pages of [addr, addr + size_bytes) are, sampling
 * at most MP_NUMA_MAX_SAMPLES pages evenly.  Returns 0 with *out filled, or
 * -errno when the query itself failed (ENOSYS: a kernel without NUMA; the
 * caller then knows nothing).
 */
int mp_numa_query(const void *addr, uint64_t size_bytes, struct mp_numa_placement *out);

/* The bytes of a size_bytes buffer estimated on one node from its sampled share. */
uint64_t mp_numa_share_bytes(uint64_t size_bytes, uint32_t pages, uint32_t n_sampled);

/* The NUMA node the calling thread runs on (getcpu), -1 unknown. */
int mp_numa_current_node(void);

/*
 * "0000:3B:00.0" (the driver's cuDeviceGetPCIBusId, any domain width) as
 * sysfs names it, "0000:3b:00.0", into buf.  Returns 0, or -1 when it is not
 * a PCI bus id.
 */
int mp_numa_pci_name(const char *bus_id, char *buf, size_t n);

/*
 * The node of PCI device bus_id from ROOT/bus/pci/devices/<name>/numa_node
 * (root: "/sys" or a test's fake tree).  Returns the node, or -1 when
 * unknown (no file, "-1", not a number).
 */
int mp_numa_pci_node(const char *root, const char *bus_id);

/*
 * The node distance table from ROOT/devices/system/node/nodeN/distance, as
 * the spool's meta value numa_distances: one row per node in increasing
 * order, "N:D,D,...", rows joined by ';' (the columns are the rows' nodes in
 * the same order), e.g. "0:10,21;1:21,10".  Returns the number of nodes
 * (0: none known, buf then ""), or -1 when buf is too small.
 */
int mp_numa_read_distances(const char *root, char *buf, size_t n);

#endif
