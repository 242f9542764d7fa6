/*
 * tests/tools/control_server.c - a stand-in for a workload recorded with
 * 'memprof record --dormant' (a real one needs a GPU): it serves the control
 * socket with src/capture/control.c over the test double of inject.c
 * (tests/unit/fake_inject.c) and a live table of three allocations
 * (1, 2 and 4 MiB), for tests/cli/attach-cli.sh.
 *
 * usage: control_server [SPOOL]   prints "ready SOCKET" once serving, then
 * serves until SIGTERM or SIGINT; with SPOOL, writes that spool (the window,
 * the marks and the preexisting allocations) and closes it at the end.
 */
#include "../unit/fake_inject.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct mp_spool_header h = {0};
	struct mp_spool_writer *w = NULL;
	char path[128];
	sigset_t set;
	int sig, rc;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (argc > 1) {
		h.pid = getpid();
		h.ppid = getppid();
		h.flags = MP_SPOOL_F_DORMANT;
		rc = mp_spool_writer_open(&w, argv[1], &h, NULL);
		if (rc < 0) {
			fprintf(stderr, "control_server: cannot write '%s': %s\n", argv[1],
			        strerror(-rc));
			return 1;
		}
	}
	fake_inject_reset(MP_CAPTURE_DORMANT, w, argc > 1 ? argv[1] : NULL);
	mp_live_add(0x7f0000100000, 1 << 20, 0, MP_MK_DEVICE, 0, 0,
	            w ? mp_spool_cstring(w, "cudaMalloc") : 0);
	mp_live_add(0x7f0000200000, 2 << 20, 0, MP_MK_DEVICE, MP_SE_ASYNC, 7,
	            w ? mp_spool_cstring(w, "cudaMallocAsync") : 0);
	mp_live_add(0x7f0000400000, 4 << 20, 1, MP_MK_MANAGED, MP_SE_MANAGED, 0,
	            w ? mp_spool_cstring(w, "cudaMallocManaged") : 0);
	rc = mp_control_start();
	if (rc < 0) {
		fprintf(stderr, "control_server: cannot serve the control socket: %s\n",
		        strerror(-rc));
		return 1;
	}
	mp_control_socket_path(getpid(), path, sizeof(path), NULL, 0);
	printf("ready %s\n", path);
	fflush(stdout);
	sigwait(&set, &sig);
	mp_control_stop();
	if (w)
		mp_spool_writer_close(w, mp_capture_now(), 0);
	return 0;
}
