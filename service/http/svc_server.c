// SPDX-License-Identifier: Apache-2.0
/*
 * svc_server: the daemon's HTTP server and its lifecycle (svc_server.h), the
 * composition root: the store and the shared tier (sources, fetchers, pool,
 * caches, resolver), then the rooms of the table (svc_room.h; symbolizerd's
 * is svc_rooms.c) created from it in order, the RPC handler serving their
 * methods, listening, shutdown. The router is svc_routes.c.
 */
#include "service/http/svc_server.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_log.h"
#include "base/base_version.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/http/svc_grpc_impl.h"
#include "service/http/svc_h2_impl.h"
#include "service/http/svc_rooms.h"
#include "service/http/svc_server_impl.h"
#include "service/http/svc_status.h"
#include "service/layout/svc_layout.h"
#include "service/upload/svc_upload.h"

static bool parse_listen(const char *listen, char *host, size_t host_size, uint16_t *port)
{
	const char *colon;
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (!end || end[1] != ':')
			return false;
		size_t n = (size_t)(end - listen - 1);
		if (n + 1 > host_size)
			return false;
		memcpy(host, listen + 1, n);
		host[n] = '\0';
		colon = end + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return false;
		size_t n = (size_t)(colon - listen);
		if (n + 1 > host_size)
			return false;
		memcpy(host, listen, n);
		host[n] = '\0';
		if (n == 0)
			snprintf(host, host_size, "0.0.0.0");
	}
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || p < 0 || p > 65535)
		return false;
	*port = (uint16_t)p;
	return true;
}

static void log_fetch_line(void *arg, const char *line)
{
	(void)arg;
	char q[600];
	base_logf(BASE_LOG_INFO, "fetcher", "event=%s", base_log_quote(q, sizeof(q), line));
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* --build-memory-bytes 0: a quarter of the RAM, at least 512 MiB, at most 4 GiB. */
static uint64_t default_build_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	uint64_t v = ram / 4, lo = 512ull << 20, hi = 4ull << 30;
	return v < lo ? lo : v > hi ? hi : v;
}

static void stop_check_cb(evutil_socket_t fd, short what, void *arg);

/* A reply was written out, or its client left: while stopping, maybe the last. */
static void reply_ended(void *arg)
{
	svc_server *s = arg;
	if (s->stopping && s->stop_check)
		event_active(s->stop_check, EV_TIMEOUT, 0);
}

/* The cap on a request that is not an authorized upload: room for a body
 * over --max-request-bytes to be answered with a Connect error. */
static uint64_t small_cap(const svc_server *s)
{
	return s->o.max_request_bytes * 2 + 128 * 1024;
}

/* svc_conns asks, once a request's head is read: an authorized PUT under
 * /buildid/ may send --max-upload-bytes; a wrong token, a peer not allowed,
 * any other route gets the small cap (413 past it, never a 1 GiB body held
 * for a request that is refused anyway). */
static uint64_t body_cap(void *arg, const svc_head_scan *head, const char *peer)
{
	svc_server *s = arg;
	const svc_upload *u = svc_room_set_object(&s->rooms, &svc_room_upload);
	bool upload = !strcmp(head->method, "PUT") && !strncmp(head->path, "/buildid/", 9);
	if (upload && u && svc_upload_may_send(u, peer, head->authorization) &&
	    s->o.max_upload_bytes > small_cap(s))
		return s->o.max_upload_bytes;
	return small_cap(s);
}

static bool open_store(svc_server *s, svc_error *err)
{
	stor_options so;
	stor_options_init(&so);
	so.path = s->config.data_dir;
	so.max_bytes = s->config.max_store_bytes;
	so.max_negative = s->o.negative_cache_entries;
	stor_error serr;
	stor_errc rc = stor_open(&so, &s->store, &serr);
	if (rc != STOR_OK) {
		svc_error_from_stor(err, rc, &serr, NULL);
		svc_error_prefix(err, "store %s", so.path);
		return false;
	}
	return true;
}

