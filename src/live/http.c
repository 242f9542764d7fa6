/*
 * live/http.c - a minimal HTTP/1.1 server for one resource: the listening
 * socket and the answer to a request.  The request parsing and the answer
 * (mp_live_http_answer) are pure so tests check them exactly; the loop that
 * serves connections (live/http_serve.c) owns deadlines.  Prints nothing.
 */
#include "live/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "live/http_internal.h"

/* --- the answer ------------------------------------------------------------------------ */

static void status_only(struct mp_live_text *out, const char *status, const char *extra)
{
	static const char body_fmt[] = "%s\n";

	mp_live_printf(out,
	               "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	               "Content-Length: %zu\r\n%sConnection: close\r\n\r\n",
	               status, strlen(status) + 1, extra);
	mp_live_printf(out, body_fmt, status);
}

/* The end of the header block (after the empty line), or NULL. */
static const char *header_end(const char *req, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		if (req[i] == '\n' && req[i + 1] == '\n')
			return req + i + 2;
		if (i + 3 < n && !memcmp(req + i, "\r\n\r\n", 4))
			return req + i + 4;
	}
	return NULL;
}

/* Split "METHOD SP TARGET SP HTTP/1.x" out of the first line; 0 or -1. */
static int request_line(const char *req, size_t n, char *method, size_t mn, char *target, size_t tn)
{
	const char *end = memchr(req, '\n', n), *sp1, *sp2;
	size_t len, i;

	if (!end)
		return -1;
	len = (size_t)(end - req);
	if (len && req[len - 1] == '\r')
		len--;
	if (!(sp1 = memchr(req, ' ', len)) ||
	    !(sp2 = memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - req))))
		return -1;
	if (sp1 == req || (size_t)(sp1 - req) >= mn || sp2 == sp1 + 1 ||
	    (size_t)(sp2 - sp1 - 1) >= tn)
		return -1;
	if (len - (size_t)(sp2 + 1 - req) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -1;
	memcpy(method, req, (size_t)(sp1 - req));
	method[sp1 - req] = '\0';
	memcpy(target, sp1 + 1, (size_t)(sp2 - sp1 - 1));
	target[sp2 - sp1 - 1] = '\0';
	for (i = 0; method[i]; i++)
		if (method[i] < 'A' || method[i] > 'Z')
			return -1;
	for (i = 0; target[i]; i++)
		if ((unsigned char)target[i] <= ' ' || (unsigned char)target[i] >= 0x7f)
			return -1;
	return target[0] == '/' || !strcmp(target, "*") ? 0 : -1;
}

int mp_live_http_answer(const char *req, size_t n, mp_live_body_fn fn, void *arg,
                        struct mp_live_text *out)
{
	char method[16], target[1024], *q;
	struct mp_live_text body = {0};
	int head;

	if (!header_end(req, n)) {
		if (n < MP_LIVE_HTTP_MAX_REQUEST)
			return 0;
		status_only(out, "400 Bad Request", "");
		return 1;
	}
	if (request_line(req, n, method, sizeof(method), target, sizeof(target)) < 0) {
		status_only(out, "400 Bad Request", "");
		return 1;
	}
	head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head) {
		status_only(out, "405 Method Not Allowed", "Allow: GET, HEAD\r\n");
		return 1;
	}
	if ((q = strchr(target, '?')))
		*q = '\0';
	if (strcmp(target, "/metrics")) {
		status_only(out, "404 Not Found", "");
		return 1;
	}
	if (fn(arg, &body) < 0 || body.failed) {
		mp_live_text_free(&body);
		status_only(out, "500 Internal Server Error", "");
		return 1;
	}
	mp_live_printf(out,
	               "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
	               "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
	               body.n);
	if (!head && body.n)
		mp_live_append(out, body.p, body.n);
	mp_live_text_free(&body);
	return 1;
}

/* --- the socket ------------------------------------------------------------------------ */

int mp_live_http_open(struct mp_live_http **out, const char *addr, int port, struct mp_error *err)
{
	struct addrinfo hints = {0}, *ai = NULL, *a;
	struct mp_live_http *h;
	char service[16];
	int rc, one = 1, e = 0;

	*out = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%d", port);
	if (!addr)
		addr = "127.0.0.1";
	if ((rc = getaddrinfo(addr, service, &hints, &ai)) != 0)
		return mp_err(err, MP_EIO, "cannot listen on '%s': %s", addr, gai_strerror(rc));
	if (!(h = calloc(1, sizeof(*h)))) {
		freeaddrinfo(ai);
		return mp_err(err, MP_ENOMEM, "out of memory");
	}
	h->fd = -1;
	for (a = ai; a && h->fd < 0; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);

		if (fd < 0) {
			e = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0 &&
		    fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
			h->fd = fd;
		else {
			e = errno;
			close(fd);
		}
	}
	freeaddrinfo(ai);
	if (h->fd < 0) {
		free(h);
		if (e == EADDRINUSE)
			return mp_err(err, MP_EIO, "port %d of '%s' is in use", port, addr);
		return mp_err(err, MP_EIO, "cannot listen on '%s' port %d: %s", addr, port,
		              strerror(e));
	}
	if (pipe2(h->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		e = errno;
		close(h->fd);
		free(h);
		return mp_err(err, MP_EIO, "cannot listen: %s", strerror(e));
	}
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		getsockname(h->fd, (struct sockaddr *)&ss, &len);
		if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s6->sin6_addr, h->addr, sizeof(h->addr));
			h->port = ntohs(s6->sin6_port);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s4->sin_addr, h->addr, sizeof(h->addr));
			h->port = ntohs(s4->sin_port);
		}
	}
	*out = h;
	return 0;
}

const char *mp_live_http_addr(const struct mp_live_http *h)
{
	return h->addr;
}

int mp_live_http_port(const struct mp_live_http *h)
{
	return h->port;
}

void mp_live_http_close(struct mp_live_http *h)
{
	if (!h)
		return;
	close(h->fd);
	close(h->stop_pipe[0]);
	close(h->stop_pipe[1]);
	free(h);
}

int mp_live_http_parse_addr(const char *s, char **addr, int *port)
{
	const char *colon = strrchr(s, ':'), *p = colon ? colon + 1 : s;
	char *end;
	long v;

	*addr = NULL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (!*p || *end || errno || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	if (!colon)
		return 0;
	if (colon == s)
		return -1;
	if (s[0] == '[' && colon[-1] == ']')
		*addr = strndup(s + 1, (size_t)(colon - s - 2));
	else
		*addr = strndup(s, (size_t)(colon - s));
	return *addr && **addr ? 0 : -1;
}
