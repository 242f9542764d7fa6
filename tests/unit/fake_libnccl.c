/*
 * tests/unit/fake_libnccl.c - a fake NCCL for unit-testing the cuda
 * backend's collectives without GPUs (loaded through MEMPROF_LIBNCCL, next
 * to tests/unit/fake_libcuda.c): it exports the NCCL entry points the
 * backend resolves, with NCCL's C ABI but plain types (no nccl.h), runs
 * nothing, and records every call in struct fakenccl (dlsym("fakenccl")).
 */
#include <stddef.h>
#include <stdint.h>

#define MAX_CALLS 16

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
	int fail_init; /* ncclCommInitAll answers ncclUnhandledCudaError (1) */
	int n_calls;
	struct fake_nccl_call calls[MAX_CALLS];
};

struct fakenccl fakenccl;
static int comm_ranks[8]; /* a communicator is a pointer to its rank */

#define API __attribute__((visibility("default")))
#define DECL(ret, name, args)                                                                      \
	API ret name args;                                                                         \
	ret name args

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
	return rc == 0 ? "no error" : rc == 1 ? "unhandled cuda error" : "invalid usage";
}
