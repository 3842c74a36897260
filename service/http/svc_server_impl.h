/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_server_impl: the server's state, shared by the files of the HTTP room
 * (svc_server.c: lifecycle; svc_routes.c: the router; svc_metrics.c: /metrics).
 * Not for use outside service/http/.
 */
#ifndef SVC_SERVER_IMPL_H
#define SVC_SERVER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"

#include "service/core/svc_pool.h"
#include "service/core/svc_room.h"
#include "service/fetch/svc_fetcher.h"
#include "service/http/svc_metrics.h"
#include "service/http/svc_server.h"
#include "service/resolve/svc_index_cache.h"
#include "service/resolve/svc_packages.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"
#include "service/symbolize/svc_response.h"
#include "service/upload/svc_upload.h"
#include "storage/stor_db.h"

/* The RPC service the rooms' methods belong to (its routes: /<service>/<Method>). */
#define SVC_SERVER_SERVICE "symbolizer.v1.SymbolizerService"

struct evbuffer;
struct evhttp;
struct evhttp_request;
struct evhttp_bound_socket;

/* svc_conns.c: the connections (cap, accept back-off, request deadline and
 * size cap); see there. */
typedef struct svc_conns svc_conns;
/* svc_request_head.c: a request's head read as it arrives (for the body cap). */
#define SVC_HEAD_LINE_MAX (SVC_UPLOAD_TOKEN_MAX + 128)  /* longer lines are cut */
typedef struct svc_head_scan {
	char *line;              /* the line being read (while the head is read) */
	size_t len;
	bool first_done, done;   /* the request line, the blank line went by */
	char method[8];
	char path[64];           /* its start: enough to tell the route */
	char *authorization;     /* the header's value, or NULL */
	uint64_t content_length;
	bool has_length;
} svc_head_scan;
/* Feeds n bytes that arrived; returns how many belong to the head (the rest
 * is body). h->done once the blank line went by. */
size_t svc_head_feed(svc_head_scan *h, const char *p, size_t n);
void svc_head_reset(svc_head_scan *h);  /* frees; ready for the next request */
/* The same for the last n bytes of buf (those just read); true once the head
 * ended, *head_bytes counting its bytes. */
bool svc_head_feed_buffer(svc_head_scan *h, struct evbuffer *buf, size_t n, uint64_t *head_bytes);
/* A socket's peer address as text ("127.0.0.1", "::1"); "" when unknown. */
void svc_peer_text(int fd, char *out, size_t size);

/* svc_body_spool.c: an authorized upload's body, counted in the budget of
 * uploads in flight and written to DATA/tmp as it arrives (see there). */
typedef struct svc_upload_gate {
	uint64_t budget;         /* bytes of uploads in flight at most (0: no bound) */
	uint64_t in_flight;
	const char *dir;         /* DATA/tmp (NULL: bodies stay in memory) */
	uint64_t refused_busy, refused_spool;
} svc_upload_gate;
typedef struct svc_body_spool {
	int fd;                  /* the file while the body comes in; -1: none */
	uint64_t want, got;      /* Content-Length; bytes in the file */
	uint64_t reserved;       /* counted in the gate's in_flight */
	int err;                 /* errno of a failed write */
} svc_body_spool;
void svc_body_spool_init(svc_body_spool *sp);
/* Once an upload's head is read (cap: its body cap): 0 when admitted (its
 * bytes counted, its spool file open when it has a Content-Length), or the
 * status to refuse it with before its body (503: budget full; 507: no
 * spool file). */
int svc_body_begin(svc_upload_gate *g, svc_body_spool *sp, const svc_head_scan *h, uint64_t cap);
/* Moves the body bytes at [from, end) of buf (the connection's input, evhttp
 * not having read them) into the file; when the body is whole, it goes back
 * at from as one mapped segment. 0, or 507 when the file cannot take it. */
int svc_body_take(svc_body_spool *sp, struct evbuffer *buf, size_t from);
/* The upload was answered or its connection closed: its bytes leave the
 * budget, an unfinished file is closed (and so gone). */
void svc_body_end(svc_upload_gate *g, svc_body_spool *sp);
/* A bodyless answer written to the socket directly (413, 503 with
 * Retry-After, 507); the connection is closed right after. */
void svc_send_status(int fd, int status);
void svc_upload_gate_render(const svc_upload_gate *g, base_buf *b);

typedef struct svc_conns_options {
	uint64_t max_connections;   /* 0: from the open-files limit */
	uint64_t max_request_bytes; /* headers and body of one request */
	int64_t request_timeout_ms; /* first byte to last of a request; 0: none */
	/* A reply stopped being written (written out, or its connection went
	 * away): the server's shutdown check. NULL: none. */
	void (*reply_ended)(void *arg);
	/* The cap on a request's body, decided from its head and the peer
	 * ("127.0.0.1"): an authorized upload's, or the small one. NULL: every
	 * request has max_request_bytes. */
	uint64_t (*body_cap)(void *arg, const svc_head_scan *head, const char *peer);
	void *arg;
	uint64_t upload_budget;     /* svc_upload_gate.budget */
	const char *spool_dir;      /* svc_upload_gate.dir (the caller's string, kept) */
	/* A new connection opened with HTTP/2's preface: its socket (a
	 * descriptor of its own) and the bytes read so far are handed over,
	 * and evhttp lets it go. NULL: HTTP/1.1 only. */
	void (*h2_accept)(void *h2_arg, int fd, struct evbuffer *first);
	/* At the cap with no HTTP/1.1 connection idle: closes an HTTP/2 one
	 * with no stream; false: none. NULL: none. */
	bool (*h2_evict)(void *h2_arg);
	void *h2_arg;
} svc_conns_options;
svc_conns *svc_conns_create(struct event_base *base, struct evhttp *http,
			    const svc_conns_options *o);
