/*
 * plugins/caching/config.c - the caching pool's options: PyTorch's
 * PYTORCH_CUDA_ALLOC_CONF settings that change placement, with the ranges
 * CUDAAllocatorConfig enforces, and a byte-size parser (KiB/MiB/GiB/TiB
 * suffixes).  A bad value is logged naming the option and the value, and
 * refused with MEMPROF_POOL_EINVAL.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../lib/parse.h"
#include "caching.h"

const struct memprof_pool_option_spec cb_option_specs[] = {
        {"max_split_size", "BYTES",
         "blocks this large or larger are never split (max_split_size_mb); more than 20MiB; "
         "default: unlimited"},
        {"max_non_split_rounding", "BYTES",
         "an oversize request may take a cached block at most this much larger "
         "(max_non_split_rounding_mb); more than 20MiB; default: 20MiB"},
        {"roundup_power2_divisions", "N|[MB:N,...,>:N]",
         "round requests up to N divisions of their power-of-two interval, for all sizes or "
         "per interval from 1 MB as PyTorch's list; power of 2, 0 or 1 is off; default: off"},
        {"expandable_segments", "on|off",
         "one growing virtual range per stream, mapped in 2MiB (small) or 20MiB (large) chunks; "
         "default: off"},
        {"garbage_collection_threshold", "R",
         "with a capacity, free old unsplit cached blocks once reserved passes R x capacity; "
         "0 < R < 1; default: off"},
        {"device_memory", "BYTES",
         "device size an expandable segment's address range is sized for (1 1/8 of it); "
         "default: the capacity, else 80GiB"},
        {NULL, NULL, NULL},
};

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int parse_count(const char *s, const char **end, uint64_t *out)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &e, 10);
	*end = e;
	return errno ? -1 : 0;
}

/* One "K:N" or ">:N" entry of the list form; K in MB as PyTorch reads it. */
static int parse_interval(struct cb_config *cfg, const char **s, int *first, size_t *last)
{
	uint64_t key = 0, div;
	int rest = **s == '>';
	size_t index;

	if (rest)
		(*s)++;
	else if (parse_count(*s, s, &key) != 0 || !is_pow2(key))
		return -1;
	if (**s != ':' || parse_count(*s + 1, s, &div) != 0 || (div && !is_pow2(div)))
		return -1;
	if (rest) {
		for (size_t i = *last; i < CB_N_INTERVALS; i++)
			cfg->roundup_divisions[i] = div;
		return 0;
	}
	index = 63u - (unsigned)__builtin_clzll(key);
	if (index > CB_N_INTERVALS - 1)
		index = CB_N_INTERVALS - 1;
	if (*first)
		for (size_t i = 0; i < index; i++)
			cfg->roundup_divisions[i] = div;
	*first = 0;
	cfg->roundup_divisions[index] = div;
	*last = index;
	return 0;
}

/* parseRoundUpPower2Divisions: "N" for every interval, or "[256:1,512:2,>:4]". */
static int parse_divisions(struct cb_config *cfg, const char *s)
{
	size_t last = 0;
	int first = 1;
	uint64_t n;
	const char *end;

	if (*s != '[') {
		if (parse_count(s, &end, &n) != 0 || *end || (n > 1 && !is_pow2(n)))
			return -1;
		for (size_t i = 0; i < CB_N_INTERVALS; i++)
			cfg->roundup_divisions[i] = n;
		return 0;
	}
	s++;
	while (*s != ']') {
		if (parse_interval(cfg, &s, &first, &last) != 0)
			return -1;
		if (*s == ',')
			s++;
		else if (*s != ']')
			return -1;
	}
	return s[1] ? -1 : 0;
}

static int parse_switch(const char *s, int *out)
{
	if (!strcasecmp(s, "on") || !strcasecmp(s, "true") || !strcmp(s, "1")) {
		*out = 1;
		return 0;
	}
	if (!strcasecmp(s, "off") || !strcasecmp(s, "false") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	return -1;
}

static int parse_ratio(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (end != s && end[0] == '%' && end[1] == '\0')
		*out /= 100.0, end++; /* "80%" is 0.8 */
	return (errno || end == s || *end || !(*out > 0.0 && *out < 1.0)) ? -1 : 0;
}

/* Apply one option; on a bad value, why says what the value must be. */
static int apply(struct cb_config *cfg, const char *name, const char *v, const char **why)
{
	if (!strcmp(name, "max_split_size") || !strcmp(name, "max_non_split_rounding")) {
		uint64_t *dst = !strcmp(name, "max_split_size")
		                        ? &cfg->max_split_size_bytes
		                        : &cfg->max_non_split_rounding_bytes;
		*why = "a size of more than 20MiB (e.g. 256MiB)";
		return pl_parse_bytes(v, dst) != 0 || *dst <= CB_LARGE_BUFFER ? -1 : 0;
	}
	if (!strcmp(name, "roundup_power2_divisions")) {
		*why = "N (a power of 2, or 0) or a list like [256:1,512:2,>:4]";
		return parse_divisions(cfg, v);
	}
	if (!strcmp(name, "expandable_segments")) {
		*why = "on or off";
		return parse_switch(v, &cfg->expandable);
	}
	if (!strcmp(name, "garbage_collection_threshold")) {
		*why = "a ratio strictly between 0 and 1, or a percentage (0.8 or 80%)";
		return parse_ratio(v, &cfg->gc_threshold);
	}
	if (!strcmp(name, "device_memory")) {
		*why = "a size of at least 2MiB";
		return pl_parse_bytes(v, &cfg->device_bytes) != 0 ||
		                       cfg->device_bytes < CB_SMALL_BUFFER
		               ? -1
		               : 0;
	}
	*why = "a known option (see memprof-plugin(7))";
	return -1;
}

int cb_config_parse(struct cb_config *cfg, const struct memprof_pool_host *host,
                    const struct memprof_pool_option *opts, size_t n_opts)
{
	const char *why = "";

	memset(cfg, 0, sizeof *cfg);
	cfg->max_split_size_bytes = CB_NO_LIMIT;
	cfg->max_non_split_rounding_bytes = CB_LARGE_BUFFER;
	for (size_t i = 0; i < n_opts; i++) {
		const char *name = opts[i].name ? opts[i].name : "", *v = opts[i].value;
		if (!v || apply(cfg, name, v, &why) != 0) {
			host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
			          "bad value '%s' for option '%s': expected %s", v ? v : "(none)",
			          name, why);
			return MEMPROF_POOL_EINVAL;
		}
	}
	if (!cfg->device_bytes)
		cfg->device_bytes = host->capacity_bytes ? host->capacity_bytes : CB_DEFAULT_DEVICE;
	return MEMPROF_POOL_OK;
}
