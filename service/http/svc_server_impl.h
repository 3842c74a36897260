/*
 * svc_server_impl: the server's state, shared by the files of the server
 * (svc_server.c: HTTP and lifecycle; svc_symbolize.c: the RPC; svc_metrics.c).
 * Not for use outside service/.
 */
#ifndef SVC_SERVER_IMPL_H
#define SVC_SERVER_IMPL_H

#include <stdbool.h>

#include "service/fetch/svc_fetcher.h"
#include "service/resolve/svc_index_cache.h"
#include "service/http/svc_metrics.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_resolver.h"
#include "service/symbolize/svc_response.h"
#include "service/http/svc_server.h"
#include "storage/stor_db.h"

struct evhttp;
struct evhttp_request;
struct evhttp_bound_socket;
struct svc_call;

struct svc_server {
	struct event_base *base;
	svc_server_options o;
	svc_config config;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	char address[128];
	stor_db *store;
	svc_fetcher *fetcher;
	svc_pool *pool;
	svc_response_pool *responses;  /* response tables lent to calls */
	svc_index_cache *cache;
	svc_resolver *resolver;
	svc_metrics metrics;
	struct svc_call *calls;      /* calls in progress (list) */
	unsigned n_calls;
	unsigned replies_writing;    /* replies handed to evhttp, not yet written */
	bool stopping;
	struct event *stop_check;
	int64_t started_ms;
};

/* svc_symbolize.c: handles one Symbolize request (any method, any headers). */
void svc_symbolize_handle(struct svc_server *s, struct evhttp_request *req);
/* On shutdown: every waiting call answers now. */
void svc_symbolize_stop_waiting(struct svc_server *s);

/* svc_server.c: sends a reply and accounts for it (metrics, shutdown). */
void svc_server_reply(struct svc_server *s, struct evhttp_request *req, const char *handler,
		      int status, struct evbuffer *body);
/* Sends a Connect error (JSON body, matching HTTP status). */
void svc_server_reply_connect_error(struct svc_server *s, struct evhttp_request *req,
				    svc_connect_code code, const char *message);
/* A call ended (replied): lets a shutdown in progress go on. */
void svc_server_call_ended(struct svc_server *s);

#endif
