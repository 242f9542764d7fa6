/*
 * live/feed.h - the live state fed from the spools while a recorded
 * command runs ('memprof record --live', '--metrics'): a follower thread
 * reads the spools into the state every MP_LIVE_ROUND_MS and calls the
 * caller's show every MP_LIVE_INTERVAL_NS; keys waiting on the caller's
 * descriptor go to its key callback; a server thread answers GET /metrics
 * from the same state.  The state and the follower are guarded by one
 * lock, which show takes through mp_live_feed_lock.  What is drawn or
 * printed is the caller's (the callbacks); the threads block the
 * process's signals, which go to the thread that waits for the command.
 */
#ifndef MP_LIVE_FEED_H
#define MP_LIVE_FEED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "live/follow.h"
#include "live/http.h"
#include "live/state.h"

#define MP_LIVE_ROUND_MS    250
#define MP_LIVE_INTERVAL_NS 1000000000LL

struct mp_live_feed;

/* What the follower thread calls (ctx is the caller's); any may be NULL but show. */
struct mp_live_feed_ops {
	void (*begin)(void *ctx); /* first, on the follower thread */
	int (*key_fd)(void *ctx); /* the descriptor to watch for keys now, -1 none */
	void (*key)(void *ctx);   /* keys are waiting on it */
	void (*show)(void *ctx, struct mp_live_feed *f, int64_t now_ns); /* each interval */
	void (*end)(void *ctx); /* last, after the final read and tick */
	int show_at_once;       /* the first show at once, else after an interval */
};

struct mp_live_feed {
	struct mp_live_state st; /* guarded by the lock while the threads run */
	struct mp_live_follow *follow;
	struct mp_live_http *http; /* the caller's metrics server, NULL: none */
	struct mp_live_feed_ops ops;
	void *ctx;
	/* private */
	pthread_mutex_t lock;
	pthread_t follower, server;
	int threads; /* 1: the follower runs, 2: the server */
	int wake[2]; /* the follower's stop pipe */
};

/* The monotonic clock in ns. */
int64_t mp_live_now_ns(void);

/* f zeroed, its state started now, its lock made; free with mp_live_feed_free. */
void mp_live_feed_init(struct mp_live_feed *f);
/* Follow the spools of dir but the skip ones (there before the run).  0, or -1 with errno. */
int mp_live_feed_follow(struct mp_live_feed *f, const char *dir, char *const *skip, size_t n_skip);
void mp_live_feed_free(struct mp_live_feed *f);

/* Start the follower (and the server when f->http): 0, or -1 when the follower did not start. */
int mp_live_feed_start(struct mp_live_feed *f);
/* Stop both and wait for them: after it the state is the caller's alone. */
void mp_live_feed_stop(struct mp_live_feed *f);

void mp_live_feed_lock(struct mp_live_feed *f);
void mp_live_feed_unlock(struct mp_live_feed *f);

#endif
