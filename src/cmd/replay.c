/*
 * cmd/replay.c - 'memprof replay': reads the trace once into a replay
 * input, picks the backend and the pools (the baseline always among them),
 * replays every device against every pool through replay/engine, prints
 * the results (report/replay) and stores them in the trace (store/results).
 */
#include "cmd/cmd.h"
#include "cmd/replay_args.h"
#include "replay/backend.h"
#include "replay/engine.h"
#include "replay/input.h"
#include "replay/loader.h"
#include "report/replay.h"
#include "store/results.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POOLS 32
#define MAX_NOTES 64

struct replay_run {
	struct replay_args a;
	struct mp_pool_plugin *pools[MAX_POOLS];
	size_t n_pools;
	const struct mp_backend_ops *backend;
	struct mp_replay_result *results;
	size_t n_results;
	char *notes[MAX_NOTES];
	size_t n_notes;
	int verify_failed;
};

static void add_note(struct replay_run *x, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void add_note(struct replay_run *x, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (x->n_notes == MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	x->notes[x->n_notes] = strdup(buf);
	if (x->notes[x->n_notes])
		x->n_notes++;
}

/* A pool's warnings go to stderr; its errors come back in the engine's error. */
static void pool_log(void *ctx, const char *pool, int level, const char *msg)
{
	(void)ctx;
	if (level == MEMPROF_POOL_LOG_WARN)
		fprintf(stderr, "memprof replay: pool '%s': %s\n", pool, msg);
}

static int pick_backend(struct replay_run *x)
{
	char why[512] = "";
	const char *name = x->a.backend;

	if (strcmp(name, "auto") == 0) {
		name = mp_backend_cuda_usable(why, sizeof why) ? "cuda" : "sim";
		fprintf(stderr, "memprof replay: backend auto: using %s%s%s%s\n", name,
		        why[0] ? " (" : "", why, why[0] ? ")" : "");
	} else if (strcmp(name, "cuda") == 0 && !mp_backend_cuda_usable(why, sizeof why)) {
		mp_cmd_error(&mp_cmd_replay, "cannot use backend 'cuda': %s", why);
		fprintf(stderr, "hint: use --backend=sim (or host) on a machine without a GPU\n");
		return MP_EXIT_ERROR;
	}
	x->backend = mp_backend_find(name);
	if (!x->backend)
		return mp_cmd_usage(&mp_cmd_replay,
		                    "unknown backend '%s': use auto, sim, host or cuda", name);
	return 0;
}

static int have_pool(const struct replay_run *x, const char *name)
{
	for (size_t i = 0; i < x->n_pools; i++)
		if (strcmp(x->pools[i]->ops.name, name) == 0)
			return 1;
	return 0;
}

static int load_pool(struct replay_run *x, const char *name)
{
	struct mp_error err = {0};
	struct mp_pool_plugin *p;

	if (x->n_pools == MAX_POOLS)
		return mp_cmd_error(&mp_cmd_replay, "too many pools (at most %d)", MAX_POOLS);
	if (mp_loader_open(name, x->a.plugin_dir, &p, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if (have_pool(x, p->ops.name)) {
		mp_loader_close(p);
		return 0;
	}
	x->pools[x->n_pools++] = p;
	return 0;
}

static int pick_pools(struct replay_run *x)
{
	struct mp_error err = {0};
	int rc = 0;

	if (strcmp(x->a.pools, "all") == 0) {
		struct mp_pool_plugin **list;
		size_t n;

		if (mp_loader_list(x->a.plugin_dir, &list, &n, &err) < 0)
			return mp_cmd_fail(&mp_cmd_replay, &err);
		for (size_t i = 0; i < n; i++) {
			if (x->n_pools < MAX_POOLS) {
				x->pools[x->n_pools++] = list[i];
				list[i] = NULL;
			}
		}
		mp_loader_free_list(list, n);
	} else {
		char *copy = strdup(x->a.pools), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t && rc == 0;
		     t = strtok_r(NULL, ",", &save))
			rc = load_pool(x, t);
		free(copy);
	}
	if (rc == 0 && strcmp(x->a.baseline, "none") != 0 && !have_pool(x, x->a.baseline))
		rc = load_pool(x, x->a.baseline);
	if (rc == 0 && x->n_pools == 0)
		rc = mp_cmd_error(&mp_cmd_replay, "no pools found (try --list-pools)");
	return rc;
}

/* Option names match with '-' and '_' taken as one: --compact-at, --compact_at. */
static int same_option_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return 0;
	return *a == *b;
}

/* The pool options p declares, in out, named as p declares them; their number. */
static size_t options_for(const struct replay_run *x, const struct mp_pool_plugin *p,
                          struct memprof_pool_option *out)
{
	size_t n = 0;

	for (size_t i = 0; i < x->a.n_pool_opts; i++)
		for (const struct memprof_pool_option_spec *s = p->ops.options; s && s->name; s++)
			if (same_option_name(s->name, x->a.pool_opts[i].name))
				out[n++] = (struct memprof_pool_option){s->name,
				                                        x->a.pool_opts[i].value};
	return n;
}

static int check_options(const struct replay_run *x)
{
	for (size_t i = 0; i < x->a.n_pool_opts; i++) {
		int known = 0;
		for (size_t k = 0; k < x->n_pools && !known; k++)
			for (const struct memprof_pool_option_spec *s = x->pools[k]->ops.options;
			     s && s->name && !known; s++)
				known = same_option_name(s->name, x->a.pool_opts[i].name);
		if (!known)
			return mp_cmd_usage(
			        &mp_cmd_replay,
			        "option '--%s' is known neither to replay nor to the pools chosen",
			        x->a.pool_opts[i].name);
	}
	return 0;
}

static void device_notes(struct replay_run *x, const struct mp_replay_device *d)
{
	if (d->level == MP_LEVEL_SEGMENT)
		add_note(x,
		         "device %d has no block-level events, so its segments (reserve/release, "
		         "map/unmap) were replayed instead: a trace of PyTorch recorded with its "
		         "cache on "
		         "has only segments; record with --no-framework-cache for block-level "
		         "replay",
		         (int)d->ordinal);
	if (d->n_unmatched_frees)
		add_note(x,
		         "device %d: %lld frees of allocations the trace never showed were skipped",
		         (int)d->ordinal, (long long)d->n_unmatched_frees);
}

/* Replays d against pool k into the next result; returns 0, or MP_EXIT_ERROR. */
static int replay_one(struct replay_run *x, const struct mp_replay_input *in,
                      const struct mp_replay_device *d, size_t k)
{
	struct memprof_pool_option opts[MP_REPLAY_MAX_POOL_OPTS];
	struct mp_replay_options o = {
	        .backend = x->backend,
	        .capacity_bytes = x->a.capacity_bytes,
	        .verify = x->a.verify,
	        .pool_opts = opts,
	        .n_pool_opts = options_for(x, x->pools[k], opts),
	        .log = pool_log,
	};
	struct mp_replay_result *res = &x->results[x->n_results];
	const char *name = x->pools[k]->ops.name;
	int explicit = strcmp(x->a.pools, "all") != 0 || strcmp(name, x->a.baseline) == 0;
	struct mp_error err = {0};

	if (mp_replay_run(in, d, x->pools[k], &o, res, &err) < 0) {
		if (!res->started && !explicit) {
			add_note(x, "device %d: %s (skipped)", (int)d->ordinal, err.msg);
			return 0;
		}
		fprintf(stderr, "memprof replay: device %d: %s\n", (int)d->ordinal, err.msg);
		return MP_EXIT_ERROR;
	}
	if (res->verify == MP_VERIFY_FAILED)
		x->verify_failed = 1;
	x->n_results++;
	return 0;
}

static int replay_all(struct replay_run *x, const struct mp_replay_input *in)
{
	int rc = 0;

	x->results = calloc(in->n_devices * x->n_pools + 1, sizeof *x->results);
	if (!x->results)
		return mp_cmd_error(&mp_cmd_replay, "out of memory");
	for (size_t i = 0; i < in->n_devices && rc == 0; i++) {
		device_notes(x, &in->devices[i]);
		for (size_t k = 0; k < x->n_pools && rc == 0; k++)
			rc = replay_one(x, in, &in->devices[i], k);
	}
	return rc;
}

static int save_results(struct replay_run *x, const struct mp_replay_report *rep)
{
	struct mp_result_run *runs = calloc(x->n_results + 1, sizeof *runs);
	struct mp_replay_metric(*m)[MP_REPLAY_MAX_METRICS] = calloc(x->n_results + 1, sizeof *m);
	struct mp_result_metric(*rm)[MP_REPLAY_MAX_METRICS] = calloc(x->n_results + 1, sizeof *rm);
	struct mp_error err = {0};
	int rc = 0;

	if (!runs || !m || !rm)
		rc = mp_cmd_error(&mp_cmd_replay, "out of memory");
	for (size_t i = 0; rc == 0 && i < x->n_results; i++) {
		size_t n = mp_replay_metrics(rep, &x->results[i], m[i], MP_REPLAY_MAX_METRICS);
		for (size_t j = 0; j < n; j++)
			rm[i][j] = (struct mp_result_metric){m[i][j].name, m[i][j].value,
			                                     m[i][j].unit, m[i][j].measured};
		runs[i] = (struct mp_result_run){.pool = x->results[i].pool,
		                                 .backend = x->results[i].backend,
		                                 .baseline = x->a.baseline,
		                                 .options = x->a.options_text,
		                                 .device = x->results[i].device,
		                                 .metrics = rm[i],
		                                 .n_metrics = n};
	}
	if (rc == 0 && mp_results_save(x->a.trace, runs, x->n_results, &err) < 0)
		rc = mp_cmd_fail(&mp_cmd_replay, &err);
	free(runs);
	free(m);
	free(rm);
	return rc;
}

static int report(struct replay_run *x)
{
	struct mp_replay_report rep = {
	        .trace_path = x->a.trace,
	        .backend = x->backend->name,
	        .baseline = x->a.baseline,
	        .results = x->results,
	        .n_results = x->n_results,
	        .capacity_bytes = x->a.capacity_bytes,
	        .notes = (const char *const *)x->notes,
	        .n_notes = x->n_notes,
	};
	int rc =
	        x->a.json ? mp_replay_print_json(stdout, &rep) : mp_replay_print_text(stdout, &rep);

	if (rc < 0)
		return mp_cmd_error(&mp_cmd_replay, "out of memory printing the results");
	fflush(stdout);
	if (x->a.save && x->n_results && (rc = save_results(x, &rep)) != 0)
		return rc;
	if (x->verify_failed) {
		for (size_t i = 0; i < x->n_results; i++)
			if (x->results[i].verify == MP_VERIFY_FAILED)
				mp_cmd_error(&mp_cmd_replay, "--verify failed on device %d: %s",
				             (int)x->results[i].device, x->results[i].verify_msg);
		return MP_EXIT_ERROR;
	}
	return 0;
}

static int list_pools(const struct replay_args *a)
{
	struct mp_pool_plugin **list;
	struct mp_error err = {0};
	size_t n;

	if (mp_loader_list(a->plugin_dir, &list, &n, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	for (size_t i = 0; i < n; i++) {
		printf("%-12s %s\n             %s\n", list[i]->ops.name,
		       list[i]->ops.description ? list[i]->ops.description : "", list[i]->path);
		for (const struct memprof_pool_option_spec *s = list[i]->ops.options; s && s->name;
		     s++)
			printf("    --%s=%s\n        %s\n", s->name,
			       s->value_hint ? s->value_hint : "VALUE", s->help ? s->help : "");
	}
	mp_loader_free_list(list, n);
	return n ? 0 : mp_cmd_error(&mp_cmd_replay, "no pools found");
}

static int read_input(struct replay_run *x, struct mp_replay_input **in)
{
	struct mp_error err = {0};
	struct mp_store *s;
	struct mp_reader *r = NULL;
	int rc;

	if (mp_store_open(&s, x->a.trace, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		mp_err_copy(&err, mp_store_error(s));
		rc = -1;
	} else {
		rc = mp_replay_input_load(r, x->a.device, in, &err);
		if (rc < 0 && err.code == 0)
			mp_err(&err, rc, "cannot read trace '%s': %s", x->a.trace,
			       mp_store_errmsg(s));
	}
	mp_reader_close(r);
	mp_store_close(s);
	if (rc < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if ((*in)->n_devices == 0)
		return mp_cmd_error(&mp_cmd_replay, "nothing to replay in '%s': %s", x->a.trace,
		                    x->a.device >= 0 ? "no events on that device"
		                                     : "no allocations or segments");
	return 0;
}

static int run(int argc, char **argv)
{
	struct replay_run x = {0};
	struct mp_replay_input *in = NULL;
	int rc = mp_replay_args_parse(&x.a, argc, argv);

	if (rc == 0 && x.a.list_pools)
		rc = list_pools(&x.a);
	else if (rc == 0 && (rc = pick_backend(&x)) == 0 && (rc = pick_pools(&x)) == 0 &&
	         (rc = check_options(&x)) == 0 && (rc = read_input(&x, &in)) == 0 &&
	         (rc = replay_all(&x, in)) == 0)
		rc = report(&x);
	mp_replay_input_free(in);
	for (size_t i = 0; i < x.n_pools; i++)
		mp_loader_close(x.pools[i]);
	for (size_t i = 0; i < x.n_notes; i++)
		free(x.notes[i]);
	free(x.results);
	mp_replay_args_free(&x.a);
	return rc < 0 ? MP_EXIT_OK : rc;
}

const struct mp_cmd mp_cmd_replay = {
        .name = "replay",
        .summary = "replay a trace against pool allocators: bytes and time each saves",
        .usage = "memprof replay [options] TRACE",
        .help = mp_replay_args_help,
        .run = run,
};
