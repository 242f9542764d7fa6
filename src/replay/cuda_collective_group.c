/*
 * replay/cuda_collective_group.c - the cuda backend's collectives under
 * 'replay --mpi' (cuda_collective.h, with a rank group): one NCCL rank per
 * process, on the GPU the backend opened, through ncclCommInitRank with
 * the unique id rank 0 made; the all-gather or reduce-scatter runs in place
 * on every rank's real buffer, on the replay's stream, timed by events
 * there.
 *
 * No rank may wait for one that will not come, so: the first collective
 * starts with one group round (group->allreduce_max) in which each rank
 * says whether it has NCCL and which GPU it is on, and every rank draws the
 * same verdict (collectives unsupported, two ranks on one GPU, or go); the
 * communicator is made non-blocking (ncclCommInitRankConfig, blocking 0)
 * and polled, like each collective, for at most MEMPROF_NCCL_TIMEOUT
 * seconds, then aborted.  Not thread-safe.
 */
#ifdef HAVE_CUDA

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/pool.h"
#include "replay/cuda_api.h"
#include "replay/cuda_collective.h"
#include "replay/cuda_nccl.h"

struct mp_cuda_group_coll {
	int verdict;     /* 0 unchecked, 1 go, or the status every later call returns */
	ncclComm_t comm; /* made by the first collective after a go */
	int comm_ok;     /* init finished well: destroyed at the end, else aborted */
	CUevent ev_begin, ev_end;
	double timeout_s;
};

static int cu_failed(struct mp_error *err, const char *call, CUresult rc)
{
	mp_err(err, MP_EIO, "cuda backend: %s failed: %s", call, mp_cu_name(rc));
	return MEMPROF_POOL_EFAULT;
}

