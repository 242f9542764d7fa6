/*
 * spool/labels.h - what a spool's meta pairs and modules say about
 * the process that wrote it: its rank, local rank and world size (from the
 * launchers' variables, in one order of preference) and whether PyTorch's
 * caching allocator was on (then its cudaMalloc calls are segments, not
 * tensors).  One set of rules, read pair by pair, for the spool importer and
 * for record's live follower.  Pure: no I/O, no allocation.
 */
#ifndef MP_SPOOL_LABELS_H
#define MP_SPOOL_LABELS_H

#include <stdint.h>

struct mp_spool_labels {
	int64_t rank, local_rank, world_size; /* -1 unknown */
	int torch_lib;                        /* libc10_cuda is loaded */
	int torch_no_cache;                   /* PYTORCH_NO_CUDA_MEMORY_CACHING=1 */
	int torch_async;                      /* the cudaMallocAsync backend was chosen */
	/* private: which variable gave each figure (lower wins) */
	int prio[3];
};

void mp_spool_labels_init(struct mp_spool_labels *l);
/* One meta pair (key and value as text, e.g. "env:RANK", "3"). */
void mp_spool_labels_meta(struct mp_spool_labels *l, const char *key, const char *value);
/* One loaded module's path. */
void mp_spool_labels_module(struct mp_spool_labels *l, const char *path);
/* PyTorch's caching allocator was on: libc10_cuda loaded, and neither
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1 nor the cudaMallocAsync backend. */
int mp_spool_labels_torch_caching(const struct mp_spool_labels *l);

#endif
