/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_impl: the state of the Connect handler, shared by its two files
 * (svc_rpc.c: the route, the checks, the table, metrics; svc_rpc_call.c: a
 * call from its start to its reply). Not for use outside service/rpc/.
 */
#ifndef SVC_RPC_IMPL_H
#define SVC_RPC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_histogram.h"
#include "service/rpc/svc_rpc.h"
#include "service/rpc/svc_rpc_json.h"

/* A method of the table and its metrics. */
typedef struct svc_rpc_row {
	svc_rpc_method m;
	char *path;                               /* "/<service>/<name>" */
	svc_rpc_json *json_in;                    /* the request's JSON codec (NULL: none) */
	svc_rpc_json *json_out;                   /* the response's */
	uint64_t requests[SVC_CONNECT_N_CODES];  /* calls by Connect code */
	base_histogram seconds;                   /* latency of the calls that started */
} svc_rpc_row;

struct svc_rpc {
	svc_rpc_options o;
	char *service;               /* "symbolizer.v1.SymbolizerService" */
	char *prefix;                /* "/<service>/" */
	size_t prefix_len;
	svc_rpc_row *rows;
	size_t n_rows;
	svc_rpc_call *calls;         /* in flight (list) */
	unsigned n_calls;
	uint64_t waiting_bytes;      /* svc_rpc_call_wait's, of the calls in flight */
	uint64_t waiting_refused;
	bool stopping;
};

struct svc_rpc_call {
	svc_rpc *rpc;
	svc_rpc_row *row;
	struct evhttp_request *req;  /* NULL: a call of another transport (sink) */
	svc_rpc_sink sink;
	svc_rpc_call *prev, *next;
	int64_t start_ns;
	int64_t timeout_ms;          /* -1: none */
	int64_t deadline_ms;         /* monotonic; 0: none */
	bool gzip_out;               /* the client accepts gzip */
	bool json;                   /* application/json: transcoded both ways */
	bool json_written;           /* the method wrote the response in JSON */
	bool encoded, gzipped;
	svc_error encode_err;        /* the response did not transcode (code SVC_OK: it did) */
	svc_error decode_err;        /* the JSON request, parsed on the pool */
	const uint8_t *body;         /* the request message */
	size_t body_len;
	void *inflated;              /* body, when it came gzipped or in JSON */
	size_t drain;                /* bytes of the request's input buffer to drain */
	struct evbuffer *response;
	uint64_t waiting_bytes;      /* counted in rpc->waiting_bytes */
	void (*on_stop)(void *arg);
	void *stop_arg;
};

/* Sends a reply through the options' hook (body may be NULL). */
void svc_rpc_send(svc_rpc *rpc, struct evhttp_request *req, int status, struct evbuffer *body);

/* The Connect JSON body of err, and its Content-Type on req; NULL when out of memory. */
struct evbuffer *svc_rpc_error_body(struct evhttp_request *req, const svc_error *err);

/*
 * Sends a Connect error for err (JSON body, the status of its code) and
 * counts it in row (may be NULL). Headers the error needs are the caller's.
 */
void svc_rpc_reply_error(svc_rpc *rpc, svc_rpc_row *row, struct evhttp_request *req,
			 const svc_error *err);

/*
 * Starts a call of row on req: takes (and inflates) the body, then hands the
 * call to the method. Failures are answered here.
 */
typedef struct svc_rpc_call_headers {
	int64_t timeout_ms;          /* -1: none */
	bool gzip_in, gzip_out;
	bool json;
} svc_rpc_call_headers;

void svc_rpc_call_start(svc_rpc *rpc, svc_rpc_row *row, struct evhttp_request *req,
			const svc_rpc_call_headers *h);
/* The same for a call of another transport: its message and its sink. */
void svc_rpc_call_start_sink(svc_rpc *rpc, svc_rpc_row *row, const svc_rpc_request *r,
			     const svc_rpc_sink *sink);

#endif
