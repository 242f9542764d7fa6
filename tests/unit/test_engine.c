/*
 * tests/unit/test_engine.c - the replay engine on small traces written to a
 * real trace database: the figures it computes itself (peak reserved, the
 * lower bound with free_requested, backend calls, fragmentation at the
 * peak), OOMs under a capacity, --verify catching pools that overlap,
 * under-allocate or place outside their memory, segment-level replay, and
 * regions a pool leaves behind.  Test pools are defined here.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "replay/driver_model.h"
#include "replay/engine.h"
#include "replay/input.h"
#include "store/reader.h"
#include "store/store.h"
#include "store/writer.h"

struct ev {
	int op;
	int64_t id, size, requested;
	uint64_t stream;
};

static char *dir;
static struct mp_replay_input *in;

static void teardown(void)
{
	mp_replay_input_free(in);
	in = NULL;
	if (dir)
		th_rmdir(dir);
	dir = NULL;
}

TestSuite(engine, .fini = teardown);

static void load(const struct ev *evs, size_t n)
{
	struct mp_error err = {0};
	struct mp_store *s;
	struct mp_writer *w;
	struct mp_reader *r;
	struct memprof_process p = {.pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
	char *path;

	teardown(); /* a test that loads a second trace: the first one's input and directory */
	dir = th_mkdtemp();
	path = th_path(dir, "t.db");
	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p), 0);
	for (size_t i = 0; i < n; i++) {
		struct memprof_event e = {.ts_ns = (int64_t)i * 10,
		                          .op = evs[i].op,
		                          .alloc_id = evs[i].id,
		                          .size_bytes = evs[i].size,
		                          .requested_bytes =
		                                  evs[i].requested ? evs[i].requested : evs[i].size,
		                          .address = 0x1000 * (uint64_t)(evs[i].id + 1),
		                          .device_free_bytes = -1,
		                          .process_id = p.id,
		                          .stream = evs[i].stream};
		cr_assert_eq(mp_writer_event(w, &e), 0);
	}
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, 0, &r), 0);
	cr_assert_eq(mp_replay_input_load(r, -1, &in, &err), 0, "%s", err.msg);
	mp_reader_close(r);
	mp_store_close(s);
	free(path);
	cr_assert_eq(in->n_devices, 1);
}

/* --- test pools ------------------------------------------------------------ */

struct memprof_pool {
	const struct memprof_pool_host *h;
	int mode;
	struct memprof_region slab;
	int block0_live;
};
enum {
	MODE_DIRECT,
	MODE_SAME_ADDR,
	MODE_SHORT,
	MODE_OUTSIDE,
	MODE_SLAB_LEAK,
	MODE_SHARE,         /* every block at the slab's start, sharing block 0 while it lives */
	MODE_SHARE_OUTSIDE, /* says it shares block 0, but lies past its end */
	MODE_SHARE_DEAD,    /* says it shares block 0 after block 0 was freed */
};
static int next_mode;

static int t_create(const struct memprof_pool_host *h, const struct memprof_pool_option *o,
                    size_t n, struct memprof_pool **out)
{
	struct memprof_pool *p = calloc(1, sizeof *p);
	(void)o, (void)n;
	p->h = h;
	p->mode = next_mode;
	if (p->mode != MODE_DIRECT && p->mode != MODE_SHORT && p->mode != MODE_OUTSIDE)
		cr_assert_eq(h->reserve(h->ctx, 1 << 20, &p->slab), 0);
	*out = p;
	return 0;
}

static int t_alloc_shared(struct memprof_pool *p, const struct memprof_pool_request *req,
                          struct memprof_pool_block *out)
{
	out->addr = p->slab.addr;
	out->size_bytes = req->size_bytes;
	out->handle = (uint64_t)req->index;
	if (p->mode == MODE_SHARE_OUTSIDE && req->index > 0)
		out->addr += 4096;
	if (req->index == 0 || (p->mode == MODE_SHARE && !p->block0_live))
		return 0;
	return p->h->block_shares(p->h->ctx, req->block_token, 0);
}

