/*
 * analysis/numa.h - NUMA placement of pinned host memory (memprof-analyze(1),
 * NUMA PLACEMENT): each GPU's nearest host node, and the pinned host buffers
 * with pages on another node than the nearest node of the GPU whose context
 * pinned them ("far"), with the bytes at stake (the bytes on other nodes)
 * and the node distances where the trace has them.  Read from the trace's
 * host buffer tables, not from the event stream: memory grows with the far
 * buffers and the GPUs, never with the events.
 */
#ifndef MP_ANALYSIS_NUMA_H
#define MP_ANALYSIS_NUMA_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct mp_store;

/* A GPU of a process and its nearest host node. */
struct mp_numa_gpu {
	int64_t pid; /* 0 unknown */
	int64_t process_id;
	int32_t device;
	int32_t node; /* -1 unknown */
};

/* Some of a far buffer's bytes on one node. */
struct mp_numa_share {
	int32_t node;
	int64_t bytes;
	int32_t distance; /* from the GPU's nearest node, -1 unknown */
};

/* A pinned buffer with pages off its GPU's nearest node. */
struct mp_numa_far {
	int64_t pid; /* 0 unknown */
	int32_t device;
	int32_t gpu_node;
	uint64_t address;
	int64_t size_bytes;
	int64_t far_bytes; /* bytes on other nodes than gpu_node */
	int64_t alloc_ts_ns;
	int64_t free_ts_ns; /* -1: still pinned at the end */
	char *api;          /* owned; NULL unknown */
	char *call_site;    /* owned: analysis/call_site.h's key */
	size_t n_shares;    /* every node holding some of it, by node */
	struct mp_numa_share *shares;
};

enum mp_numa_status {
	MP_NUMA_KNOWN = 0,        /* some buffers' placement and GPU node are known */
	MP_NUMA_NO_BUFFERS = 1,   /* the trace has no pinned host buffers */
	MP_NUMA_NO_PLACEMENT = 2, /* buffers, but where their pages are is unknown */
	MP_NUMA_NO_GPU_NODES = 3, /* placements, but not their GPUs' nearest nodes */
};

struct mp_numa {
	enum mp_numa_status status;
	struct mp_numa_gpu *gpus; /* every device row, by process and ordinal */
	size_t n_gpus;
	size_t n_nodes;        /* the distance table: n_nodes x n_nodes, 0 unknown */
	int32_t *nodes;        /* its nodes, in its order */
	int32_t *distances;    /* row-major */
	int64_t n_buffers;     /* pinned host buffers (of --device) */
	int64_t pinned_bytes;  /* their sizes */
	int64_t n_unplaced;    /* of them: no page placement known */
	int64_t n_gpu_unknown; /* placed, but their GPU's nearest node is unknown */
	int64_t n_far;
	int64_t far_bytes;       /* bytes at stake, summed */
	struct mp_numa_far *far; /* largest far_bytes first */
};

/*
 * Read the host buffers and device nodes of s, of device only (-1: every
 * device).  Returns 0, or a negative MP_E* code with err filled.  Free with
 * mp_numa_free (also after a failure).
 */
int mp_numa_load(struct mp_store *s, int device, struct mp_numa *out, struct mp_error *err);
void mp_numa_free(struct mp_numa *n);

/* The distance from node a to node b, -1 unknown. */
int32_t mp_numa_distance(const struct mp_numa *n, int32_t a, int32_t b);

/*
 * Parse a numa_distances meta value ("0:10,21;1:21,10") into n's table.
 * Returns 0, MP_EFORMAT when it is malformed (the table is then empty), or
 * MP_ENOMEM.
 */
int mp_numa_parse_distances(struct mp_numa *n, const char *text);

#endif
