/*
 * tests/unit/test_live.c - the spool follower (src/live/follow.c) on spools
 * that grow block by block, a half-written block, a corrupt block and a
 * spool cut short; and the live state (state.c, sites.c) on known spools:
 * deduplicated calls, ignored frees, PyTorch segments, VMM mappings,
 * latency quantiles, rates, call sites, ranks and losses.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "live/follow.h"
#include "live/state.h"
#include "live_helpers.h"

static char *dir, *stage, *spool;

static void setup(void)
{
	dir = th_mkdtemp();
	stage = th_mkdtemp();
	spool = th_path(dir, "h-100-1.mpt");
}

static void teardown(void)
{
	th_rmdir(dir);
	th_rmdir(stage);
	free(spool);
}

TestSuite(live, .init = setup, .fini = teardown);

/* Items handed out, by type, and events' addresses in order. */
struct seen {
	int n_items, n_events, n_footers;
	uint64_t addrs[64];
};

static int count(void *arg, const struct mp_live_spool *s, const struct mp_spool_item_head *it)
{
	struct seen *c = arg;

	(void)s;
	c->n_items++;
	if (it->type == MP_SI_EVENT && c->n_events < 64)
		c->addrs[c->n_events++] = ((const struct mp_spool_event *)it)->address;
	c->n_footers += it->type == MP_SI_FOOTER;
	return 0;
}

/* A spool of three blocks (one allocation each) and the footer, written in stage. */
static char *three_blocks(uint64_t *ends, size_t *n_ends)
{
	char *path = th_path(stage, "src.mpt");
	struct lh_spool s;
	int i;

	lh_open(&s, path, 100);
	for (i = 1; i <= 3; i++) {
		lh_alloc(&s, "cudaMalloc", 0x1000 * (uint64_t)i, 4096, 1000, 0);
		lh_flush(&s);
	}
	lh_close(&s);
	*n_ends = lh_block_ends(path, ends, 16);
	cr_assert_eq(*n_ends, 5, "header + 3 blocks + footer block, got %zu ends", *n_ends);
	return path;
}

Test(live, follows_a_spool_block_by_block)
{
	uint64_t ends[16];
	size_t n_ends, k;
	char *src = three_blocks(ends, &n_ends);
	struct mp_live_follow *f = mp_live_follow_new(dir, NULL, 0);
	struct seen c = {0};

	cr_assert(f);
	cr_assert_eq(mp_live_follow_poll(f, count, &c), 0, "no spool yet");
	lh_copy(src, spool, 64); /* half a header */
	cr_assert_eq(mp_live_follow_poll(f, count, &c), 0);
	cr_assert_null(mp_live_spool_header(mp_live_follow_spool(f, 0)));
	for (k = 0; k < n_ends; k++) {
		int before = c.n_events;

		lh_copy(src, spool, ends[k]);
		mp_live_follow_poll(f, count, &c);
		cr_assert_eq(c.n_events, k >= 1 && k <= 3 ? before + 1 : before,
		             "after %zu blocks: %d events", k, c.n_events);
		cr_assert_eq(mp_live_spool_offset(mp_live_follow_spool(f, 0)), ends[k]);
	}
	cr_assert_eq(c.addrs[0], 0x1000);
	cr_assert_eq(c.addrs[2], 0x3000);
	cr_assert_eq(c.n_footers, 1);
	cr_assert(mp_live_spool_ended(mp_live_follow_spool(f, 0)));
	cr_assert_null(mp_live_spool_note(mp_live_follow_spool(f, 0)));
	cr_assert_eq(mp_live_spool_header(mp_live_follow_spool(f, 0))->pid, 100);
	mp_live_follow_free(f);
	free(src);
}