static int t_alloc(struct memprof_pool *p, const struct memprof_pool_request *req,
                   struct memprof_pool_block *out)
{
	struct memprof_region r;
	int rc;

	if (p->mode >= MODE_SHARE) {
		p->block0_live |= req->index == 0;
		return t_alloc_shared(p, req, out);
	}
	if (p->mode == MODE_SAME_ADDR || p->mode == MODE_SLAB_LEAK) {
		out->addr = p->slab.addr;
		out->size_bytes = req->size_bytes;
		if (p->mode == MODE_SLAB_LEAK)
			out->addr += (uint64_t)req->index * 4096;
		return 0;
	}
	if ((rc = p->h->reserve(p->h->ctx, req->size_bytes, &r)) != 0)
		return rc;
	out->addr = r.addr + (p->mode == MODE_OUTSIDE ? 64 : 0);
	out->size_bytes = req->size_bytes - (p->mode == MODE_SHORT ? 1 : 0);
	out->handle = r.token;
	return 0;
}

static int t_free(struct memprof_pool *p, const struct memprof_pool_block *b, uint64_t stream)
{
	struct memprof_region r = {.addr = b->addr - (p->mode == MODE_OUTSIDE ? 64 : 0),
	                           .size_bytes = b->size_bytes + (p->mode == MODE_SHORT ? 1 : 0),
	                           .token = b->handle};
	(void)stream;
	if (p->mode >= MODE_SHARE && b->handle == 0)
		p->block0_live = 0; /* the handle is the request index */
	if (p->mode != MODE_DIRECT && p->mode != MODE_SHORT && p->mode != MODE_OUTSIDE)
		return 0;
	return p->h->release(p->h->ctx, &r);
}

static void t_destroy(struct memprof_pool *p)
{
	free(p);
}

static struct mp_pool_plugin test_pool = {
        .path = "(test)",
        .ops = {.struct_size = sizeof(struct memprof_pool_ops),
                .abi_major = MEMPROF_POOL_ABI_MAJOR,
                .name = "test",
                .create = t_create,
                .alloc = t_alloc,
                .free = t_free,
                .destroy = t_destroy},
};

static int run_on(const struct mp_backend_ops *be, int mode, uint64_t capacity, int verify,
                  struct mp_replay_result *res, struct mp_error *err)
{
	struct mp_replay_options o = {.backend = be, .capacity_bytes = capacity, .verify = verify};

	next_mode = mode;
	return mp_replay_run(in, &in->devices[0], &test_pool, &o, res, err);
}

static int run(int mode, uint64_t capacity, int verify, struct mp_replay_result *res)
{
	struct mp_error err = {0};
	int rc = run_on(&mp_backend_sim, mode, capacity, verify, res, &err);

	cr_assert(rc == 0, "replay failed: %s", err.msg);
	return rc;
}

/* alloc 1 (100, asked 90), alloc 2 (300), free_requested 1, alloc 3 (50), free 1, free 2 */
static const struct ev basic[] = {
        {MEMPROF_OP_ALLOC, 1, 100, 90, 7},         {MEMPROF_OP_ALLOC, 2, 300, 0, 7},
        {MEMPROF_OP_FREE_REQUESTED, 1, 100, 0, 7}, {MEMPROF_OP_ALLOC, 3, 50, 0, 7},
        {MEMPROF_OP_FREE, 1, 100, 0, 9},           {MEMPROF_OP_FREE, 2, 300, 0, 7},
};

