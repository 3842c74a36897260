// SPDX-License-Identifier: Apache-2.0
/*
 * svc_conns_impl.h: the layout of the connection table (one `conn` per client
 * connection, the table `svc_conns`), private to svc_conns.c, which keeps it,
 * and svc_conns_metrics.c, which renders its counters for /metrics.
 */
#ifndef SVC_CONNS_IMPL_H
#define SVC_CONNS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_vec.h"
#include "service/http/svc_server_impl.h"

typedef struct conn conn;
struct conn {
	svc_conns *cs;
	struct bufferevent *bev;
	struct evhttp_connection *evcon; /* NULL until attached */
	struct evbuffer_cb_entry *in_cb, *out_cb;
	struct event *deadline;
	conn *prev, *next;  /* oldest activity first */
	uint64_t bytes;     /* of the request under way (0: idle) */
	bool busy;          /* a request is in a handler's hands */
	bool too_large;
	bool decided;       /* HTTP/1.1 or HTTP/2 (its first 4 bytes seen) */
	struct evbuffer *h2_first; /* HTTP/2: the bytes read, for svc_h2_accept */
	unsigned writing;   /* replies handed to evhttp, not yet written */
	svc_head_scan head; /* the request's head as it arrives (body_cap) */
	uint64_t head_bytes, cap;  /* the head's bytes; the body's cap once decided */
	svc_body_spool spool; /* an upload's body (svc_body_spool.c) */
	size_t body_from;   /* where the body starts in the input, as the head ends */
	int status;         /* the refusal deadline_cb sends (413, 503, 507) */
	bool spooling;      /* svc_body_take is moving bytes: not a read */
	char peer[64];      /* the peer's address ("" until a head needs it) */
	bool reading_more;  /* in svc_conns_read_more (input_cb runs within it) */
};

BASE_VEC_DEFINE(conn_vec, conn *)

struct svc_conns {
	struct event_base *base;
	struct evhttp *http;
	struct evconnlistener *lev;
	uint64_t max_conns, max_request_bytes;
	int64_t request_timeout_ms;
	uint64_t open;      /* HTTP/1.1 and HTTP/2: the cap's count */
	uint64_t writing;   /* the connections' writing, summed */
	void (*reply_ended)(void *arg);
	void *reply_ended_arg;
	uint64_t (*body_cap)(void *arg, const svc_head_scan *head, const char *peer);
	void *body_cap_arg;
	void (*h2_accept)(void *h2_arg, int fd, struct evbuffer *first);
	bool (*h2_evict)(void *h2_arg);
	void *h2_arg;
	conn *head, *tail;
	svc_upload_gate gate;  /* uploads in flight: the budget, the spool dir */
	conn_vec pending;  /* created, not yet attached to their evhttp connection */
	struct event *attach, *resume;
	bool paused_full, paused_error;
	int64_t last_log_ms[2];
	uint64_t suppressed[2];
	uint64_t accept_errors, evicted, timed_out, too_large, rewritten;
};

#endif
