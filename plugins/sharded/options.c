/*
 * plugins/sharded/options.c - the sharded pool's options: world-size,
 * iteration-phase and min-share, parsed with plugins/lib; a bad one is
 * logged with its name and value and refused.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "sharded.h"

const struct memprof_pool_option_spec sh_option_specs[] = {
        {"world-size", "N",
         "ranks a slot is sharded over: slot = N x shard, shard = ceil(size / N) rounded up to "
         "256 B (default 8)"},
        {"iteration-phase", "NAME|auto",
         "the phase whose entry starts an iteration (default auto: the first phase entered "
         "more than once; with none, iterations come from the period of site+size keys)"},
        {"min-share", "RATIO",
         "share of the iterations after the first a site+size key must occur in, the same "
         "number of times, to be cached (default 1: every one)"},
        {NULL, NULL, NULL},
};

/* NULL, or why v is not a value for option name. */
static const char *parse_one(struct sh_config *cfg, const char *name, const char *v)
{
	uint64_t n;

	if (strcmp(name, "world-size") == 0) {
		if (pl_parse_count(v, &n) < 0 || n < 1 || n > SH_MAX_WORLD_SIZE)
			return "a rank count from 1 to 4096";
		cfg->world_size = (uint32_t)n;
	} else if (strcmp(name, "iteration-phase") == 0) {
		if (!*v)
			return "a phase name or auto";
		free(cfg->iteration_phase);
		cfg->iteration_phase = NULL;
		if (strcmp(v, "auto") != 0) {
			if (!(cfg->iteration_phase = malloc(strlen(v) + 1)))
				return "out of memory";
			memcpy(cfg->iteration_phase, v, strlen(v) + 1);
		}
	} else if (strcmp(name, "min-share") == 0) {
		if (pl_parse_ratio(v, 0, 1, &cfg->min_share) < 0 || cfg->min_share <= 0)
			return "a ratio above 0 and at most 1";
	} else {
		return "no such option";
	}
	return NULL;
}

int sh_parse_options(const struct memprof_pool_host *host, const struct memprof_pool_option *opts,
                     size_t n_opts, struct sh_config *cfg)
{
	*cfg = (struct sh_config){.world_size = 8, .iteration_phase = NULL, .min_share = 1.0};
	for (size_t i = 0; i < n_opts; i++) {
		const char *name = opts[i].name ? opts[i].name : "";
		const char *v = opts[i].value ? opts[i].value : "";

		const char *why = parse_one(cfg, name, v);

		if (why) {
			sh_config_free(cfg);
			return pl_bad_option(host, name, v, why);
		}
	}
	return MEMPROF_POOL_OK;
}

void sh_config_free(struct sh_config *cfg)
{
	free(cfg->iteration_phase);
	cfg->iteration_phase = NULL;
}