Test(engine, figures_of_a_direct_replay)
{
	struct mp_replay_result res;

	load(basic, 6);
	cr_assert_eq(in->devices[0].n_allocs, 3);
	cr_assert_eq(in->streams[in->devices[0].allocs[0].free_stream], 9);
	run(MODE_DIRECT, 0, 1, &res);
	/* pool memory: 100+300+50 = 450 while 1 waits for its free, each
	 * request under 2 MiB rounded to 512 B inside one shared 2 MiB page of
	 * the driver (modelled): 2 MiB reserved.  The trace's requested bytes
	 * peak at 90+300 = 390 (1 stops being live before 3) */
	cr_assert_eq(res.peak_reserved_bytes, 2 << 20);
	cr_assert_eq(res.lower_bound_bytes, 390);
	cr_assert_eq(res.peak_live_bytes, 400);
	cr_assert_eq(res.n_allocs, 3);
	cr_assert_eq(res.n_frees, 2);
	cr_assert_eq(res.backend_calls, 5);
	cr_assert_eq(res.end_reserved_bytes, 2 << 20,
	             "the pool released 1 and 2; 3 is left, in its 2 MiB page");
	cr_assert_eq(res.verify, MP_VERIFY_PASSED);
	cr_assert_eq(res.time_measured, 0);
	cr_assert_gt(res.backend_ns, 0);
	cr_assert_eq(res.total_ns, res.host_ns + res.backend_ns);
	/* the peak is reached at alloc 1: the page less block 1 */
	cr_assert_eq(res.free_at_peak_bytes, (2 << 20) - 100);
	cr_assert_eq(res.stats[0].value, 1, "block 3's reservation is released by the host");
}

/* as basic, in sizes the driver reserves whole pages for (modelled):
 * 1 takes 4 MiB (2 MiB + 100 rounded to pages), 2 takes 6 MiB, and 3
 * (1 MiB, small) a shared 2 MiB page */
static const struct ev large[] = {
        {MEMPROF_OP_ALLOC, 1, (2 << 20) + 100, (2 << 20) + 90, 7},
        {MEMPROF_OP_ALLOC, 2, 6 << 20, 0, 7},
        {MEMPROF_OP_FREE_REQUESTED, 1, (2 << 20) + 100, 0, 7},
        {MEMPROF_OP_ALLOC, 3, 1 << 20, 0, 7},
        {MEMPROF_OP_FREE, 1, (2 << 20) + 100, 0, 9},
        {MEMPROF_OP_FREE, 2, 6 << 20, 0, 7},
};

Test(engine, capacity_makes_ooms_with_the_state_at_that_point)
{
	struct mp_replay_result res;

	load(large, 6);
	run(MODE_DIRECT, 11 << 20, 0, &res);
	cr_assert_eq(res.n_ooms, 1);
	cr_assert_eq(res.first_oom.seq, 4, "alloc 3 is event 4");
	cr_assert_eq(res.first_oom.request_bytes, 1 << 20);
	cr_assert_eq(res.first_oom.live_bytes, 6 << 20,
	             "2 is live in the trace; 1 ended, 3 is the request");
	cr_assert_eq(res.first_oom.reserved_bytes, 10 << 20, "4 MiB + 6 MiB: 3's page is past 11");
	cr_assert_eq(res.peak_reserved_bytes, 10 << 20);
}

Test(engine, reservations_in_the_drivers_granularity)
{
	static const struct ev twelve[] = {{MEMPROF_OP_ALLOC, 1, 12, 12, 7}};
	struct mp_driver_model m = {0};
	struct mp_replay_result res;

	/* a 12-byte cudaMalloc holds a 2 MiB page of the driver, not 12 bytes */
	load(twelve, 1);
	run(MODE_DIRECT, 0, 0, &res);
	cr_assert_eq(res.peak_reserved_bytes, 2 << 20);
	cr_assert_eq(res.lower_bound_bytes, 12);
	load(large, 6);
	run(MODE_DIRECT, 0, 0, &res);
	cr_assert_eq(res.peak_reserved_bytes, (4 << 20) + (6 << 20) + (2 << 20));
	cr_assert_eq(mp_driver_granted(0), 512);
	cr_assert_eq(mp_driver_granted(12), 512);
	cr_assert_eq(mp_driver_granted(513), 1024);
	cr_assert_eq(mp_driver_granted((2 << 20) - 1), 2 << 20);
	cr_assert_eq(mp_driver_granted(2 << 20), 2 << 20);
	cr_assert_eq(mp_driver_granted((2 << 20) + 1), 4 << 20);
	/* small requests share pages: 4096 of them of 512 B fill one */
	cr_assert_eq(mp_driver_add(&m, 100), 2 << 20);
	for (int i = 1; i < 4096; i++)
		cr_assert_eq(mp_driver_add(&m, 512), 0);
	cr_assert_eq(mp_driver_growth(&m, 1), 2 << 20);
	cr_assert_eq(mp_driver_add(&m, 1), 2 << 20);
	cr_assert_eq(mp_driver_remove(&m, 1), 2 << 20);
	cr_assert_eq(mp_driver_remove(&m, 512), 0);
	cr_assert_eq(mp_driver_growth(&m, 3 << 20), 4 << 20);
	cr_assert_eq(mp_driver_remove(&m, 5 << 20), 6 << 20);
}