Test(live, leaves_a_half_written_block_for_the_next_round)
{
	uint64_t ends[16];
	size_t n_ends;
	char *src = three_blocks(ends, &n_ends);
	struct mp_live_follow *f = mp_live_follow_new(dir, NULL, 0);
	struct seen c = {0};
	uint64_t cut;

	/* every byte inside block 2 (its head or its payload) */
	for (cut = ends[1] + 1; cut < ends[2]; cut += 7) {
		lh_copy(src, spool, cut);
		mp_live_follow_poll(f, count, &c);
		cr_assert_eq(c.n_events, 1, "cut at %llu", (unsigned long long)cut);
		cr_assert_null(mp_live_spool_note(mp_live_follow_spool(f, 0)));
	}
	lh_copy(src, spool, ends[2]);
	mp_live_follow_poll(f, count, &c);
	cr_assert_eq(c.n_events, 2);
	cr_assert_eq(c.addrs[1], 0x2000);
	mp_live_follow_free(f);
	free(src);
}

Test(live, a_corrupt_block_stops_its_spool_with_a_note)
{
	uint64_t ends[16];
	size_t n_ends;
	char *src = three_blocks(ends, &n_ends), *text;
	struct mp_live_follow *f = mp_live_follow_new(dir, NULL, 0);
	struct seen c = {0};
	FILE *fp;
	char note[600];
	size_t len;

	lh_copy(src, spool, ends[4]);
	text = th_read(spool, &len);
	text[ends[2] + 40] ^= 0x55; /* a byte of block 3's payload */
	fp = fopen(spool, "wb");
	cr_assert(fp);
	fwrite(text, 1, len, fp);
	fclose(fp);
	mp_live_follow_poll(f, count, &c);
	cr_assert_eq(c.n_events, 2, "the blocks before the bad one");
	snprintf(note, sizeof(note), "bad checksum at byte %llu of '%s'",
	         (unsigned long long)ends[2], spool);
	cr_assert_str_eq(mp_live_spool_note(mp_live_follow_spool(f, 0)), note);
	cr_assert_not(mp_live_spool_ended(mp_live_follow_spool(f, 0)));
	mp_live_follow_poll(f, count, &c);
	cr_assert_eq(c.n_events, 2, "a stopped spool is not read again");
	mp_live_follow_free(f);
	free(text);
	free(src);
}

Test(live, a_cut_spool_keeps_its_complete_blocks)
{
	uint64_t ends[16];
	size_t n_ends;
	char *src = three_blocks(ends, &n_ends);
	struct mp_live_state st;
	struct mp_live_follow *f;

	lh_copy(src, spool, ends[3] - 5); /* killed while writing block 3 */
	f = lh_follow_all(dir, &st);
	cr_assert_eq(st.procs[0]->devices[0].n_allocs, 2);
	cr_assert_eq(st.live_bytes, 8192);
	cr_assert_not(st.procs[0]->ended);
	cr_assert_null(mp_live_spool_note(mp_live_follow_spool(f, 0)));
	mp_live_state_free(&st);
	mp_live_follow_free(f);
	free(src);
}

Test(live, skips_other_runs_spools_and_other_files)
{
	char *old = th_path(dir, "old-1-1.mpt"), *txt = th_path(dir, "notes.txt");
	char *skip[] = {"old-1-1.mpt"};
	struct mp_live_follow *f = mp_live_follow_new(dir, skip, 1);
	struct seen c = {0};
	struct lh_spool s;

	th_write(txt, "not a spool\n");
	lh_open(&s, old, 5);
	lh_alloc(&s, "cudaMalloc", 0x1, 1, 1, 0);
	lh_close(&s);
	cr_assert_eq(mp_live_follow_poll(f, count, &c), 0);
	cr_assert_eq(mp_live_follow_n_spools(f), 0);
	mp_live_follow_free(f);
	free(old);
	free(txt);
}

/* --- the state ---------------------------------------------------------------------------- */

