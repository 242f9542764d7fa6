/*
 * tests/unit/fake_libnccl.c - a fake NCCL for unit-testing the calls the
 * cuda backend makes to NCCL, without GPUs (loaded through MEMPROF_LIBNCCL,
 * next to tests/unit/fake_libcuda.c).  It is a stand-in, not NCCL: it
 * exports the entry points the backend resolves, with NCCL's C ABI but
 * plain types (no nccl.h), moves no data, and records every call and its
 * arguments in struct fakenccl (dlsym("fakenccl")), with knobs to make
 * init fail or never finish.  Whether NCCL itself does the right thing is
 * tests/gpu/'s business.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_CALLS   16
#define IN_PROGRESS 7 /* ncclInProgress */

struct fake_nccl_call {
	int kind; /* 1 all-gather, 2 reduce-scatter */
	uintptr_t send, recv;
	size_t count;
	int datatype, op, rank;
	uintptr_t stream;
	int in_group;
};

struct fakenccl {
	int n_init, ndev, devlist[8];
	int n_destroy, group_depth, n_groups;
	int fail_init; /* ncclCommInitAll/InitRank(Config) answer ncclUnhandledCudaError (1) */
	int n_calls;
	struct fake_nccl_call calls[MAX_CALLS];
	/* The multi-process calls. */
	int n_unique_id, fail_unique_id;
	int n_init_rank, n_init_rank_config; /* ncclCommInitRank, ncclCommInitRankConfig */
	int init_nranks, init_rank, config_blocking;
	unsigned int config_magic, config_version;
	size_t config_size;
	unsigned char init_id[128];
	int init_polls;  /* ncclCommGetAsyncError answers ncclInProgress this many times */
	int init_hangs;  /* ... or forever (a peer that never arrives) */
	int async_fails; /* after init, ncclCommGetAsyncError answers ncclRemoteError (6) */
	int n_abort, n_async_queries;
};

struct fakenccl fakenccl;
static int comm_ranks[8]; /* a communicator is a pointer to its rank */

#define API __attribute__((visibility("default")))
#define DECL(ret, name, args)                                                                      \
	API ret name args;                                                                         \
	ret name args

DECL(int, ncclGetUniqueId, (unsigned char *id))
{
	if (fakenccl.fail_unique_id)
		return 2; /* ncclSystemError */
	fakenccl.n_unique_id++;
	for (int i = 0; i < 128; i++)
		id[i] = (unsigned char)(i * 7 + fakenccl.n_unique_id);
	return 0;
}

DECL(int, ncclCommInitAll, (void **comms, int ndev, const int *devlist))
{
	if (fakenccl.fail_init)
		return 1;
	fakenccl.n_init++;
	fakenccl.ndev = ndev;
	for (int i = 0; i < ndev && i < 8; i++) {
		fakenccl.devlist[i] = devlist[i];
		comm_ranks[i] = i;
		comms[i] = &comm_ranks[i];
	}
	return 0;
}

/* The unique id is passed by value: 128 bytes, as ncclUniqueId. */
struct id128 {
	unsigned char b[128];
};

static int init_rank(void **comm, int nranks, struct id128 id, int rank)
{
	if (rank < 0 || rank >= 8)
		return 4; /* ncclInvalidArgument */
	fakenccl.init_nranks = nranks;
	fakenccl.init_rank = rank;
	memcpy(fakenccl.init_id, id.b, sizeof id.b);
	comm_ranks[rank] = rank;
	*comm = &comm_ranks[rank];
	return fakenccl.fail_init ? 1 : 0;
}

DECL(int, ncclCommInitRank, (void **comm, int nranks, struct id128 id, int rank))
{
	fakenccl.n_init_rank++;
	return init_rank(comm, nranks, id, rank);
}

/* The config as memprof declares it (NCCL 2.14's prefix). */
struct config {
	size_t size;
	unsigned int magic, version;
	int blocking;
};

DECL(int, ncclCommInitRankConfig,
     (void **comm, int nranks, struct id128 id, int rank, struct config *cfg))
{
	int rc;

	fakenccl.n_init_rank_config++;
	fakenccl.config_size = cfg->size;
	fakenccl.config_magic = cfg->magic;
	fakenccl.config_version = cfg->version;
	fakenccl.config_blocking = cfg->blocking;
	rc = init_rank(comm, nranks, id, rank);
	return rc == 0 && cfg->blocking == 0 ? IN_PROGRESS : rc;
}

DECL(int, ncclCommGetAsyncError, (void *comm, int *state))
{
	(void)comm;
	fakenccl.n_async_queries++;
	if (fakenccl.init_hangs || fakenccl.init_polls > 0) {
		fakenccl.init_polls--;
		*state = IN_PROGRESS;
	} else {
		*state = fakenccl.async_fails ? 6 : 0;
	}
	return 0;
}

DECL(int, ncclCommAbort, (void *comm))
{
	(void)comm;
	fakenccl.n_abort++;
	return 0;
}

DECL(int, ncclCommFinalize, (void *comm))
{
	(void)comm;
	return 0;
}

DECL(int, ncclCommDestroy, (void *comm))
{
	(void)comm;
	fakenccl.n_destroy++;
	return 0;
}

static int record(int kind, const void *send, void *recv, size_t count, int dt, int op, void *comm,
                  void *stream)
{
	struct fake_nccl_call *c;

	if (fakenccl.n_calls == MAX_CALLS)
		return 5; /* ncclInvalidUsage */
	c = &fakenccl.calls[fakenccl.n_calls++];
	*c = (struct fake_nccl_call){
	        kind,         (uintptr_t)send,   (uintptr_t)recv,         count, dt, op,
	        *(int *)comm, (uintptr_t)stream, fakenccl.group_depth > 0};
	return 0;
}

DECL(int, ncclAllGather,
     (const void *send, void *recv, size_t count, int dt, void *comm, void *stream))
{
	return record(1, send, recv, count, dt, -1, comm, stream);
}

DECL(int, ncclReduceScatter,
     (const void *send, void *recv, size_t count, int dt, int op, void *comm, void *stream))
{
	return record(2, send, recv, count, dt, op, comm, stream);
}

DECL(int, ncclGroupStart, (void))
{
	fakenccl.group_depth++;
	return 0;
}

DECL(int, ncclGroupEnd, (void))
{
	if (fakenccl.group_depth-- == 1)
		fakenccl.n_groups++;
	return 0;
}

DECL(const char *, ncclGetErrorString, (int rc))
{
	return rc == 0   ? "no error"
	       : rc == 1 ? "unhandled cuda error"
	       : rc == 2 ? "unhandled system error"
	       : rc == 6 ? "remote process exited or there was a network error"
	                 : "invalid usage";
}

DECL(const char *, ncclGetLastError, (void *comm))
{
	(void)comm;
	return fakenccl.fail_init ? "Cuda failure 'out of memory'" : "";
}
