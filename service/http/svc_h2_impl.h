/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_h2_impl: HTTP/2 cleartext (h2c, prior knowledge) on the server's port,
 * on nghttp2 (framing, HPACK, flow control), serving gRPC: every method of the
 * RPC table (svc_rpc_serve, the same handler as Connect's), grpc.health.v1 and
 * server reflection (svc_grpc_services.c). svc_conns.c spots the connection
 * preface on a new connection and hands the socket over (svc_h2_accept).
 *
 * Files: svc_h2_conn.c (a connection: its session, I/O, timers, GOAWAY),
 * svc_h2_stream.c (a stream: its request's headers and message, the call,
 * the response and trailers). Loop thread only. Not for use outside
 * service/http/.
 */
#ifndef SVC_H2_IMPL_H
#define SVC_H2_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "base/base_buf.h"
#include "service/http/svc_grpc_impl.h"
#include "service/rpc/svc_rpc.h"

struct event_base;
struct evbuffer;

/* The client's connection preface, whose first bytes svc_conns.c looks for. */
#define SVC_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

typedef struct svc_h2 svc_h2;

typedef struct svc_h2_options {
	svc_rpc *rpc;
	uint32_t max_concurrent_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS */
	uint32_t max_header_list_bytes;  /* SETTINGS_MAX_HEADER_LIST_SIZE, enforced */
	uint64_t max_message_bytes;      /* a request's message (after its prefix) */
	/* A stream whose request is not whole, or whose answer is not written,
	 * this long after it opened is reset; a connection with no stream and
	 * no byte this long is closed. 0: 120 s. */
	int64_t stream_timeout_ms;
	/* Whether the server is serving (grpc.health.v1): NULL: always. */
	bool (*serving)(void *arg);
	/* A stream or a connection ended (the server's shutdown check). */
	void (*ended)(void *arg);
	/* A connection svc_h2_accept took is closed (the connection cap's count,
	 * svc_conns). NULL: none. */
	void (*conn_closed)(void *arg);
	void *arg;
} svc_h2_options;

svc_h2 *svc_h2_create(struct event_base *base, const svc_h2_options *o);
/* Takes fd (closed on failure) and the bytes already read from it (drained). */
void svc_h2_accept(svc_h2 *h, evutil_socket_t fd, struct evbuffer *first);
/* At the connection cap: closes the connection with no stream and nothing
 * left to write idle the longest (of the first 64). False: none is idle. */
bool svc_h2_evict_idle(svc_h2 *h);
/* GOAWAY on every connection: streams opened already are answered and
 * written, new ones refused; each connection closes once it has none. */
void svc_h2_shutdown(svc_h2 *h);
/* Streams opened and not yet closed, and connections with bytes still to
 * write, on every connection. */
uint64_t svc_h2_streams(const svc_h2 *h);
/* symbolizer_h2_* families. */
void svc_h2_render_metrics(const svc_h2 *h, base_buf *b);
/* Closes every connection (calls in flight answer into nothing). NULL: no-op. */
void svc_h2_destroy(svc_h2 *h);

/* ---- between svc_h2_conn.c and svc_h2_stream.c ---- */

typedef struct nghttp2_session nghttp2_session;
typedef struct h2_conn h2_conn;
typedef struct h2_stream h2_stream;

#define H2_PATH_MAX 256
enum { H2_GRPC, H2_WEB, H2_WEB_TEXT };

struct h2_stream {
	h2_conn *conn;               /* NULL: orphaned (closed while its call runs) */
	int32_t id;
	h2_stream *prev, *next;      /* the connection's */
	int64_t opened_ms;
	uint64_t header_bytes;       /* names and values, decoded */
	char path[H2_PATH_MAX];
	char ctype[96];
	char encoding[32];           /* grpc-encoding */
	char accept[96];             /* grpc-accept-encoding */
	char timeout[16];            /* grpc-timeout */
	bool post, bad_header, request_done, calling, answered, closed_early;
	bool reset_after_answer;     /* RST_STREAM(NO_ERROR) once the answer is out */
	/* A bidirectional stream (server reflection): an answer per message as
	 * it comes, trailers once the request ends. */
	bool streaming, response_started;
	bool finished;               /* a stream's answers are all out: the trailers */
	bool watching;               /* grpc.health.v1.Health/Watch: open till shutdown */
	svc_error refused;           /* code != SVC_OK: refused before the call */
	/* gRPC-Web on this stream (application/grpc-web, -text): the trailers
	 * are the last DATA frame (flag 0x80), -text's bytes in base64. */
	uint8_t web;                 /* H2_GRPC, H2_WEB, H2_WEB_TEXT */
	uint8_t *decoded;            /* -text: the request body's bytes */
	base_buf body;               /* prefix and message, capped */
	struct evbuffer *out;        /* the response's frames (DATA) */
	/* A unary answer: out is pinned (owned by pin, never drained), its
	 * bytes referenced by the socket's buffer frame by frame, sent so far. */
	struct h2_pin *pin;
	size_t sent;
	int status;                  /* grpc-status for the trailers */
	char message[512];           /* grpc-message, percent-encoded */
};

struct svc_h2 {
	struct event_base *base;
	svc_h2_options o;
	uint8_t *rbuf;               /* the connections' reads, fed to nghttp2 at once */
	h2_conn *conns;              /* list */
	uint64_t n_conns, n_streams;
	bool stopping;
	/* counters */
	uint64_t conns_total, streams_total, streams_reset_by_us, header_list_too_large,
		streams_timed_out, conns_timed_out, protocol_errors, conns_evicted;
};

struct h2_conn {
	svc_h2 *h;
	h2_conn *prev, *next;
	/* The socket: read into h->rbuf as it is readable (one read a turn, up
	 * to READ_MAX, no FIONREAD); written from out at once, and on EV_WRITE
	 * (wev) only while the socket is full. */
	evutil_socket_t fd;
	struct event *rev, *wev;
	struct evbuffer *out;        /* the session's frames, not yet written */
	bool waiting_write;          /* wev added: the socket took not all of out */
	nghttp2_session *session;
	struct event *tick;
	h2_stream *streams;
	int64_t last_activity_ms;
	bool in_recv;                /* inside nghttp2_session_mem_recv: no sending */
	bool goaway;
};

/* svc_h2_stream.c */
h2_stream *h2_stream_new(h2_conn *c, int32_t id);
/* A header of the request; false: refuse it (the stream is reset). */
bool h2_stream_header(h2_stream *s, const uint8_t *name, size_t nlen, const uint8_t *value,
		      size_t vlen);
/* Request DATA; false: over the cap (answered already). */
void h2_stream_data(h2_stream *s, const uint8_t *data, size_t len);
/* nghttp2's send_data callback: a DATA frame of the answer (its header, then
 * length bytes moved from s->out) appended to out; 0, or an nghttp2 error. */
int h2_stream_send_data(h2_stream *s, struct evbuffer *out, const uint8_t *framehd,
			size_t length, size_t padlen);
/* The request is whole (END_STREAM): the call starts. */
void h2_stream_request_done(h2_stream *s);
/* nghttp2 closed the stream: freed, or orphaned while its call runs. */
void h2_stream_closed(h2_stream *s);
/* The connection goes: every stream freed or orphaned. */
void h2_stream_conn_gone(h2_stream *s);

/* The connection's server is stopping: a Watch stream gets NOT_SERVING and
 * its trailers. */
void h2_stream_stopping(h2_stream *s);

/* svc_h2_conn.c */
/* Writes what the session has to send (not inside a receive). */
void h2_conn_flush(h2_conn *c);
void h2_conn_unlink_stream(h2_conn *c, h2_stream *s);

#endif
