/*
 * replay/cost_model.h - what backend calls cost on a GPU, for the sim and
 * host backends, which cannot measure it.  Every figure the table yields is
 * modelled, and output says so.  The table, with where each figure came
 * from, is in cost_model.c and in memprof-replay(1) (section COST MODEL):
 * change both together.  Pure functions, thread-safe.
 */
#ifndef MP_REPLAY_COST_MODEL_H
#define MP_REPLAY_COST_MODEL_H

#include <stdint.h>

enum mp_cost_call {
	MP_COST_RESERVE,     /* cudaMalloc */
	MP_COST_RELEASE,     /* cudaFree, including its device synchronisation */
	MP_COST_VA_RESERVE,  /* cuMemAddressReserve */
	MP_COST_VA_RELEASE,  /* cuMemAddressFree */
	MP_COST_MAP,         /* cuMemCreate + cuMemMap + cuMemSetAccess, per call */
	MP_COST_UNMAP,       /* cuMemUnmap + cuMemRelease */
	MP_COST_ALLOC_ASYNC, /* cudaMallocAsync served from the pool */
	MP_COST_FREE_ASYNC,  /* cudaFreeAsync */
	MP_COST_MEMSET,      /* cudaMemsetAsync */
	MP_COST_COPY,        /* cudaMemcpyAsync device to device */
	MP_COST_SYNC,        /* cudaStreamSynchronize / cudaDeviceSynchronize */
	MP_COST_N_CALLS
};

/* The modelled time of one call moving or covering n_bytes (0 where size does not matter). */
uint64_t mp_cost_ns(enum mp_cost_call call, uint64_t n_bytes);

/* Short name of a call ("cudaMalloc", ...), for output and the man page. */
const char *mp_cost_call_name(enum mp_cost_call call);

#endif
