/* nccl_comm.cu - an NCCL communicator's life (samples/cuda/README.md): ncclCommInitAll over
 * the visible GPUs (or --ranks=N of them; one is fine), a 1 MiB send and receive buffer per
 * device from cudaMalloc (logged), one float all-reduce, ncclCommDestroy, the buffers
 * freed.  NCCL's own buffers (cuMem* by default, cudaMalloc with NCCL_CUMEM_ENABLE=0) are
 * not in the log: the "begin" line says extra=allowed.  libnccl.so.2 is dlopen'ed, so the
 * program starts and fails cleanly without NCCL or a driver.  Log format: sample_log.h. */
#include "sample_log.h"
#include <dlfcn.h>
#include <nccl.h>

static const char *const USAGE = "nccl_comm [--ranks=N]";

enum { MAX_RANKS = 64 };

static struct {
	decltype(&ncclGetVersion) get_version;
	decltype(&ncclCommInitAll) comm_init_all;
	decltype(&ncclCommDestroy) comm_destroy;
	decltype(&ncclAllReduce) all_reduce;
	decltype(&ncclGroupStart) group_start;
	decltype(&ncclGroupEnd) group_end;
	decltype(&ncclGetErrorString) error_string;
} nccl;

static void *nccl_sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f)
		sample_die("libnccl.so.2 has no %s: %s", name, dlerror());
	return f;
}

static void nccl_load(void)
{
	/* MEMPROF_LIBNCCL names the file where NCCL is only in a Python wheel (as for replay) */
	const char *path = getenv("MEMPROF_LIBNCCL");
	void *lib = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		sample_die("cannot load NCCL: %s", dlerror());
	nccl.get_version = (decltype(nccl.get_version))nccl_sym(lib, "ncclGetVersion");
	nccl.comm_init_all = (decltype(nccl.comm_init_all))nccl_sym(lib, "ncclCommInitAll");
	nccl.comm_destroy = (decltype(nccl.comm_destroy))nccl_sym(lib, "ncclCommDestroy");
	nccl.all_reduce = (decltype(nccl.all_reduce))nccl_sym(lib, "ncclAllReduce");
	nccl.group_start = (decltype(nccl.group_start))nccl_sym(lib, "ncclGroupStart");
	nccl.group_end = (decltype(nccl.group_end))nccl_sym(lib, "ncclGroupEnd");
	nccl.error_string = (decltype(nccl.error_string))nccl_sym(lib, "ncclGetErrorString");
}

static void nccl_check(ncclResult_t r, const char *what)
{
	if (r != ncclSuccess)
		sample_die("%s failed: %s (%d)", what, nccl.error_string(r), (int)r);
}

struct rank {
	void *send, *recv;
	cudaStream_t stream;
};

static void *buf_alloc(int device, uint64_t bytes)
{
	void *p = NULL;

	sample_check(cudaMalloc(&p, bytes), "cudaMalloc");
	log_alloc("cudaMalloc", p, bytes, device, "device");
	return p;
}

static void all_reduce(ncclComm_t *comms, struct rank *r, int n_ranks, size_t n_floats)
{
	nccl_check(nccl.group_start(), "ncclGroupStart");
	for (int d = 0; d < n_ranks; d++) {
		sample_check(cudaSetDevice(d), "cudaSetDevice");
		nccl_check(nccl.all_reduce(r[d].send, r[d].recv, n_floats, ncclFloat, ncclSum, comms[d],
		                           r[d].stream),
		           "ncclAllReduce");
	}
	nccl_check(nccl.group_end(), "ncclGroupEnd");
	for (int d = 0; d < n_ranks; d++) {
		sample_check(cudaSetDevice(d), "cudaSetDevice");
		sample_check(cudaStreamSynchronize(r[d].stream), "cudaStreamSynchronize");
	}
}

int main(int argc, char **argv)
{
	ncclComm_t comms[MAX_RANKS];
	struct rank r[MAX_RANKS];
	uint64_t want_ranks = 0, bytes = 1 * MIB;
	int n_devices = 0, n_ranks, version = 0;

	sample_name = "nccl_comm";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", USAGE);
			return 0;
		}
		if (!sample_opt_u64(argv[i], "--ranks", &want_ranks))
			sample_usage_error(argv[i], USAGE);
	}
	sample_begin("nccl_comm", 1);
	nccl_load();
	sample_check(cudaGetDeviceCount(&n_devices), "cudaGetDeviceCount");
	n_ranks = n_devices < MAX_RANKS ? n_devices : MAX_RANKS;
	if (want_ranks > 0 && want_ranks < (uint64_t)n_ranks)
		n_ranks = (int)want_ranks;
	nccl_check(nccl.get_version(&version), "ncclGetVersion");
	printf("memprof-sample note nccl version=%d ranks=%d NCCL_CUMEM_ENABLE=%s\n", version, n_ranks,
	       getenv("NCCL_CUMEM_ENABLE") ? getenv("NCCL_CUMEM_ENABLE") : "(unset)");

	phase_push("buffers");
	for (int d = 0; d < n_ranks; d++) {
		sample_check(cudaSetDevice(d), "cudaSetDevice");
		r[d].send = buf_alloc(d, bytes);
		r[d].recv = buf_alloc(d, bytes);
		sample_check(cudaMemset(r[d].send, 0, bytes), "cudaMemset");
		sample_check(cudaStreamCreateWithFlags(&r[d].stream, cudaStreamNonBlocking),
		             "cudaStreamCreate");
	}
	phase_pop("buffers");
	phase_push("comm-init");
	nccl_check(nccl.comm_init_all(comms, n_ranks, NULL), "ncclCommInitAll");
	phase_pop("comm-init");
	phase_push("all-reduce");
	all_reduce(comms, r, n_ranks, bytes / sizeof(float));
	phase_pop("all-reduce");
	phase_push("comm-destroy");
	for (int d = 0; d < n_ranks; d++)
		nccl_check(nccl.comm_destroy(comms[d]), "ncclCommDestroy");
	phase_pop("comm-destroy");
	phase_push("free");
	for (int d = 0; d < n_ranks; d++) {
		sample_check(cudaSetDevice(d), "cudaSetDevice");
		sample_check(cudaStreamDestroy(r[d].stream), "cudaStreamDestroy");
		sample_check(cudaFree(r[d].send), "cudaFree");
		log_free("cudaFree", r[d].send);
		sample_check(cudaFree(r[d].recv), "cudaFree");
		log_free("cudaFree", r[d].recv);
	}
	phase_pop("free");
	sample_end(0);
	return 0;
}
