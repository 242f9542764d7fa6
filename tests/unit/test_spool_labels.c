/*
 * tests/unit/test_spool_labels.c - the labels a spool's meta pairs and
 * modules give its process (spool/labels.h), the rules the spool
 * importer and record's live view share: which launcher variable wins, what
 * is not a number, and when PyTorch's caching allocator was on.
 */
#include <criterion/criterion.h>

#include "spool/labels.h"

Test(spool_labels, the_first_variable_of_each_list_wins_whatever_the_order)
{
	struct mp_spool_labels l;

	mp_spool_labels_init(&l);
	cr_assert_eq(l.rank, -1);
	cr_assert_eq(l.local_rank, -1);
	cr_assert_eq(l.world_size, -1);
	mp_spool_labels_meta(&l, "env:SLURM_PROCID", "7");
	mp_spool_labels_meta(&l, "env:OMPI_COMM_WORLD_RANK", "3");
	mp_spool_labels_meta(&l, "env:SLURM_PROCID", "9");
	cr_assert_eq(l.rank, 3, "Open MPI's rank before Slurm's");
	mp_spool_labels_meta(&l, "env:RANK", "1");
	mp_spool_labels_meta(&l, "env:PMI_RANK", "5");
	cr_assert_eq(l.rank, 1, "torchrun's RANK first of all");
	mp_spool_labels_meta(&l, "env:SLURM_LOCALID", "2");
	mp_spool_labels_meta(&l, "env:LOCAL_RANK", "0");
	mp_spool_labels_meta(&l, "env:PMI_SIZE", "16");
	mp_spool_labels_meta(&l, "env:SLURM_NTASKS", "32");
	cr_assert_eq(l.local_rank, 0);
	cr_assert_eq(l.world_size, 16);
}

Test(spool_labels, values_that_are_not_whole_numbers_leave_the_next_variable_its_chance)
{
	struct mp_spool_labels l;

	mp_spool_labels_init(&l);
	mp_spool_labels_meta(&l, "env:RANK", "");
	mp_spool_labels_meta(&l, "env:RANK", "abc");
	mp_spool_labels_meta(&l, "env:RANK", "-1");
	mp_spool_labels_meta(&l, "env:RANK", "2x");
	cr_assert_eq(l.rank, -1);
	mp_spool_labels_meta(&l, "env:SLURM_PROCID", "4");
	cr_assert_eq(l.rank, 4);
	mp_spool_labels_meta(&l, "RANK", "0");
	mp_spool_labels_meta(&l, "env:RANKS", "0");
	cr_assert_eq(l.rank, 4, "only the exact env:NAME keys");
}

Test(spool_labels, pytorch_caching_allocator)
{
	struct mp_spool_labels l;

	mp_spool_labels_init(&l);
	mp_spool_labels_module(&l, "/usr/lib/libcudart.so.13");
	cr_assert_not(mp_spool_labels_torch_caching(&l), "no PyTorch");
	mp_spool_labels_module(&l, "/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so");
	cr_assert(mp_spool_labels_torch_caching(&l));
	mp_spool_labels_meta(&l, "env:PYTORCH_NO_CUDA_MEMORY_CACHING", "0");
	cr_assert(mp_spool_labels_torch_caching(&l), "only 1 turns the cache off");
	mp_spool_labels_meta(&l, "env:PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
	cr_assert(mp_spool_labels_torch_caching(&l));
	mp_spool_labels_meta(&l, "env:PYTORCH_ALLOC_CONF", "backend:cudaMallocAsync");
	cr_assert_not(mp_spool_labels_torch_caching(&l), "the async backend");
	mp_spool_labels_init(&l);
	mp_spool_labels_module(&l, "libc10_cuda.so");
	mp_spool_labels_meta(&l, "env:PYTORCH_NO_CUDA_MEMORY_CACHING", "1");
	cr_assert_not(mp_spool_labels_torch_caching(&l), "the cache turned off");
}
