/*
 * replay/cuda_collective.c - NCCL collectives for the cuda backend
 * (cuda_collective.h): loads NCCL, builds one communicator per visible GPU
 * with ncclCommInitAll (rank 0 the replay's device), gives ranks 1.. a
 * scratch buffer and a stream on their GPU, and runs an in-place
 * all-gather or reduce-scatter of int8 shards in one NCCL group, timed by
 * events on rank 0's stream.  Not thread-safe.
 */
#ifdef HAVE_CUDA

#include "replay/cuda_collective.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/pool.h"
#include "replay/cuda_api.h"

/*
 * The slice of nccl.h used, declared here so that no NCCL header is needed
 * to build: the values are NCCL's stable ABI (ncclSuccess, ncclInt8 and
 * ncclSum are 0), and a CUstream is a CUstream.
 */
typedef struct nccl_comm *ncclComm_t;
typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
#define ncclSuccess 0
#define ncclInt8    0
#define ncclSum     0

#define MAX_RANKS 64

struct nccl_api {
	ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
	ncclResult_t (*CommDestroy)(ncclComm_t);
	ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
	                          CUstream);
	ncclResult_t (*ReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
	                              ncclComm_t, CUstream);
	ncclResult_t (*GroupStart)(void);
	ncclResult_t (*GroupEnd)(void);
	const char *(*GetErrorString)(ncclResult_t);
};

static const struct {
	size_t offset;
	const char *name;
} nccl_symbols[] = {
        {offsetof(struct nccl_api, CommInitAll), "ncclCommInitAll"},
        {offsetof(struct nccl_api, CommDestroy), "ncclCommDestroy"},
        {offsetof(struct nccl_api, AllGather), "ncclAllGather"},
        {offsetof(struct nccl_api, ReduceScatter), "ncclReduceScatter"},
        {offsetof(struct nccl_api, GroupStart), "ncclGroupStart"},
        {offsetof(struct nccl_api, GroupEnd), "ncclGroupEnd"},
        {offsetof(struct nccl_api, GetErrorString), "ncclGetErrorString"},
};

static struct nccl_api nccl;
static void *nccl_dl;

struct rank {
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;     /* rank 0: the replay's; others: created here */
	CUdeviceptr scratch; /* ranks 1..: their copy of the buffer */
	uint64_t scratch_bytes;
};

struct mp_cuda_coll {
	int n_ranks;
	ncclComm_t comms[MAX_RANKS];
	struct rank ranks[MAX_RANKS];
	CUevent ev_begin, ev_end;
};

/* 1 when NCCL's entry points are resolved (once per process). */
static int nccl_load(void)
{
	const char *lib = getenv("MEMPROF_LIBNCCL");
	void *dl;

	if (nccl_dl)
		return 1;
	dl = dlopen(lib && *lib ? lib : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return 0;
	for (size_t i = 0; i < sizeof nccl_symbols / sizeof nccl_symbols[0]; i++) {
		void *sym = dlsym(dl, nccl_symbols[i].name);
		if (!sym) {
			dlclose(dl);
			return 0;
		}
		memcpy((char *)&nccl + nccl_symbols[i].offset, &sym, sizeof sym);
	}
	nccl_dl = dl;
	return 1;
}

static int cu_failed(struct mp_error *err, const char *call, CUresult rc)
{
	mp_err(err, MP_EIO, "cuda backend: %s failed: %s", call, mp_cu_name(rc));
	return MEMPROF_POOL_EFAULT;
}

static int nccl_failed(struct mp_error *err, const char *call, ncclResult_t rc)
{
	mp_err(err, MP_EIO, "cuda backend: %s failed: %s", call, nccl.GetErrorString(rc));
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
		ncclResult_t rc_ = nccl.call args;                                                 \
		if (rc_ != ncclSuccess)                                                            \
			return nccl_failed((err), "nccl" #call, rc_);                              \
	} while (0)

/* Ranks: dev first, then the other visible GPUs, at most world_size in all. */
static int make_state(struct mp_cuda_coll *c, CUdevice dev, CUcontext ctx, CUstream s0,
                      uint32_t world_size, struct mp_error *err)
{
	int n_devices = 0, devlist[MAX_RANKS];

	CU_TRY(err, DeviceGetCount, (&n_devices));
	CU_TRY(err, EventCreate, (&c->ev_begin, CU_EVENT_DEFAULT));
	CU_TRY(err, EventCreate, (&c->ev_end, CU_EVENT_DEFAULT));
	c->ranks[0] = (struct rank){.dev = dev, .ctx = ctx, .stream = s0};
	c->n_ranks = 1;
	for (int d = 0;
	     d < n_devices && c->n_ranks < MAX_RANKS && (uint32_t)c->n_ranks < world_size; d++) {
		struct rank *r = &c->ranks[c->n_ranks];

		CU_TRY(err, DeviceGet, (&r->dev, d));
		if (r->dev == dev)
			continue;
		CU_TRY(err, DevicePrimaryCtxRetain, (&r->ctx, r->dev));
		c->n_ranks++;
		CU_TRY(err, CtxSetCurrent, (r->ctx));
		CU_TRY(err, StreamCreate, (&r->stream, CU_STREAM_NON_BLOCKING));
	}
	CU_TRY(err, CtxSetCurrent, (c->ranks[0].ctx));
	for (int i = 0; i < c->n_ranks; i++)
		devlist[i] = (int)c->ranks[i].dev;
	NCCL_TRY(err, CommInitAll, (c->comms, c->n_ranks, devlist));
	return MEMPROF_POOL_OK;
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
		                ? nccl.AllGather(mine, base, shard, ncclInt8, c->comms[i], s)
		                : nccl.ReduceScatter(base, mine, shard, ncclInt8, ncclSum,
		                                     c->comms[i], s);
		if (rc != ncclSuccess) {
			nccl.GroupEnd();
			return nccl_failed(err,
			                   kind == MEMPROF_POOL_ALL_GATHER ? "ncclAllGather"
			                                                   : "ncclReduceScatter",
			                   rc);
		}
	}
	NCCL_TRY(err, GroupEnd, ());
	return MEMPROF_POOL_OK;
}

int mp_cuda_collective(struct mp_cuda_coll **state, CUdevice dev, CUcontext ctx, CUstream s0,
                       int kind, uint64_t addr, uint64_t n_bytes, uint32_t world_size,
                       uint64_t *elapsed_ns, struct mp_error *err)
{
	struct mp_cuda_coll *c = *state;
	float ms = 0;
	int rc;

	*elapsed_ns = 0;
	if (!c) {
		if (!nccl_load())
			return MEMPROF_POOL_ENOTSUP;
		if (!(c = calloc(1, sizeof *c)))
			return MEMPROF_POOL_ENOMEM;
		*state = c;
		if ((rc = make_state(c, dev, ctx, s0, world_size, err)) != MEMPROF_POOL_OK)
			return rc;
	}
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

void mp_cuda_collective_free(struct mp_cuda_coll *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n_ranks; i++)
		if (c->comms[i])
			nccl.CommDestroy(c->comms[i]);
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
