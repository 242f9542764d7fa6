/*
 * capture/capture.h - what the parts of the injected library (libmemprof-
 * inject.so) offer each other.  Internal to src/capture/; nothing outside
 * the library includes it (tests compile the capture sources directly).
 *
 *   inject.c      InitializeInjection, configuration, modes, exit and fork
 *   cupti_load.c  libcupti loaded at run time, its functions in a table
 *   callbacks.c   runtime/driver API callbacks: allocation calls, VMM calls
 *   activity.c    CUPTI activity buffers: MEMORY2, MEMORY_POOL, DEVICE records
 *   phases.c      NVTX ranges as a per-thread phase stack
 *   stacks.c      host call stacks (raw return addresses), sampled
 *   modules.c     loaded modules, for symbolising stacks offline
 *   live_table.c  the live allocations (dormant mode, attach start)
 *   control.c     the control socket (memprof attach)
 *
 * Every entry point is safe to call from any thread, never blocks on I/O,
 * never aborts, and does nothing once the library is off.
 */
#ifndef MP_CAPTURE_CAPTURE_H
#define MP_CAPTURE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "spool/format.h"
#include "spool/writer.h"

/* What the library is doing. */
enum mp_capture_mode {
	MP_CAPTURE_OFF = 0,       /* disabled (failure, fork child, MEMPROF_DISABLE) */
	MP_CAPTURE_DORMANT = 1,   /* keeping the live table only (record --dormant) */
	MP_CAPTURE_RECORDING = 2, /* writing every event to the spool */
};

/* --- inject.c -------------------------------------------------------------- */

int mp_capture_mode(void);
/* The spool of this process, NULL when there is none. */
struct mp_spool_writer *mp_capture_spool(void);
/* CLOCK_MONOTONIC in ns: the one clock of every spool timestamp. */
int64_t mp_capture_now(void);
/*
 * Turn the library off for good: write an MP_SK_DISABLED event naming why
 * (printf-style), flush, and stop every callback.  One line on stderr,
 * "memprof: recording stopped: WHY", once.
 */
void mp_capture_disable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Control (called from the control thread).  Each returns 0, or -1 with a
 * one-line reason in msg.  start: dormant -> recording (WINDOW_START, then
 * the live table as PREEXISTING events, then activity records on); stop:
 * recording -> dormant (activity records off and flushed, WINDOW_STOP, spool
 * flushed to disk); mark: an MP_SK_MARK event.  status writes one line:
 * "mode=recording pid=N spool=PATH events=N dropped=N live_allocations=N live_bytes=N".
 */
int mp_capture_start(char *msg, size_t n);
int mp_capture_stop(char *msg, size_t n);
int mp_capture_mark(const char *label, char *msg, size_t n);
void mp_capture_status(char *buf, size_t n);

/* --- live_table.c ---------------------------------------------------------- */

/*
 * The allocations live now, kept in every mode from the API callbacks (an
 * allocation call that returned, a free call): address -> what it is.
 * api is a string id of the spool (0 none).
 */
void mp_live_add(uint64_t address, uint64_t bytes, int32_t device, uint8_t mem_kind,
                 uint16_t flags, uint64_t stream, uint32_t api);
/* Forget the allocation at address; returns 1 when it was there. */
int mp_live_remove(uint64_t address);
void mp_live_totals(uint64_t *n_allocations, uint64_t *bytes);
/* Write every live allocation as an MP_SK_PREEXISTING event at time ts. */
int mp_live_write_preexisting(struct mp_spool_writer *w, int64_t ts);
/* In a forked child: empty the table without taking its lock. */
void mp_live_forget_after_fork(void);

/* --- control.c ------------------------------------------------------------- */

/*
 * Serve the control socket of this process (spool/control.h) on a
 * thread of its own.  Returns 0, or -errno (the library goes on without it).
 */
int mp_control_start(void);
/* Stop serving and remove the socket (at exit). */
void mp_control_stop(void);
/* In a forked child: forget the parent's socket without closing its file. */
void mp_control_forget_after_fork(void);

#endif
