// SPDX-License-Identifier: Apache-2.0
/*
 * svc_routes: the daemon's router (svc_server_impl.h): one table of routes
 * (svc_room_route: methods, path or prefix, handler) assembled from the RPC
 * handler's prefix, the rooms' routes and the HTTP room's own (/healthz,
 * /version, /metrics), tried in that order; and the reply every room's answer
 * goes through (counted and logged per handler).
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_log.h"
#include "base/base_version.h"
#include "service/http/svc_grpc_impl.h"
#include "service/http/svc_server_impl.h"
#include "service/http/svc_status.h"

/* ---- replies ---- */

static void reply_written(struct evhttp_request *req, void *arg)
{
	svc_server *s = arg;
	svc_conns_replied(s->conns, req);  /* and the shutdown check (svc_server.c) */
}

void svc_server_reply(svc_server *s, struct evhttp_request *req, const char *handler,
			 int status, struct evbuffer *body)
{
	svc_metrics_http(&s->metrics, handler, status);
	if (s->stopping)
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	svc_conns_reply_started(s->conns, req);
	evhttp_request_set_on_complete_cb(req, reply_written, s);
	evhttp_send_reply(req, status, NULL, body);
}

static void reply_text(svc_server *s, struct evhttp_request *req, const char *handler,
		       int status, const char *ctype, struct evbuffer *b)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	svc_server_reply(s, req, handler, status, b);
}

/* ---- routes ---- */

