/*
 * live/state.h - the live figures of a recording, fed by the items of the
 * spools as they are read (live/follow.h): per process and device the live,
 * reserved and peak bytes, allocations and frees, the allocation call
 * latency, the allocation rate over the last interval, the bytes held per
 * call site; and what was lost.
 *
 * Only API call events count (allocation and free calls, VMM map/unmap,
 * OOM, pre-existing allocations): they are written when the call returns,
 * in order per thread.  CUPTI's memory records come late and are left to
 * the final trace.  An address allocated twice in one process is one
 * allocation (a runtime call and the driver call inside it; its latency is
 * the longer call's); a free of an address that is not live is ignored (the
 * inner call freed it).  Host memory is left out.  With PyTorch's caching
 * allocator on (as import/spool.c decides it: libc10_cuda loaded, no
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1, no cudaMallocAsync backend) cudaMalloc
 * calls make segments, counted as reserved bytes; VMM mappings are reserved
 * bytes too; other allocations are live bytes.
 *
 * Memory grows with the live allocations, devices and distinct call
 * stacks.  Not thread-safe.  The renderers (view.h, expo.h) only read it.
 */
#ifndef MP_LIVE_STATE_H
#define MP_LIVE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/spool_labels.h"
#include "live/follow.h"
#include "util/intmap.h"

/* Upper bounds (seconds) of the latency histogram's buckets, +Inf after. */
#define MP_LIVE_N_BUCKETS 12
extern const double mp_live_bucket_bounds_s[MP_LIVE_N_BUCKETS];
/* Allocation call durations kept for p50/p99: the last this many per device. */
#define MP_LIVE_RECENT 1024

struct mp_live_device {
	int32_t device;
	uint64_t total_bytes; /* from the spool's device item, 0 unknown */
	int live_known;       /* a block-level allocation was seen */
	int reserved_known;   /* a segment or mapping was seen */
	int64_t live_bytes, reserved_bytes, peak_live_bytes, peak_reserved_bytes;
	int64_t n_allocs, n_frees, allocated_bytes, n_ooms;
	/* allocation call latency: per bucket (not cumulative; the last is +Inf) */
	int64_t buckets[MP_LIVE_N_BUCKETS + 1];
	int64_t n_latency, latency_sum_ns;
	int64_t recent_ns[MP_LIVE_RECENT]; /* a ring: entry n % MP_LIVE_RECENT */
	uint64_t n_recent;                 /* entries ever written */
	/* the last interval (mp_live_state_tick) */
	int64_t mark_allocs, mark_bytes;
	double allocs_per_s, bytes_per_s;
};

/* Bytes held by allocations made from one call site (a return address). */
struct mp_live_site {
	uint64_t pc; /* 0: allocations without a stack are not counted */
	int64_t live_bytes, n_live;
	char *label; /* "function (file:line)", "module+0xOFF", or NULL before labelling */
};

struct mp_live_slot;
struct mp_symbols;

struct mp_live_process {
	const struct mp_live_spool *spool;
	int64_t pid;
	struct mp_spool_labels labels; /* rank (-1 unknown), PyTorch's allocator settings */
	int ended;                     /* its footer was read */
	char disabled[256];            /* why the library turned itself off, "" when it did not */
	int64_t n_dropped;             /* events the spool says were lost */
	struct mp_live_device *devices;
	size_t n_devices, cap_devices;
	struct mp_intmap live;    /* address -> slot index + 1 (blocks and segments) */
	struct mp_intmap mapped;  /* va -> slot index + 1 (VMM mappings) */
	struct mp_intmap handles; /* VMM handle -> (device + 1) << 8 | memory kind */
	struct mp_live_slot *slots;
	size_t n_slots, cap_slots, free_slot; /* free_slot: index + 1 of a free one, 0 none */
	uint8_t *tool_module;                 /* per module of the spool: a tool's own code */
	size_t n_modules_seen, cap_tool_module;
	struct mp_intmap stack_site; /* spool stack id -> site index + 1 (0: no useful frame) */
	struct mp_intmap pc_site;    /* pc -> site index + 1 */
	struct mp_live_site *sites;
	size_t n_sites, cap_sites;
	struct mp_symbols *sym;
	size_t n_sym_modules; /* modules given to sym so far */
};

struct mp_live_state {
	struct mp_live_process **procs; /* by spool index; NULL for a spool not seen yet */
	size_t n_procs;
	int64_t start_ns, now_ns, tick_ns;  /* CLOCK_MONOTONIC: start, last tick, the one before */
	int64_t live_bytes, reserved_bytes; /* over all devices */
	int live_known, reserved_known;
	int64_t n_items;
	char note[512]; /* the first spool stopped, "" none */
};

void mp_live_state_init(struct mp_live_state *st, int64_t start_ns);
void mp_live_state_free(struct mp_live_state *st);

/* One item of a spool (an mp_live_item_fn: arg is the state).  Returns 0 or MP_ENOMEM. */
int mp_live_state_item(void *st, const struct mp_live_spool *spool,
                       const struct mp_spool_item_head *item);

/* Close an interval at now_ns: the rates become those since the last tick. */
void mp_live_state_tick(struct mp_live_state *st, int64_t now_ns);

/* Copy the first stopped spool's note in (after a poll). */
void mp_live_state_notes(struct mp_live_state *st, const struct mp_live_follow *f);

/*
 * Give the top n call sites of the state labels (symbolised through the
 * spool's modules with import/symbols.h when the binaries can be read,
 * else module+offset).  Reads files: not for the renderers.  0 or MP_ENOMEM.
 */
int mp_live_state_label_sites(struct mp_live_state *st, size_t n);

/* The top sites by live bytes over all processes (largest first, ties by pid,
 * then pc): up to n, as (process, site index) pairs.  Returns how many. */
struct mp_live_top {
	const struct mp_live_process *proc;
	const struct mp_live_site *site;
};
size_t mp_live_state_top_sites(const struct mp_live_state *st, struct mp_live_top *out, size_t n);

/* p50 and p99 (nearest rank) of the recent allocation call durations of the
 * devices given (all of st when dev is NULL); 0 when there are none.
 * Returns the number of durations they are taken from. */
size_t mp_live_latency_quantiles(const struct mp_live_state *st, const struct mp_live_device *dev,
                                 int64_t *p50_ns, int64_t *p99_ns);

/* Fragmentation of a device: free bytes in reserved / reserved; -1 when unknown
 * (reserved or live bytes not known, or nothing reserved). */
double mp_live_free_share(const struct mp_live_device *d);

/* Number of processes seen; dropped events over all of them. */
size_t mp_live_state_n_processes(const struct mp_live_state *st);
int64_t mp_live_state_n_dropped(const struct mp_live_state *st);

#endif
