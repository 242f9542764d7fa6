/*
 * cmd/replay.c - 'memprof replay': parses the options (cmd/replay_args.c),
 * picks the backend, and runs the replay as a session (replay/session.h:
 * the pools, the input, every device against every pool); prints the
 * results (report/replay_out) and stores them in the trace
 * (cmd/replay_save.c).  With --mpi this process is one rank of a job
 * (cmd/replay_job.c): every rank goes through the same (device, pool)
 * rounds, and rank 0 prints and stores the job's results.
 */
#include "cmd/cmd.h"
#include "cmd/replay_args.h"
#include "cmd/replay_job.h"
#include "cmd/replay_mpi.h"
#include "cmd/replay_save.h"
#include "replay/backend.h"
#include "replay/loader.h"
#include "replay/session.h"
#include "report/replay_out.h"
#include "util/visible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay_run {
	struct replay_args a;
	struct mp_replay_session s;
	struct mp_replay_job *job; /* --mpi, else NULL */
};

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
	const struct mp_backend_ops *b;

	if (strcmp(name, "auto") == 0) {
		name = mp_backend_cuda_usable(why, sizeof why) ? "cuda" : "sim";
		fprintf(stderr, "memprof replay: backend auto: using %s%s%s%s\n", name,
		        why[0] ? " (" : "", why, why[0] ? ")" : "");
	} else if (strcmp(name, "cuda") == 0 && !mp_backend_cuda_usable(why, sizeof why)) {
		mp_cmd_error(&mp_cmd_replay, "cannot use backend 'cuda': %s", why);
		fprintf(stderr, "hint: use --backend=sim (or host) on a machine without a GPU\n");
		return MP_EXIT_ERROR;
	}
	if (!(b = mp_backend_find(name)))
		return mp_cmd_usage(&mp_cmd_replay,
		                    "unknown backend '%s': use auto, sim, host or cuda", name);
	mp_replay_session_init(&x->s, &x->a.s, b, x->job ? &x->job->g : NULL);
	x->s.log = pool_log;
	return 0;
}

