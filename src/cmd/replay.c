/*
 * cmd/replay.c - 'memprof replay': reads the trace once into a replay
 * input, picks the backend and the pools (the baseline always among them),
 * replays every device against every pool through replay/engine, prints
 * the results (report/replay) and stores them in the trace (store/results).
 * With --mpi this process is one rank of a job (cmd/replay_job.c): it
 * replays its trace rank's processes, every rank goes through the same
 * (device, pool) rounds, and rank 0 prints and stores the job's results.
 */
#include "cmd/cmd.h"
#include "cmd/replay_args.h"
#include "cmd/replay_job.h"
#include "cmd/replay_mpi.h"
#include "replay/backend.h"
#include "replay/engine.h"
#include "replay/input.h"
#include "replay/loader.h"
#include "report/replay_out.h"
#include "store/results.h"
#include "util/visible.h"

#ifdef HAVE_CUDA
#include "replay/cuda_api.h"
#endif

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
	int n_gpus;                /* visible GPUs (cuda backend), else 0 */
	struct mp_replay_job *job; /* --mpi, else NULL */
	int *ranks;                /* with job, on rank 0: each result's rank */
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

/* The GPU the i-th device of the input runs on (decision: round robin over the visible ones). */
static int gpu_of(const struct replay_run *x, size_t i)
{
	int first = x->job ? x->job->g.local_rank : 0;

	return x->n_gpus > 0 ? (int)((first + (int64_t)i) % x->n_gpus) : 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place), its least and greatest. */
