/*
 * sys/launch.c - fork and exec the recorded command, pass signals on to it,
 * wait for it.  An exec failure comes back to the parent through a
 * close-on-exec pipe, so "command not found" is told apart from a command
 * that ran and exited 127.
 */
#include "sys/launch.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static volatile sig_atomic_t child_pid;

/* Pass sig on, unless the terminal sent it to the whole foreground group. */
static void forward(int sig, siginfo_t *si, void *unused)
{
	int saved = errno;

	(void)unused;
	if (!((sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL) && child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

static void restore(const struct sigaction *old)
{
	size_t i;

	for (i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
}

/* In the child: the dispositions and mask memprof was started with, the
 * environment, exec; on failure, errno down the pipe. */
static void child(char *const argv[], char *const env[], const struct mp_launch_hooks *hooks,
                  const struct sigaction *old, const sigset_t *mask, int fd)
{
	int e;

	if (hooks && ((hooks->stdin_fd >= 0 && dup2(hooks->stdin_fd, 0) < 0) ||
	              (hooks->stdout_fd >= 0 && dup2(hooks->stdout_fd, 1) < 0) ||
	              (hooks->stderr_fd >= 0 && dup2(hooks->stderr_fd, 2) < 0))) {
		e = errno;
		if (write(fd, &e, sizeof(e)) < 0)
			e = errno;
		_exit(127);
	}
	restore(old); /* handlers become SIG_DFL at exec; SIG_IGN stays as we got it */
	mp_cleanup_child_signals();
	sigprocmask(SIG_SETMASK, mask, NULL);
	for (; *env; env++)
		putenv(*env);
	execvp(argv[0], argv);
	e = errno;
	if (write(fd, &e, sizeof(e)) < 0)
		e = errno;
	_exit(127);
}

int mp_launch_run(char *const argv[], char *const env[], const struct mp_launch_hooks *hooks,
                  int *wait_status, int *err_no, int *exec_failed)
{
	struct sigaction sa, old[N_FORWARDED];
	sigset_t block, mask;
	int fds[2], e = 0;
	ssize_t n;
	size_t i;
	pid_t pid;

	*exec_failed = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err_no = errno;
		return -1;
	}
	sigemptyset(&block);
	for (i = 0; i < N_FORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &mask); /* nothing forwarded before the pid is known */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &sa, &old[i]);
	pid = fork();
	if (pid == 0)
		child(argv, env, hooks, old, &mask, fds[1]);
	e = errno;
	close(fds[1]);
	if (pid > 0)
		child_pid = pid;
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (pid < 0) {
		close(fds[0]);
		restore(old);
		*err_no = e;
		return -1;
	}
	while ((n = read(fds[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	if (n != (ssize_t)sizeof(e) && hooks && hooks->started)
		hooks->started(hooks->arg);
	while (waitpid(pid, wait_status, 0) < 0 && errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &block, NULL);
	child_pid = 0;
	restore(old);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (n == (ssize_t)sizeof(e)) {
		*err_no = e;
		*exec_failed = 1;
		return -1;
	}
	return 0;
}