/* The pools, and every pool option known to one of them. */
static int pick_pools(struct replay_run *x)
{
	struct mp_error err = {0};

	if (mp_replay_session_pools(&x->s, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	if (mp_replay_session_check_options(&x->s, &err) < 0)
		return mp_cmd_usage(&mp_cmd_replay, "%s", err.msg);
	return 0;
}

static int read_input(struct replay_run *x)
{
	struct mp_error err = {0};
	struct mp_store *st;
	int rc;

	if (mp_cmd_open_trace(&mp_cmd_replay, &st, x->a.s.trace, &err) < 0)
		return mp_cmd_fail(&mp_cmd_replay, &err);
	rc = mp_replay_session_load(&x->s, st, &err);
	mp_store_close(st);
	return rc < 0 ? mp_cmd_fail(&mp_cmd_replay, &err) : 0;
}

/* Every (device, pool) run; a failure said as the session words it. */
static int replay_all(struct replay_run *x, size_t n_round_devices)
{
	struct mp_error err = {0};

	if (mp_replay_session_run(&x->s, n_round_devices, &err) == 0)
		return 0;
	fprintf(stderr, "memprof replay: %s\n", err.msg);
	return MP_EXIT_ERROR;
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

/* A --verify failure of result i, said; MP_EXIT_ERROR. */
static int verify_failed(const struct replay_run *x, size_t i)
{
	const struct mp_replay_result *r = &x->s.results[i];

	if (x->job)
		return mp_cmd_error(&mp_cmd_replay, "--verify failed on rank %d, device %d: %s",
		                    x->s.ranks[i], (int)r->device, r->verify_msg);
	return mp_cmd_error(&mp_cmd_replay, "--verify failed on device %d: %s", (int)r->device,
	                    r->verify_msg);
}

static int report(struct replay_run *x)
{
	struct mp_replay_report rep = {
	        .trace_path = x->a.s.trace,
	        .backend = x->s.backend->name,
	        .baseline = x->a.s.baseline,
	        .results = x->s.results,
	        .n_results = x->s.n_results,
	        .capacity_bytes = x->a.s.capacity_bytes,
	        .notes = (const char *const *)x->s.notes,
	        .n_notes = x->s.n_notes,
	        .ranks = x->job ? x->s.ranks : NULL,
	        .n_ranks = x->job ? x->job->g.size : 0,
	};
	int rc = x->a.json ? mp_replay_print_json(stdout, &rep) : print_text(&rep);

	if (rc < 0)
		return mp_cmd_error(&mp_cmd_replay, "out of memory printing the results");
	fflush(stdout);
	rc = 0;
	if (x->a.save && x->s.n_results &&
	    (rc = mp_replay_save(&x->s, &rep, x->a.options_text)) != 0)
		return rc;
	for (size_t i = 0; i < x->s.n_results; i++)
		if (x->s.results[i].verify == MP_VERIFY_FAILED)
			rc = verify_failed(x, i);
	return rc;
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

static int list_pools(const char *plugin_dir)
{
	struct mp_pool_plugin **list;
	struct mp_error err = {0};
	size_t n;

	if (mp_loader_list(plugin_dir, &list, &n, &err) < 0)
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

/* The same backend, pools and options on every rank, and the NCCL id for cuda. */
static int join_job(struct replay_run *x)
{
	char why[256] = "";
	int cuda = strcmp(x->s.backend->name, "cuda") == 0;
	int rc = mp_replay_job_same(x->job, mp_replay_session_hash(&x->s, x->a.options_text));

	if (rc != 0)
		return rc;
	if (mp_mpi_share_nccl_id(&x->job->g, cuda, why, sizeof why) < 0)
		return mp_cmd_error(&mp_cmd_replay, "MPI failed sending the NCCL id");
	if (cuda && !x->job->g.have_nccl_id)
		mp_replay_session_note(
		        &x->s, "no NCCL id (%s): collectives do not run across the ranks", why);
	if (strcmp(x->s.backend->name, "host") == 0)
		mp_replay_session_note(&x->s,
		                       "collectives ran across the %d ranks through MPI on host "
		                       "memory; their times (the pool's *_ns stats) are measured "
		                       "on this host",
		                       x->job->g.size);
	return 0;
}

/* Under --mpi the pools' world size is the number of ranks unless given. */
static int default_world_size(struct replay_run *x)
{
	char text[64];

	if (!mp_replay_session_world_size(&x->s, text, sizeof text))
		return 0;
	return mp_replay_args_add_pool_opt(&x->a, text);
}

/* A job: each step's status agreed by all ranks, results gathered to rank 0. */
static int run_job(struct replay_run *x)
{
	struct mp_replay_job *j = x->job;
	struct mp_replay_session *s = &x->s;
	int rc = pick_backend(x);

	if (rc == 0 && (rc = pick_pools(x)) == 0)
		rc = default_world_size(x);
	if ((rc = mp_replay_job_status(j, rc)) != 0)
		return rc;
	mp_replay_session_count_gpus(s);
	if ((rc = join_job(x)) != 0)
		return rc; /* the same on every rank: no rank failed of its own */
	if ((rc = mp_replay_job_status(j, read_input(x))) != 0)
		return rc;
	rc = replay_all(x, (size_t)mp_replay_job_max(j, (int64_t)s->in->n_devices));
	if (mp_replay_job_max(j, rc) == 0 &&
	    mp_replay_job_gather(j, &s->results, &s->n_results, &s->ranks, s->notes, &s->n_notes,
	                         MP_REPLAY_MAX_NOTES, s->backend->name) < 0)
		rc = mp_cmd_error(&mp_cmd_replay, "cannot gather the ranks' results on rank 0");
	if ((rc = mp_replay_job_status(j, rc)) != 0)
		return rc;
	return mp_replay_job_status(j, j->g.rank == 0 ? report(x) : 0);
}

static int run_single(struct replay_run *x)
{
	int rc = pick_backend(x);

	if (rc == 0 && (rc = pick_pools(x)) == 0 && (rc = read_input(x)) == 0) {
		mp_replay_session_count_gpus(&x->s);
		if ((rc = replay_all(x, x->s.in->n_devices)) == 0)
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
		rc = list_pools(x.a.s.plugin_dir);
	else if (rc == 0)
		rc = x.job ? run_job(&x) : run_single(&x);
	mp_replay_session_free(&x.s);
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