void svc_conns_listen(svc_conns *cs, struct evhttp_bound_socket *bound);
void svc_conns_unlisten(svc_conns *cs);
void svc_conns_request(svc_conns *cs, struct evhttp_request *req); /* a request is handled */
/* A connection handed to h2_accept closed: one fewer against the cap (the
 * HTTP/2 side's conn_closed). */
void svc_conns_released(svc_conns *cs);
void svc_conns_replied(svc_conns *cs, struct evhttp_request *req); /* its reply is out */
/* A reply is handed to evhttp: counted until it is written or its connection
 * closes (libevent frees a request whose client left mid-reply without its
 * completion callback, so only the connection's close can end the count). */
void svc_conns_reply_started(svc_conns *cs, struct evhttp_request *req);
/* Replies handed to evhttp and not yet ended. */
uint64_t svc_conns_replies_writing(const svc_conns *cs);
void svc_conns_render_metrics(const svc_conns *cs, base_buf *b);

/* svc_nofile.c: raises RLIMIT_NOFILE's soft limit to the hard one (logged);
 * the limit then (1 << 20 for unlimited). */
uint64_t svc_nofile_raise(void);

/* svc_conns_h2.c: a new connection's first bytes in buf: 1 when they open
 * HTTP/2's preface, -1 when they cannot, 0 when too few tell. */
int svc_conns_preface(struct evbuffer *buf);
struct bufferevent;
struct evhttp_connection;
/* Frees evhttp's connection but keeps its socket: the socket's descriptor of
 * our own (-1: failed, the socket closed). */
int svc_conns_take_socket(struct bufferevent *bev, struct evhttp_connection *evcon);

/*
 * svc_conns_read.c: libevent 2.1 reads at most SVC_CONNS_LIBEVENT_READ bytes
 * from a socket a loop turn (a 38 KB request: ten turns, twenty syscalls).
 * After a read that filled them, svc_conns_read_more reads on from bev's
 * socket into buf (its input), up to want bytes (at most
 * SVC_CONNS_READ_MORE_MAX) in one readv; the bytes read (0: none waiting, the
 * peer gone, or an error, left for libevent's next read). Writes: a
 * connection's bufferevent writes up to SVC_CONNS_MAX_WRITE bytes a turn
 * (libevent's default, 16 KiB, is a dozen writev calls for a large reply).
 */
#define SVC_CONNS_LIBEVENT_READ 4096
#define SVC_CONNS_READ_MORE_MAX ((uint64_t)256 << 10)
#define SVC_CONNS_MAX_WRITE ((ev_ssize_t)1 << 20)
size_t svc_conns_read_more(struct bufferevent *bev, struct evbuffer *buf, uint64_t want);
void svc_conns_destroy(svc_conns *cs);

/* A row of the router's table: a route and the object its handler gets. */
typedef struct svc_route {
	const svc_room_route *route;
	void *obj;
} svc_route;

struct svc_server {
	struct event_base *base;
	svc_server_options o;
	svc_config config;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	char address[128];
	stor_db *store;
	svc_fetcher *fetcher;        /* every request, under its policy (svc_fetcher.h) */
	svc_packages *packages;      /* --package-dir: scanner and source (NULL: none) */
	svc_pool *pool;
	svc_response_pool *responses;  /* response tables lent to calls */
	svc_index_cache *cache;
	svc_resolver *resolver;
	svc_room_ctx ctx;            /* the above, for the rooms' create */
	svc_room_set rooms;          /* the rooms (o.rooms) and their objects */
	svc_rpc *rpc;                /* the Connect handler and the rooms' methods */
	svc_route *routes;           /* the router's table (svc_routes.c) */
	size_t n_routes;
	svc_metrics metrics;
	svc_conns *conns;
	struct svc_h2 *h2;           /* HTTP/2 (gRPC) connections (svc_h2_impl.h) */
	struct svc_grpc_web *web;    /* gRPC-Web and CORS on the RPC routes (svc_grpc_impl.h) */
	bool stopping;
	struct event *stop_check;
};

/* ---- svc_routes.c ---- */

/* Sends status and body (NULL: none), counted and logged under handler. */
void svc_server_reply(svc_server *s, struct evhttp_request *req, const char *handler,
		      int status, struct evbuffer *body);
/* The router's table: the RPC prefix, then every room's routes in table
 * order, then the HTTP room's own (/healthz, /version, /metrics). False: out
 * of memory. */
bool svc_routes_build(svc_server *s);
/* evhttp's callback for every request (arg: the svc_server). */
void svc_routes_handle(struct evhttp_request *req, void *arg);

#endif