/* The fetcher, the pool, the caches and the resolver. False: err is set. */
static bool start_resolution(svc_server *s, svc_error *err)
{
	/* --package-dir: the scanner, started here; its source follows the debug
	 * dirs in the fetcher's source list (svc_fetch_sources.c). */
	if (!svc_packages_for_config(&s->config, s->store, true, &s->packages, err))
		return false;
	src_source *packages = s->packages ? svc_packages_source(s->packages) : NULL;
	svc_fetcher_options fo = {
		.base = s->base,
		.store = s->store,
		.config = &s->config,
		.log = log_fetch_line,
		.sources = packages ? &packages : NULL,
		.n_sources = packages ? 1 : 0,
	};
	/* One fetcher; each request says what it may ask (svc_fetch_policy). */
	if (!(s->fetcher = svc_fetcher_create(&fo, err)))
		return false;
	int workers = s->o.workers > 0 ? (int)s->o.workers : online_cpus();
	s->o.workers = (uint32_t)workers;
	if (!(s->pool = svc_pool_create(s->base, workers)) ||
	    !(s->cache = svc_index_cache_create(s->o.index_cache_bytes)) ||
	    !(s->responses = svc_response_pool_create()))
		goto nomem;
	svc_resolver_options ro = {
		.base = s->base,
		.store = s->store,
		.fetcher = s->fetcher,
		.pool = s->pool,
		.cache = s->cache,
		.packages = s->packages,
		.build_threads = (unsigned)workers,
		.max_decompressed_bytes = 0, /* the build memory budget */
		.error_ttl_ms = s->config.error_cache_ttl_ms,
		.negative_ttl_ms = s->config.negative_cache_ttl_ms,
		.negative_entries = s->o.negative_cache_entries ? s->o.negative_cache_entries : SIZE_MAX,
		.build_memory_bytes = s->o.build_memory_bytes ? s->o.build_memory_bytes
							      : default_build_memory(),
	};
	if (!(s->resolver = svc_resolver_create(&ro)))
		goto nomem;
	return true;
nomem:
	svc_error_set(err, SVC_E_NOMEM, "out of memory");
	return false;
}

static void rpc_reply(void *arg, struct evhttp_request *req, int status, struct evbuffer *body)
{
	svc_server_reply(arg, req, "rpc", status, body);
}

static void rpc_call_ended(void *arg)
{
	svc_server *s = arg;
	if (s->stopping && s->stop_check)
		event_active(s->stop_check, EV_TIMEOUT, 0);
}

/* The rooms' hooks (svc_room_ctx). */
static void room_reply(void *arg, struct evhttp_request *req, const char *handler, int status,
		       struct evbuffer *body)
{
	svc_server_reply(arg, req, handler, status, body);
}

/* An upload replaced a file: what was built from the old one goes. */
static void room_replaced(void *arg, const sym_build_id *id)
{
	svc_server *s = arg;
	svc_resolver_forget(s->resolver, id);  /* every artifact kind, the layouts too */
}

static int status_page(void *arg, const sym_build_id *id, struct evbuffer *body)
{
	svc_server *s = arg;
	return svc_status_render(s->store, s->fetcher, s->resolver, id, body);
}

static void room_serve(void *arg, const svc_rpc_request *r, const svc_rpc_sink *sink)
{
	svc_server *s = arg;
	svc_rpc_serve(s->rpc, r, sink);
}

/* The RPC handler of symbolizer.v1.SymbolizerService, serving the rooms'
 * methods in table order (a name twice is refused). False: err is set. */