/* The GPU's identity across hosts: its UUID folded to 63 bits (FNV-1a), or -1. */
static int64_t gpu_key(CUdevice dev, char *text, size_t text_size)
{
	CUuuid u;
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *b = (const unsigned char *)u.bytes;

	snprintf(text, text_size, "GPU %d", (int)dev);
	if (mp_cu.DeviceGetUuid(&u, dev) != CUDA_SUCCESS)
		return -1;
	for (int i = 0; i < 16; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	snprintf(text, text_size,
	         "GPU %d, GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         (int)dev, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
	         b[12], b[13], b[14], b[15]);
	return (int64_t)(h & INT64_MAX);
}

/* Two ranks on one GPU: NCCL refuses them (or hangs); say which, on every rank. */
static int same_gpu(const struct mp_rank_group *g, const int64_t *keys, const char *mine,
                    struct mp_error *err)
{
	int n_visible = 0;

	mp_cu.DeviceGetCount(&n_visible);
	for (int i = 0; i < g->size; i++)
		for (int j = i + 1; j < g->size; j++) {
			if (keys[i] < 0 || keys[i] != keys[j])
				continue;
			mp_err(err, MP_EINVAL,
			       "cuda backend: ranks %d and %d are on the same GPU%s%s%s: NCCL "
			       "needs "
			       "a GPU of its own for each rank (rank %d, local rank %d, sees %d "
			       "GPU%s here): run at most as many ranks per host as it has GPUs",
			       i, j, i == g->rank || j == g->rank ? " (" : "",
			       i == g->rank || j == g->rank ? mine : "",
			       i == g->rank || j == g->rank ? ")" : "", g->rank, g->local_rank,
			       n_visible, n_visible == 1 ? "" : "s");
			return 1;
		}
	return 0;
}

#define ROUND_GO      0
#define ROUND_NO_NCCL 1 /* some rank has no NCCL, or rank 0 made no id */
#define ROUND_FAILED  2 /* some rank failed before its first collective */

/*
 * The round, on every rank at once: v[r] is rank r's GPU key (-1 unknown),
 * v[size] the worst ROUND_* of the ranks.  Taken part in whatever this
 * rank's own state, so that the round is matched on every rank.
 */
static int check_group(const struct mp_cuda_coll_where *w, struct mp_error *err)
{
	const struct mp_rank_group *g = w->group;
	char why[512], mine[96];
	int64_t *v = calloc((size_t)g->size + 1, sizeof *v);
	int no_nccl = !g->have_nccl_id || !mp_nccl_load(why, sizeof why);
	int64_t key = gpu_key(w->dev, mine, sizeof mine);
	int rc;

	if (!v) {
		mp_err(err, MP_ENOMEM, "out of memory");
		return MEMPROF_POOL_EFAULT;
	}
	for (int i = 0; i < g->size; i++)
		v[i] = i == g->rank ? key : -1;
	v[g->size] = w->local_rc != MEMPROF_POOL_OK ? ROUND_FAILED
	             : no_nccl                      ? ROUND_NO_NCCL
	                                            : ROUND_GO;
	if (g->allreduce_max(g->ctx, v, g->size + 1) < 0) {
		mp_err(err, MP_EIO, "cuda backend: the ranks could not compare their GPUs");
		rc = MEMPROF_POOL_EFAULT;
	} else if (w->local_rc != MEMPROF_POOL_OK) {
		rc = w->local_rc; /* err says why already */
	} else if (v[g->size] == ROUND_FAILED) {
		mp_err(err, MP_EIO,
		       "cuda backend: collectives not run: another rank failed before its first "
		       "one (its own error says why)");
		rc = MEMPROF_POOL_EFAULT;
	} else if (v[g->size] == ROUND_NO_NCCL) {
		rc = MEMPROF_POOL_ENOTSUP; /* the pool notes it: no NCCL on some rank */
	} else if (same_gpu(g, v, mine, err)) {
		rc = MEMPROF_POOL_EFAULT;
	} else {
		rc = 1;
	}
	free(v);
	return rc;
}

/* ncclCommInitRank, non-blocking and bounded where NCCL can (2.14 and later). */
static int init_comm(struct mp_cuda_group_coll *c, const struct mp_rank_group *g, CUcontext ctx,
                     struct mp_error *err)
{
	struct mp_nccl_config cfg = {sizeof cfg,
	                             MP_NCCL_CONFIG_MAGIC,
	                             MP_NCCL_CONFIG_VERSION,
	                             0,
	                             INT_MIN,
	                             INT_MIN,
	                             INT_MIN,
	                             NULL};
	ncclUniqueId id;
	ncclResult_t rc, state = ncclSuccess;
	CUresult cr = mp_cu.CtxSetCurrent(ctx); /* NCCL's rank is on the current device */

	if (cr != CUDA_SUCCESS)
		return cu_failed(err, "cuCtxSetCurrent", cr);
	memcpy(id.internal, g->nccl_id, sizeof id.internal);
	if (!mp_nccl.CommInitRankConfig || !mp_nccl.CommGetAsyncError || !mp_nccl.CommAbort) {
		rc = mp_nccl.CommInitRank(&c->comm, g->size, id, g->rank); /* no timeout there */
		if (rc != ncclSuccess)
			return mp_nccl_failed(err, "ncclCommInitRank", rc, c->comm);
		c->comm_ok = 1;
		return MEMPROF_POOL_OK;
	}
	rc = mp_nccl.CommInitRankConfig(&c->comm, g->size, id, g->rank, &cfg);
	if (rc != ncclSuccess && rc != ncclInProgress)
		return mp_nccl_failed(err, "ncclCommInitRankConfig", rc, c->comm);
	if (!mp_nccl_wait(c->comm, c->timeout_s, &state)) {
		mp_err(err, MP_EIO,
		       "cuda backend: ncclCommInitRankConfig (rank %d of %d): not every rank "
		       "joined "
		       "within %g s (MEMPROF_NCCL_TIMEOUT): a rank failed before it, or the hosts "
		       "cannot reach each other (NCCL_SOCKET_IFNAME, NCCL_DEBUG=WARN says more)",
		       g->rank, g->size, c->timeout_s);
		return MEMPROF_POOL_EFAULT;
	}
	if (state != ncclSuccess)
		return mp_nccl_failed(err, "ncclCommInitRankConfig", state, c->comm);
	c->comm_ok = 1;
	return MEMPROF_POOL_OK;
}

/* The state of the communicator and of the event, until the event is done. */
static int wait_done(struct mp_cuda_group_coll *c, const struct mp_rank_group *g, const char *call,
                     struct mp_error *err)
{
	double until = mp_nccl_now_s() + c->timeout_s;
	ncclResult_t state = ncclSuccess;

	for (;;) {
		CUresult cr = mp_cu.EventQuery(c->ev_end);

		if (cr == CUDA_SUCCESS)
			return MEMPROF_POOL_OK;
		if (cr != CUDA_ERROR_NOT_READY)
			return cu_failed(err, "cuEventQuery", cr);
		if (mp_nccl.CommGetAsyncError &&
		    (mp_nccl.CommGetAsyncError(c->comm, &state) != ncclSuccess ||
		     (state != ncclSuccess && state != ncclInProgress))) {
			c->comm_ok = 0;
			return mp_nccl_failed(err, call, state, c->comm);
		}
		if (mp_nccl_now_s() > until) {
			c->comm_ok = 0;
			mp_err(err, MP_EIO,
			       "cuda backend: %s (rank %d of %d) did not finish within %g s "
			       "(MEMPROF_NCCL_TIMEOUT): a rank stopped taking part",
			       call, g->rank, g->size, c->timeout_s);
			return MEMPROF_POOL_EFAULT;
		}
		mp_nccl_nap();
	}
}

/* In place on this rank's buffer: its shard is at rank * shard. */
static int run(struct mp_cuda_group_coll *c, const struct mp_rank_group *g, CUstream s, int kind,
               uint64_t addr, uint64_t n_bytes, struct mp_error *err)
{
	const char *call = kind == MEMPROF_POOL_ALL_GATHER ? "ncclAllGather" : "ncclReduceScatter";
	uint64_t shard = n_bytes / (uint64_t)g->size;
	char *base = (char *)(uintptr_t)addr, *mine = base + (uint64_t)g->rank * shard;
	ncclResult_t rc, state = ncclSuccess;
	CUresult cr = mp_cu.EventRecord(c->ev_begin, s);

	if (cr != CUDA_SUCCESS)
		return cu_failed(err, "cuEventRecord", cr);
	rc = kind == MEMPROF_POOL_ALL_GATHER
	             ? mp_nccl.AllGather(mine, base, (size_t)shard, ncclInt8, c->comm, s)
	             : mp_nccl.ReduceScatter(base, mine, (size_t)shard, ncclInt8, ncclSum, c->comm,
	                                     s);
	if (rc == ncclInProgress && !mp_nccl_wait(c->comm, c->timeout_s, &state))
		rc = ncclInProgress;
	else if (rc == ncclInProgress)
		rc = state;
	if (rc != ncclSuccess) {
		c->comm_ok = 0;
		if (rc != ncclInProgress)
			return mp_nccl_failed(err, call, rc, c->comm);
		mp_err(err, MP_EIO,
		       "cuda backend: %s (rank %d of %d) was not enqueued within %g s "
		       "(MEMPROF_NCCL_TIMEOUT)",
		       call, g->rank, g->size, c->timeout_s);
		return MEMPROF_POOL_EFAULT;
	}
	if ((cr = mp_cu.EventRecord(c->ev_end, s)) != CUDA_SUCCESS)
		return cu_failed(err, "cuEventRecord", cr);
	return wait_done(c, g, call, err);
}

/* The first call: the round, then events and the communicator on a go. */
static int start(struct mp_cuda_group_coll *c, const struct mp_cuda_coll_where *w,
                 struct mp_error *err)
{
	CUresult cr;
	int rc = check_group(w, err);

	if (rc != 1)
		return rc;
	if ((cr = mp_cu.EventCreate(&c->ev_begin, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
	    (cr = mp_cu.EventCreate(&c->ev_end, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
		return cu_failed(err, "cuEventCreate", cr);
	return init_comm(c, w->group, w->ctx, err);
}

int mp_cuda_group_collective(struct mp_cuda_group_coll **state, const struct mp_cuda_coll_where *w,
                             int kind, uint64_t addr, uint64_t n_bytes, uint64_t *elapsed_ns,
                             struct mp_error *err)
{
	const struct mp_rank_group *g = w->group;
	struct mp_cuda_group_coll *c = *state;
	float ms = 0;
	CUresult cr;
	int rc;

	*elapsed_ns = 0;
	if (g->size < 1 || g->rank < 0 || g->rank >= g->size) {
		mp_err(err, MP_EINVAL, "cuda backend: rank %d of a group of %d", g->rank, g->size);
		return MEMPROF_POOL_EINVAL;
	}
	if (n_bytes % (uint64_t)g->size) { /* the same on every rank: they agreed on n_bytes */
		mp_err(err, MP_EINVAL,
		       "cuda backend: a %llu-byte collective does not split into %d equal shards, "
		       "one per rank",
		       (unsigned long long)n_bytes, g->size);
		return MEMPROF_POOL_EINVAL;
	}
	if (!c) {
		if (!(c = calloc(1, sizeof *c)))
			return MEMPROF_POOL_ENOMEM;
		*state = c;
		c->timeout_s = mp_nccl_timeout_s();
		rc = start(c, w, err);
		c->verdict = rc == MEMPROF_POOL_OK ? 1 : rc;
	}
	if (c->verdict != 1)
		return c->verdict;
	if (w->local_rc != MEMPROF_POOL_OK) /* the others time out in the collective */
		return w->local_rc;
	if ((rc = run(c, g, w->stream, kind, addr, n_bytes, err)) != MEMPROF_POOL_OK) {
		c->verdict = rc; /* a communicator that failed once is not used again */
		return rc;
	}
	if ((cr = mp_cu.EventElapsedTime(&ms, c->ev_begin, c->ev_end)) != CUDA_SUCCESS)
		return cu_failed(err, "cuEventElapsedTime", cr);
	*elapsed_ns = (uint64_t)((double)ms * 1e6);
	return MEMPROF_POOL_OK;
}

void mp_cuda_group_collective_free(struct mp_cuda_group_coll *c)
{
	if (!c)
		return;
	if (c->comm) {
		if (c->comm_ok || !mp_nccl.CommAbort)
			mp_nccl.CommDestroy(c->comm);
		else
			mp_nccl.CommAbort(c->comm);
	}
	if (c->ev_begin)
		mp_cu.EventDestroy(c->ev_begin);
	if (c->ev_end)
		mp_cu.EventDestroy(c->ev_end);
	free(c);
}

#else
typedef int mp_cuda_collective_group_unused; /* ISO C: a translation unit is not empty */
#endif /* HAVE_CUDA */
