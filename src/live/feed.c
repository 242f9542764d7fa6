/*
 * live/feed.c - the follower and metrics threads of the live state
 * (live/feed.h): spools read into the state each round, the caller's show
 * each interval, its key callback when a key waits, a last read and tick
 * at the end; the metrics rendered from the state under its lock.
 */
#include "live/feed.h"
#include "live/expo.h"
#include "live/term.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t mp_live_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void mp_live_feed_init(struct mp_live_feed *f)
{
	memset(f, 0, sizeof(*f));
	f->wake[0] = f->wake[1] = -1;
	pthread_mutex_init(&f->lock, NULL);
	mp_live_state_init(&f->st, mp_live_now_ns());
}

int mp_live_feed_follow(struct mp_live_feed *f, const char *dir, char *const *skip, size_t n_skip)
{
	if (pipe2(f->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	return (f->follow = mp_live_follow_new(dir, skip, n_skip)) ? 0 : -1;
}

void mp_live_feed_lock(struct mp_live_feed *f)
{
	pthread_mutex_lock(&f->lock);
}

void mp_live_feed_unlock(struct mp_live_feed *f)
{
	pthread_mutex_unlock(&f->lock);
}

static void block_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* they go to the thread that waits */
}

/* Read the spools until nothing new comes (rounds is a bound). */
static void read_spools(struct mp_live_feed *f, int rounds)
{
	pthread_mutex_lock(&f->lock);
	while (rounds-- > 0 && mp_live_follow_poll(f->follow, mp_live_state_item, &f->st) > 0)
		;
	mp_live_state_notes(&f->st, f->follow);
	pthread_mutex_unlock(&f->lock);
}

static void *follower_main(void *arg)
{
	struct mp_live_feed *f = arg;
	int64_t next = mp_live_now_ns() + (f->ops.show_at_once ? 0 : MP_LIVE_INTERVAL_NS);

	block_signals();
	if (f->ops.begin)
		f->ops.begin(f->ctx);
	for (;;) {
		int kfd = f->ops.key_fd ? f->ops.key_fd(f->ctx) : -1;
		struct pollfd p[2] = {{f->wake[0], POLLIN, 0}, {kfd, POLLIN, 0}};
		int n = poll(p, kfd >= 0 ? 2 : 1, MP_LIVE_ROUND_MS);

		if (n > 0 && p[0].revents)
			break;
		if (n > 0 && kfd >= 0 && p[1].revents && f->ops.key)
			f->ops.key(f->ctx);
		read_spools(f, 1);
		if (mp_live_now_ns() >= next) {
			f->ops.show(f->ctx, f, mp_live_now_ns());
			next += MP_LIVE_INTERVAL_NS;
			if (next < mp_live_now_ns())
				next = mp_live_now_ns() + MP_LIVE_INTERVAL_NS;
		}
	}
	read_spools(f, 64);
	pthread_mutex_lock(&f->lock);
	mp_live_state_tick(&f->st, mp_live_now_ns());
	pthread_mutex_unlock(&f->lock);
	if (f->ops.end)
		f->ops.end(f->ctx);
	return NULL;
}

static int metrics_body(void *arg, struct mp_live_text *body)
{
	struct mp_live_feed *f = arg;
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = mp_live_render_metrics(&f->st, body);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static void *server_main(void *arg)
{
	struct mp_live_feed *f = arg;

	block_signals();
	mp_live_http_serve(f->http, metrics_body, f);
	return NULL;
}

int mp_live_feed_start(struct mp_live_feed *f)
{
	int rc = -1;

	if (pthread_create(&f->follower, NULL, follower_main, f) == 0) {
		f->threads |= 1;
		rc = 0;
	}
	if (f->http && pthread_create(&f->server, NULL, server_main, f) == 0)
		f->threads |= 2;
	return rc;
}

void mp_live_feed_stop(struct mp_live_feed *f)
{
	if (f->threads & 1) {
		mp_live_write_all(f->wake[1], "x", 1);
		pthread_join(f->follower, NULL);
	}
	if (f->threads & 2) {
		mp_live_http_stop(f->http);
		pthread_join(f->server, NULL);
	}
	f->threads = 0;
}

void mp_live_feed_free(struct mp_live_feed *f)
{
	mp_live_feed_stop(f);
	mp_live_follow_free(f->follow);
	mp_live_state_free(&f->st);
	if (f->wake[0] >= 0) {
		close(f->wake[0]);
		close(f->wake[1]);
	}
	pthread_mutex_destroy(&f->lock);
}