static bool start_rpc(svc_server *s, svc_error *err)
{
	size_t n = svc_room_set_n_methods(&s->rooms), k = 0;
	svc_rpc_method *methods = calloc(n ? n : 1, sizeof(*methods));
	if (!methods)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), false;
	for (size_t i = 0; i < s->rooms.n_rows; i++) {
		const svc_room *row = s->rooms.rows[i];
		for (size_t j = 0; j < row->n_methods; j++, k++) {
			for (size_t h = 0; h < k; h++) {
				if (strcmp(methods[h].name, row->methods[j].name) == 0) {
					svc_error_set(err, SVC_E_INVALID, "room %s: method %s twice",
						      row->name, row->methods[j].name);
					free(methods);
					return false;
				}
			}
			methods[k] = (svc_rpc_method){
				.name = row->methods[j].name,
				.handle = row->methods[j].handle,
				.ctx = s->rooms.objs[i],
				.request = row->methods[j].request,
				.response = row->methods[j].response,
				.service = row->methods[j].service,
				.json_flags = row->methods[j].json_flags,
			};
		}
	}
	svc_rpc_options ro = {
		.service = SVC_SERVER_SERVICE,
		.descriptor = &symbolizer__v1__symbolizer_service__descriptor,
		.max_request_bytes = s->o.max_request_bytes,
		.gzip_min_bytes = s->o.gzip_min_bytes,
		.gzip_library = s->o.gzip_library,
		.gzip_level = s->o.gzip_level,
		.max_inflight_calls = s->o.max_inflight_calls,
		.pool = s->pool,
		.waiting_calls_bytes = s->o.waiting_calls_bytes,
		.reply = rpc_reply,
		.call_ended = rpc_call_ended,
		.arg = s,
	};
	s->rpc = svc_rpc_create(&ro, methods, n);
	free(methods);
	if (!s->rpc)
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
	return s->rpc != NULL;
}

/* The rooms of the table, from the shared tier; then their methods and
 * routes. False: err is set. */
static bool start_rooms(svc_server *s, svc_error *err)
{
	s->ctx = (svc_room_ctx){
		.base = s->base, .config = &s->config,
		.max_request_bytes = s->o.max_request_bytes, .max_mappings = s->o.max_mappings,
		.max_locations = s->o.max_locations, .max_new_lookups = s->o.max_new_lookups_per_call,
		.default_wait_ms = s->o.default_wait_ms, .max_wait_ms = s->o.max_wait_ms,
		.flags = &s->o, .store = s->store,
		.pool = s->pool, .fetcher = s->fetcher, .packages = s->packages, .cache = s->cache,
		.responses = s->responses, .resolver = s->resolver,
		.reply = room_reply, .replaced = room_replaced, .status = status_page,
		.serve = room_serve, .arg = s,
	};
	if (!svc_room_set_create(&s->rooms, s->o.rooms, s->o.n_rooms, &s->ctx, err))
		return false;
	s->o.upload_token_file = NULL;  /* the caller's string; the token is read */
	if (!start_rpc(s, err))
		return false;
	if (!svc_routes_build(s))
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), false;
	return true;
}

/* "host:port" of the bound socket, for logs and tests with port 0. */
static void record_address(svc_server *s, evutil_socket_t fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	char a[INET6_ADDRSTRLEN] = "?";
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(s->address, sizeof(s->address), "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &in4->sin_addr, a, sizeof(a));
		snprintf(s->address, sizeof(s->address), "%s:%u", a, ntohs(in4->sin_port));
	}
}

/* grpc.health.v1: serving while the store is open and the server not stopping. */
static bool serving(void *arg)
{
	svc_server *s = arg;
	return !s->stopping && s->store;
}

static void h2_accept(void *arg, int fd, struct evbuffer *first)
{
	svc_h2_accept(arg, fd, first);
}

static bool h2_evict(void *arg)
{
	return svc_h2_evict_idle(arg);
}

/* An HTTP/2 connection closed: it was counted against --max-connections. */
static void h2_closed(void *arg)
{
	svc_server *s = arg;
	if (s->conns)
		svc_conns_released(s->conns);
}

