/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_room: the room registry the daemon is assembled from. Each room that
 * serves requests describes itself once, in one row (svc_room): its name, how
 * it is created from the shared composition context (svc_room_ctx), stopped
 * and destroyed, the /metrics families it renders, the RPC methods of
 * symbolizer.v1.SymbolizerService it serves and the HTTP routes it owns. The
 * composition root (service/http/svc_server.c) holds a table of rows and
 * iterates it: create in table order, stop (graceful shutdown) and destroy in
 * reverse, /metrics in table order; the RPC method table handed to svc_rpc
 * and the router's table are assembled from the rows' methods[] and routes[].
 * Adding a room (or a method in a room of its own) is one file that defines
 * the row, plus one line in the table (docs/internals/adding-a-method.md).
 *
 * The shared tier every room draws on (store, sources and fetcher, worker
 * pool, caches, resolver) is built by the composition root before the rows
 * and handed to them in the context; rows do not own it.
 *
 * svc_room_set: one table's rows with the objects their create returned.
 * Loop thread only.
 */
#ifndef SVC_ROOM_H
#define SVC_ROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_config.h"
#include "service/core/svc_error.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

struct event_base;
struct evbuffer;
struct evhttp_request;
struct ProtobufCMessageDescriptor;
struct svc_fetcher;
struct svc_index_cache;
struct svc_packages;
struct svc_pool;
struct svc_resolver;
struct svc_response_pool;
struct svc_rpc_call;
struct svc_rpc_request;
struct svc_rpc_sink;
struct svc_server_options;

/*
 * What a room's create gets: the loop, the configuration and the shared tier,
 * and the composition root's hooks. It outlives every room (a row may keep
 * the pointer, e.g. as the arg of its reply callback).
 */
typedef struct svc_room_ctx {
	struct event_base *base;
	const svc_config *config;                   /* store and source flags */
	/* The limits every method shares (the daemon's flags of these names). */
	uint64_t max_request_bytes;                 /* a request's body, after gzip too */
	uint32_t max_mappings;                      /* per call */
	uint32_t max_locations;                     /* per call */
	uint32_t max_new_lookups;                   /* build IDs a call may start resolving (0: any) */
	int64_t default_wait_ms;                    /* how long a call waits for work by default */
	int64_t max_wait_ms;                        /* the most a request may ask for */
	/* All the daemon's own flags (service/http/svc_server.h), for the rows
	 * defined at the composition root (a room's own flags). */
	const struct svc_server_options *flags;
	stor_db *store;
	struct svc_pool *pool;                      /* workers; done callbacks on the loop */
	struct svc_fetcher *fetcher;                /* every source */
	struct svc_packages *packages;              /* --package-dir (NULL: none) */
	struct svc_index_cache *cache;              /* loaded symbol indexes */
	struct svc_response_pool *responses;        /* response tables lent to calls */
	struct svc_resolver *resolver;              /* id -> index, single flight */
	/* Sends an HTTP reply, counted and logged under handler (the room's name). */
	void (*reply)(void *arg, struct evhttp_request *req, const char *handler, int status,
		      struct evbuffer *body);
	/* The store got a new file for id: what was built from the old one goes. */
	void (*replaced)(void *arg, const sym_build_id *id);
	/* GET /buildid/ID/status: the status page into body; returns the HTTP status. */
	int (*status)(void *arg, const sym_build_id *id, struct evbuffer *body);
	/* Serves a call of the RPC table (svc_rpc_serve), for a route that
	 * fronts a method (OTLP/HTTP's /v1development/profiles). */
	void (*serve)(void *arg, const struct svc_rpc_request *r, const struct svc_rpc_sink *sink);
	void *arg;                                  /* the hooks' */
} svc_room_ctx;

/*
 * An RPC method of symbolizer.v1.SymbolizerService: the last part of its route
 * and its handler, called with the room's object (svc_rpc_handler_fn). The
 * message types are found in the service's descriptor by name; a method the
 * .proto does not have (a test's) names them here, for Connect JSON.
 */