static void handle_healthz(svc_server *s, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	int status = s->stopping ? 503 : 200;
	evbuffer_add_printf(b, "%s\n", s->stopping ? "shutting down" : "ok");
	reply_text(s, req, "healthz", status, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

/* {"version":"0.1.0","revision":"..."}: both strings need no JSON escaping
 * (base_version.h). For `symbolctl version --server`. */
static void handle_version(svc_server *s, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	evbuffer_add_printf(b, "{\"version\":\"%s\",\"revision\":\"%s\"}\n", base_version(),
			    base_revision());
	reply_text(s, req, "version", 200, "application/json", b);
	evbuffer_free(b);
}

/* GET /status: the sources as a whole (svc_status.h). */
static void handle_status(svc_server *s, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	int code = svc_status_global_render(s->fetcher, b);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control", "no-store");
	reply_text(s, req, "status", code, "application/json", b);
	evbuffer_free(b);
}

static void handle_metrics(svc_server *s, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	if (!svc_metrics_render(s, b)) {
		evbuffer_free(b);
		return evhttp_send_error(req, 500, NULL);
	}
	reply_text(s, req, "metrics", 200, "text/plain; version=0.0.4; charset=utf-8", b);
	evbuffer_free(b);
}

/* ---- the table ---- */

/* gRPC-Web (and CORS) first, then Connect (svc_grpc_impl.h). */
static bool rpc_route(void *obj, struct evhttp_request *req, const char *path, const char *query)
{
	(void)query;
	svc_server *s = obj;
	if (s->web && svc_grpc_web_handle(s->web, req, path))
		return true;
	return svc_rpc_handle(s->rpc, req, path);
}

/* grpc.health.v1 over gRPC-Web (over HTTP/2 it is svc_h2_stream.c's). */
static bool grpc_services_route(void *obj, struct evhttp_request *req, const char *path,
				const char *query)
{
	(void)query;
	svc_server *s = obj;
	return s->web && svc_grpc_web_handle(s->web, req, path);
}

static bool healthz_route(void *obj, struct evhttp_request *req, const char *path,
			  const char *query)
{
	(void)path, (void)query;
	handle_healthz(obj, req);
	return true;
}

static bool version_route(void *obj, struct evhttp_request *req, const char *path,
			  const char *query)
{
	(void)path, (void)query;
	handle_version(obj, req);
	return true;
}

static bool status_route(void *obj, struct evhttp_request *req, const char *path,
			 const char *query)
{
	(void)path, (void)query;
	handle_status(obj, req);
	return true;
}

static bool metrics_route(void *obj, struct evhttp_request *req, const char *path,
			  const char *query)
{
	(void)path, (void)query;
	handle_metrics(obj, req);
	return true;
}

/* Every HTTP method: svc_rpc answers the ones it does not serve itself. */
static const svc_room_route rpc_routes[] = {
	{SVC_ROUTE_ANY, "/" SVC_SERVER_SERVICE "/", rpc_route},
	{SVC_ROUTE_ANY, SVC_GRPC_HEALTH_PREFIX, grpc_services_route},
};
#define N_RPC (sizeof(rpc_routes) / sizeof(rpc_routes[0]))

#define GET_OR_HEAD (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD)
static const svc_room_route own_routes[] = {
	{GET_OR_HEAD, "/healthz", healthz_route},
	{GET_OR_HEAD, "/version", version_route},
	{GET_OR_HEAD, "/metrics", metrics_route},
	{GET_OR_HEAD, "/status", status_route},
};
#define N_OWN (sizeof(own_routes) / sizeof(own_routes[0]))

bool svc_routes_build(svc_server *s)
{
	size_t n = N_RPC + svc_room_set_n_routes(&s->rooms) + N_OWN, k = 0;
	if (!(s->routes = calloc(n, sizeof(*s->routes))))
		return false;
	for (size_t j = 0; j < N_RPC; j++)
		s->routes[k++] = (svc_route){&rpc_routes[j], s};
	for (size_t i = 0; i < s->rooms.n_rows; i++)
		for (size_t j = 0; j < s->rooms.rows[i]->n_routes; j++)
			s->routes[k++] = (svc_route){&s->rooms.rows[i]->routes[j], s->rooms.objs[i]};
	for (size_t j = 0; j < N_OWN; j++)
		s->routes[k++] = (svc_route){&own_routes[j], s};
	s->n_routes = k;
	return true;
}

/* ---- dispatch ---- */

/* 405 with the methods the path has (RFC 9110: Allow is required with it). */
static void method_not_allowed(svc_server *s, struct evhttp_request *req, unsigned allowed)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{EVHTTP_REQ_GET, "GET"},       {EVHTTP_REQ_HEAD, "HEAD"},
		{EVHTTP_REQ_POST, "POST"},     {EVHTTP_REQ_PUT, "PUT"},
		{EVHTTP_REQ_DELETE, "DELETE"}, {EVHTTP_REQ_OPTIONS, "OPTIONS"},
		{EVHTTP_REQ_PATCH, "PATCH"},
	};
	char allow[64] = "";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (allowed & names[i].bit) {
			size_t n = strlen(allow);
			snprintf(allow + n, sizeof(allow) - n, "%s%s", n ? ", " : "", names[i].name);
		}
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 405, NULL);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
	evbuffer_add_printf(b, "method not allowed: %s\n", allow);
	reply_text(s, req, "other", 405, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

/* Two Content-Length headers that differ: which body is meant is what request
 * smuggling plays on (evhttp read the first). Refused, and the connection
 * closed: what follows on it cannot be trusted. */
static bool conflicting_length(struct evhttp_request *req)
{
	const char *first = NULL;
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	for (struct evkeyval *kv = h->tqh_first; kv; kv = kv->next.tqe_next) {
		if (evutil_ascii_strcasecmp(kv->key, "Content-Length") != 0)
			continue;
		if (first && strcmp(first, kv->value) != 0)
			return true;
		first = kv->value;
	}
	return false;
}

void svc_routes_handle(struct evhttp_request *req, void *arg)
{
	svc_server *s = arg;
	svc_conns_request(s->conns, req);
	if (conflicting_length(req)) {
		struct evbuffer *b = evbuffer_new();
		if (!b)
			return evhttp_send_error(req, 400, NULL);
		evbuffer_add_printf(b, "conflicting Content-Length headers\n");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
		reply_text(s, req, "other", 400, "text/plain; charset=utf-8", b);
		evbuffer_free(b);
		return;
	}
	const char *uri = evhttp_request_get_uri(req);
	const char *path = uri;
	char buf[512];
	const char *q = strchr(uri, '?');
	if (q) {
		size_t n = (size_t)(q - uri) < sizeof(buf) - 1 ? (size_t)(q - uri) : sizeof(buf) - 1;
		memcpy(buf, uri, n);
		buf[n] = '\0';
		path = buf;
	}
	unsigned method = (unsigned)evhttp_request_get_command(req), allowed = 0;
	for (size_t i = 0; i < s->n_routes; i++) {
		const svc_route *r = &s->routes[i];
		if (!svc_room_route_path_matches(r->route, path))
			continue;
		allowed |= r->route->methods;
		if ((r->route->methods & method) &&
		    r->route->handle(r->obj, req, path, q ? q + 1 : NULL))
			return;
	}
	if (allowed && !(allowed & method))
		return method_not_allowed(s, req, allowed);
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 404, NULL);
	evbuffer_add_printf(b, "not found\n");
	reply_text(s, req, "other", 404, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

