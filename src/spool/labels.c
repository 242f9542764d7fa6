/*
 * spool/labels.c - the rules of spool/labels.h: which
 * launcher variable names the rank, local rank and world size (the first
 * in each list that holds a whole number >= 0), and when PyTorch's caching
 * allocator was on.
 */
#include "spool/labels.h"

#include <stdlib.h>
#include <string.h>

/* torchrun, Open MPI, PMI (MPICH, Intel MPI), Slurm: the order of preference. */
static const char *const vars[3][4] = {
        {"env:RANK", "env:OMPI_COMM_WORLD_RANK", "env:PMI_RANK", "env:SLURM_PROCID"},
        {"env:LOCAL_RANK", "env:OMPI_COMM_WORLD_LOCAL_RANK", "env:SLURM_LOCALID", NULL},
        {"env:WORLD_SIZE", "env:OMPI_COMM_WORLD_SIZE", "env:PMI_SIZE", "env:SLURM_NTASKS"},
};

void mp_spool_labels_init(struct mp_spool_labels *l)
{
	memset(l, 0, sizeof(*l));
	l->rank = l->local_rank = l->world_size = -1;
	l->prio[0] = l->prio[1] = l->prio[2] = 4;
}

void mp_spool_labels_meta(struct mp_spool_labels *l, const char *key, const char *value)
{
	int64_t *figure[3] = {&l->rank, &l->local_rank, &l->world_size};
	char *end;
	long long v;

	for (int f = 0; f < 3; f++)
		for (int i = 0; i < l->prio[f] && vars[f][i]; i++) {
			if (strcmp(key, vars[f][i]) != 0)
				continue;
			v = strtoll(value, &end, 10);
			if (value[0] && *end == '\0' && v >= 0) {
				*figure[f] = v;
				l->prio[f] = i;
			}
		}
	if (strcmp(key, "env:PYTORCH_NO_CUDA_MEMORY_CACHING") == 0 && strcmp(value, "1") == 0)
		l->torch_no_cache = 1;
	if ((strcmp(key, "env:PYTORCH_CUDA_ALLOC_CONF") == 0 ||
	     strcmp(key, "env:PYTORCH_ALLOC_CONF") == 0) &&
	    strstr(value, "cudaMallocAsync"))
		l->torch_async = 1;
}

void mp_spool_labels_module(struct mp_spool_labels *l, const char *path)
{
	if (path && strstr(path, "libc10_cuda"))
		l->torch_lib = 1;
}

int mp_spool_labels_torch_caching(const struct mp_spool_labels *l)
{
	return l->torch_lib && !l->torch_no_cache && !l->torch_async;
}
