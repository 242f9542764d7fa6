/*
 * live/http_internal.h - the listening server shared by live/http.c (which
 * opens it) and live/http_serve.c (which serves its connections).
 */
#ifndef MP_LIVE_HTTP_INTERNAL_H
#define MP_LIVE_HTTP_INTERNAL_H

#include <netinet/in.h>

struct mp_live_http {
	int fd; /* listening, non-blocking, close-on-exec */
	int stop_pipe[2];
	char addr[INET6_ADDRSTRLEN];
	int port;
};

#endif
