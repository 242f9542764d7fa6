/*
 * tests/unit/test_tune.c - tune's pure parts: PYTORCH_CUDA_ALLOC_CONF read
 * the way PyTorch's CUDAAllocatorConfig reads it (the list form of
 * roundup_power2_divisions fills the intervals below its first key and,
 * with '>', from its last key on, that key included), written back so it
 * reads the same, snapshot allocator_settings, the caching pool's options,
 * and the trace window's starting state laid out for seed (input_seed).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "replay/input_seed.h"
#include "replay/tune_setting.h"

#define MiB (1ull << 20)

static struct mp_tune_setting parse_ok(const char *conf)
{
	struct mp_tune_setting s;
	char why[256] = "";

	cr_assert_eq(mp_tune_setting_parse(conf, &s, why, sizeof why), 0, "%s: %s", conf, why);
	return s;
}

static void parse_bad(const char *conf, const char *want)
{
	struct mp_tune_setting s;
	char why[256] = "";

	cr_assert_eq(mp_tune_setting_parse(conf, &s, why, sizeof why), -1, "%s", conf);
	cr_assert_str_eq(why, want);
}

Test(tune_setting, scalars)
{
	struct mp_tune_setting s =
	        parse_ok(" expandable_segments:True, max_split_size_mb:256,"
	                 "max_non_split_rounding_mb:64,"
	                 "garbage_collection_threshold:0.8,pinned_num_register_threads:4");

	cr_assert(s.expandable);
	cr_assert_eq(s.max_split_bytes, 256 * MiB);
	cr_assert_eq(s.max_non_split_bytes, 64 * MiB);
	cr_assert_float_eq(s.gc_threshold, 0.8, 1e-12);
	s = parse_ok("");
	cr_assert(!s.expandable && !s.max_split_bytes && s.gc_threshold == 0);
}

Test(tune_setting, divisions_list_as_pytorch_reads_it)
{
	struct mp_tune_setting s = parse_ok("roundup_power2_divisions:[256:1,512:2,>:4]");

	for (int i = 0; i < 8; i++)
		cr_assert_eq(s.divisions[i], 1, "below the first key: its value (interval %d)", i);
	cr_assert_eq(s.divisions[8], 1);
	cr_assert_eq(s.divisions[9], 4, "'>' fills from the last key named, that key included");
	cr_assert_eq(s.divisions[15], 4);
	s = parse_ok("roundup_power2_divisions:4");
	for (int i = 0; i < MP_TUNE_N_INTERVALS; i++)
		cr_assert_eq(s.divisions[i], 4);
}

Test(tune_setting, bad_values_name_the_option)
{
	parse_bad("max_split_size_mb:20",
	          "bad value for 'max_split_size_mb': expected a whole number of MB above 20");
	parse_bad("expandable_segments:true",
	          "bad value for 'expandable_segments': expected True or False");
	parse_bad("roundup_power2_divisions:3",
	          "bad value for 'roundup_power2_divisions': expected a power of 2, or a list like "
	          "[256:1,512:2,>:4]");
	parse_bad("roundup_power2_divisions:[256:3]",
	          "bad value for 'roundup_power2_divisions': expected a power of 2, or a list like "
	          "[256:1,512:2,>:4]");
	parse_bad(
	        "garbage_collection_threshold:1",
	        "bad value for 'garbage_collection_threshold': expected a number between 0 and 1");
	parse_bad("max_split_sizemb:300", "unknown option 'max_split_sizemb'");
	parse_bad("backend:cudaMallocAsync",
	          "bad value for 'backend': expected native (memprof models PyTorch's own caching "
	          "allocator, not cudaMallocAsync)");
}

/* Every setting written reads back as itself, including uneven division lists. */
Test(tune_setting, format_reads_back)
{
	struct mp_tune_setting s = {.expandable = 1,
	                            .max_split_bytes = 100 * MiB,
	                            .max_non_split_bytes = 40 * MiB,
	                            .gc_threshold = 0.75};
	uint32_t lists[][MP_TUNE_N_INTERVALS] = {
	        {0, 0, 0, 0, 0, 8},
	        {2, 2, 2, 4, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8},
	        {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4},
	};
	char text[MP_TUNE_CONF_MAX], why[256];

	for (size_t k = 0; k < 3; k++) {
		struct mp_tune_setting back;

		memcpy(s.divisions, lists[k], sizeof s.divisions);
		mp_tune_setting_format(&s, text, sizeof text);
		cr_assert_eq(mp_tune_setting_parse(text, &back, why, sizeof why), 0, "%s: %s", text,
		             why);
		cr_assert(mp_tune_setting_equal(&s, &back), "%s", text);
		cr_assert_eq(memcmp(back.divisions, s.divisions, sizeof s.divisions), 0, "%s",
		             text);
	}
	mp_tune_setting_format(&(struct mp_tune_setting){0}, text, sizeof text);
	cr_assert_str_eq(text, "");
	s = (struct mp_tune_setting){.max_split_bytes = 64 * MiB};
	mp_tune_setting_format(&s, text, sizeof text);
	cr_assert_str_eq(text, "max_split_size_mb:64");
}

