/*
 * report/perfetto_internal.h - what the files of the trace-event writer
 * share: its state, the tracks (synthetic pids and tids, named by metadata
 * events) and the head of an event.  perfetto.c owns the tracks, counters,
 * OOMs and the document; perfetto_slices.c the allocation slices and the
 * stack texts; perfetto_phases.c the phase slices.  Only they include it.
 */
#ifndef MP_REPORT_PERFETTO_INTERNAL_H
#define MP_REPORT_PERFETTO_INTERNAL_H

#include "report/json_stream.h"
#include "report/perfetto.h"
#include "util/intmap.h"
#include "util/slot_pool.h"

/* A device: the process "GPU N" and the counter values last written. */
struct pf_device {
	int32_t ordinal;
	int64_t jpid; /* its pid in the JSON; its events use it as tid too */
	int64_t live_bytes, requested_bytes, reserved_bytes;
	int sampled, reserved_sampled;
};

/* A process of the trace (processes table row), where phases go. */
struct pf_process {
	int64_t process_id;
	int64_t jpid;
};

struct pf_open_phase {
	const char *name; /* reader-owned */
	int64_t begin_ts_ns;
	int32_t device;
};

/* A thread of a process: one track of phase slices, its open phases
 * innermost last. */
struct pf_thread {
	int64_t process_id, thread;
	int64_t jpid, jtid;
	struct pf_open_phase *open;
	size_t n_open, cap_open;
};

/* An allocation slice that has begun and not ended. */
struct pf_open_slice {
	int64_t seq; /* its id */
	int64_t begin_ts_ns;
	int64_t jpid;
	const struct pf_stack *stack;
};

/* The JSON texts of one call stack, formatted once: the slice name, the
 * call site (a string or null) and the frames (an array, innermost last). */
struct pf_stack {
	const char *name, *site, *frames;
	size_t name_len, site_len, frames_len;
};

struct mp_perfetto {
	struct mp_jstream j;
	struct mp_perfetto_opts o;
	const struct mp_memstate *ms;
	struct mp_perfetto_stats st;
	int64_t next_jid; /* synthetic pids and tids, from 1, never reused */
	int64_t first_ts_ns, max_ts_ns;
	int have_ts, nomem, finished;
	struct pf_device *devs;
	size_t n_devs, cap_devs;
	int slot_dev[MP_MEM_MAX_DEVICES]; /* memstate slot -> index in devs + 1 */
	struct pf_process *procs;
	size_t n_procs, cap_procs;
	struct pf_thread *threads;
	size_t n_threads, cap_threads, last_thread;
	struct mp_intmap stacks;      /* stack id -> struct pf_stack * */
	struct mp_intmap open_slices; /* block key -> slot in slices */
	struct mp_slot_pool slices;   /* of struct pf_open_slice */
};

/* Room for one more element in *arr (of elem_size bytes); 0 or -1. */
int pf_reserve(void **arr, size_t n, size_t *cap, size_t elem_size);
/* The device's track (created, with its metadata events, on first use);
 * NULL when out of memory. */
struct pf_device *pf_device(struct mp_perfetto *w, int32_t ordinal);
/* The process's track; NULL when out of memory. */
struct pf_process *pf_process(struct mp_perfetto *w, int64_t process_id);
/* "{"ph":"P","ts":T,"pid":P,"tid":T": the start of an event, after the
 * separator.  ph, ts, pid and tid come first in every event, and arrays
 * only inside args: Perfetto's tokenizer scans the top-level keys. */
void pf_event_head(struct mp_perfetto *w, char ph, int64_t ts_ns, int64_t jpid, int64_t jtid);
/* The same for a metadata event (no ts) named name. */
void pf_meta_head(struct mp_perfetto *w, const char *name, int64_t jpid, int64_t jtid);
/* 0, or the MP_E* code a callback returns after a failure. */
int pf_status(const struct mp_perfetto *w);

/* perfetto_slices.c */
int pf_slice_begin(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec);
int pf_slice_end(void *ctx, const struct mp_mem_block *b, const struct memprof_record *rec);
/* Close the slices still open (blocks live at the end, and any whose
 * block the memory state lost track of) at the last timestamp. */
int pf_slices_finish(struct mp_perfetto *w);
void pf_slices_init(struct mp_perfetto *w);
void pf_slices_free(struct mp_perfetto *w);
/* The texts of a call stack (a static entry for none); NULL when out of memory. */
const struct pf_stack *pf_stack(struct mp_perfetto *w, int64_t stack_id,
                                const struct memprof_stack *s);
void pf_stacks_free(struct mp_perfetto *w);
/* ,"stream":..,"api":..,"phase":..,"pid":..,"thread":..,"call_site":..,
 * "stack":[..]: where an event came from, as args after others. */
void pf_context_args(struct mp_perfetto *w, const struct memprof_record *rec,
                     const struct pf_stack *s);

/* perfetto_phases.c */
int pf_phase_begin(struct mp_perfetto *w, const struct memprof_record *rec);
int pf_phase_end(struct mp_perfetto *w, const struct memprof_record *rec);
/* Close every open phase at the last timestamp. */
int pf_phases_finish(struct mp_perfetto *w);
void pf_threads_free(struct mp_perfetto *w);

#endif