/* evhttp on --listen, HTTP/2 beside it. False: err is set. */
static bool start_http(svc_server *s, svc_error *err)
{
	char host[256];
	uint16_t port;
	if (!parse_listen(s->o.listen, host, sizeof(host), &port)) {
		svc_error_set(err, SVC_E_INVALID, "--listen %s: expected HOST:PORT", s->o.listen);
		return false;
	}
	if (!(s->http = evhttp_new(s->base))) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	/* Bodies over the cap get a Connect error from svc_rpc; ones far over it
	 * are cut off by svc_conns as they are read (HTTP 413). evhttp 2.1 reads
	 * a whole body before routing: svc_conns reads each request's head first
	 * and asks body_cap, which gives --max-upload-bytes to an authorized
	 * upload only (svc_upload.h), the small cap to the rest. */
	svc_h2_options ho = {
		.rpc = s->rpc,
		.max_concurrent_streams = s->o.max_concurrent_streams ? s->o.max_concurrent_streams : 100,
		.max_header_list_bytes = 16 * 1024,
		.max_message_bytes = s->o.max_request_bytes,
		.stream_timeout_ms = s->o.request_timeout_ms,
		.serving = serving,
		.ended = reply_ended,
		.conn_closed = h2_closed,
		.arg = s,
	};
	svc_grpc_web_options wo = {
		.rpc = s->rpc,
		.max_message_bytes = s->o.max_request_bytes,
		.cors_allowed_origins = s->o.cors_allowed_origins,
		.serving = serving,
		.reply = rpc_reply,
		.arg = s,
	};
	s->o.cors_allowed_origins = NULL;  /* the caller's string; the object has a copy */
	if (!(s->web = svc_grpc_web_create(&wo))) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (!(s->h2 = svc_h2_create(s->base, &ho))) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	svc_conns_options co = {
		.max_connections = s->o.max_connections,
		.max_request_bytes = small_cap(s),
		.request_timeout_ms = s->o.request_timeout_ms,
		.reply_ended = reply_ended,
		.body_cap = body_cap,
		.arg = s,
		.upload_budget = s->o.upload_memory_bytes ? s->o.upload_memory_bytes
							  : s->o.max_upload_bytes * 2,
		.spool_dir = svc_fetcher_spool_dir(s->fetcher),
		.h2_accept = h2_accept,
		.h2_evict = h2_evict,
		.h2_arg = s->h2,
	};
	if (!(s->conns = svc_conns_create(s->base, s->http, &co))) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	evhttp_set_max_headers_size(s->http, 64 * 1024);
	evhttp_set_timeout(s->http, 120);
	evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
						     EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
						     EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(s->http, svc_routes_handle, s);
	s->bound = evhttp_bind_socket_with_handle(s->http, host, port);
	if (!s->bound) {
		svc_error_set(err, SVC_E_IO, "--listen %s: cannot bind: %s", s->o.listen,
			      strerror(errno));
		return false;
	}
	evutil_socket_t fd = evhttp_bound_socket_get_fd(s->bound);
	/* Replies go out in several writes; without TCP_NODELAY (inherited by the
	 * accepted sockets) the last short one waits ~40 ms for a delayed ACK. */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	record_address(s, fd);
	svc_conns_listen(s->conns, s->bound);
	return true;
}

svc_server *svc_server_create(struct event_base *base, const svc_server_options *opts,
			      svc_error *err)
{
	if (!svc_gzip_level_ok(opts->gzip_library, opts->gzip_level)) {
		svc_error_set(err, SVC_E_INVALID, "--gzip-level %d: %s has levels %s",
			      opts->gzip_level, svc_gzip_library_name(opts->gzip_library),
			      opts->gzip_library == SVC_GZIP_LIBDEFLATE ? "0 to 12" : "0 to 3");
		return NULL;
	}
	svc_server *s = calloc(1, sizeof(*s));
	if (!s) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return NULL;
	}
	s->base = base;
	s->o = *opts;
	s->o.config = &s->config;
	svc_metrics_init(&s->metrics);
	if (!svc_config_copy(&s->config, opts->config))
		goto nomem;
	if (!open_store(s, err) || !start_resolution(s, err) || !start_rooms(s, err))
		goto fail;
	if (!(s->stop_check = event_new(base, -1, 0, stop_check_cb, s)))
		goto nomem;
	if (!start_http(s, err))
		goto fail;
	return s;
