/*
 * live/state_internal.h - what state.c and sites.c share (inside src/live
 * only): a live allocation's slot, and the call-site and latency helpers.
 */
#ifndef MP_LIVE_STATE_INTERNAL_H
#define MP_LIVE_STATE_INTERNAL_H

#include "live/state.h"

struct mp_live_slot {
	int64_t size;     /* bytes; on the free list: index + 1 of the next free slot */
	uint32_t dev;     /* index into the process's devices */
	uint32_t site;    /* index + 1 into the process's sites, 0 none */
	int segment;      /* counted as reserved, not live */
	int64_t lat_ns;   /* the allocation call's duration, 0 unknown */
	uint64_t lat_seq; /* its entry in the device's recent ring + 1, 0 none */
};

/* The site (index + 1, 0 none) of spool stack id: its innermost frame not in
 * the profiler, CUPTI, the driver or the CUDA runtime.  0 or MP_ENOMEM. */
int mp_live_site_of(struct mp_live_process *p, uint32_t stack, uint32_t *site);
void mp_live_site_add(struct mp_live_process *p, uint32_t site, int64_t delta_bytes);
/* A module item arrived: classify the spool's new modules.  0 or MP_ENOMEM. */
int mp_live_sites_module(struct mp_live_process *p);
void mp_live_sites_free(struct mp_live_process *p);

/* Count slot s's allocation call of dur_ns (0: unknown) in d's latency. */
void mp_live_latency_add(struct mp_live_device *d, struct mp_live_slot *s, int64_t dur_ns);
/* The same allocation reported by another call: keep the longer duration. */
void mp_live_latency_longer(struct mp_live_device *d, struct mp_live_slot *s, int64_t dur_ns);

#endif
