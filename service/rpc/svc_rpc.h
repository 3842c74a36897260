/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc: the generic Connect unary handler (application/proto and
 * application/json over HTTP/1.1) and the table of methods it serves. The
 * handler owns everything that is not about one method: the route
 * /<service>/<Method>, POST only, the Content-Type (415 otherwise; JSON is
 * transcoded to and from the wire format with the service descriptor's
 * message types, svc_rpc_json.h, so methods only see binary requests and
 * may answer in binary alone: svc_rpc_call_json_out),
 * Connect-Protocol-Version, Connect-Timeout-Ms
 * (the call's deadline), Content-Encoding gzip inflated under the request cap,
 * the cap on the request body, the cap on calls in flight, the response's
 * gzip (Accept-Encoding, gzip_min_bytes), Connect error bodies with the
 * HTTP status of each svc_errc (svc_error.h), and the metrics
 * symbolizer_rpc_requests_total{method,code} and
 * symbolizer_rpc_duration_seconds{method}.
 *
 * A method is a name, a handler and the handler's context. The handler gets a
 * call holding the decoded body (inflated, under the cap) and the deadline;
 * it answers once, now or later, on the loop's thread: svc_rpc_call_ok()
 * with the bytes it put in svc_rpc_call_response(), or svc_rpc_call_fail().
 * Work in between may run on a worker (svc_pool), which may also build and
 * compress the response (svc_rpc_call_encode) since those touch the call
 * alone. Adding a method: a file with its handler, one row in a room's
 * methods (svc_room.h; the daemon's rooms are service/http/svc_rooms.c).
 *
 * Loop thread only, but for the call functions marked otherwise.
 */
#ifndef SVC_RPC_H
#define SVC_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"
#include "service/rpc/svc_gzip.h"

struct evbuffer;
struct evhttp_request;
struct ProtobufCMessageDescriptor;
struct ProtobufCServiceDescriptor;
typedef struct svc_rpc_json svc_rpc_json;
struct svc_pool;

/* JSON requests this large are decoded on the pool, off the event loop (on
 * the loop, a 1,000-location request made the daemon 2% slower). */
#define SVC_RPC_JSON_WORKER_MIN 16384

typedef struct svc_rpc svc_rpc;
typedef struct svc_rpc_call svc_rpc_call;

/* Handles one call; ctx is the method's own (svc_rpc_method.ctx). */
typedef void (*svc_rpc_handler_fn)(void *ctx, svc_rpc_call *call);

typedef struct svc_rpc_method {
	const char *name;            /* "Symbolize": the last part of the route */
	svc_rpc_handler_fn handle;
	void *ctx;
	/* The message types, for JSON, when the service descriptor lacks the
	 * method (a test's); NULL: found there by name. */
	const struct ProtobufCMessageDescriptor *request;
	const struct ProtobufCMessageDescriptor *response;
	/* A method of another service (the OTLP collector's Export): its route
	 * is /<service>/<name>; its types must be named above. NULL: the table's. */
	const char *service;
	unsigned json_flags;         /* svc_rpc_json_create_opts' flags */
} svc_rpc_method;

typedef struct svc_rpc_options {
	const char *service;         /* "symbolizer.v1.SymbolizerService" */
	/* The service's protobuf-c descriptor: a method found in it by name is
	 * served in JSON too. NULL: binary only. */
	const struct ProtobufCServiceDescriptor *descriptor;
	uint64_t max_request_bytes;  /* request body cap, after gzip too */
	uint64_t gzip_min_bytes;     /* smallest response gzipped for a client accepting it */
	svc_gzip_library gzip_library; /* which library gzips responses (ISA-L: 0) */
	int gzip_level;              /* its level (svc_gzip_level_ok; 0 is one) */
	uint32_t max_inflight_calls; /* calls past this get resource_exhausted */
	/* Where JSON requests of SVC_RPC_JSON_WORKER_MIN bytes and more are
	 * parsed (off the loop's thread). NULL: on the loop's thread. */
	struct svc_pool *pool;
	uint64_t waiting_calls_bytes; /* memory of the calls that wait, at most (0: no bound) */
	/* Sends a reply (the HTTP room's accounting); NULL: evhttp_send_reply. */
	void (*reply)(void *arg, struct evhttp_request *req, int status, struct evbuffer *body);
	/* A call ended (its reply is sent); NULL: nothing. */
	void (*call_ended)(void *arg);
	void *arg;
} svc_rpc_options;

/*
 * The methods are copied (the contexts are not owned). NULL when out of
 * memory. svc_rpc_options.max_request_bytes also bounds a JSON request's
 * objects and arrays (one per 16 bytes: json-c's tree costs about 500 bytes
 * each).
 */
svc_rpc *svc_rpc_create(const svc_rpc_options *o, const svc_rpc_method *methods,
			size_t n_methods);
/* Calls must have ended (svc_rpc_calls_in_flight() == 0). NULL is a no-op. */
void svc_rpc_destroy(svc_rpc *rpc);

/*
 * Serves req when path (without the query) is under "/<service>/"; false
 * (nothing done) when it is not. An unknown method is unimplemented (501),
 * whatever the HTTP method.
 */
bool svc_rpc_handle(svc_rpc *rpc, struct evhttp_request *req, const char *path);

/*
 * A call from another transport than Connect's (gRPC over HTTP/2, gRPC-Web:
 * service/http/svc_h2_*.c): the same methods, checks, caps, deadline, codecs,
 * in-flight cap and metrics; the answer goes to the sink instead of an
 * evhttp reply.
 */
typedef struct svc_rpc_sink {
	/*
	 * The call's answer, once, on the loop's thread (maybe before
	 * svc_rpc_serve returns): err NULL and the response's bytes (the
	 * sink's to take with evbuffer_remove_buffer; gzipped: compressed), or
	 * the error.
	 */
	void (*answer)(void *arg, const svc_error *err, struct evbuffer *response,
		       bool gzipped);
	void *arg;
} svc_rpc_sink;

typedef struct svc_rpc_request {
	const char *path;            /* "/<service>/<Method>" */
	const uint8_t *body;         /* the message; the caller's until the answer */
	size_t len;
	bool gzip_in;                /* body is gzipped (inflated under the cap) */
	bool gzip_out;               /* the client takes a gzipped response */
	bool json;                   /* the message is JSON (+json) */
	int64_t timeout_ms;          /* -1: none */
} svc_rpc_request;

/* Whether path names a method of the table ("/<service>/<Method>"). */
bool svc_rpc_has_path(const svc_rpc *rpc, const char *path);
/* Serves r, answering through sink. An unknown method is unimplemented. */
void svc_rpc_serve(svc_rpc *rpc, const svc_rpc_request *r, const svc_rpc_sink *sink);
/* The service's name ("symbolizer.v1.SymbolizerService") and its methods' names. */
const char *svc_rpc_service(const svc_rpc *rpc);
size_t svc_rpc_n_methods(const svc_rpc *rpc);
const char *svc_rpc_method_name(const svc_rpc *rpc, size_t i);

/* Refuses new calls (unavailable) and runs the stop hooks of the calls in flight. */
void svc_rpc_shutdown(svc_rpc *rpc);
unsigned svc_rpc_calls_in_flight(const svc_rpc *rpc);

/* symbolizer_rpc_requests_total and symbolizer_rpc_duration_seconds, every method. */
void svc_rpc_render_metrics(const svc_rpc *rpc, base_buf *b);
/* symbolizer_calls_in_flight, symbolizer_waiting_calls_bytes,
 * symbolizer_waiting_calls_refused_total. */
void svc_rpc_render_calls(const svc_rpc *rpc, base_buf *b);

/* ---- a call, for its method ---- */

/* The request message (inflated); valid until svc_rpc_call_drop_body or the end. */
const uint8_t *svc_rpc_call_body(const svc_rpc_call *c, size_t *len);
/* Frees the request's bytes early (once decoded). */
void svc_rpc_call_drop_body(svc_rpc_call *c);
/* Connect-Timeout-Ms (-1: none) and the deadline it sets (monotonic ms, 0: none). */
int64_t svc_rpc_call_timeout_ms(const svc_rpc_call *c);
int64_t svc_rpc_call_deadline_ms(const svc_rpc_call *c);
/*
 * How long a method may wait for work (fetches, builds) before it answers with
 * what it has (PENDING): asked_ms when the request sets it (0: default_ms),
 * at most max_ms, and never past the deadline less a fifth of it (at most
 * 200 ms), kept for the answer itself. Never negative.
 */
int64_t svc_rpc_call_wait_budget_ms(const svc_rpc_call *c, int64_t asked_ms,
				    int64_t default_ms, int64_t max_ms);

/*
 * The call is about to wait for work (fetches, builds) holding `bytes` of
 * memory (its decoded request, mostly): they count against the options'
 * waiting_calls_bytes until the call ends. False, with nothing counted, when
 * they would go over it: the method should answer resource_exhausted
 * (svc_rpc_call_fail_waiting) rather than wait.
 */
bool svc_rpc_call_wait(svc_rpc_call *c, uint64_t bytes);
void svc_rpc_call_fail_waiting(svc_rpc_call *c, uint64_t bytes);

/*
 * Runs fn(arg) on svc_rpc_shutdown while the call is in flight (it should
 * answer soon). NULL fn: none. The hook may answer the call.
 */
void svc_rpc_call_on_stop(svc_rpc_call *c, void (*fn)(void *arg), void *arg);

/*
 * The response's body: the method appends the packed message. Any thread
 * that holds the call (a worker between submit and done) may write it.
 */
struct evbuffer *svc_rpc_call_response(svc_rpc_call *c);
/*
 * For a JSON call, the codec of its response message (NULL: the call is
 * binary). A method whose response is costly to transcode may write it in
 * JSON itself, exactly as this codec would write the wire message, and say
 * so with svc_rpc_call_response_is_json; else its wire bytes are transcoded.
 */
const svc_rpc_json *svc_rpc_call_json_out(const svc_rpc_call *c);
void svc_rpc_call_response_is_json(svc_rpc_call *c);
/*
 * Transcodes the response to JSON for a JSON call (unless the method wrote
 * it so), then compresses it when
 * the client accepts gzip and it is at least gzip_min_bytes. Any thread that
 * holds the call; once (later calls do nothing). False when out of memory;
 * another failure (a response that does not transcode) is kept for
 * svc_rpc_call_ok to answer.
 */
bool svc_rpc_call_encode(svc_rpc_call *c);

/*
 * Answers with the response (encoded first if it was not). When the deadline
 * has passed, answers deadline_exceeded instead and returns false. The call
 * is gone afterwards.
 */
bool svc_rpc_call_ok(svc_rpc_call *c);
/* Answers with the Connect error of err. The call is gone afterwards. */
void svc_rpc_call_fail(svc_rpc_call *c, const svc_error *err);
void svc_rpc_call_failf(svc_rpc_call *c, svc_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