nomem:
	svc_error_set(err, SVC_E_NOMEM, "out of memory");
fail:
	svc_server_destroy(s);
	return NULL;
}

const char *svc_server_address(const svc_server *s)
{
	return s->address;
}

static void stop_check_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_server *s = arg;
	if (svc_rpc_calls_in_flight(s->rpc) == 0 && svc_conns_replies_writing(s->conns) == 0 &&
	    svc_h2_streams(s->h2) == 0 && svc_room_set_in_flight(&s->rooms) == 0) {
		base_logf(BASE_LOG_INFO, "calls drained", NULL);
		event_base_loopexit(s->base, NULL);
	}
}

void svc_server_shutdown(svc_server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	base_logf(BASE_LOG_INFO, "shutting down", "calls_in_flight=%u",
		  svc_rpc_calls_in_flight(s->rpc));
	if (s->bound) {
		svc_conns_unlisten(s->conns);
		evhttp_del_accept_socket(s->http, s->bound);
		s->bound = NULL;
	}
	svc_resolver_stop(s->resolver);
	svc_room_set_stop(&s->rooms);
	/* HTTP/2: GOAWAY; the streams opened already are answered. */
	svc_h2_shutdown(s->h2);
	/* Calls waiting for fetches or builds answer now (PENDING where unfinished). */
	svc_rpc_shutdown(s->rpc);
	event_active(s->stop_check, EV_TIMEOUT, 0);
	/* A reply to a client that stopped reading must not hold the exit forever. */
	struct timeval cap = {10, 0};
	event_base_loopexit(s->base, &cap);
}

void svc_server_destroy(svc_server *s)
{
	if (!s)
		return;
	if (s->resolver)
		svc_resolver_stop(s->resolver);
	svc_room_set_stop(&s->rooms);
	/* Not stopped gracefully: the calls still waiting answer now, while their
	 * connections exist (svc_server_shutdown did it otherwise). */
	if (s->rpc && !s->stopping)
		svc_rpc_shutdown(s->rpc);
	/* Order: the pool and the fetcher end the flights they hold (svc_resolver.h);
	 * the pool's unfinished lookups answer through the RPC handler. */
	svc_pool_destroy(s->pool);
	s->pool = NULL;
	svc_fetcher_destroy(s->fetcher);
	s->fetcher = NULL;
	/* After the fetcher: it asks the package source. */
	svc_packages_destroy(s->packages);
	s->packages = NULL;
	svc_resolver_destroy(s->resolver);
	if (s->conns)
		svc_conns_unlisten(s->conns);
	svc_h2_destroy(s->h2);
	s->h2 = NULL;
	if (s->http)
		evhttp_free(s->http);
	svc_conns_destroy(s->conns);
	/* The rooms, in reverse table order: after the pool, the fetchers and the
	 * resolver (their callbacks use the rooms: upload's checks, layout's and
	 * debuginfod's flights), and after evhttp (the replies it still held
	 * reference the rooms' buffers: debuginfod's shared bodies). */
	svc_room_set_destroy(&s->rooms);
	svc_index_cache_destroy(s->cache);
	svc_response_pool_destroy(s->responses);
	if (s->stop_check)
		event_free(s->stop_check);
	svc_grpc_web_destroy(s->web);
	svc_rpc_destroy(s->rpc);
	free(s->routes);
	stor_close(s->store);
	svc_config_deinit(&s->config);
	free(s);
}
