/*
 * util/cleanup.c - deleting temporary files when a signal kills the process.
 * The handler only calls unlink, signal and raise (async-signal-safe).
 */
#include "util/cleanup.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char paths[MP_CLEANUP_SLOTS][4096];
static volatile sig_atomic_t used[MP_CLEANUP_SLOTS];

int mp_cleanup_remember(const char *path)
{
	int i;

	if (strlen(path) >= sizeof(paths[0]))
		return -1;
	for (i = 0; i < MP_CLEANUP_SLOTS; i++) {
		if (!used[i]) {
			strcpy(paths[i], path);
			used[i] = 1;
			return i;
		}
	}
	return -1;
}

int mp_cleanup_mkstemp(char *template, int *slot)
{
	sigset_t all, old;
	int fd;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fd = mkstemp(template);
	*slot = fd >= 0 ? mp_cleanup_remember(template) : -1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return fd;
}

void mp_cleanup_forget(int slot)
{
	if (slot >= 0 && slot < MP_CLEANUP_SLOTS)
		used[slot] = 0;
}

static void on_signal(int sig)
{
	int i;

	for (i = 0; i < MP_CLEANUP_SLOTS; i++)
		if (used[i])
			unlink(paths[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static struct sigaction xfsz_at_start;

void mp_cleanup_on_signals(void)
{
	static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,    SIGPIPE, SIGQUIT, SIGUSR1,
	                           SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};
	struct sigaction sa, old;
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		if (i >= 4 && sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue; /* the added ones: ignored when we started, ignored they stay */
		sigaction(sigs[i], &sa, NULL);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXFSZ, &sa, &xfsz_at_start);
}

void mp_cleanup_child_signals(void)
{
	sigaction(SIGXFSZ, &xfsz_at_start, NULL);
}
