/*
 * sys/launch.h - running the command 'memprof record' records: fork, exec
 * with extra environment variables, forward signals, wait.  Prints nothing:
 * the caller words the outcome.
 */
#ifndef MP_SYS_LAUNCH_H
#define MP_SYS_LAUNCH_H

/* What a caller may add to a launch ('memprof record --live'). */
struct mp_launch_hooks {
	int stdin_fd, stdout_fd, stderr_fd; /* the command's, dup2'd in the child; -1: memprof's */
	void (*started)(void *arg);         /* in memprof, right after the fork, before the wait */
	void *arg;
};

/*
 * Run argv (argv[0] looked up in PATH) with env ("NAME=VALUE" strings,
 * NULL-terminated) added to this process's environment, and wait for it.
 * While it runs, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent
 * to this process are passed on to it, except a SIGINT or SIGQUIT from the
 * terminal (si_code SI_KERNEL), which the command's process group received
 * too; this process survives them all.  The signal handlers in place before
 * are put back on return.  hooks (NULL: none) redirect the command's standard
 * streams and tell the caller when it was forked (threads started then are
 * not in the child, which only execs).
 *
 * Returns 0 with *wait_status as waitpid(2) gave it; or -1 with *err_no the
 * errno of exec (the command never ran: ENOENT, EACCES, ...) and *exec_failed
 * set, or of fork/pipe with *exec_failed clear.
 */
int mp_launch_run(char *const argv[], char *const env[], const struct mp_launch_hooks *hooks,
                  int *wait_status, int *err_no, int *exec_failed);

#endif
