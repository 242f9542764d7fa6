/*
 * live/http_serve.c - serving the connections of the metrics server: one
 * poll loop over the listening socket, the stop pipe and every connection,
 * all non-blocking.  Each connection has one total deadline (request,
 * answer and the read after it), at most MP_LIVE_HTTP_MAX_CONNS are open
 * (the oldest is closed for a new one), and stopping closes them all at
 * once: no client, however slow, holds a scrape or the caller.  Prints
 * nothing.
 */
#include "live/http.h"
#include "live/http_internal.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_MS    500   /* after the answer, what the client still sends */
#define DRAIN_BYTES 65536 /* is read (so closing does not reset it) this long */

enum { READING, WRITING, DRAINING };

struct conn {
	int fd, phase;
	int64_t deadline_ms; /* of the whole connection */
	uint64_t seq;        /* accept order: the smallest is the oldest */
	size_t n, sent, drained;
	struct mp_live_text out;
	char req[MP_LIVE_HTTP_MAX_REQUEST];
};

struct server {
	struct mp_live_http *h;
	mp_live_body_fn fn;
	void *arg;
	struct conn *c[MP_LIVE_HTTP_MAX_CONNS];
	size_t n;
	uint64_t seq;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void conn_close(struct server *sv, size_t i)
{
	struct conn *c = sv->c[i];

	close(c->fd);
	mp_live_text_free(&c->out);
	free(c);
	sv->c[i] = sv->c[--sv->n];
}

static int again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Send what is left of the answer; then shut the write side and drain.
 * Returns -1 when the connection is over. */
static int conn_write(struct conn *c, int64_t now)
{
	while (c->sent < c->out.n) {
		ssize_t k = send(c->fd, c->out.p + c->sent, c->out.n - c->sent,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0 && again())
			return 0;
		if (k <= 0)
			return -1; /* the client went away */
		c->sent += (size_t)k;
	}
	shutdown(c->fd, SHUT_WR);
	c->phase = DRAINING;
	if (c->deadline_ms > now + DRAIN_MS)
		c->deadline_ms = now + DRAIN_MS;
	return 0;
}

/* Read what the client sent: the request, or what follows the answer. */
static int conn_read(struct server *sv, struct conn *c, int64_t now)
{
	char buf[4096];
	ssize_t k;

	if (c->phase == DRAINING) {
		k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k < 0 && again())
			return 0;
		if (k <= 0 || (c->drained += (size_t)k) >= DRAIN_BYTES)
			return -1;
		return 0;
	}
	k = recv(c->fd, c->req + c->n, sizeof(c->req) - c->n, MSG_DONTWAIT);
	if (k < 0 && again())
		return 0;
	if (k <= 0)
		return -1;
	c->n += (size_t)k;
	if (!mp_live_http_answer(c->req, c->n, sv->fn, sv->arg, &c->out))
		return 0;
	if (c->out.failed)
		return -1;
	c->phase = WRITING;
	return conn_write(c, now);
}

/* One connection after poll: -1 when it is over (deadline, error, done). */
static int conn_step(struct server *sv, struct conn *c, short revents, int64_t now)
{
	if (now >= c->deadline_ms)
		return -1;
	if (!revents)
		return 0;
	if (c->phase == WRITING)
		return conn_write(c, now);
	return conn_read(sv, c, now);
}

/* Take every pending connection; at the cap the oldest open one is closed. */
static void accept_all(struct server *sv, int64_t now)
{
	int fd;

	while ((fd = accept4(sv->h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct conn *c = malloc(sizeof(*c));
		size_t i, oldest = 0;

		if (!c) {
			close(fd);
			continue;
		}
		if (sv->n == MP_LIVE_HTTP_MAX_CONNS) {
			for (i = 1; i < sv->n; i++)
				if (sv->c[i]->seq < sv->c[oldest]->seq)
					oldest = i;
			conn_close(sv, oldest);
		}
		memset(c, 0, offsetof(struct conn, req));
		c->fd = fd;
		c->phase = READING;
		c->deadline_ms = now + MP_LIVE_HTTP_DEADLINE_MS;
		c->seq = sv->seq++;
		sv->c[sv->n++] = c;
	}
}

/* Wait for the next thing to do; returns 1 to stop. */
static int wait_events(struct server *sv, struct pollfd *p, int64_t now)
{
	int64_t next = -1;
	size_t i;

	p[0] = (struct pollfd){sv->h->fd, POLLIN, 0};
	p[1] = (struct pollfd){sv->h->stop_pipe[0], POLLIN, 0};
	for (i = 0; i < sv->n; i++) {
		const struct conn *c = sv->c[i];

		p[2 + i] = (struct pollfd){c->fd, c->phase == WRITING ? POLLOUT : POLLIN, 0};
		if (next < 0 || c->deadline_ms < next)
			next = c->deadline_ms;
	}
	if (poll(p, 2 + sv->n, next < 0 ? -1 : (int)(next > now ? next - now : 0)) < 0)
		return errno == EINTR ? 0 : 1;
	return p[1].revents != 0;
}

void mp_live_http_serve(struct mp_live_http *h, mp_live_body_fn fn, void *arg)
{
	struct pollfd p[2 + MP_LIVE_HTTP_MAX_CONNS];
	struct server sv = {.h = h, .fn = fn, .arg = arg};
	size_t i;

	while (!wait_events(&sv, p, now_ms())) {
		int64_t now = now_ms();
		size_t n = sv.n;

		/* from the end: closing moves the last connection into the slot */
		for (i = n; i-- > 0;)
			if (conn_step(&sv, sv.c[i], p[2 + i].revents, now) < 0)
				conn_close(&sv, i);
		if (p[0].revents & POLLIN)
			accept_all(&sv, now);
	}
	while (sv.n)
		conn_close(&sv, sv.n - 1);
}

void mp_live_http_stop(struct mp_live_http *h)
{
	ssize_t k = write(h->stop_pipe[1], "x", 1);

	(void)k;
}
