/*
 * tests/unit/fake_inject.c - a test double of the capture entry points that
 * src/capture/inject.c (the INJECT part, another file) provides: mode,
 * spool, clock, disable, and the control calls start/stop/mark/status with
 * the behaviour capture.h describes.  For unit tests and test tools only.
 */
#include "fake_inject.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static int mode = MP_CAPTURE_DORMANT;
static struct mp_spool_writer *spool;
static char spool_path[512];
static int n_start, n_stop, n_mark, n_status;
static char last_mark[MP_CONTROL_MAX_LINE];

void fake_inject_reset(int m, struct mp_spool_writer *w, const char *path)
{
	pthread_mutex_lock(&fake_lock);
	mode = m;
	spool = w;
	snprintf(spool_path, sizeof(spool_path), "%s", path ? path : "");
	n_start = n_stop = n_mark = n_status = 0;
	last_mark[0] = '\0';
	pthread_mutex_unlock(&fake_lock);
}

int fake_inject_n_calls(const char *what)
{
	if (strcmp(what, "start") == 0)
		return n_start;
	if (strcmp(what, "stop") == 0)
		return n_stop;
	if (strcmp(what, "mark") == 0)
		return n_mark;
	return n_status;
}

const char *fake_inject_last_mark(void)
{
	return last_mark;
}

int mp_capture_mode(void)
{
	return mode;
}

struct mp_spool_writer *mp_capture_spool(void)
{
	return spool;
}

int64_t mp_capture_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void mp_capture_disable(const char *fmt, ...)
{
	(void)fmt;
	mode = MP_CAPTURE_OFF;
}

static void window_event(int kind, const char *name)
{
	struct mp_spool_event ev;

	if (!spool)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = (uint8_t)kind;
	ev.device = -1;
	ev.ts_ns = mp_capture_now();
	if (name)
		ev.name = mp_spool_cstring(spool, name);
	mp_spool_event(spool, &ev);
}

int mp_capture_start(char *msg, size_t n)
{
	uint64_t n_live = 0;
	int rc = -1;

	pthread_mutex_lock(&fake_lock);
	n_start++;
	if (mode == MP_CAPTURE_RECORDING) {
		snprintf(msg, n, "already recording");
	} else if (mode == MP_CAPTURE_OFF) {
		snprintf(msg, n, "recording is off in this process");
	} else {
		mode = MP_CAPTURE_RECORDING;
		window_event(MP_SK_WINDOW_START, NULL);
		if (spool)
			mp_live_write_preexisting(spool, mp_capture_now());
		mp_live_totals(&n_live, NULL);
		snprintf(msg, n, "recording, %llu live allocations written first",
		         (unsigned long long)n_live);
		rc = 0;
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

int mp_capture_stop(char *msg, size_t n)
{
	int rc = -1;

	pthread_mutex_lock(&fake_lock);
	n_stop++;
	if (mode != MP_CAPTURE_RECORDING) {
		snprintf(msg, n, "not recording");
	} else {
		mode = MP_CAPTURE_DORMANT;
		window_event(MP_SK_WINDOW_STOP, NULL);
		if (spool)
			mp_spool_flush(spool, 1);
		snprintf(msg, n, "dormant");
		rc = 0;
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

int mp_capture_mark(const char *label, char *msg, size_t n)
{
	int rc = -1;

	pthread_mutex_lock(&fake_lock);
	n_mark++;
	if (mode != MP_CAPTURE_RECORDING) {
		snprintf(msg, n, "not recording: a mark belongs inside a recording window");
	} else {
		snprintf(last_mark, sizeof(last_mark), "%s", label);
		window_event(MP_SK_MARK, label);
		rc = 0;
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

void mp_capture_status(char *buf, size_t n)
{
	static const char *const names[] = {"off", "dormant", "recording"};
	uint64_t n_live, bytes;

	mp_live_totals(&n_live, &bytes);
	pthread_mutex_lock(&fake_lock);
	n_status++;
	snprintf(buf, n,
	         "mode=%s pid=%ld spool=%s events=%llu dropped=%llu live_allocations=%llu "
	         "live_bytes=%llu",
	         names[mode], (long)getpid(), spool_path[0] ? spool_path : "-",
	         spool ? (unsigned long long)mp_spool_n_events(spool) : 0ull,
	         spool ? (unsigned long long)mp_spool_n_dropped(spool) : 0ull,
	         (unsigned long long)n_live, (unsigned long long)bytes);
	pthread_mutex_unlock(&fake_lock);
}
