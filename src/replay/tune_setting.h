/*
 * replay/tune_setting.h - one PyTorch caching-allocator setting (the part of
 * PYTORCH_CUDA_ALLOC_CONF that changes memory), read from the variable's
 * text or from a snapshot's allocator_settings, written back as the line
 * to paste, and turned into the caching pool's options.  Pure functions,
 * thread-safe; they never print.
 */
#ifndef MP_REPLAY_TUNE_SETTING_H
#define MP_REPLAY_TUNE_SETTING_H

#include <stddef.h>
#include <stdint.h>

#include "memprof/pool.h"

#define MP_TUNE_N_INTERVALS 16 /* roundup_power2_divisions: 1 MiB .. 64 GiB */
#define MP_TUNE_MAX_OPTS    6
#define MP_TUNE_CONF_MAX    512

struct mp_tune_setting {
	int expandable;
	uint64_t max_split_bytes;                /* 0: unlimited (PyTorch's default) */
	uint64_t max_non_split_bytes;            /* 0: PyTorch's default, 20 MiB */
	double gc_threshold;                     /* 0: off */
	uint32_t divisions[MP_TUNE_N_INTERVALS]; /* per power-of-two interval from 1 MiB; 0: off */
};

/* The caching pool's options for s, their values in bufs (which must outlive opts). */
struct mp_tune_opts {
	struct memprof_pool_option opts[MP_TUNE_MAX_OPTS];
	char bufs[MP_TUNE_MAX_OPTS][128];
	size_t n;
};

/*
 * Parse PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) text into s, on top
 * of PyTorch's defaults.  Options that do not change memory (pinned_*,
 * release_lock_on_cudamalloc) are accepted and left out.  Returns 0, or -1
 * with why (a message naming the option) when the text is not one PyTorch
 * accepts, or names the cudaMallocAsync backend, which is not modelled.
 */
int mp_tune_setting_parse(const char *conf, struct mp_tune_setting *s, char *why, size_t n_why);

/*
 * A snapshot's allocator_settings (JSON text, as the importer keeps it in
 * the trace's meta): its parsed fields when present, else its
 * PYTORCH_CUDA_ALLOC_CONF text.  0 or -1 with why.
 */
int mp_tune_setting_from_json(const char *json, struct mp_tune_setting *s, char *why, size_t n_why);

/* The value to paste, e.g. "expandable_segments:True,max_split_size_mb:256"; "" for the defaults.
 */
void mp_tune_setting_format(const struct mp_tune_setting *s, char *buf, size_t n);

void mp_tune_setting_options(const struct mp_tune_setting *s, struct mp_tune_opts *o);

/* 1 when a and b configure the allocator the same way. */
int mp_tune_setting_equal(const struct mp_tune_setting *a, const struct mp_tune_setting *b);

#endif
