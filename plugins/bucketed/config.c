/*
 * plugins/bucketed/config.c - the bucketed pool's options: the size classes
 * (an explicit list, or the default geometric series and its ratio), the
 * slab size and the least slots a slab holds.  A bad value is logged naming
 * the option, the value and what is wrong, and refused with EINVAL.  It
 * never reserves anything.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/parse.h"
#include "bucketed.h"

const struct memprof_pool_option_spec bk_option_specs[] = {
        {"buckets", "LIST",
         "size classes, comma-separated and increasing, e.g. 64,128,...,1MiB; each at most 1TiB; "
         "default: powers of two from 512B to 64MiB"},
        {"growth", "R",
         "ratio of the default series from 512B to 64MiB, classes rounded up to 512B; "
         "1 < R <= 1024; not with buckets; default 2"},
        {"slab", "BYTES",
         "slab size a bucket carves its slots from (at least slab-slots slots); at most 1GiB; "
         "default 2MiB"},
        {"slab-slots", "N", "slots a slab holds at least, 1 to 65536; default 4"},
        {NULL, NULL, NULL},
};

static int bad(const struct memprof_pool_host *host, const char *name, const char *value,
               const char *why)
{
	int long_value = strlen(value) > 80; /* a long list: its start is enough */

	host->log(host->ctx, MEMPROF_POOL_LOG_ERROR, "bad option '%s=%.*s%s': %s", name,
	          long_value ? 72 : 80, value, long_value ? "..." : "", why);
	return MEMPROF_POOL_EINVAL;
}

int bk_series(double growth, uint64_t *sizes, size_t max_n, size_t *n)
{
	double x = (double)BK_MIN_CLASS;
	uint64_t v;

	*n = 0;
	for (;;) {
		v = x >= (double)BK_MAX_CLASS
		            ? BK_MAX_CLASS
		            : ((uint64_t)x + BK_MIN_CLASS - 1) / BK_MIN_CLASS * BK_MIN_CLASS;
		if (*n == 0 || v > sizes[*n - 1]) {
			if (*n == max_n)
				return -1;
			sizes[(*n)++] = v;
		}
		if (v == BK_MAX_CLASS)
			return 0;
		x *= growth;
	}
}

/* Why pl_parse_bytes_list refused s, item by item, into why (the first bad item). */
static void explain_list(const char *s, char *why, size_t len)
{
	uint64_t prev = 0, v;
	size_t n = 0;
	char item[64], prev_item[64] = "";

	snprintf(why, len, "not a list of sizes");
	for (const char *p = s;; n++) {
		const char *comma = strchr(p, ',');
		size_t ilen = comma ? (size_t)(comma - p) : strlen(p);

		snprintf(item, sizeof item, "%.*s", (int)(ilen < 63 ? ilen : 63), p);
		if (n == BK_MAX_BUCKETS) {
			snprintf(why, len, "more than %d buckets", BK_MAX_BUCKETS);
			return;
		}
		if (pl_parse_bytes(item, &v) != 0 || ilen >= sizeof item) {
			snprintf(why, len, "'%s' is not a size", item);
			return;
		}
		if (v == 0) {
			snprintf(why, len, "a bucket of 0 bytes");
			return;
		}
		if (n && v <= prev) {
			snprintf(why, len, "'%s,%s' is not increasing", prev_item, item);
			return;
		}
		prev = v;
		memcpy(prev_item, item, sizeof item);
		if (!comma)
			return;
		p = comma + 1;
	}
}

static int parse_buckets(struct bk_config *cfg, const struct memprof_pool_host *host, const char *v)
{
	char why[160];

	if (pl_parse_bytes_list(v, cfg->sizes, BK_MAX_BUCKETS, &cfg->n_sizes) != 0) {
		explain_list(v, why, sizeof why);
		return bad(host, "buckets", v, why);
	}
	if (cfg->sizes[cfg->n_sizes - 1] > BK_MAX_BUCKET)
		return bad(host, "buckets", v, "a bucket larger than 1TiB");
	return MEMPROF_POOL_OK;
}

static int parse_one(struct bk_config *cfg, const struct memprof_pool_host *host,
                     const struct memprof_pool_option *o, int *have_list)
{
	const char *name = o->name ? o->name : "", *v = o->value ? o->value : "";
	uint64_t n;

	if (!strcmp(name, "buckets")) {
		*have_list = 1;
		return parse_buckets(cfg, host, v);
	}
	if (!strcmp(name, "growth")) {
		if (pl_parse_ratio(v, 1.0, 1024.0, &cfg->growth) != 0 || cfg->growth <= 1.0)
			return bad(host, name, v, "not a ratio above 1 and at most 1024");
		return MEMPROF_POOL_OK;
	}
	if (!strcmp(name, "slab")) {
		if (pl_parse_bytes(v, &cfg->slab_bytes) != 0 || cfg->slab_bytes == 0 ||
		    cfg->slab_bytes > BK_MAX_SLAB)
			return bad(host, name, v, "not a size from 1 byte to 1GiB");
		return MEMPROF_POOL_OK;
	}
	if (!strcmp(name, "slab-slots")) {
		if (pl_parse_count(v, &n) != 0 || n == 0 || n > BK_MAX_MIN_SLOTS)
			return bad(host, name, v, "not a count from 1 to 65536");
		cfg->min_slots = (uint32_t)n;
		return MEMPROF_POOL_OK;
	}
	return bad(host, name, v, "unknown option");
}

int bk_config_parse(struct bk_config *cfg, const struct memprof_pool_host *host,
                    const struct memprof_pool_option *opts, size_t n_opts)
{
	int have_list = 0, have_growth = 0;
	char v[32];

	memset(cfg, 0, sizeof *cfg);
	cfg->slab_bytes = BK_DEFAULT_SLAB;
	cfg->min_slots = BK_DEFAULT_SLOTS;
	cfg->growth = 2.0;
	for (size_t i = 0; i < n_opts; i++) {
		if (parse_one(cfg, host, &opts[i], &have_list) != MEMPROF_POOL_OK)
			return MEMPROF_POOL_EINVAL;
		have_growth |= opts[i].name && !strcmp(opts[i].name, "growth");
	}
	if (have_list && have_growth) {
		host->log(host->ctx, MEMPROF_POOL_LOG_ERROR,
		          "options 'buckets' and 'growth' exclude each other: growth shapes the "
		          "default "
		          "series only");
		return MEMPROF_POOL_EINVAL;
	}
	if (have_list) {
		cfg->growth = 0;
		return MEMPROF_POOL_OK;
	}
	if (bk_series(cfg->growth, cfg->sizes, BK_MAX_BUCKETS, &cfg->n_sizes) != 0) {
		snprintf(v, sizeof v, "%g", cfg->growth);
		return bad(host, "growth", v, "the series from 512B to 64MiB has over 256 classes");
	}
	return MEMPROF_POOL_OK;
}
