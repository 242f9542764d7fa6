/*
 * replay/cuda_collective.c - NCCL collectives for the cuda backend
 * (cuda_collective.h) in one process: one communicator per visible GPU
 * with ncclCommInitAll (rank 0 the replay's device), ranks 1.. with a
 * scratch buffer and a stream on their GPU, an in-place all-gather or
 * reduce-scatter of int8 shards in one NCCL group, timed by events on rank
 * 0's stream; on one GPU (one rank) none is run: ENOTSUP.  With a rank
 * group it hands over to cuda_collective_group.c.
 * Not thread-safe.
 */
#ifdef HAVE_CUDA

#include "replay/cuda_collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/pool.h"
#include "replay/cuda_api.h"
#include "replay/cuda_nccl.h"

#define MAX_RANKS 64

struct rank {
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;     /* rank 0: the replay's; others: created here */
	CUdeviceptr scratch; /* ranks 1..: their copy of the buffer */
	uint64_t scratch_bytes;
};

struct mp_cuda_coll {
	struct mp_cuda_group_coll *group; /* with a rank group: its state instead */
	int n_ranks;
	ncclComm_t comms[MAX_RANKS];
	struct rank ranks[MAX_RANKS];
	CUevent ev_begin, ev_end;
};

static int cu_failed(struct mp_error *err, const char *call, CUresult rc)
{
	mp_err(err, MP_EIO, "cuda backend: %s failed: %s", call, mp_cu_name(rc));
	return MEMPROF_POOL_EFAULT;
}

