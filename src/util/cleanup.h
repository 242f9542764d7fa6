/*
 * util/cleanup.h - files to delete if the process is killed by a signal:
 * the temporary file of a trace or output being written.  One slot per
 * kind of output is enough: a command writes at most a few at a time.
 */
#ifndef MP_UTIL_CLEANUP_H
#define MP_UTIL_CLEANUP_H

#define MP_CLEANUP_SLOTS 4

/* mkstemp(template), with the new file remembered in *slot (or -1) before
 * any signal can be delivered: no window where it exists but is unknown. */
int mp_cleanup_mkstemp(char *template, int *slot);
/* Remember path (copied) until mp_cleanup_forget; returns a slot or -1. */
int mp_cleanup_remember(const char *path);
void mp_cleanup_forget(int slot);
/* Install handlers for the signals that end a process by default (SIGINT,
 * SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
 * SIGPROF, SIGXCPU) that delete the remembered files, then die of the same
 * signal; one of the last seven ignored when memprof started stays ignored.  SIGXFSZ is
 * ignored, so that a write past the file-size limit (ulimit -f) fails with
 * EFBIG and memprof says so instead of dying.  Call once, at start. */
void mp_cleanup_on_signals(void);
/* In a child about to exec another program: SIGXFSZ back to what memprof
 * was started with (async-signal-safe). */
void mp_cleanup_child_signals(void);

#endif
