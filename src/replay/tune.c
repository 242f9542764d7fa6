/*
 * replay/tune.c - mp_tune_run: reads the trace once (replay/input), finds
 * the setting it ran under, replays it for fidelity, then replays every
 * candidate in worker threads (each its own engine, backend and pool over
 * the shared read-only input) and keeps the best.  The figures are the
 * engine's (replay/engine.h) on the sim backend: reserved bytes as the
 * driver reserves them, backend call times from the cost model.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay/input.h"
#include "replay/loader.h"
#include "store/reader.h"
#include "store/store.h"
#include "replay/tune.h"
#include "replay/tune_internal.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The setting the trace ran under: a snapshot's, the recorded environment's, or the defaults. */
static int trace_setting(struct mp_store *s, const char *path, struct mp_tune_setting *set,
                         const char **source, struct mp_error *err)
{
	static const char *const env[] = {"env:PYTORCH_ALLOC_CONF", "env:PYTORCH_CUDA_ALLOC_CONF"};
	char why[256], *v = mp_store_get_meta(s, "allocator_settings");
	int rc = 0;

	memset(set, 0, sizeof *set);
	*source = "PyTorch's defaults (the trace does not say which setting it ran under)";
	if (v) {
		*source = "the snapshot's allocator_settings";
		rc = mp_tune_setting_from_json(v, set, why, sizeof why);
	}
	for (size_t i = 0; !v && i < 2; i++)
		if ((v = mp_store_get_meta(s, env[i]))) {
			*source = i ? "PYTORCH_CUDA_ALLOC_CONF as recorded"
			            : "PYTORCH_ALLOC_CONF as recorded";
			rc = mp_tune_setting_parse(v, set, why, sizeof why);
		}
	free(v);
	if (rc != 0)
		return mp_err(err, MP_EINVAL, "cannot model the allocator setting of '%s': %s",
		              path, why);
	return 0;
}

static int load(const char *path, const struct mp_tune_options *o, struct mp_replay_input **in,
                struct mp_tune_setting *set, const char **source, struct mp_error *err)
{
	struct mp_store *s;
	struct mp_reader *r = NULL;
	int rc;

	if ((rc = mp_store_open(&s, path, err)) < 0)
		return rc;
	rc = trace_setting(s, path, set, source, err);
	if (rc == 0 && mp_reader_open(s, 0, &r) < 0)
		rc = mp_err_copy(err, mp_store_error(s));
	if (rc == 0 && (rc = mp_replay_input_load(r, o->device, in, err)) < 0 && err->code == 0)
		rc = mp_err(err, rc, "cannot read trace '%s': %s", path, mp_store_errmsg(s));
	mp_reader_close(r);
	mp_store_close(s);
	return rc;
}

/* The device to tune: the one asked for, else the trace's only one. */
static int pick_device(const char *path, const struct mp_replay_input *in, int32_t want,
                       const struct mp_replay_device **d, struct mp_error *err)
{
	if (in->n_devices == 0)
		return mp_err(err, MP_EINVAL, "nothing to tune in '%s': %s", path,
		              want >= 0 ? "no events on that device" : "no allocations");
	if (in->n_devices > 1)
		return mp_err(err, MP_EINVAL,
		              "several devices in trace '%s': tune tunes one at a time\nhint: "
		              "pick one with --device=N (%zu devices, %d to %d)",
		              path, in->n_devices, (int)in->devices[0].ordinal,
		              (int)in->devices[in->n_devices - 1].ordinal);
	*d = &in->devices[0];
	if ((*d)->level != MP_LEVEL_BLOCK)
		return mp_err(err, MP_EINVAL,
		              "nothing to tune in '%s': device %d has segments but no block events "
		              "(the allocator's requests), which a setting would place",
		              path, (int)(*d)->ordinal);
	return 0;
}

int mp_tune_run(const char *path, const struct mp_tune_options *o, struct mp_tune_result *res,
                struct mp_error *err)
{
	struct mp_tune_job job = {.o = o, .path = path};
	struct mp_tune_setting current;
	uint64_t t0 = now_ns();
	const char *source;
	int rc;

	memset(res, 0, sizeof *res);
	res->capacity_bytes = o->capacity_bytes;
	res->objective = o->objective;
	rc = load(path, o, &job.in, &current, &source, err);
	if (rc == 0)
		rc = pick_device(path, job.in, o->device, &job.d, err);
	if (rc == 0)
		rc = mp_loader_open("caching", o->plugin_dir, &job.pool, err);
	if (rc == 0) {
		res->device = job.d->ordinal;
		res->fid.source = source;
		rc = mp_tune_fidelity(&job, &current, res, err);
	}
	if (rc == 0)
		rc = mp_tune_current(&job, &current, res, err);
	if (rc == 0)
		rc = mp_tune_search(&job, &current, res, err);
	res->wall_ns = now_ns() - t0;
	mp_loader_close(job.pool);
	mp_replay_input_free(job.in);
	return rc;
}

void mp_tune_result_free(struct mp_tune_result *res)
{
	free(res->ranked);
	res->ranked = NULL;
	res->n_ranked = 0;
}