Test(engine, verify_catches_overlapping_blocks)
{
	struct mp_replay_result res;

	load(basic, 6);
	run(MODE_SAME_ADDR, 0, 1, &res);
	cr_assert_eq(res.verify, MP_VERIFY_FAILED);
	cr_assert(strstr(res.verify_msg, "over a live allocation"), "%s", res.verify_msg);
	cr_assert(strstr(res.verify_msg, "event 2"), "%s", res.verify_msg);
}

Test(engine, without_verify_an_overlap_is_not_judged)
{
	struct mp_replay_result res;

	load(basic, 6);
	run(MODE_SAME_ADDR, 0, 0, &res);
	cr_assert_eq(res.verify, MP_VERIFY_OFF);
	cr_assert_eq(res.n_allocs, 3);
}

Test(engine, verify_catches_short_and_outside_blocks)
{
	struct mp_replay_result res;

	load(basic, 6);
	run(MODE_SHORT, 0, 1, &res);
	cr_assert_eq(res.verify, MP_VERIFY_FAILED);
	cr_assert(strstr(res.verify_msg, "fewer bytes"), "%s", res.verify_msg);
	run(MODE_OUTSIDE, 0, 1, &res);
	cr_assert_eq(res.verify, MP_VERIFY_FAILED);
	cr_assert(strstr(res.verify_msg, "outside"), "%s", res.verify_msg);
}

Test(engine, fragmentation_at_the_reserved_peak)
{
	struct mp_replay_result res;

	/* one 1 MiB slab reserved at create: the peak is reached before any
	 * block, so the snapshot is of an empty slab: all free, one hole */
	load(basic, 6);
	run(MODE_SLAB_LEAK, 0, 1, &res);
	/* the driver holds a 2 MiB page for the 1 MiB slab (modelled) */
	cr_assert_eq(res.peak_reserved_bytes, 2 << 20);
	cr_assert_eq(res.verify, MP_VERIFY_PASSED);
	cr_assert_eq(res.free_at_peak_bytes, 2 << 20);
	cr_assert_float_eq(res.frag_at_peak, 0.0, 1e-12);
}

Test(engine, a_segment_only_trace_replays_its_segments)
{
	static const struct ev segs[] = {
	        {MEMPROF_OP_RESERVE, 1, 2 << 20, 0, 0},
	        {MEMPROF_OP_RESERVE, 2, 20 << 20, 0, 0},
	        {MEMPROF_OP_RELEASE, 1, 2 << 20, 0, 0},
	};
	struct mp_replay_result res;

	load(segs, 3);
	cr_assert_eq(in->devices[0].level, MP_LEVEL_SEGMENT);
	run(MODE_DIRECT, 0, 1, &res);
	cr_assert_eq(res.level, MP_LEVEL_SEGMENT);
	cr_assert_eq(res.peak_reserved_bytes, 22 << 20);
	cr_assert_eq(res.lower_bound_bytes, 22 << 20);
}

