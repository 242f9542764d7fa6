/*
 * spool/control.h - the control socket between 'memprof attach' and
 * a workload recorded by memprof (DESIGN.md section 1: the only channel into
 * a running workload).
 *
 * Where: $XDG_RUNTIME_DIR/memprof/PID.sock when XDG_RUNTIME_DIR is set and is
 * an absolute path, else /tmp/memprof-UID/PID.sock.  The directory is mode
 * 0700 and owned by the user; the socket is mode 0600.  Both sides check
 * the other's credentials (SO_PEERCRED): only the same user (or root
 * driving its own processes) may drive a workload.
 *
 * The protocol is one request line and one reply line per connection, text,
 * at most MP_CONTROL_MAX_LINE bytes each:
 *   start | stop | status | mark LABEL
 * reply "ok[ DETAIL]" or "error REASON".
 */
#ifndef MP_SPOOL_CONTROL_H
#define MP_SPOOL_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#define MP_CONTROL_MAX_LINE 1024

/*
 * The socket path of process pid into buf (and its directory into dir, when
 * not NULL).  Returns 0, or -ENAMETOOLONG.
 */
int mp_control_socket_path(pid_t pid, char *buf, size_t n, char *dir, size_t dir_n);

/*
 * The directory used without XDG_RUNTIME_DIR, /tmp/memprof-UID, into buf:
 * where a client also looks, since the workload's environment may differ
 * from its own.  Returns 0, or -ENAMETOOLONG.
 */
int mp_control_fallback_dir(unsigned long uid, char *buf, size_t n);

#endif
