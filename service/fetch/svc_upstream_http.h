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
 * more). With a spool directory, a 200 body goes to an unlinked temporary file
 * there instead of memory (an upstream streaming without a length cannot make
 * us hold it in RAM). Bodies of non-200 answers are read and dropped.
 *
 * Redirects are followed by this driver, not by libcurl, under a policy:
 * same host and port only (the default), any http(s) URL, or none. After a
 * redirect to another host, error texts are generic: what that host said or
 * did (a refused port, its error body) is never echoed.
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
	SVC_HTTP_LOCAL,         /* our side failed (the spool file: disk full, ...) */
	SVC_HTTP_REDIRECT,      /* a redirect the policy refuses, or too many */
} svc_http_failure;

typedef struct svc_http_result {
	svc_http_failure failure;
	long status;            /* HTTP status; 0 when none arrived */
	char error[200];        /* what went wrong, when failure != OK ("" otherwise) */
	uint8_t *body;          /* status 200 in memory: the body (malloc'ed; take it by setting NULL) */
	int fd;                 /* status 200 spooled: the file (take it by setting -1); else -1 */
	size_t size;            /* of the body, in memory or spooled */
	int64_t declared_size;  /* X-DEBUGINFOD-SIZE or Content-Length; -1 when absent */
	char sha256[65];        /* x-amz-meta-sha256 of the answer (an S3 object); "" when absent */
	char etag[96];          /* ETag of the answer (an S3 part); "" when absent */
	char body_sha256[65];   /* opts.hash: the SHA-256 of the 200 body, hashed as it arrived */
} svc_http_result;

typedef struct svc_http svc_http;
typedef struct svc_http_req svc_http_req;

/* Called once per request, unless it was cancelled. res->body may be taken. */
typedef void (*svc_http_done_fn)(svc_http_result *res, void *arg);

typedef enum svc_http_redirects {
	SVC_HTTP_REDIRECT_SAME_HOST = 0, /* same host and port */
	SVC_HTTP_REDIRECT_ANY,
	SVC_HTTP_REDIRECT_NONE,
} svc_http_redirects;

#define SVC_HTTP_MAX_REDIRECTS 5

typedef struct svc_http_opts {
	int64_t timeout_ms;      /* progress window (and connect timeout) */
	int64_t total_ms;        /* deadline of the whole request; 0 = none */
	uint64_t min_progress;   /* bytes per window */
	uint64_t max_size;       /* cap on the body; also sent as X-DEBUGINFOD-MAXSIZE */
	const char *spool_dir;   /* 200 bodies go to a temporary file here; NULL: memory */
	const char *netrc;       /* credentials file (CURLOPT_NETRC_FILE); NULL: none */
	svc_http_redirects redirects;
	bool peer;               /* to the peer tier: X-Symbolizer-Peer: 1, not a hop */
	bool no_body;            /* a HEAD: the answer's length is not checked against a body */
	bool hash;               /* SHA-256 of a 200 body as it arrives (result.body_sha256):
				  * no second pass over a spooled body on the loop */
	/* Called once before the request starts, with the easy handle (CURL *)
	 * and its header list (struct curl_slist **): the S3 provider signs it. */
	bool (*prepare)(const void *arg, void *easy, void *headers);
	const void *prepare_arg;
	/* Called with every header line of the answer (HTTP/2 trailers too:
	 * gRPC's grpc-status), "Name: value\r\n" as received: the OTLP
	 * forwarder reads Retry-After and grpc-status. NULL: none. */
	void (*on_header)(const void *arg, const char *line, size_t len);
	const void *header_arg;
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

/* Same host and port (svc_upstream_origin.c), for the redirect policy. */
bool svc_http_same_origin(const char *a, const char *b);

/* Requests in flight. */
size_t svc_http_active(const svc_http *h);

#endif
