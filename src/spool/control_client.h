/*
 * spool/control_client.h - the client side of the control socket
 * (spool/control.h), for 'memprof attach': find a process's socket, refuse
 * one someone else could have placed or serves, send one request line and
 * read the reply line.  A socket is trusted only when its directory and file
 * are the user's and closed to others, and the process serving it is the
 * user's and is the pid asked for.  Never prints: errors go to err.
 */
#ifndef MP_SPOOL_CONTROL_CLIENT_H
#define MP_SPOOL_CONTROL_CLIENT_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "util/error.h"

#define MP_CONTROL_PATH_BYTES sizeof(((struct sockaddr_un *)0)->sun_path)
#define MP_CONTROL_REPLY_MS   30000 /* start and stop flush the spool: give them time */

/* A process to drive: its pid, its owner, and (once located) its socket. */
struct mp_control_peer {
	pid_t pid;
	long owner; /* the uid of /proc/PID */
	char path[MP_CONTROL_PATH_BYTES];
};

/* p for process pid (path empty); 0, or -1 when there is no process pid. */
int mp_control_peer(pid_t pid, struct mp_control_peer *p);

/* 1 when p's process is the user's (or the user is root). */
int mp_control_ours(const struct mp_control_peer *p);

/*
 * Where p's socket is: the first of the places it may be that exists, into
 * p->path.  Returns 1 found, 0 not (first, of MP_CONTROL_PATH_BYTES, holds the
 * first place for the message), MP_EINVAL when the path is too long.
 */
int mp_control_locate(struct mp_control_peer *p, char *first, struct mp_error *err);

/* Refuse a socket someone else could have placed: 0, or MP_EIO with err set. */
int mp_control_check_place(const struct mp_control_peer *p, struct mp_error *err);

/* Connect to p->path and check who serves it: the socket, or MP_EIO with err set. */
int mp_control_connect(const struct mp_control_peer *p, struct mp_error *err);

/* Send line, read the reply line (newline dropped) into reply (n bytes): 0 or MP_EIO. */
int mp_control_exchange(int fd, const struct mp_control_peer *p, const char *line, char *reply,
                        size_t n, struct mp_error *err);

/*
 * After a mark: leave torch-mark-PID (holding label) in the directory of
 * the process's spool (from its status), which the spool directory's
 * sitecustomize watches to write PyTorch's snapshot then.  1 when left, 0
 * when not, MP_EIO with err set when the status could not be asked.
 */
int mp_control_leave_torch_mark(const struct mp_control_peer *p, const char *label,
                                struct mp_error *err);

/* The command line of pid, arguments joined by spaces, at most n bytes ("" when gone). */
void mp_control_command_of(pid_t pid, char *buf, size_t n);

/* The directories attach looks in (at most 2, MP_CONTROL_PATH_BYTES each); their number. */
int mp_control_dirs(char dirs[][MP_CONTROL_PATH_BYTES]);

#endif