Test(live, one_allocation_reported_twice_and_frees_of_what_is_not_live)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct mp_live_device *d;
	struct lh_spool s;

	lh_open(&s, spool, 100);
	/* the driver call returns first, then the runtime call around it */
	lh_alloc(&s, "cuMemAlloc_v2", 0x1000, 1 << 20, 1000, 0);
	lh_alloc(&s, "cudaMalloc", 0x1000, 1 << 20, 3000, 0);
	lh_alloc(&s, "cudaMalloc", 0x9000, 4096, 2000, 0);
	lh_free(&s, "cuMemFree_v2", 0x1000);
	lh_free(&s, "cudaFree", 0x1000); /* the inner call freed it */
	lh_free(&s, "cudaFree", 0x7777); /* never seen */
	lh_free(&s, "cudaFree", 0);
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_eq(mp_live_state_n_processes(&st), 1);
	d = &st.procs[0]->devices[0];
	cr_assert_eq(d->n_allocs, 2);
	cr_assert_eq(d->n_frees, 1);
	cr_assert_eq(d->allocated_bytes, (1 << 20) + 4096);
	cr_assert_eq(d->live_bytes, 4096);
	cr_assert_eq(d->peak_live_bytes, (1 << 20) + 4096);
	cr_assert_eq(d->n_latency, 2);
	cr_assert_eq(d->latency_sum_ns, 5000, "the longer call counts: %lld",
	             (long long)d->latency_sum_ns);
	cr_assert_eq(d->buckets[1], 1, "2 us: le 2.5e-06");
	cr_assert_eq(d->buckets[2], 1, "3 us: le 5e-06");
	cr_assert_not(d->reserved_known);
	cr_assert_eq(mp_live_free_share(d), -1);
	cr_assert(st.procs[0]->ended);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, latency_quantiles_are_nearest_rank)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct lh_spool s;
	int64_t p50, p99;
	int i;

	lh_open(&s, spool, 100);
	for (i = 1; i <= 200; i++) /* 1..200 us */
		lh_alloc(&s, "cudaMalloc", 0x1000 * (uint64_t)i, 512, 1000 * i, 0);
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_eq(mp_live_latency_quantiles(&st, NULL, &p50, &p99), 200);
	cr_assert_eq(p50, 100000);
	cr_assert_eq(p99, 198000);
	cr_assert_eq(mp_live_latency_quantiles(&st, &st.procs[0]->devices[0], &p50, &p99), 200);
	cr_assert_eq(p50, 100000);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, pytorch_cache_makes_segments_and_vmm_maps_are_reserved)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct mp_live_device *d;
	struct lh_spool s;

	lh_open(&s, spool, 100);
	lh_module(&s, "/usr/lib/python3/torch/lib/libc10_cuda.so", 0x7000000, 0x7100000);
	lh_alloc(&s, "cudaMalloc", 0x1000, 20 << 20, 1000, 0);
	/* a pinned host mapping is left out; a device one is reserved */
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_CREATE,
	                                     .extra = 1,
	                                     .mem_kind = MP_MK_PINNED,
	                                     .device = 0});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_MAP,
	                                     .extra = 1,
	                                     .address = 0x90000000,
	                                     .bytes = 2 << 20});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_CREATE,
	                                     .extra = 2,
	                                     .mem_kind = MP_MK_DEVICE,
	                                     .device = 1});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_MAP,
	                                     .extra = 2,
	                                     .device = -1,
	                                     .address = 0xa0000000,
	                                     .bytes = 4 << 20});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_OOM, .device = 0, .bytes = 1 << 30});
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_eq(st.procs[0]->n_devices, 2);
	d = &st.procs[0]->devices[0];
	cr_assert(d->reserved_known);
	cr_assert_not(d->live_known);
	cr_assert_eq(d->reserved_bytes, 20 << 20);
	cr_assert_eq(d->n_ooms, 1);
	cr_assert_eq(mp_live_free_share(d), -1, "tensors are not seen: unknown");
	d = &st.procs[0]->devices[1];
	cr_assert_eq(d->device, 1);
	cr_assert_eq(d->reserved_bytes, 4 << 20, "the handle's device");
	cr_assert_eq(st.reserved_bytes, 24 << 20);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, fragmentation_where_both_levels_are_seen)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct lh_spool s;

	lh_open(&s, spool, 100);
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_MAP,
	                                     .device = 0,
	                                     .address = 0xa0000000,
	                                     .bytes = 8 << 20});
	lh_alloc(&s, "cudaMalloc", 0x1000, 2 << 20, 1000, 0);
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_VMM_UNMAP, .address = 0xb0000000});
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_float_eq(mp_live_free_share(&st.procs[0]->devices[0]), 0.75, 1e-12);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, rates_over_the_last_interval)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct lh_spool s;
	int i;

	lh_open(&s, spool, 100);
	for (i = 0; i < 6; i++)
		lh_alloc(&s, "cudaMalloc", 0x1000 * (uint64_t)(i + 1), 1024, 0, 0);
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	mp_live_state_tick(&st, 2000000000); /* 2 s after the start */
	cr_assert_float_eq(st.procs[0]->devices[0].allocs_per_s, 3.0, 1e-12);
	cr_assert_float_eq(st.procs[0]->devices[0].bytes_per_s, 3072.0, 1e-12);
	cr_assert_eq(st.procs[0]->devices[0].n_latency, 0, "no durations: none counted");
	mp_live_state_tick(&st, 3000000000);
	cr_assert_float_eq(st.procs[0]->devices[0].allocs_per_s, 0.0, 1e-12);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, call_sites_skip_tool_frames_and_are_labelled_module_plus_offset)
{
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct mp_live_top top[5];
	struct lh_spool s;
	uint32_t a, b;

	lh_open(&s, spool, 100);
	lh_module(&s, "/opt/cuda/lib64/libcudart.so.13", 0x100000, 0x200000);
	lh_module(&s, "/srv/app/train", 0x400000, 0x500000);
	a = lh_stack(&s, 0x100010, 0x401234); /* runtime frame, then the program */
	b = lh_stack(&s, 0x405000, 0);
	lh_alloc(&s, "cudaMalloc", 0x1000, 1 << 20, 1000, a);
	lh_alloc(&s, "cudaMalloc", 0x2000, 1 << 20, 1000, a);
	lh_alloc(&s, "cudaMalloc", 0x3000, 3 << 20, 1000, b);
	lh_alloc(&s, "cudaMalloc", 0x4000, 1 << 10, 1000, 0);
	lh_free(&s, "cudaFree", 0x2000);
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_eq(mp_live_state_label_sites(&st, 5), 0);
	cr_assert_eq(mp_live_state_top_sites(&st, top, 5), 2);
	cr_assert_eq(top[0].site->live_bytes, 3 << 20);
	cr_assert_str_eq(top[0].site->label, "train+0x5000");
	cr_assert_eq(top[1].site->live_bytes, 1 << 20);
	cr_assert_eq(top[1].site->n_live, 1);
	cr_assert_str_eq(top[1].site->label, "train+0x1234");
	cr_assert_eq(mp_live_state_top_sites(&st, top, 1), 1);
	cr_assert_eq(top[0].site->pc, 0x405000);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
}

