/*
 * bench/measure.c - runs one command and reports its wall time, peak RSS
 * (from wait4's rusage) and exit status on one machine-readable line, so
 * every program in a benchmark is measured the same way.  Measures only:
 * the command's own output passes through untouched.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: measure [-o FILE] [--] COMMAND [ARG...]\n\n"
	           "Run COMMAND and print, once it ends, one line:\n"
	           "  wall_s=SECONDS user_s=SECONDS sys_s=SECONDS maxrss_kib=KIB status=N\n"
	           "to standard error, or to FILE with -o (appended).  status is the exit\n"
	           "status, or 128+SIGNAL when killed; measure exits with the same value\n"
	           "(127 when COMMAND cannot be run).\n");
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	const char *report = NULL;
	FILE *out = stderr;
	pid_t pid;
	int ch, wstatus, status;

	while ((ch = getopt(argc, argv, "+o:h")) != -1) {
		switch (ch) {
		case 'o':
			report = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}
	if (report && !(out = fopen(report, "a"))) {
		fprintf(stderr, "measure: cannot open '%s': %s\n", report, strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: cannot fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "measure: cannot run '%s': %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &wstatus, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "measure: cannot wait for '%s': %s\n", argv[optind],
			        strerror(errno));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	fprintf(out, "wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kib=%ld status=%d\n",
	        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	        seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_maxrss, status);
	if (out != stderr && fclose(out) != 0) {
		fprintf(stderr, "measure: cannot write '%s': %s\n", report, strerror(errno));
		return 2;
	}
	return status;
}
