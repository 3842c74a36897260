/* SPDX-License-Identifier: Apache-2.0 */
/*
 * upstream_http: HTTP GETs with libcurl's multi interface driven by a libevent
 * event_base (no thread per download; the service's only libcurl user).
 *
 * curl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to
 * wake it (CURLMOPT_TIMERFUNCTION); libevent events call curl_multi_socket_action
 * back. Each request has a progress watchdog: the connection and then every
 * window of `timeout_ms` must bring `min_progress` bytes (or the transfer ends),
 * else it fails as a timeout, however slowly a server trickles. The body is
 * buffered up to `max_size` bytes: a larger Content-Length or more bytes than
 * that abort the transfer as soon as they show (the server cannot make us buffer
 * more). Bodies of non-200 answers are read and dropped.
 *
 * Everything runs on the event_base's thread; callbacks come from it.
 */
#ifndef UPSTREAM_HTTP_H
#define UPSTREAM_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

typedef enum svc_http_failure {
	SVC_HTTP_OK = 0,        /* a complete answer arrived (any HTTP status) */
	SVC_HTTP_CONNECT,       /* resolving or connecting failed, or refused */
	SVC_HTTP_TIMEOUT,       /* the progress watchdog fired */
	SVC_HTTP_NETWORK,       /* reset, closed early, malformed answer */
	SVC_HTTP_TOO_LARGE,     /* body over max_size */
	SVC_HTTP_CANCELLED,     /* the client is being destroyed */
} svc_http_failure;

typedef struct svc_http_result {
	svc_http_failure failure;
	long status;            /* HTTP status; 0 when none arrived */
	char error[200];        /* what went wrong, when failure != OK ("" otherwise) */
	uint8_t *body;          /* status 200: the body (malloc'ed; take it by setting NULL) */
	size_t size;
	int64_t declared_size;  /* X-DEBUGINFOD-SIZE or Content-Length; -1 when absent */
} svc_http_result;

typedef struct svc_http svc_http;
typedef struct svc_http_req svc_http_req;

/* Called once per request, unless it was cancelled. res->body may be taken. */
typedef void (*svc_http_done_fn)(svc_http_result *res, void *arg);

typedef struct svc_http_opts {
	int64_t timeout_ms;      /* progress window (and connect timeout) */
	uint64_t min_progress;   /* bytes per window */
	uint64_t max_size;       /* cap on the body; also sent as X-DEBUGINFOD-MAXSIZE */
	bool peer;               /* to the peer tier: X-Symbolizer-Peer: 1, not a hop */
} svc_http_opts;

/* user_agent: e.g. "symbolizer/0.1.0". NULL on failure. */
svc_http *svc_http_create(struct event_base *base, const char *user_agent);

/* Cancels every request (no callbacks) and frees. NULL is a no-op. */
void svc_http_destroy(svc_http *h);

/* Starts a GET; NULL (and no callback) when it could not start. */
svc_http_req *svc_http_get(svc_http *h, const char *url, const svc_http_opts *opts,
			   svc_http_done_fn done, void *arg);

/* Stops a request that has not completed; its callback is not called. */
void svc_http_cancel(svc_http_req *req);

/* Requests in flight. */
size_t svc_http_active(const svc_http *h);

#endif