Test(engine, unmatched_frees_are_counted_and_skipped)
{
	static const struct ev evs[] = {
	        {MEMPROF_OP_FREE, 5, 10, 0, 0},
	        {MEMPROF_OP_ALLOC, 1, 10, 0, 0},
	};
	struct mp_replay_result res;

	load(evs, 2);
	cr_assert_eq(in->devices[0].n_unmatched_frees, 1);
	run(MODE_DIRECT, 0, 1, &res);
	cr_assert_eq(res.n_allocs, 1);
	cr_assert_eq(res.n_frees, 0);
}

/*
 * alloc 1 (4096), alloc 2 (1024), free 2, alloc 3 (2048), free 1, free 3:
 * blocks 2 and 3 lie inside block 1 by design (block_shares), so the
 * overlap is no verify failure, and block 1's bytes (overwritten by their
 * patterns on host) are not checked.  Block 3 outlives block 1: from then
 * on it is a block of its own.
 */
static const struct ev shared[] = {
        {MEMPROF_OP_ALLOC, 1, 4096, 0, 7}, {MEMPROF_OP_ALLOC, 2, 1024, 0, 7},
        {MEMPROF_OP_FREE, 2, 1024, 0, 7},  {MEMPROF_OP_ALLOC, 3, 2048, 0, 7},
        {MEMPROF_OP_FREE, 1, 4096, 0, 7},  {MEMPROF_OP_FREE, 3, 2048, 0, 7},
};

Test(engine, shared_blocks_pass_verify_on_sim_and_host)
{
	const struct mp_backend_ops *backends[] = {&mp_backend_sim, &mp_backend_host};
	struct mp_replay_result res;
	struct mp_error err = {0};

	load(shared, 6);
	for (size_t k = 0; k < 2; k++) {
		cr_assert_eq(run_on(backends[k], MODE_SHARE, 0, 1, &res, &err), 0, "%s", err.msg);
		cr_assert_eq(res.verify, MP_VERIFY_PASSED, "%s: %s", backends[k]->name,
		             res.verify_msg);
		cr_assert_eq(res.n_shared, 2);
		cr_assert_eq(res.peak_reserved_bytes, 2 << 20, "the 1 MiB slab's 2 MiB page");
		/* at the peak (the slab reserve, before any block) all of it is free */
		cr_assert_eq(res.free_at_peak_bytes, 2 << 20);
	}
	cr_assert_eq(run_on(&mp_backend_host, MODE_SAME_ADDR, 0, 1, &res, &err), 0);
	cr_assert_eq(res.verify, MP_VERIFY_FAILED, "the same overlap, undeclared, fails");
}

Test(engine, a_shared_block_must_lie_inside_the_live_one)
{
	struct mp_replay_result res;
	struct mp_error err = {0};

	load(shared, 6);
	cr_assert_eq(run_on(&mp_backend_sim, MODE_SHARE_OUTSIDE, 0, 1, &res, &err), 0, "%s",
	             err.msg);
	cr_assert_eq(res.verify, MP_VERIFY_FAILED);
	cr_assert(strstr(res.verify_msg, "outside that block"), "%s", res.verify_msg);
	cr_assert(strstr(res.verify_msg, "#1"), "%s", res.verify_msg);
}

Test(engine, sharing_a_block_that_is_not_live_fails_the_replay)
{
	static const struct ev late[] = {
	        {MEMPROF_OP_ALLOC, 1, 4096, 0, 7},
	        {MEMPROF_OP_FREE, 1, 4096, 0, 7},
	        {MEMPROF_OP_ALLOC, 2, 1024, 0, 7},
	        {MEMPROF_OP_FREE, 2, 1024, 0, 7},
	};
	struct mp_replay_result res;
	struct mp_error err = {0};

	load(late, 4);
	cr_assert_neq(run_on(&mp_backend_sim, MODE_SHARE_DEAD, 0, 0, &res, &err), 0);
	cr_assert(strstr(err.msg, "is not live"), "%s", err.msg);
}

