/*
 * util/temp_name.c - names of the temporary files outputs are written to
 * before they are renamed into place (temp_name.h), and the sweep that
 * removes the ones a killed memprof left behind.  SIGKILL cannot be caught,
 * and SQLite cannot write an unnamed file, so a trace being written has a
 * name; the name says which host and process made it, and the next write of
 * the same output removes those whose process is gone.
 */
#include "util/temp_name.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This host's name as it goes into temporary names: letters, digits, '.', at most 32. */
static void host_tag(char *buf, size_t n)
{
	char host[256] = "";
	size_t i, k = 0;

	if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		snprintf(host, sizeof(host), "host");
	for (i = 0; host[i] && k + 1 < n && k < 32; i++) {
		char c = host[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.')
			buf[k++] = c;
	}
	buf[k] = '\0';
	if (k == 0)
		snprintf(buf, n, "host");
}

char *mp_temp_template(const char *path)
{
	char host[40], *out = NULL;

	host_tag(host, sizeof(host));
	if (asprintf(&out, "%s.tmp-%s-%ld-XXXXXX", path, host, (long)getpid()) < 0)
		return NULL;
	return out;
}

/* name = STEM.tmp-HOST-PID-XXXXXX: 1 with host and pid filled in, else 0. */
static int parse(const char *name, const char *stem, char *host, size_t n, long *pid)
{
	size_t len = strlen(name), sl = strlen(stem);
	const char *end = name + len, *p, *dash;
	char *num_end;

	if (len < sl + 5 + 1 + 1 + 1 + 7 || strncmp(name, stem, sl) != 0 ||
	    strncmp(name + sl, ".tmp-", 5) != 0 || end[-7] != '-')
		return 0;
	p = end - 7; /* the '-' before XXXXXX */
	for (dash = p - 1; dash > name + sl + 5 && *dash != '-'; dash--)
		;
	if (*dash != '-' || dash <= name + sl + 5)
		return 0;
	*pid = strtol(dash + 1, &num_end, 10);
	if (num_end != p || *pid <= 0)
		return 0;
	if ((size_t)(dash - (name + sl + 5)) >= n)
		return 0;
	memcpy(host, name + sl + 5, (size_t)(dash - (name + sl + 5)));
	host[dash - (name + sl + 5)] = '\0';
	return 1;
}

int mp_temp_sweep(const char *path)
{
	char dir[PATH_MAX], full[PATH_MAX + 256], host[40], theirs[64];
	const char *slash = strrchr(path, '/'), *stem = slash ? slash + 1 : path;
	struct dirent *d;
	DIR *dh;
	long pid;
	int removed = 0;

	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) ? (int)(slash - path) : 1,
		         path);
	else
		snprintf(dir, sizeof(dir), ".");
	if (!*stem || !(dh = opendir(dir)))
		return 0;
	host_tag(host, sizeof(host));
	while ((d = readdir(dh))) {
		if (!parse(d->d_name, stem, theirs, sizeof(theirs), &pid) ||
		    strcmp(theirs, host) != 0)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* ours, or its process still runs (or is not ours to ask) */
		snprintf(full, sizeof(full), "%s/%s", dir, d->d_name);
		removed += unlink(full) == 0;
	}
	closedir(dh);
	return removed;
}
