/*
 * analysis/frag.h - internal and external fragmentation of each device
 * (DESIGN.md section 3): at the live peak, at the reserved peak, at the end,
 * time-weighted over the trace, and at every OOM.  A memstate listener;
 * holes come from analysis/extents, in the segments model when the device
 * has segment-level events and in the address-space model otherwise.
 */
#ifndef MP_ANALYSIS_FRAG_H
#define MP_ANALYSIS_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/extents.h"
#include "analysis/memstate.h"

#define MP_FRAG_DEFAULT_GRANULARITY (UINT64_C(2) << 20)
#define MP_FRAG_MAX_OOMS            1000 /* OOMs kept per device; more are counted */

enum mp_frag_model {
	MP_FRAG_NONE,          /* no addresses and no segments: no holes to measure */
	MP_FRAG_SEGMENTS,      /* the trace's segments are reserved memory */
	MP_FRAG_ADDRESS_SPACE, /* reserved memory modelled from block addresses */
};

/* The figures at one moment.  -1 where unknown. */
struct mp_frag_point {
	int64_t ts_ns, seq; /* seq 0: never taken */
	int64_t live_bytes, requested_bytes;
	int64_t reserved_bytes;         /* segments, or modelled (address-space) */
	int64_t free_in_reserved_bytes; /* reserved - live; -1 when reserved < live */
	int64_t largest_free_bytes;     /* the largest hole */
};

struct mp_frag_oom {
	struct mp_frag_point at; /* the state when the request failed */
	int64_t requested_bytes;
	int64_t device_free_bytes; /* as the trace recorded it, -1 when unknown */
};

/* Integrals over time of the figures, for the time-weighted averages. */
struct mp_frag_integrals {
	int64_t span_ns;   /* time integrated over (negative gaps count 0) */
	double internal;   /* of live - requested bytes, byte-ns */
	double live;       /* of live bytes */
	double free;       /* of free-in-reserved bytes */
	double ext_ratio;  /* of 1 - largest / free (0 when nothing is free) */
	int64_t n_unknown; /* events after which free was unknown */
};

struct mp_frag_device {
	int32_t device;
	int model;               /* enum mp_frag_model, final */
	int64_t first_seq;       /* the device's first event */
	int64_t model_since_seq; /* the integrals cover events from this one */
	struct mp_frag_point at_live_peak, at_reserved_peak, at_end;
	struct mp_frag_integrals tw;
	struct mp_frag_oom *ooms;
	size_t n_ooms;        /* kept */
	int64_t n_ooms_total; /* seen */
	int64_t n_no_address; /* allocations without an address (not in the model) */
	struct mp_extents_figures holes_at_end;
	/* private */
	struct mp_extents *x;
	struct mp_frag_point now;
	int64_t last_clock; /* of mp_frag.clock, when now was taken */
	int started;
};

struct mp_frag {
	uint64_t granularity; /* address-space model */
	const struct mp_memstate *ms;
	struct mp_frag_device devices[MP_MEM_MAX_DEVICES]; /* by memstate device slot */
	int n_devices;
	int64_t n_segment_mismatches; /* releases or unmaps of segments the model did not hold */
	/* private: the trace's clock, advanced by each non-negative gap */
	int64_t clock, prev_ts_ns, n_seen;
};

/* granularity: a power of two (MP_FRAG_DEFAULT_GRANULARITY). */
void mp_frag_init(struct mp_frag *f, const struct mp_memstate *ms, uint64_t granularity);
void mp_frag_free(struct mp_frag *f);
struct mp_mem_listener mp_frag_listener(struct mp_frag *f);
/* The device's figures after the run, or NULL when it had no event. */
const struct mp_frag_device *mp_frag_device(const struct mp_frag *f, int32_t device);
/*
 * During a run, for a listener registered after frag's: the figures of the
 * event being delivered, on d, the memory-state device its on_event got.
 * NULL when d is NULL or frag has not seen the device.  Valid until the
 * next event.
 */
static inline const struct mp_frag_point *mp_frag_now(const struct mp_frag *f,
                                                      const struct mp_mem_device *d)
{
	ptrdiff_t slot = d ? d - f->ms->devices : -1;

	if (slot < 0 || slot >= f->n_devices || !f->devices[slot].started)
		return NULL;
	return &f->devices[slot].now;
}
const char *mp_frag_model_name(int model);

#endif
