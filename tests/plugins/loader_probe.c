/*
 * tests/plugins/loader_probe.c - the plugin loader from the command line,
 * for the tests: load a pool by name or path and say what was loaded, list
 * the pools found, or run a loaded pool through a short script of allocs
 * and frees against the fake host.  A refusal prints the loader's message
 * and exits 1; bad usage exits 2.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/fake_host.h"
#include "replay/loader.h"

#define MAX_STEPS 64
#define MAX_OPTS  16

static int usage(void)
{
	fputs("usage: loader_probe open NAME|PATH [PLUGIN_DIR]\n"
	      "       loader_probe list [PLUGIN_DIR]\n"
	      "       loader_probe run NAME|PATH [OPT=VALUE...] -- STEP...\n"
	      "       (STEP: aBYTES allocates, fK frees the K-th allocation)\n",
	      stderr);
	return 2;
}

static const char *status_name(int rc)
{
	switch (rc) {
	case MEMPROF_POOL_OK:
		return "ok";
	case MEMPROF_POOL_ENOMEM:
		return "ENOMEM";
	case MEMPROF_POOL_EINVAL:
		return "EINVAL";
	case MEMPROF_POOL_ENOTSUP:
		return "ENOTSUP";
	case MEMPROF_POOL_EFAULT:
		return "EFAULT";
	default:
		return "?";
	}
}

static void print_stat(void *ctx, const char *name, double value,
                       const char *unit)
{
	(void)ctx;
	printf("stat %s %.17g %s\n", name, value, unit);
}

static int run_steps(const struct memprof_pool_ops *ops,
                     struct memprof_pool *pool, char **steps, int n_steps)
{
	struct memprof_pool_block blocks[MAX_STEPS];
	int n_blocks = 0;

	for (int i = 0; i < n_steps && i < MAX_STEPS; i++) {
		char *end;
		unsigned long long v = strtoull(steps[i] + 1, &end, 10);
		int rc;

		if (steps[i][0] == 'a' && !*end && end != steps[i] + 1) {
			struct memprof_pool_request req = {
			        .struct_size = sizeof req,
			        .size_bytes = v,
			        .requested_bytes = v,
			        .index = n_blocks,
			        .block_token = (uint64_t)n_blocks};
			rc = ops->alloc(pool, &req, &blocks[n_blocks]);
			if (rc == 0)
				printf("alloc %llu: 0x%" PRIx64 " %" PRIu64
				       "\n",
				       v, blocks[n_blocks].addr,
				       blocks[n_blocks].size_bytes);
			else
				printf("alloc %llu: %s\n", v, status_name(rc));
			if (rc == 0)
				n_blocks++;
		} else if (steps[i][0] == 'f' && !*end &&
		           v < (unsigned long long)n_blocks) {
			rc = ops->free(pool, &blocks[v], 0);
			printf("free %llu: %s\n", v, status_name(rc));
		} else {
			fprintf(stderr, "loader_probe: bad step '%s'\n",
			        steps[i]);
			return 2;
		}
	}
	return 0;
}

static int run(const struct mp_pool_plugin *p, char **args, int n_args)
{
	struct memprof_pool_option opts[MAX_OPTS];
	static struct fake_host fh;
	struct memprof_pool *pool = NULL;
	int n_opts = 0, i, rc;

	for (i = 0; i < n_args && strcmp(args[i], "--") != 0; i++) {
		char *eq = strchr(args[i], '=');
		if (!eq || n_opts == MAX_OPTS)
			return usage();
		*eq = '\0';
		opts[n_opts++] = (struct memprof_pool_option){.name = args[i],
		                                              .value = eq + 1};
	}
	fake_host_init(&fh, 0);
	rc = p->ops.create(&fh.host, opts, (size_t)n_opts, &pool);
	printf("create: %s%s%s\n", status_name(rc), fh.last_log[0] ? ": " : "",
	       fh.last_log);
	if (rc != 0)
		return 1;
	if (i < n_args &&
	    (rc = run_steps(&p->ops, pool, args + i + 1, n_args - i - 1)) != 0)
		return rc;
	if (p->ops.stats)
		p->ops.stats(pool, print_stat, NULL);
	p->ops.destroy(pool);
	printf("after destroy: reserved %" PRIu64 " peak %" PRIu64
	       " reserve calls %" PRIu64 " release calls %" PRIu64
	       " live regions %zu\n",
	       fh.reserved_bytes, fh.peak_reserved_bytes, fh.n_reserve,
	       fh.n_release, fake_host_live_regions(&fh));
	return 0;
}

int main(int argc, char **argv)
{
	struct mp_pool_plugin *p, **list;
	struct mp_error err = {0};
	size_t n;
	int rc;

	if (argc >= 2 && strcmp(argv[1], "list") == 0 && argc <= 3) {
		if (mp_loader_list(argc == 3 ? argv[2] : NULL, &list, &n,
		                   &err) != 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			printf("%s %s\n", list[i]->ops.name, list[i]->path);
		mp_loader_free_list(list, n);
		return 0;
	}
	if (argc < 3 ||
	    (strcmp(argv[1], "open") != 0 && strcmp(argv[1], "run") != 0) ||
	    (strcmp(argv[1], "open") == 0 && argc > 4))
		return usage();
	if (mp_loader_open(argv[2],
	                   strcmp(argv[1], "open") == 0 ? argv[3] : NULL, &p,
	                   &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("%s %s\n", p->ops.name, p->path);
	rc = strcmp(argv[1], "run") == 0 ? run(p, argv + 3, argc - 3) : 0;
	mp_loader_close(p);
	return rc;
}