#define CU_TRY(err, call, args)                                                                    \
	do {                                                                                       \
		CUresult rc_ = mp_cu.call args;                                                    \
		if (rc_ != CUDA_SUCCESS)                                                           \
			return cu_failed((err), "cu" #call, rc_);                                  \
	} while (0)

#define NCCL_TRY(err, call, args)                                                                  \
	do {                                                                                       \
		ncclResult_t rc_ = mp_nccl.call args;                                              \
		if (rc_ != ncclSuccess)                                                            \
			return mp_nccl_failed((err), "nccl" #call, rc_, NULL);                     \
	} while (0)

/* Undo what make_state did for ranks 1..n-1 and the events: a failed init leaves nothing. */
static void drop_state(struct mp_cuda_coll *c, int n)
{
	for (int i = 1; i < n; i++) {
		struct rank *r = &c->ranks[i];

		if (r->stream) {
			mp_cu.CtxSetCurrent(r->ctx);
			mp_cu.StreamDestroy(r->stream);
		}
		if (r->ctx)
			mp_cu.DevicePrimaryCtxRelease(r->dev);
	}
	mp_cu.CtxSetCurrent(c->ranks[0].ctx);
	if (c->ev_begin)
		mp_cu.EventDestroy(c->ev_begin);
	if (c->ev_end)
		mp_cu.EventDestroy(c->ev_end);
	c->ev_begin = c->ev_end = NULL;
	memset(c->ranks, 0, sizeof c->ranks);
	memset(c->comms, 0, sizeof c->comms);
	c->n_ranks = 0;
}

/* Rank n on device d (not the replay's): its primary context and a stream. */
static CUresult add_rank(struct mp_cuda_coll *c, int n, CUdevice d, const char **call)
{
	struct rank *r = &c->ranks[n];
	CUresult rc;

	r->dev = d;
	if ((rc = mp_cu.DevicePrimaryCtxRetain(&r->ctx, d)) != CUDA_SUCCESS) {
		r->ctx = NULL;
		*call = "cuDevicePrimaryCtxRetain";
		return rc;
	}
	if ((rc = mp_cu.CtxSetCurrent(r->ctx)) != CUDA_SUCCESS) {
		*call = "cuCtxSetCurrent";
		return rc;
	}
	if ((rc = mp_cu.StreamCreate(&r->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
		r->stream = NULL;
		*call = "cuStreamCreate";
	}
	return rc;
}

/*
 * Ranks: dev first, then the other visible GPUs, at most world_size in all.
 * c->n_ranks is set only once ncclCommInitAll has succeeded: after a failure
 * nothing is kept, and the next collective tries again from the start.
 */
static int make_state(struct mp_cuda_coll *c, CUdevice dev, CUcontext ctx, CUstream s0,
                      uint32_t world_size, struct mp_error *err)
{
	int n_devices = 0, n = 1, devlist[MAX_RANKS];
	const char *call = "cuDeviceGetCount";
	CUresult cr;
	ncclResult_t nr;

	c->ranks[0] = (struct rank){.dev = dev, .ctx = ctx, .stream = s0};
	if ((cr = mp_cu.DeviceGetCount(&n_devices)) != CUDA_SUCCESS ||
	    (call = "cuEventCreate", cr = mp_cu.EventCreate(&c->ev_begin, CU_EVENT_DEFAULT)) !=
	            CUDA_SUCCESS ||
	    (cr = mp_cu.EventCreate(&c->ev_end, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
		goto cuda_failed;
	for (int d = 0; d < n_devices && n < MAX_RANKS && (uint32_t)n < world_size; d++) {
		CUdevice cd;

		if ((call = "cuDeviceGet", cr = mp_cu.DeviceGet(&cd, d)) != CUDA_SUCCESS)
			goto cuda_failed;
		if (cd == dev)
			continue;
		cr = add_rank(c, n, cd, &call);
		n++; /* what it made is undone by drop_state, even on failure */
		if (cr != CUDA_SUCCESS)
			goto cuda_failed;
	}
	if ((call = "cuCtxSetCurrent", cr = mp_cu.CtxSetCurrent(c->ranks[0].ctx)) != CUDA_SUCCESS)
		goto cuda_failed;
	for (int i = 0; i < n; i++)
		devlist[i] = (int)c->ranks[i].dev;
	if ((nr = mp_nccl.CommInitAll(c->comms, n, devlist)) != ncclSuccess) {
		mp_nccl_failed(err, "ncclCommInitAll", nr, NULL);
		drop_state(c, n);
		return MEMPROF_POOL_EFAULT;
	}
	c->n_ranks = n;
	return MEMPROF_POOL_OK;
cuda_failed:
	cu_failed(err, call, cr);
	drop_state(c, n);
	return MEMPROF_POOL_EFAULT;
}

/* Ranks 1.. need n_bytes of their own. */
static int scratch_for(struct mp_cuda_coll *c, uint64_t n_bytes, struct mp_error *err)
{
	for (int i = 1; i < c->n_ranks; i++) {
		struct rank *r = &c->ranks[i];

		if (r->scratch_bytes >= n_bytes)
			continue;
		CU_TRY(err, CtxSetCurrent, (r->ctx));
		if (r->scratch)
			mp_cu.MemFree(r->scratch);
		r->scratch = 0;
		r->scratch_bytes = 0;
		CU_TRY(err, MemAlloc, (&r->scratch, (size_t)n_bytes));
		r->scratch_bytes = n_bytes;
	}
	CU_TRY(err, CtxSetCurrent, (c->ranks[0].ctx));
	return MEMPROF_POOL_OK;
}

static int run_group(struct mp_cuda_coll *c, int kind, uint64_t addr, uint64_t shard,
                     struct mp_error *err)
{
	NCCL_TRY(err, GroupStart, ());
	for (int i = 0; i < c->n_ranks; i++) {
		char *base = (char *)(uintptr_t)(i == 0 ? addr : c->ranks[i].scratch);
		char *mine = base + (uint64_t)i * shard;
		CUstream s = c->ranks[i].stream;
		ncclResult_t rc =
		        kind == MEMPROF_POOL_ALL_GATHER
		                ? mp_nccl.AllGather(mine, base, shard, ncclInt8, c->comms[i], s)
		                : mp_nccl.ReduceScatter(base, mine, shard, ncclInt8, ncclSum,
		                                        c->comms[i], s);
		if (rc != ncclSuccess) {
			mp_nccl.GroupEnd();
			return mp_nccl_failed(err,
			                      kind == MEMPROF_POOL_ALL_GATHER ? "ncclAllGather"
			                                                      : "ncclReduceScatter",
			                      rc, c->comms[i]);
		}
	}
	NCCL_TRY(err, GroupEnd, ());
	return MEMPROF_POOL_OK;
}

/* One process: ranks on the visible GPUs, made on first use. */
static int collective_all(struct mp_cuda_coll **state, const struct mp_cuda_coll_where *w, int kind,
                          uint64_t addr, uint64_t n_bytes, uint32_t world_size,
                          uint64_t *elapsed_ns, struct mp_error *err)
{
	struct mp_cuda_coll *c = *state;
	CUstream s0 = w->stream;
	float ms = 0;
	int rc;

	if (c->n_ranks == 0 &&
	    (rc = make_state(c, w->dev, w->ctx, s0, world_size, err)) != MEMPROF_POOL_OK)
		return rc;
	if ((rc = scratch_for(c, n_bytes, err)) != MEMPROF_POOL_OK)
		return rc;
	CU_TRY(err, EventRecord, (c->ev_begin, s0));
	if ((rc = run_group(c, kind, addr, n_bytes / world_size, err)) != MEMPROF_POOL_OK)
		return rc;
	CU_TRY(err, EventRecord, (c->ev_end, s0));
	for (int i = 1; i < c->n_ranks; i++)
		CU_TRY(err, StreamSynchronize, (c->ranks[i].stream));
	CU_TRY(err, EventSynchronize, (c->ev_end));
	CU_TRY(err, EventElapsedTime, (&ms, c->ev_begin, c->ev_end));
	*elapsed_ns = (uint64_t)((double)ms * 1e6);
	return MEMPROF_POOL_OK;
}

/*
 * Whether a collective here would have two ranks or more: one process makes a rank
 * per visible GPU, up to the world size.  On one GPU NCCL would have one rank, and
 * an all-gather or reduce-scatter on one rank copies a buffer onto itself: that is
 * no collective, so it is not run and not counted as run.
 */
static int two_ranks(uint32_t world_size)
{
	int n_devices = 0;

	return world_size >= 2 && mp_cu.DeviceGetCount(&n_devices) == CUDA_SUCCESS &&
	       n_devices >= 2;
}

int mp_cuda_collective(struct mp_cuda_coll **state, const struct mp_cuda_coll_where *w, int kind,
                       uint64_t addr, uint64_t n_bytes, uint32_t world_size, uint64_t *elapsed_ns,
                       struct mp_error *err)
{
	char why[512];

	*elapsed_ns = 0;
	if (!*state && !(*state = calloc(1, sizeof **state)))
		return MEMPROF_POOL_ENOMEM;
	if (w->group)
		return mp_cuda_group_collective(&(*state)->group, w, kind, addr, n_bytes,
		                                elapsed_ns, err);
	if (!mp_nccl_load(why, sizeof why))
		return MEMPROF_POOL_ENOTSUP;
	if (!(*state)->n_ranks && !two_ranks(world_size))
		return MEMPROF_POOL_ENOTSUP; /* one rank: nothing would move between GPUs */
	return collective_all(state, w, kind, addr, n_bytes, world_size, elapsed_ns, err);
}

void mp_cuda_collective_free(struct mp_cuda_coll *c)
{
	if (!c)
		return;
	mp_cuda_group_collective_free(c->group);
	for (int i = 0; i < c->n_ranks; i++)
		if (c->comms[i])
			mp_nccl.CommDestroy(c->comms[i]);
	for (int i = 1; i < c->n_ranks; i++) {
		struct rank *r = &c->ranks[i];
		mp_cu.CtxSetCurrent(r->ctx);
		if (r->stream)
			mp_cu.StreamDestroy(r->stream);
		if (r->scratch)
			mp_cu.MemFree(r->scratch);
		mp_cu.DevicePrimaryCtxRelease(r->dev);
	}
	if (c->n_ranks)
		mp_cu.CtxSetCurrent(c->ranks[0].ctx);
	if (c->ev_begin)
		mp_cu.EventDestroy(c->ev_begin);
	if (c->ev_end)
		mp_cu.EventDestroy(c->ev_end);
	free(c);
}

#else
typedef int mp_cuda_collective_unused; /* ISO C: a translation unit is not empty */
#endif /* HAVE_CUDA */