typedef struct svc_room_method {
	const char *name;                           /* "Symbolize" */
	void (*handle)(void *obj, struct svc_rpc_call *call);
	const struct ProtobufCMessageDescriptor *request;  /* NULL: from the service's */
	const struct ProtobufCMessageDescriptor *response;
	/* A method of another service (OTLP's ProfilesService/Export): routed
	 * as /<service>/<name>, its types named above. NULL: the daemon's. */
	const char *service;
	unsigned json_flags;                        /* svc_rpc_json_create_opts' */
} svc_room_method;

#define SVC_ROUTE_ANY (~0u)  /* every HTTP method */

/*
 * An HTTP route: requests whose method is in methods (EVHTTP_REQ_* bits, or
 * SVC_ROUTE_ANY) and whose path (without the query) is path, or starts with
 * it when it ends in '/'. The handler answers (now or later) and returns true,
 * or returns false when the request is not its after all (the next route is
 * tried; none: 404).
 */
typedef struct svc_room_route {
	unsigned methods;
	const char *path;                           /* "/healthz", "/buildid/" (a prefix) */
	bool (*handle)(void *obj, struct evhttp_request *req, const char *path,
		       const char *query);
} svc_room_route;

/* True when route serves a request of this method (an EVHTTP_REQ_* bit) and path. */
bool svc_room_route_matches(const svc_room_route *route, unsigned method, const char *path);
/* True when route's path is path (or, ending in '/', a prefix of it), whatever
 * the method: the router answers 405 when a path matches with no method. */
bool svc_room_route_path_matches(const svc_room_route *route, const char *path);

/* The rows of an array (methods, routes, a table). */
#define SVC_ROOM_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A room, described once. Every function but create may be NULL (nothing to do). */
typedef struct svc_room {
	const char *name;                           /* "symbolize": logs, errors */
	/* The room's object, or NULL with err set. */
	void *(*create)(const svc_room_ctx *ctx, svc_error *err);
	/* Graceful shutdown, and again before the shared tier goes (so idempotent):
	 * no new work starts; what waits may answer. */
	void (*stop)(void *obj);
	/* After the shared tier is gone (its callbacks into the room are over). */
	void (*destroy)(void *obj);
	/* The room's /metrics families. */
	void (*render_metrics)(const void *obj, base_buf *b);
	/* Requests the room still serves: graceful shutdown waits for 0. */
	unsigned (*in_flight)(const void *obj);
	const svc_room_method *methods;
	size_t n_methods;
	const svc_room_route *routes;
	size_t n_routes;
} svc_room;

/* One table of rows and their objects. */
typedef struct svc_room_set {
	const svc_room *const *rows;
	size_t n_rows;
	void **objs;                                /* objs[i]: rows[i]'s; NULL until created */
} svc_room_set;

/*
 * Creates every row's object in table order. False with err set (the row's
 * own error, or "room NAME: out of memory" when it set none) when one fails;
 * the ones created are left for svc_room_set_destroy. The set keeps rows (not copied).
 */
bool svc_room_set_create(svc_room_set *set, const svc_room *const *rows, size_t n_rows,
			 const svc_room_ctx *ctx, svc_error *err);
/* The rows' stop, in reverse table order. */
void svc_room_set_stop(svc_room_set *set);
/* The rows' destroy, in reverse table order; the set is empty afterwards. */
void svc_room_set_destroy(svc_room_set *set);
/* The rows' families, in table order. */
void svc_room_set_render_metrics(const svc_room_set *set, base_buf *b);
/* The sum of the rows' in_flight. */
unsigned svc_room_set_in_flight(const svc_room_set *set);
/* The object of row in the set (NULL: not in the table, or not created). */
void *svc_room_set_object(const svc_room_set *set, const svc_room *row);
/* How many methods, and how many routes, the rows have in all. */
size_t svc_room_set_n_methods(const svc_room_set *set);
size_t svc_room_set_n_routes(const svc_room_set *set);

#endif