static uint64_t median(uint64_t *v, size_t n, uint64_t *lo, uint64_t *hi)
{
	qsort(v, n, sizeof *v, by_value);
	*lo = v[0], *hi = v[n - 1];
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/*
 * --repeat: runs 2..N of d against pool k, after res holds the first.  The
 * pool's CPU time (and the backend time when measured) become the median
 * of the runs, with their spread; everything else stays the first run's.
 */
static int repeat_runs(struct replay_run *x, const struct mp_replay_input *in,
                       const struct mp_replay_device *d, size_t k,
                       const struct mp_replay_options *o, struct mp_replay_result *res)
{
	size_t n = (size_t)x->a.repeat;
	uint64_t *host = calloc(n, sizeof *host), *be = calloc(n, sizeof *be);
	struct mp_replay_result *again = malloc(sizeof *again);
	struct mp_error err = {0};
	int rc = 0;

	if (!host || !be || !again)
		rc = mp_cmd_error(&mp_cmd_replay, "out of memory");
	for (size_t r = 0; rc == 0 && r < n; r++) {
		if (r > 0 && mp_replay_run(in, d, x->pools[k], o, again, &err) < 0) {
			fprintf(stderr, "memprof replay: device %d: run %zu: %s\n", (int)d->ordinal,
			        r + 1, err.msg);
			rc = MP_EXIT_ERROR;
		}
		host[r] = r ? again->host_ns : res->host_ns;
		be[r] = r ? again->backend_ns : res->backend_ns;
	}
	if (rc == 0) {
		res->n_runs = (uint32_t)n;
		res->host_ns = median(host, n, &res->host_ns_min, &res->host_ns_max);
		if (res->time_measured)
			res->backend_ns = median(be, n, &res->backend_ns_min, &res->backend_ns_max);
		res->total_ns = res->host_ns + res->backend_ns;
	}
	free(host);
	free(be);
	free(again);
	return rc;
}

/* Replays the i-th device d against pool k into the next result; returns 0, or MP_EXIT_ERROR. */
static int replay_one(struct replay_run *x, const struct mp_replay_input *in, size_t i, size_t k)
{
	const struct mp_replay_device *d = &in->devices[i];
	struct memprof_pool_option opts[MP_REPLAY_MAX_POOL_OPTS];
	struct mp_replay_options o = {
	        .backend = x->backend,
	        .capacity_bytes = x->a.capacity_bytes,
	        .verify = x->a.verify,
	        /* the baseline keeps every request: savings compare with it as it is */
	        .pool_threshold_bytes = strcmp(x->pools[k]->ops.name, x->a.baseline) == 0
	                                        ? 0
	                                        : x->a.pool_threshold_bytes,
	        .pool_opts = opts,
	        .n_pool_opts = options_for(x, x->pools[k], opts),
	        .gpu_set = x->n_gpus > 0,
	        .gpu = gpu_of(x, i),
	        .group = x->job ? &x->job->g : NULL,
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
	if (x->a.repeat > 1 && repeat_runs(x, in, d, k, &o, res) != 0)
		return MP_EXIT_ERROR;
	x->n_results++;
	return 0;
}

/* The note that says which GPU each device of the trace runs on. */
static void gpu_note(struct replay_run *x, const struct mp_replay_input *in)
{
	char buf[512];
	size_t len = 0;

	if (x->n_gpus <= 0)
		return;
	for (size_t i = 0; i < in->n_devices && len + 32 < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%sdevice %d on GPU %d",
		                        i ? ", " : "", (int)in->devices[i].ordinal, gpu_of(x, i));
	add_note(x, "%s (the trace's devices in turn on the %d visible GPU%s%s)", buf, x->n_gpus,
	         x->n_gpus == 1 ? "" : "s", x->job ? ", starting at the local rank" : "");
}

/*
 * Every (device, pool) run in order.  With a job every rank goes through
 * n_rounds_devices devices (the most any rank has) and ends each run with
 * mp_rank_group_done, even past its own devices or after its own error,
 * so no rank waits for a round another will not join.
 */
static int replay_all(struct replay_run *x, const struct mp_replay_input *in,
                      size_t n_round_devices)
{
	int rc = 0;

	x->results = calloc(in->n_devices * x->n_pools + 1, sizeof *x->results);
	if (!x->results)
		return mp_cmd_error(&mp_cmd_replay, "out of memory");
	gpu_note(x, in);
	for (size_t i = 0; i < n_round_devices && (rc == 0 || x->job); i++) {
		if (i < in->n_devices)
			device_notes(x, &in->devices[i]);
		for (size_t k = 0; k < x->n_pools && (rc == 0 || x->job); k++) {
			if (i < in->n_devices && rc == 0)
				rc = replay_one(x, in, i, k);
			if (x->job && mp_rank_group_done(&x->job->g) < 0)
				return mp_cmd_error(&mp_cmd_replay, "MPI failed between two runs");
		}
	}
	return rc;
}

/* Metric rows m as the store takes them, into rm. */
static void to_result_metrics(const struct mp_replay_metric *m, size_t n,
                              struct mp_result_metric *rm)
{
	for (size_t j = 0; j < n; j++)
		rm[j] = (struct mp_result_metric){m[j].name, m[j].value, m[j].unit, m[j].measured};
}

/*
 * One stored run per (rank) device and pool, as without --mpi (devices are
 * job-wide numbers); with ranks, the job's figures of each pool too, as the
 * pool's run on device -1.
 */
static int save_results(struct replay_run *x, const struct mp_replay_report *rep)
{
	size_t n_job = rep->ranks ? x->n_pools : 0, n_runs = x->n_results + n_job, n = 0;
	struct mp_result_run *runs = calloc(n_runs + 1, sizeof *runs);
	struct mp_replay_metric(*m)[MP_REPLAY_MAX_METRICS] = calloc(n_runs + 1, sizeof *m);
	struct mp_result_metric(*rm)[MP_REPLAY_MAX_METRICS] = calloc(n_runs + 1, sizeof *rm);
	struct mp_replay_job_row *job = calloc(n_job + 1, sizeof *job);
	struct mp_error err = {0};
	int rc = 0;

	if (!runs || !m || !rm || !job)
		rc = mp_cmd_error(&mp_cmd_replay, "out of memory");
	for (size_t i = 0; rc == 0 && i < x->n_results; i++, n++) {
		size_t k = mp_replay_metrics(rep, &x->results[i], m[n], MP_REPLAY_MAX_METRICS);
		to_result_metrics(m[n], k, rm[n]);
		runs[n] = (struct mp_result_run){.pool = x->results[i].pool,
		                                 .backend = x->results[i].backend,
		                                 .baseline = x->a.baseline,
		                                 .options = x->a.options_text,
		                                 .device = x->results[i].device,
		                                 .metrics = rm[n],
		                                 .n_metrics = k};
	}
	n_job = rc == 0 ? mp_replay_job_rows(rep, job, n_job) : 0;
	for (size_t i = 0; i < n_job; i++, n++) {
		size_t k = mp_replay_job_metrics(&job[i], m[n], MP_REPLAY_MAX_METRICS);
		to_result_metrics(m[n], k, rm[n]);
		runs[n] = (struct mp_result_run){.pool = job[i].pool,
		                                 .backend = x->backend->name,
		                                 .baseline = x->a.baseline,
		                                 .options = x->a.options_text,
		                                 .device = -1,
		                                 .metrics = rm[n],
		                                 .n_metrics = k};
	}
	if (rc == 0 && mp_results_save(x->a.trace, runs, n, &err) < 0)
		rc = mp_cmd_fail(&mp_cmd_replay, &err);
	free(runs);
	free(m);
	free(rm);
	free(job);
	return rc;
}

/* The text, its trace strings made visible (util/visible). */
static int print_text(const struct mp_replay_report *rep)
{
	FILE *v = mp_visible_open(stdout);
	int rc;

	if (!v)
		return MP_ENOMEM;
	rc = mp_replay_print_text(v, rep);
	if (fclose(v) != 0 && rc == 0)
		rc = MP_EIO;
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
	        .ranks = x->job ? x->ranks : NULL,
	        .n_ranks = x->job ? x->job->g.size : 0,
	};
	int rc = x->a.json ? mp_replay_print_json(stdout, &rep) : print_text(&rep);

	if (rc < 0)
		return mp_cmd_error(&mp_cmd_replay, "out of memory printing the results");
	fflush(stdout);
	if (x->a.save && x->n_results && (rc = save_results(x, &rep)) != 0)
		return rc;
	for (size_t i = 0; i < x->n_results; i++) {
		if (x->results[i].verify != MP_VERIFY_FAILED)
			continue;
		x->verify_failed = 1;
		if (x->job)
			mp_cmd_error(&mp_cmd_replay, "--verify failed on rank %d, device %d: %s",
			             x->ranks[i], (int)x->results[i].device,
			             x->results[i].verify_msg);
		else
			mp_cmd_error(&mp_cmd_replay, "--verify failed on device %d: %s",
			             (int)x->results[i].device, x->results[i].verify_msg);
	}
	return x->verify_failed ? MP_EXIT_ERROR : 0;
}

/* A pool option as --list-pools shows it: spelled with hyphens, as the
 * command line takes it (underscores, its name in the plugin, work too). */
static void print_option(const struct memprof_pool_option_spec *s)
{
	const char *c;

	fputs("    --", stdout);
	for (c = s->name; *c; c++)
		putchar(*c == '_' ? '-' : *c);
	printf("=%s\n        %s\n", s->value_hint ? s->value_hint : "VALUE",
	       s->help ? s->help : "");
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
			print_option(s);
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

	if (mp_cmd_open_trace(&mp_cmd_replay, &s, x->a.trace, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if (mp_reader_open(s, MP_READ_STACKS, &r) < 0) {
		mp_err_copy(&err, mp_store_error(s));
		rc = -1;
	} else {
		rc = x->job ? mp_replay_input_load_rank(s, x->a.trace, r, x->a.device,
		                                        x->job->g.rank, x->job->g.size, in, &err)
		            : mp_replay_input_load(r, x->a.device, in, &err);
		if (rc < 0 && err.code == 0)
			mp_err(&err, rc, "cannot read trace '%s': %s", x->a.trace,
			       mp_store_errmsg(s));
	}
	mp_reader_close(r);
	mp_store_close(s);
	if (rc < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if ((*in)->n_devices == 0 && x->job)
		return mp_cmd_error(&mp_cmd_replay, "nothing to replay for rank %d in '%s': %s",
		                    x->job->g.rank, x->a.trace,
		                    x->a.device >= 0 ? "no events on that device"
		                                     : "no allocations or segments");
	if ((*in)->n_devices == 0)
		return mp_cmd_error(&mp_cmd_replay, "nothing to replay in '%s': %s", x->a.trace,
		                    x->a.device >= 0 ? "no events on that device"
		                                     : "no allocations or segments");
	if ((*in)->n_unranked_processes)
		add_note(x, "%zu processes of the trace have no rank: no rank replays them",
		         (*in)->n_unranked_processes);
	return 0;
}

/* How many GPUs the cuda backend sees (the device map), 0 for other backends. */
static int count_gpus(const struct replay_run *x)
{
	int n = 0;

#ifdef HAVE_CUDA
	char why[256];

	if (strcmp(x->backend->name, "cuda") == 0 && !mp_cu_probe(why, sizeof why, &n))
		n = 0;
#else
	(void)x;
#endif
	return n;
}

/* The backend, pools and options: what every rank of a job must share. */
static uint64_t setup_hash(const struct replay_run *x)
{
	uint64_t h = MP_REPLAY_JOB_HASH0;
	size_t sizes[2] = {sizeof(struct mp_replay_result), MP_REPLAY_MAX_STATS};
	const char *texts[3] = {x->backend->name, x->a.baseline, x->a.options_text};

	h = mp_replay_job_hash(h, sizes, sizeof sizes);
	for (size_t i = 0; i < 3; i++)
		h = mp_replay_job_hash(h, texts[i], strlen(texts[i]) + 1);
	for (size_t k = 0; k < x->n_pools; k++)
		h = mp_replay_job_hash(h, x->pools[k]->ops.name, strlen(x->pools[k]->ops.name) + 1);
	return h;
}

/* The same backend, pools and options on every rank, and the NCCL id for cuda. */
static int join_job(struct replay_run *x)
{
	char why[256] = "";
	int cuda = strcmp(x->backend->name, "cuda") == 0;
	int rc = mp_replay_job_same(x->job, setup_hash(x));

	if (rc != 0)
		return rc;
	if (mp_mpi_share_nccl_id(&x->job->g, cuda, why, sizeof why) < 0)
		return mp_cmd_error(&mp_cmd_replay, "MPI failed sending the NCCL id");
	if (cuda && !x->job->g.have_nccl_id)
		add_note(x, "no NCCL id (%s): collectives do not run across the ranks", why);
	if (strcmp(x->backend->name, "host") == 0)
		add_note(x,
		         "collectives ran across the %d ranks through MPI on host memory; "
		         "their times (the pool's *_ns stats) are measured on this host",
		         x->job->g.size);
	return 0;
}

/*
 * Under --mpi a pool's world-size (the sharded pool's shards) is the number
 * of ranks unless given: the collectives span the ranks, one shard each.
 */
static int default_world_size(struct replay_run *x)
{
	char text[64];
	int declared = 0;

	for (size_t i = 0; i < x->a.n_pool_opts; i++)
		if (same_option_name(x->a.pool_opts[i].name, "world-size"))
			return 0;
	for (size_t k = 0; k < x->n_pools; k++)
		for (const struct memprof_pool_option_spec *s = x->pools[k]->ops.options;
		     s && s->name; s++)
			declared |= same_option_name(s->name, "world-size");
	if (!declared)
		return 0;
	snprintf(text, sizeof text, "world-size=%d", x->job->g.size);
	if (x->job->g.rank == 0) /* the same on every rank: said once */
		add_note(x,
		         "--world-size=%d: the number of ranks (give --world-size to choose "
		         "another)",
		         x->job->g.size);
	return mp_replay_args_add_pool_opt(&x->a, text);
}

/* A job: each step's status agreed by all ranks, results gathered to rank 0. */
static int run_job(struct replay_run *x, struct mp_replay_input **in)
{
	struct mp_replay_job *j = x->job;
	int rc = pick_backend(x);

	if (rc == 0 && (rc = pick_pools(x)) == 0 && (rc = check_options(x)) == 0)
		rc = default_world_size(x);
	if ((rc = mp_replay_job_status(j, rc)) != 0)
		return rc;
	x->n_gpus = count_gpus(x);
	if ((rc = join_job(x)) != 0)
		return rc; /* the same on every rank: no rank failed of its own */
	if ((rc = mp_replay_job_status(j, read_input(x, in))) != 0)
		return rc;
	rc = replay_all(x, *in, (size_t)mp_replay_job_max(j, (int64_t)(*in)->n_devices));
	if (mp_replay_job_max(j, rc) == 0 &&
	    mp_replay_job_gather(j, &x->results, &x->n_results, &x->ranks, x->notes, &x->n_notes,
	                         MAX_NOTES, x->backend->name) < 0)
		rc = mp_cmd_error(&mp_cmd_replay, "cannot gather the ranks' results on rank 0");
	if ((rc = mp_replay_job_status(j, rc)) != 0)
		return rc;
	return mp_replay_job_status(j, j->g.rank == 0 ? report(x) : 0);
}

static int run_single(struct replay_run *x, struct mp_replay_input **in)
{
	int rc = pick_backend(x);

	if (rc == 0 && (rc = pick_pools(x)) == 0 && (rc = check_options(x)) == 0 &&
	    (rc = read_input(x, in)) == 0) {
		x->n_gpus = count_gpus(x);
		if ((rc = replay_all(x, *in, (*in)->n_devices)) == 0)
			rc = report(x);
	}
	return rc;
}

/* Whether --mpi is among the arguments (MPI starts before they are parsed). */
static int wants_mpi(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--mpi") == 0)
			return 1;
	return 0;
}

static int run(int argc, char **argv)
{
	struct replay_run x = {0};
	struct mp_replay_job job;
	struct mp_replay_input *in = NULL;
	int rc = 0;

	if (wants_mpi(argc, argv)) {
		if ((rc = mp_replay_job_start(&job)) != 0)
			return rc;
		x.job = &job;
	}
	rc = mp_replay_args_parse(&x.a, argc, argv);
	if (x.job)
		rc = mp_replay_job_status(x.job, rc);
	if (rc == 0 && x.a.list_pools)
		rc = list_pools(&x.a);
	else if (rc == 0)
		rc = x.job ? run_job(&x, &in) : run_single(&x, &in);
	mp_replay_input_free(in);
	for (size_t i = 0; i < x.n_pools; i++)
		mp_loader_close(x.pools[i]);
	for (size_t i = 0; i < x.n_notes; i++)
		free(x.notes[i]);
	free(x.results);
	free(x.ranks);
	mp_replay_args_free(&x.a);
	if (x.job)
		mp_replay_job_end(x.job);
	return rc < 0 ? MP_EXIT_OK : rc;
}

const struct mp_cmd mp_cmd_replay = {
        .name = "replay",
        .summary = "replay a trace against pool allocators: bytes and time each saves",
        .usage = "memprof replay [options] TRACE",
        .help = mp_replay_args_help,
        .run = run,
};