/* --- seed (pool ABI 1.3): the trace window's starting segments ------------- */

static struct memprof_pool_seed_block seen_blocks[8];
static size_t n_seed_calls, seen_n_segments, seen_n_blocks;
static uint64_t seen_size;

static int t_seed(struct memprof_pool *p, const struct memprof_pool_seed_segment *s, size_t n)
{
	(void)p;
	n_seed_calls++;
	seen_n_segments = n;
	seen_size = n ? s[0].size_bytes : 0;
	seen_n_blocks = n ? s[0].n_blocks : 0;
	for (size_t i = 0; i < seen_n_blocks && i < 8; i++)
		seen_blocks[i] = s[0].blocks[i];
	return 0;
}

/*
 * A window: segment 15 at 0x10000 (64 KiB) reserved and blocks 16 (0x11000,
 * 4 KiB) and 18 (0x13000, 8 KiB) live before the first alloc (addresses are
 * 0x1000 * (id + 1)); then the window's own alloc 1.
 */
static const struct ev window[] = {
        {MEMPROF_OP_RESERVE, 15, 0x10000, 0, 0},    {MEMPROF_OP_PREEXISTING, 16, 0x1000, 0, 0},
        {MEMPROF_OP_PREEXISTING, 18, 0x2000, 0, 0}, {MEMPROF_OP_ALLOC, 1, 0x800, 0, 0},
        {MEMPROF_OP_FREE, 16, 0x1000, 0, 0},        {MEMPROF_OP_FREE, 18, 0x2000, 0, 0},
        {MEMPROF_OP_FREE, 1, 0x800, 0, 0},
};

Test(engine, a_pool_with_seed_starts_from_the_windows_segments)
{
	struct mp_pool_plugin seeded = test_pool;
	struct mp_replay_options o = {.backend = &mp_backend_sim};
	struct mp_replay_result *res = calloc(1, sizeof *res);
	struct mp_error err = {0};
	static const uint64_t want[5][3] = {{0, 0x1000, (uint64_t)-1},
	                                    {0x1000, 0x1000, 0},
	                                    {0x2000, 0x1000, (uint64_t)-1},
	                                    {0x3000, 0x2000, 1},
	                                    {0x5000, 0xb000, (uint64_t)-1}};

	seeded.ops.seed = t_seed;
	load(window, sizeof window / sizeof window[0]);
	n_seed_calls = 0;
	next_mode = MODE_DIRECT;
	cr_assert_eq(mp_replay_run(in, &in->devices[0], &seeded, &o, res, &err), 0, "%s", err.msg);
	cr_assert_eq(n_seed_calls, 1,
	             "once: the fragmentation at the peak is measured in the same pass");
	cr_assert_eq(seen_n_segments, 1);
	cr_assert_eq(seen_size, 0x10000);
	cr_assert_eq(seen_n_blocks, 5);
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(seen_blocks[i].offset_bytes, want[i][0], "block %zu", i);
		cr_assert_eq(seen_blocks[i].size_bytes, want[i][1], "block %zu", i);
		cr_assert_eq((uint64_t)seen_blocks[i].index, want[i][2], "block %zu", i);
	}
	cr_assert_eq(res->n_seeded_segments, 1);
	o.no_seed = 1;
	n_seed_calls = 0;
	cr_assert_eq(mp_replay_run(in, &in->devices[0], &seeded, &o, res, &err), 0, "%s", err.msg);
	cr_assert_eq(n_seed_calls, 0, "no_seed");
	cr_assert_eq(res->n_seeded_segments, 0);
	free(res);
}

Test(engine, a_trace_from_nothing_seeds_nothing)
{
	struct mp_pool_plugin seeded = test_pool;
	struct mp_replay_result *res = calloc(1, sizeof *res);
	struct mp_error err = {0};
	struct mp_replay_options o = {.backend = &mp_backend_sim};

	seeded.ops.seed = t_seed;
	load(basic, sizeof basic / sizeof basic[0]);
	n_seed_calls = 0;
	next_mode = MODE_DIRECT;
	cr_assert_eq(mp_replay_run(in, &in->devices[0], &seeded, &o, res, &err), 0, "%s", err.msg);
	cr_assert_eq(n_seed_calls, 0);
	free(res);
}