Test(tune_setting, snapshot_settings)
{
	struct mp_tune_setting s;
	char why[256];

	cr_assert_eq(mp_tune_setting_from_json(
	                     "{\"PYTORCH_CUDA_ALLOC_CONF\":\"max_split_size_mb:64\","
	                     "\"max_split_size\":134217728,\"garbage_collection_threshold\":0,"
	                     "\"expandable_segments\":false,"
	                     "\"roundup_power2_divisions\":{\"1\":0,\"2\":4,\"64\":8}}",
	                     &s, why, sizeof why),
	             0, "%s", why);
	cr_assert_eq(s.max_split_bytes, 128 * MiB, "the parsed fields win over the text");
	cr_assert_eq(s.divisions[1], 4);
	cr_assert_eq(s.divisions[6], 8);
	cr_assert_eq(mp_tune_setting_from_json("{\"PYTORCH_CUDA_ALLOC_CONF\":"
	                                       "\"expandable_segments:True\"}",
	                                       &s, why, sizeof why),
	             0);
	cr_assert(s.expandable, "only the text: read it");
	cr_assert_eq(mp_tune_setting_from_json("[1]", &s, why, sizeof why), -1);
	cr_assert_str_eq(why, "allocator_settings is not a JSON object");
}

Test(tune_setting, pool_options)
{
	struct mp_tune_setting s =
	        parse_ok("max_split_size_mb:64,roundup_power2_divisions:[32:4,>:0]");
	struct mp_tune_opts o;

	mp_tune_setting_options(&s, &o);
	cr_assert_eq(o.n, 2);
	cr_assert_str_eq(o.opts[0].name, "max_split_size");
	cr_assert_str_eq(o.opts[0].value, "67108864");
	cr_assert_str_eq(o.opts[1].name, "roundup_power2_divisions");
	cr_assert_eq(o.opts[1].value[0], '[');
}

static struct memprof_event event(int op, int64_t id, uint64_t addr, int64_t size)
{
	return (struct memprof_event){
	        .op = op, .alloc_id = id, .address = addr, .size_bytes = size};
}

/* Two segments before the first alloc, three preexisting blocks: tiled with free gaps. */
Test(tune_seed, prelude_is_tiled)
{
	struct mp_seed_build b = {0};
	struct mp_replay_device d = {.n_ops = 9};
	struct memprof_event evs[] = {
	        event(MEMPROF_OP_RESERVE, 1, 0x1000000, 20 * MiB),
	        event(MEMPROF_OP_RESERVE, 2, 0x8000000, 2 * MiB),
	        event(MEMPROF_OP_RESERVE, 3, 0x9000000, 2 * MiB),
	        event(MEMPROF_OP_RELEASE, 3, 0x9000000, 2 * MiB),
	        event(MEMPROF_OP_PREEXISTING, 1, 0x1000000 + 4 * MiB, 6 * MiB),
	        event(MEMPROF_OP_PREEXISTING, 2, 0x1000000, 4 * MiB),
	        event(MEMPROF_OP_PREEXISTING, 3, 0x8000000 + 512, 1024),
	        event(MEMPROF_OP_ALLOC, 4, 0x1000000 + 10 * MiB, MiB),
	        event(MEMPROF_OP_RESERVE, 5, 0xa000000, 2 * MiB), /* the window's own */
	};

	for (size_t i = 0; i < 9; i++)
		cr_assert_eq(mp_seed_note(&b, &evs[i], (int64_t)i - 4, i), 0);
	cr_assert_eq(mp_seed_finish(&b, &d), 0);
	cr_assert_eq(d.n_seed_segments, 2);
	cr_assert_eq(d.n_preexisting, 3);
	cr_assert_eq(d.n_prelude_ops, 7);
	cr_assert_eq(d.seed_segments[0].size_bytes, 20 * MiB);
	cr_assert_eq(d.seed_segments[0].n_blocks, 3);
	cr_assert_eq(d.seed_segments[0].blocks[0].index, 1, "by address: the 4 MiB block first");
	cr_assert_eq(d.seed_segments[0].blocks[1].index, 0);
	cr_assert_eq(d.seed_segments[0].blocks[2].index, -1);
	cr_assert_eq(d.seed_segments[0].blocks[2].offset_bytes, 10 * MiB);
	cr_assert_eq(d.seed_segments[1].n_blocks, 3, "free, the 1 KiB block, free");
	cr_assert_eq(d.seed_segments[1].blocks[1].offset_bytes, 512);
	free(d.seed_segments);
	free(d.seed_blocks);
}

Test(tune_seed, overlapping_blocks_leave_their_segment_out)
{
	struct mp_seed_build b = {0};
	struct mp_replay_device d = {0};
	struct memprof_event evs[] = {
	        event(MEMPROF_OP_RESERVE, 1, 0x1000000, 20 * MiB),
	        event(MEMPROF_OP_PREEXISTING, 1, 0x1000000, 8 * MiB),
	        event(MEMPROF_OP_PREEXISTING, 2, 0x1000000 + 4 * MiB, 8 * MiB),
	};

	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(mp_seed_note(&b, &evs[i], (int64_t)i, i), 0);
	cr_assert_eq(mp_seed_finish(&b, &d), 0);
	cr_assert_eq(d.n_seed_segments, 0);
	cr_assert_eq(d.n_seed_skipped, 1);
	free(d.seed_segments);
	free(d.seed_blocks);
}

Test(tune_seed, no_preexisting_blocks_no_seed)
{
	struct mp_seed_build b = {0};
	struct mp_replay_device d = {0};
	struct memprof_event r = event(MEMPROF_OP_RESERVE, 1, 0x1000000, 20 * MiB);

	cr_assert_eq(mp_seed_note(&b, &r, 0, 0), 0);
	cr_assert_eq(mp_seed_finish(&b, &d), 0);
	cr_assert_eq(d.n_seed_segments, 0, "a reservation of the trace's own");
	free(d.seed_segments);
	free(d.seed_blocks);
}