Test(live, ranks_losses_and_several_processes)
{
	char *second = th_path(dir, "h-200-1.mpt");
	struct mp_live_state st;
	struct mp_live_follow *f;
	struct lh_spool s;

	lh_open(&s, spool, 100);
	lh_meta(&s, "env:SLURM_PROCID", "7");
	lh_meta(&s, "env:RANK", "1"); /* RANK wins over SLURM_PROCID */
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_DROPPED, .extra = 5});
	lh_event(&s, (struct mp_spool_event){.kind = MP_SK_DISABLED,
	                                     .name = lh_str(&s, "write error")});
	lh_close(&s);
	lh_open(&s, second, 200);
	lh_meta(&s, "env:OMPI_COMM_WORLD_RANK", "x");
	lh_alloc(&s, "cudaMalloc", 0x1000, 100, 1000, 0);
	mp_spool_count_dropped(s.w, 2);
	lh_close(&s);
	f = lh_follow_all(dir, &st);
	cr_assert_eq(mp_live_state_n_processes(&st), 2);
	cr_assert_eq(st.procs[0]->pid, 100);
	cr_assert_eq(st.procs[0]->labels.rank, 1);
	cr_assert_str_eq(st.procs[0]->disabled, "write error");
	cr_assert_eq(st.procs[1]->pid, 200);
	cr_assert_eq(st.procs[1]->labels.rank, -1, "not a number: unknown");
	cr_assert_eq(mp_live_state_n_dropped(&st), 7);
	mp_live_state_free(&st);
	mp_live_follow_free(f);
	free(second);
}