/*
 * The input holds 4 bytes of op and 4 of event-number step per op and 48
 * per allocation (it held 16 and 88); a free after a free_requested is its
 * own kind, and the event numbers come back whole, a far step included.
 */
Test(engine, ops_are_compact)
{
	static const int want_kind[] = {MP_OP_ALLOC, MP_OP_ALLOC,      MP_OP_LIVE_END,
	                                MP_OP_ALLOC, MP_OP_FREE_ENDED, MP_OP_FREE};
	struct mp_replay_device d = {0}, *dev;
	struct mp_intmap far;
	uint32_t dseq[3] = {5, MP_REPLAY_DSEQ_FAR, 2};
	int64_t seq = 0;

	cr_assert_leq(sizeof(struct mp_replay_alloc), 48);
	cr_assert_eq(sizeof(*d.ops), 4);
	cr_assert_eq(sizeof(*d.op_dseq), 4);
	load(basic, 6);
	dev = &in->devices[0];
	cr_assert_eq(dev->n_ops, 6);
	for (size_t k = 0; k < 6; k++) {
		seq += mp_replay_op_seq_step(dev, k);
		cr_assert_eq(seq, (int64_t)k + 1, "op %zu is event %zu", k, k + 1);
		cr_assert_eq(MP_REPLAY_OP_KIND(dev->ops[k]), want_kind[k], "op %zu", k);
	}
	mp_intmap_init(&far);
	cr_assert_eq(mp_intmap_put(&far, 1, (uint64_t)1 << 40), 0);
	d.op_dseq = dseq;
	d.far_dseq = &far;
	cr_assert_eq(mp_replay_op_seq_step(&d, 0), 5);
	cr_assert_eq(mp_replay_op_seq_step(&d, 1), (int64_t)1 << 40);
	cr_assert_eq(mp_replay_op_seq_step(&d, 2), 2);
	mp_intmap_free(&far);
}

/*
 * The sites and phases of a trace with stacks and phases: stack 2 and 3 share
 * their innermost frame (one site), phases alternate, id 4 is reused while
 * live (a lost free).  Written, read, then read again with every stack and
 * phase id moved far up (past the input's table of sites by stack id, into
 * its map): the same texts for every allocation.
 */
