/*
 * spool/control_path.c - where the control socket of a process lives
 * (spool/control.h).  Shared by the injected library (which serves
 * it) and 'memprof attach' (which connects to it); computes names only.
 */
#include "spool/control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/un.h>
#include <unistd.h>

int mp_control_fallback_dir(unsigned long uid, char *buf, size_t n)
{
	int len = snprintf(buf, n, "/tmp/memprof-%lu", uid);

	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

int mp_control_socket_path(pid_t pid, char *buf, size_t n, char *dir, size_t dir_n)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char d[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int len;

	if (xdg && xdg[0] == '/') {
		len = snprintf(d, sizeof(d), "%s/memprof", xdg);
		if (len < 0 || (size_t)len >= sizeof(d))
			return -ENAMETOOLONG;
	} else if (mp_control_fallback_dir((unsigned long)geteuid(), d, sizeof(d)) < 0) {
		return -ENAMETOOLONG;
	}
	if (dir && (size_t)snprintf(dir, dir_n, "%s", d) >= dir_n)
		return -ENAMETOOLONG;
	/* The socket's path must also fit in a struct sockaddr_un. */
	len = snprintf(buf, n, "%s/%ld.sock", d, (long)pid);
	if (len < 0 || (size_t)len >= n || (size_t)len >= sizeof(d))
		return -ENAMETOOLONG;
	return 0;
}
