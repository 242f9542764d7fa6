/*
 * replay/session.c - one replay as library calls (replay/session.h): the
 * pools and their options, the input, and every (device, pool) run with
 * the GPU round robin and --repeat's medians.  Never prints: notes are
 * kept for the output, errors returned in err.  The GPUs the cuda backend
 * sees and the setup of --mpi (world size, the hash every rank must share)
 * are in session_setup.c.
 */
#include "replay/session.h"

#include "replay/loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mp_replay_session_init(struct mp_replay_session *s, const struct mp_replay_settings *set,
                            const struct mp_backend_ops *b, struct mp_rank_group *group)
{
	memset(s, 0, sizeof *s);
	s->set = set;
	s->backend = b;
	s->group = group;
}

void mp_replay_session_free(struct mp_replay_session *s)
{
	mp_replay_input_free(s->in);
	for (size_t i = 0; i < s->n_pools; i++)
		mp_loader_close(s->pools[i]);
	for (size_t i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->results);
	free(s->ranks);
	memset(s, 0, sizeof *s);
}

void mp_replay_session_note(struct mp_replay_session *s, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (s->n_notes == MP_REPLAY_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	s->notes[s->n_notes] = strdup(buf);
	if (s->notes[s->n_notes])
		s->n_notes++;
}

static int have_pool(const struct mp_replay_session *s, const char *name)
{
	for (size_t i = 0; i < s->n_pools; i++)
		if (strcmp(s->pools[i]->ops.name, name) == 0)
			return 1;
	return 0;
}

static int load_pool(struct mp_replay_session *s, const char *name, struct mp_error *err)
{
	struct mp_pool_plugin *p;
	int rc;

	if (s->n_pools == MP_REPLAY_MAX_POOLS)
		return mp_err(err, MP_EINVAL, "too many pools (at most %d)", MP_REPLAY_MAX_POOLS);
	if ((rc = mp_loader_open(name, s->set->plugin_dir, &p, err)) < 0)
		return rc;
	if (have_pool(s, p->ops.name)) {
		mp_loader_close(p);
		return 0;
	}
	s->pools[s->n_pools++] = p;
	return 0;
}

static int load_all(struct mp_replay_session *s, struct mp_error *err)
{
	struct mp_pool_plugin **list;
	size_t n;
	int rc;

	if ((rc = mp_loader_list(s->set->plugin_dir, &list, &n, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (s->n_pools < MP_REPLAY_MAX_POOLS) {
			s->pools[s->n_pools++] = list[i];
			list[i] = NULL;
		}
	}
	mp_loader_free_list(list, n);
	return 0;
}

int mp_replay_session_pools(struct mp_replay_session *s, struct mp_error *err)
{
	const struct mp_replay_settings *set = s->set;
	int rc = 0;

	if (strcmp(set->pools, "all") == 0) {
		rc = load_all(s, err);
	} else {
		char *copy = strdup(set->pools), *save = NULL;

		if (!copy)
			return mp_err(err, MP_ENOMEM, "out of memory");
		for (char *t = strtok_r(copy, ",", &save); t && rc == 0;
		     t = strtok_r(NULL, ",", &save))
			rc = load_pool(s, t, err);
		free(copy);
	}
	if (rc == 0 && strcmp(set->baseline, "none") != 0 && !have_pool(s, set->baseline))
		rc = load_pool(s, set->baseline, err);
	if (rc == 0 && s->n_pools == 0)
		rc = mp_err(err, MP_EINVAL, "no pools found (try --list-pools)");
	return rc;
}

int mp_replay_same_option_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (*a != *b && !((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))
			return 0;
	return *a == *b;
}

/* The pool options p declares, in out, named as p declares them; their number. */
static size_t options_for(const struct mp_replay_settings *set, const struct mp_pool_plugin *p,
                          struct memprof_pool_option *out)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_pool_opts; i++)
		for (const struct memprof_pool_option_spec *o = p->ops.options; o && o->name; o++)
			if (mp_replay_same_option_name(o->name, set->pool_opts[i].name))
				out[n++] = (struct memprof_pool_option){o->name,
				                                        set->pool_opts[i].value};
	return n;
}

int mp_replay_session_check_options(const struct mp_replay_session *s, struct mp_error *err)
{
	const struct mp_replay_settings *set = s->set;

	for (size_t i = 0; i < set->n_pool_opts; i++) {
		int known = 0;
		for (size_t k = 0; k < s->n_pools && !known; k++)
			for (const struct memprof_pool_option_spec *o = s->pools[k]->ops.options;
			     o && o->name && !known; o++)
				known = mp_replay_same_option_name(o->name, set->pool_opts[i].name);
		if (!known)
			return mp_err(err, MP_EINVAL,
			              "option '--%s' is known neither to replay nor to the pools "
			              "chosen",
			              set->pool_opts[i].name);
	}
	return 0;
}

/* Why there is nothing to replay, for the message. */
static const char *none_why(const struct mp_replay_settings *set)
{
	return set->device >= 0 ? "no events on that device" : "no allocations or segments";
}

int mp_replay_session_load(struct mp_replay_session *s, struct mp_store *st, struct mp_error *err)
{
	const struct mp_replay_settings *set = s->set;
	struct mp_reader *r = NULL;
	int rc;

	if (mp_reader_open(st, MP_READ_STACKS, &r) < 0) {
		mp_err_copy(err, mp_store_error(st));
		rc = -1;
	} else {
		rc = s->group ? mp_replay_input_load_rank(st, set->trace, r, set->device,
		                                          s->group->rank, s->group->size, &s->in,
		                                          err)
		              : mp_replay_input_load(r, set->device, &s->in, err);
		if (rc < 0 && err->code == 0)
			mp_err(err, rc, "cannot read trace '%s': %s", set->trace,
			       mp_store_errmsg(st));
	}
	mp_reader_close(r);
	if (rc < 0)
		return rc;
	if (s->in->n_devices == 0 && s->group)
		return mp_err(err, MP_EINVAL, "nothing to replay for rank %d in '%s': %s",
		              s->group->rank, set->trace, none_why(set));
	if (s->in->n_devices == 0)
		return mp_err(err, MP_EINVAL, "nothing to replay in '%s': %s", set->trace,
		              none_why(set));
	if (s->in->n_unranked_processes)
		mp_replay_session_note(s,
		                       "%zu processes of the trace have no rank: no rank replays "
		                       "them",
		                       s->in->n_unranked_processes);
	return 0;
}

static void device_notes(struct mp_replay_session *s, const struct mp_replay_device *d)
{
	if (d->level == MP_LEVEL_SEGMENT)
		mp_replay_session_note(s,
		                       "device %d has no block-level events, so its segments "
		                       "(reserve/release, map/unmap) were replayed instead: a "
		                       "trace of PyTorch recorded with its cache on has only "
		                       "segments; record with --no-framework-cache for "
		                       "block-level replay",
		                       (int)d->ordinal);
	if (d->n_unmatched_frees)
		mp_replay_session_note(s,
		                       "device %d: %lld frees of allocations the trace never "
		                       "showed were skipped",
		                       (int)d->ordinal, (long long)d->n_unmatched_frees);
}

/* The GPU the i-th device of the input runs on (decision: round robin over the visible ones). */
static int gpu_of(const struct mp_replay_session *s, size_t i)
{
	int first = s->group ? s->group->local_rank : 0;

	return s->n_gpus > 0 ? (int)((first + (int64_t)i) % s->n_gpus) : 0;
}

/* The note that says which GPU each device of the trace runs on. */
static void gpu_note(struct mp_replay_session *s)
{
	const struct mp_replay_input *in = s->in;
	char buf[512];
	size_t len = 0;

	if (s->n_gpus <= 0)
		return;
	for (size_t i = 0; i < in->n_devices && len + 32 < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%sdevice %d on GPU %d",
		                        i ? ", " : "", (int)in->devices[i].ordinal, gpu_of(s, i));
	mp_replay_session_note(s, "%s (the trace's devices in turn on the %d visible GPU%s%s)", buf,
	                       s->n_gpus, s->n_gpus == 1 ? "" : "s",
	                       s->group ? ", starting at the local rank" : "");
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
static int repeat_runs(struct mp_replay_session *s, const struct mp_replay_device *d, size_t k,
                       const struct mp_replay_options *o, struct mp_replay_result *res,
                       struct mp_error *err)
{
	size_t n = (size_t)s->set->repeat;
	uint64_t *host = calloc(n, sizeof *host), *be = calloc(n, sizeof *be);
	struct mp_replay_result *again = malloc(sizeof *again);
	struct mp_error e = {0};
	int rc = 0;

	if (!host || !be || !again)
		rc = mp_err(err, MP_ENOMEM, "out of memory");
	for (size_t r = 0; rc == 0 && r < n; r++) {
		if (r > 0 && (rc = mp_replay_run(s->in, d, s->pools[k], o, again, &e)) < 0)
			mp_err(err, rc, "device %d: run %zu: %s", (int)d->ordinal, r + 1, e.msg);
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

/*
 * Replays the i-th device against pool k into the next result; 0 or MP_E*.
 * lifetimes: the device's, for a pool that plans (NULL: the engine's own).
 */
static int replay_one(struct mp_replay_session *s, size_t i, size_t k,
                      const struct memprof_pool_lifetime *lifetimes, struct mp_error *err)
{
	const struct mp_replay_settings *set = s->set;
	const struct mp_replay_device *d = &s->in->devices[i];
	const char *name = s->pools[k]->ops.name;
	struct memprof_pool_option opts[MP_REPLAY_MAX_POOL_OPTS];
	struct mp_replay_options o = {
	        .backend = s->backend,
	        .capacity_bytes = set->capacity_bytes,
	        .verify = set->verify,
	        /* the baseline keeps every request: savings compare with it as it is */
	        .pool_threshold_bytes =
	                strcmp(name, set->baseline) == 0 ? 0 : set->pool_threshold_bytes,
	        .pool_opts = opts,
	        .n_pool_opts = options_for(set, s->pools[k], opts),
	        .gpu_set = s->n_gpus > 0,
	        .gpu = gpu_of(s, i),
	        .group = s->group,
	        .log = s->log,
	        .log_ctx = s->log_ctx,
	        .lifetimes = lifetimes,
	};
	struct mp_replay_result *res = &s->results[s->n_results];
	int explicit = strcmp(set->pools, "all") != 0 || strcmp(name, set->baseline) == 0;
	struct mp_error e = {0};
	int rc;

	if ((rc = mp_replay_run(s->in, d, s->pools[k], &o, res, &e)) < 0) {
		if (!res->started && !explicit) {
			mp_replay_session_note(s, "device %d: %s (skipped)", (int)d->ordinal,
			                       e.msg);
			return 0;
		}
		return mp_err(err, rc, "device %d: %s", (int)d->ordinal, e.msg);
	}
	if (set->repeat > 1 && (rc = repeat_runs(s, d, k, &o, res, err)) != 0)
		return rc;
	s->n_results++;
	return 0;
}

/* Whether a pool from k on plans (and so wants the device's lifetimes). */
static int plans_from(const struct mp_replay_session *s, size_t k)
{
	for (; k < s->n_pools; k++)
		if (s->pools[k]->ops.plan)
			return 1;
	return 0;
}

/*
 * Every pool on the i-th device (none past the input's devices: a rank of
 * --mpi with fewer only steps through), after rc, the error so far (then
 * only the group is stepped through); the error, or 0.  The device's
 * lifetimes are made once, at the first pool that plans, for every one that
 * does, and freed after the last.
 */
static int replay_device(struct mp_replay_session *s, size_t i, int rc, struct mp_error *err)
{
	const struct mp_replay_device *d = i < s->in->n_devices ? &s->in->devices[i] : NULL;
	struct memprof_pool_lifetime *lifetimes = NULL;

	for (size_t k = 0; k < s->n_pools && (rc == 0 || s->group); k++) {
		if (d && rc == 0 && s->pools[k]->ops.plan && !lifetimes &&
		    !(lifetimes = mp_replay_input_lifetimes(s->in, d)))
			rc = mp_err(err, MP_ENOMEM, "out of memory");
		if (d && rc == 0)
			rc = replay_one(s, i, k, lifetimes, err);
		if (lifetimes && !plans_from(s, k + 1)) {
			free(lifetimes);
			lifetimes = NULL;
		}
		if (s->group && mp_rank_group_done(s->group) < 0) {
			free(lifetimes);
			return mp_err(err, MP_EIO, "MPI failed between two runs");
		}
	}
	free(lifetimes);
	return rc;
}

int mp_replay_session_run(struct mp_replay_session *s, size_t n_round_devices, struct mp_error *err)
{
	const struct mp_replay_input *in = s->in;
	int rc = 0;

	s->results = calloc(in->n_devices * s->n_pools + 1, sizeof *s->results);
	if (!s->results)
		return mp_err(err, MP_ENOMEM, "out of memory");
	gpu_note(s);
	for (size_t i = 0; i < n_round_devices && (rc == 0 || s->group); i++) {
		if (i < in->n_devices)
			device_notes(s, &in->devices[i]);
		rc = replay_device(s, i, rc, err);
	}
	return rc;
}