static void load_named(const char *path, const char **site, const char **phase, size_t n_allocs)
{
	struct mp_error err = {0};
	struct mp_store *s;
	struct mp_reader *r;

	mp_replay_input_free(in);
	in = NULL;
	cr_assert_eq(mp_store_open(&s, path, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_reader_open(s, MP_READ_STACKS, &r), 0);
	cr_assert_eq(mp_replay_input_load(r, -1, &in, &err), 0, "%s", err.msg);
	mp_reader_close(r);
	mp_store_close(s);
	cr_assert_eq(in->n_devices, 1);
	cr_assert_eq(in->devices[0].n_allocs, n_allocs);
	for (size_t i = 0; i < n_allocs; i++) {
		const struct mp_replay_alloc *a = &in->devices[0].allocs[i];
		site[i] = in->sites ? in->sites[a->site] : NULL;
		phase[i] = in->phases ? in->phases[a->phase] : NULL;
	}
}

Test(engine, sites_and_phases_by_text_whatever_their_ids)
{
	static const struct memprof_frame f[] = {{"conv_fwd", "model.py", 10},
	                                         {"train_step", "train.py", 20},
	                                         {"attn_fwd", "model.py", 30},
	                                         {"eval_step", "eval.py", 40}};
	const struct memprof_stack st[3] = {{2, (const struct memprof_frame[]){f[0], f[1]}},
	                                    {2, (const struct memprof_frame[]){f[2], f[1]}},
	                                    {2, (const struct memprof_frame[]){f[2], f[3]}}};
	enum { N = 40 };
	const char *site[N], *phase[N], *site2[N], *phase2[N];
	static const char *const want_site[] = {"conv_fwd (model.py:10)", "attn_fwd (model.py:30)",
	                                        "attn_fwd (model.py:30)"};
	struct memprof_process p = {.pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
	struct mp_error err = {0};
	struct mp_store *s;
	struct mp_writer *w;
	int64_t stack_id[3], phase_id[2];
	char *path;

	dir = th_mkdtemp();
	path = th_path(dir, "t.db");
	cr_assert_eq(mp_store_create(&s, path, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(mp_writer_open(s, &w), 0);
	cr_assert_gt(mp_writer_process(w, &p), 0);
	for (int k = 0; k < 3; k++)
		cr_assert_gt(stack_id[k] = mp_writer_stack(w, &st[k]), 0);
	phase_id[0] = mp_writer_phase(w, "fwd", 3);
	phase_id[1] = mp_writer_phase(w, "bwd", 3);
	for (size_t i = 0; i < N; i++) {
		struct memprof_event e = {.ts_ns = (int64_t)i,
		                          .op = MEMPROF_OP_ALLOC,
		                          .alloc_id = i == 5 ? 4 : (int64_t)i,
		                          .size_bytes = 512,
		                          .requested_bytes = 512,
		                          .address = 0x1000 * (uint64_t)(i + 1),
		                          .device_free_bytes = -1,
		                          .process_id = p.id,
		                          .stream = i % 3,
		                          .stack_id = i % 7 == 6 ? 0 : stack_id[i % 3],
		                          .phase_id = i % 5 == 4 ? 0 : phase_id[(i / 2) % 2]};
		cr_assert_eq(mp_writer_event(w, &e), 0);
	}
	cr_assert_eq(mp_writer_close(w), 0);
	cr_assert_eq(mp_store_commit(s, &err), 0, "%s", err.msg);
	load_named(path, site, phase, N);
	cr_assert_eq(in->devices[0].n_unmatched_frees, 1, "id 4 reused while live");
	cr_assert_eq(in->n_sites, 3, "none and two texts");
	for (size_t i = 0; i < N; i++) {
		if (i % 7 == 6)
			cr_assert_null(site[i]);
		else
			cr_assert_str_eq(site[i], want_site[i % 3], "allocation %zu", i);
		if (i % 5 == 4)
			cr_assert_null(phase[i]);
		else
			cr_assert_str_eq(phase[i], (i / 2) % 2 ? "bwd" : "fwd", "allocation %zu",
			                 i);
		cr_assert_eq(in->streams[in->devices[0].allocs[i].stream], i % 3);
	}
	th_sqlite_exec(path, "UPDATE stacks SET id = id + 100000000,"
	                     " parent = CASE parent WHEN 0 THEN 0 ELSE parent + 100000000 END;"
	                     "UPDATE phases SET id = id + 100000000;"
	                     "UPDATE events SET stack = stack + 100000000 WHERE stack > 0;"
	                     "UPDATE events SET phase = phase + 100000000 WHERE phase > 0;");
	for (size_t i = 0; i < N; i++) { /* the first input's texts go with it: copies */
		site[i] = site[i] ? strdup(site[i]) : NULL;
		phase[i] = phase[i] ? strdup(phase[i]) : NULL;
	}
	load_named(path, site2, phase2, N);
	for (size_t i = 0; i < N; i++) {
		cr_assert_eq(!site[i], !site2[i], "allocation %zu", i);
		cr_assert(!site[i] || !strcmp(site[i], site2[i]), "allocation %zu", i);
		cr_assert_eq(!phase[i], !phase2[i], "allocation %zu", i);
		cr_assert(!phase[i] || !strcmp(phase[i], phase2[i]), "allocation %zu", i);
		free((char *)site[i]);
		free((char *)phase[i]);
	}
	free(path);
}
