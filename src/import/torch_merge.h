/*
 * import/torch_merge.h - PyTorch's own allocator history merged into the
 * process of a recorded spool (internal to src/import/): 'memprof record'
 * leaves DIR/torch-PID.pickle beside the spool of pid PID (its
 * sitecustomize), and the spool importer places the snapshot's blocks
 * inside the segments CUPTI recorded, keeping what lies outside PyTorch's
 * allocator labelled by origin.  torch_merge.c reads the snapshot and sorts
 * the spool's device allocations into PyTorch's segments and the rest;
 * torch_merge_write.c aligns the clocks, writes the blocks and checks them.
 */
#ifndef MP_IMPORT_TORCH_MERGE_H
#define MP_IMPORT_TORCH_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "import/spool.h"
#include "import/torch.h"
#include "util/intmap.h"

/* A segment (reserve to release, map to unmap) as the spool's conversion wrote it. */
struct tm_segment {
	uint64_t address;
	int64_t size, t0, t1; /* t1: INT64_MAX while it is live */
	int32_t device;
};

struct mp_torch_merge {
	char *path; /* the snapshot's */
	struct mp_torch_doc *doc;
	struct tp_device *devices;
	size_t n_devices;
	struct mp_intmap starts; /* (device << 48) ^ address of every snapshot segment -> 1 */
	struct tm_segment *segs;
	size_t n_segs, cap_segs;
	struct mp_intmap open; /* alloc id (maps: with bit 63) -> index + 1 into segs */
	int64_t max_entries;   /* the history's ring buffer, -1 unknown */
	char reason[16];       /* why it was written: exit, sigterm, oom */
	int user_history;      /* the program recorded history with its own settings */
	int64_t n_outside[4];  /* allocations outside PyTorch's allocator, by origin */
	int64_t bytes_outside[4];
};

enum tm_origin { TM_NCCL, TM_CUBLAS, TM_CUDNN, TM_OTHER, TM_TORCH };

/*
 * When the spool's process kept PyTorch's caching allocator on and its
 * snapshot lies beside the spool, read it into in->merge (else leave it
 * NULL).  A snapshot that cannot be read is a note, not an error.
 * Returns 0, or MP_ENOMEM.
 */
int mp_torch_merge_open(struct mp_spool_in *in);

/*
 * A device allocation the conversion would make a segment (who made it, at
 * address on device): 0 when it is one of PyTorch's segments, 1 when it lies
 * outside PyTorch's allocator (then *api_id is its API labelled with its
 * origin, "cudaMalloc (NCCL)"), or a negative MP_E* code.
 */
int mp_torch_merge_outside(struct mp_spool_in *in, const struct mp_spool_event *who,
                           uint64_t address, int32_t device, int64_t size, int64_t *api_id);

/*
 * A VMM mapping (cuMemMap) who made at size bytes: 1 when its stack names a
 * library outside PyTorch (NCCL's cuMem buffers, cuBLAS, cuDNN: then *api_id
 * is "cuMemMap (NCCL)" and the like, counted with the allocations outside
 * PyTorch), 0 when not known to be (PyTorch's expandable segments map too:
 * without a stack a mapping keeps no origin), or a negative MP_E* code.
 */
int mp_torch_merge_map_outside(struct mp_spool_in *in, const struct mp_spool_event *who,
                               int64_t size, int64_t *api_id);

/* A trace event the conversion wrote: segments are kept for the check.  0 or MP_ENOMEM. */
int mp_torch_merge_seen(struct mp_torch_merge *m, const struct memprof_event *ev);

/*
 * After the conversion: align the snapshot's clock with the spool's, write
 * its blocks into in's process, check each lies inside a segment reserved
 * at that moment, and say what was found (notes, meta torch_*).  Returns 0
 * or a negative MP_E* code with in->c->err filled.
 */
int mp_torch_merge_write(struct mp_spool_in *in);

void mp_torch_merge_free(struct mp_torch_merge *m);

#endif
