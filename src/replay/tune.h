/*
 * replay/tune.h - 'memprof tune': which PyTorch allocator setting
 * (PYTORCH_CUDA_ALLOC_CONF) fits a workload, predicted by replaying its
 * trace's block stream through the caching pool (plugins/caching) on the
 * sim backend.  First the trace's own setting, compared with what the trace
 * recorded (fidelity); then candidates drawn from the trace (tune_candidates.c),
 * replayed in several threads and ranked by an objective.  A trace that
 * starts mid-run is replayed from its recorded segment state (pool seed).
 * Library layer: returns figures, never prints.
 */
#ifndef MP_REPLAY_TUNE_H
#define MP_REPLAY_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "replay/tune_setting.h"
#include "util/error.h"

enum mp_tune_objective { MP_TUNE_RESERVED = 0, MP_TUNE_CALLS = 1, MP_TUNE_TIME = 2 };

/* Above this relative error of the model against the trace, predictions are not reliable. */
#define MP_TUNE_RELIABLE_ERROR 0.02

struct mp_tune_options {
	int32_t device;          /* -1: the trace's only device */
	uint64_t capacity_bytes; /* 0: unlimited */
	int objective;           /* enum mp_tune_objective */
	double budget_s;         /* stop starting candidates after this; 0: no limit */
	int n_threads;           /* 0: one per core */
	size_t n_best;           /* candidates to keep, best first */
	const char *plugin_dir;  /* where to find the caching pool; NULL: the usual places */
};

/* One setting's replay (modelled on the sim backend). */
struct mp_tune_figures {
	struct mp_tune_setting setting;
	char conf[MP_TUNE_CONF_MAX]; /* the value of PYTORCH_CUDA_ALLOC_CONF */
	uint64_t peak_reserved_bytes;
	uint64_t free_at_peak_bytes; /* reserved but not set aside for live blocks, at the peak */
	double frag_at_peak;         /* 1 - largest free hole / free bytes, at the peak */
	uint64_t n_malloc, n_map;    /* cudaMalloc and cuMemMap calls */
	uint64_t n_backend_calls;
	uint64_t backend_ns; /* modelled time of every backend call */
	uint64_t n_ooms;
};

struct mp_tune_fidelity {
	const char *source; /* where the trace's setting came from (static text) */
	int has_recorded;   /* the trace recorded segments to compare with */
	uint64_t recorded_peak_reserved_bytes, recorded_segments, recorded_ooms;
	uint64_t model_peak_reserved_bytes, model_segments, model_ooms;
	double error;               /* (model - recorded) / recorded peak reserved */
	int reliable;               /* |error| <= MP_TUNE_RELIABLE_ERROR */
	char why[512];              /* why not, when known */
	uint64_t n_seeded_segments; /* the window's starting segments the model adopted */
};

struct mp_tune_result {
	int32_t device;
	uint64_t lower_bound_bytes; /* peak requested bytes */
	struct mp_tune_fidelity fid;
	struct mp_tune_figures current; /* under the capacity, when one is given */
	struct mp_tune_figures
	        *ranked; /* best first, at most n_best; the current one may be among them */
	size_t n_ranked;
	size_t n_candidates, n_evaluated;
	size_t n_equivalent; /* replayed with the same figures as a better one: not ranked */
	int budget_hit;
	int n_threads;
	uint64_t wall_ns;
	uint64_t capacity_bytes;
	int objective;
};

/*
 * Tune the trace at path.  Returns 0 or MP_E* with err set: a trace that
 * cannot be read, a device it lacks, a setting the model cannot take (the
 * cudaMallocAsync backend), or no caching pool to load.
 */
int mp_tune_run(const char *path, const struct mp_tune_options *o, struct mp_tune_result *res,
                struct mp_error *err);
void mp_tune_result_free(struct mp_tune_result *res);

/* The setting to use: the best candidate when it beats the current one, else the current. */
const struct mp_tune_figures *mp_tune_recommended(const struct mp_tune_result *res);

/* a is better than b under the objective (with a capacity, fewer OOMs first). */
int mp_tune_better(const struct mp_tune_figures *a, const struct mp_tune_figures *b, int objective);

/*
 * Candidate settings for device d of a loaded input (replay/input.h),
 * derived from its sizes, plus a small grid; the current one first.
 * *out is malloc'd.  0 or MP_ENOMEM.
 */
struct mp_replay_device;
int mp_tune_candidates(const struct mp_replay_device *d, const struct mp_tune_setting *current,
                       uint64_t capacity_bytes, struct mp_tune_setting **out, size_t *n);

#endif
