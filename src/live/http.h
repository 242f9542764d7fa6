/*
 * live/http.h - the small HTTP/1.1 server of 'memprof record --metrics':
 * GET (and HEAD) /metrics answers 200 with the body a callback renders
 * (Content-Type text/plain; version=0.0.4); other paths 404, other methods
 * 405, requests that do not parse 400.  One request per connection
 * (Connection: close).  Connections are served together by one poll loop:
 * each has MP_LIVE_HTTP_DEADLINE_MS in all (to send its request, read the
 * answer and be closed), at most MP_LIVE_HTTP_MAX_CONNS are open (a new one
 * closes the oldest), and stopping closes every one at once, so no client,
 * slow, trickling or idle, holds a scrape or the end of the recording.
 * Runs on a thread of 'memprof record', never in the workload.
 */
#ifndef MP_LIVE_HTTP_H
#define MP_LIVE_HTTP_H

#include <stddef.h>

#include "live/text.h"
#include "util/error.h"

struct mp_live_http;

/* The body of a 200 answer, appended to body.  0, or a negative code (500). */
typedef int (*mp_live_body_fn)(void *arg, struct mp_live_text *body);

/* "[ADDR:]PORT" (an IPv6 ADDR in brackets) -> addr (malloc'd, NULL: the
 * default) and port; 0, or -1 when it is not that (free *addr either way). */
int mp_live_http_parse_addr(const char *s, char **addr, int *port);

/*
 * Listen on addr (numeric IPv4 or IPv6, or a host name; NULL: 127.0.0.1)
 * and port (0: an ephemeral one).  Returns 0, or MP_EIO / MP_ENOMEM with
 * err saying why ("port 9400 of 127.0.0.1 is in use").  The socket is
 * close-on-exec.
 */
int mp_live_http_open(struct mp_live_http **out, const char *addr, int port, struct mp_error *err);
/* The address and port listened on ("127.0.0.1", 41234); IPv6 without brackets. */
const char *mp_live_http_addr(const struct mp_live_http *h);
int mp_live_http_port(const struct mp_live_http *h);

/* Answer requests until mp_live_http_stop (call on a thread of its own);
 * returns at once when stopped, whatever the clients do. */
void mp_live_http_serve(struct mp_live_http *h, mp_live_body_fn fn, void *arg);
/* Make mp_live_http_serve return (from any thread; async-signal-safe). */
void mp_live_http_stop(struct mp_live_http *h);
void mp_live_http_close(struct mp_live_http *h);

/*
 * The answer to the request in req (n bytes received so far), into out.
 * Returns 1 when out holds the whole answer, 0 when the request is not
 * complete yet (no empty line after the headers).  Pure but for fn.
 */
int mp_live_http_answer(const char *req, size_t n, mp_live_body_fn fn, void *arg,
                        struct mp_live_text *out);

/* Requests larger than this are answered 400. */
#define MP_LIVE_HTTP_MAX_REQUEST 8192
/* The whole life of one connection, and how many may be open at once. */
#define MP_LIVE_HTTP_DEADLINE_MS 5000
#define MP_LIVE_HTTP_MAX_CONNS   32

#endif
