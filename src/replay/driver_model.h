/*
 * replay/driver_model.h - what the CUDA driver reserves for a cudaMalloc
 * of n bytes, as the engine counts reserved bytes on every backend.
 * Modelled, not measured: the figures, and the driver behaviour they rest
 * on, are in memprof-replay(1), DRIVER GRANULARITY.  A request of 2 MiB or
 * more takes whole 2 MiB pages of its own; a smaller one takes its size
 * rounded up to 512 bytes inside 2 MiB pages that the small requests
 * share, counted as packed without holes (the least the driver can hold).
 * Pure accounting: no memory, no output.  Not thread-safe.
 */
#ifndef MP_REPLAY_DRIVER_MODEL_H
#define MP_REPLAY_DRIVER_MODEL_H

#include <stdint.h>

#define MP_DRIVER_ALIGN_BYTES 512ull       /* a small request's rounding */
#define MP_DRIVER_PAGE_BYTES  (2ull << 20) /* the driver's page */

struct mp_driver_model {
	uint64_t small_bytes; /* live small requests, each rounded to 512 B */
};

/* The bytes a request of n takes: n rounded up to 2 MiB when n >= 2 MiB,
 * else to 512 B (inside a shared page). */
uint64_t mp_driver_granted(uint64_t n);
/* How much the driver's reserved bytes grow when a request of n is
 * reserved (mp_driver_add), or shrink when it is released (mp_driver_remove);
 * mp_driver_growth asks without changing m. */
uint64_t mp_driver_growth(const struct mp_driver_model *m, uint64_t n);
uint64_t mp_driver_add(struct mp_driver_model *m, uint64_t n);
uint64_t mp_driver_remove(struct mp_driver_model *m, uint64_t n);

#endif
