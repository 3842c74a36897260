// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rooms: the rows of symbolizerd's rooms (svc_rooms.h). Each row turns the
 * composition context (svc_room_ctx: the shared tier, the flags, the server's
 * hooks) into the room's options, and names what the room serves; nothing
 * here is the rooms' own logic.
 */
#include "service/http/svc_rooms.h"

#include <stdint.h>

#include <event2/http.h>

#include "service/debuginfod/svc_debuginfod.h"
#include "service/http/svc_server.h"
#include "service/layout/svc_layout.h"
#include "service/otlp/svc_otlp.h"
#include "service/rpc/svc_rpc_json.h"
#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "service/symbolize/svc_profile.h"
#include "service/symbolize/svc_symbolize.h"
#include "service/upload/svc_upload.h"

/* ---- symbolize: Symbolize ---- */

static void *symbolize_create(const svc_room_ctx *c, svc_error *err)
{
	(void)err;
	const svc_server_options *o = c->flags;
	svc_symbolize_options yo = {
		.base = c->base,
		.resolver = c->resolver,
		.pool = c->pool,
		.responses = c->responses,
		.max_mappings = c->max_mappings,
		.max_locations = c->max_locations,
		.default_wait_ms = c->default_wait_ms,
		.max_wait_ms = c->max_wait_ms,
		.worker_lookup_min = o->worker_lookup_min,
		.max_new_lookups = c->max_new_lookups,
	};
	return svc_symbolize_create(&yo);
}

static void symbolize_destroy(void *obj)
{
	svc_symbolize_destroy(obj);
}

static void symbolize_metrics(const void *obj, base_buf *b)
{
	svc_symbolize_render_metrics(obj, b);
}

static const svc_room_method symbolize_methods[] = {
	{.name = "Symbolize", .handle = svc_symbolize_handle},
};

const svc_room svc_room_symbolize = {
	.name = "symbolize",
	.create = symbolize_create,
	.destroy = symbolize_destroy,
	.render_metrics = symbolize_metrics,
	.methods = symbolize_methods,
	.n_methods = SVC_ROOM_COUNT(symbolize_methods),
};

/* ---- layout: GetTypeLayouts ---- */

static void *layout_create(const svc_room_ctx *c, svc_error *err)
{
	(void)err;
	svc_layout_options lo = {
		.base = c->base, .resolver = c->resolver,
		.default_wait_ms = c->default_wait_ms, .max_wait_ms = c->max_wait_ms,
		.max_queries = 4096,
	};
	return svc_layout_create(&lo);
}

static void layout_destroy(void *obj)
{
	svc_layout_destroy(obj);
}

static const svc_room_method layout_methods[] = {
	{.name = "GetTypeLayouts", .handle = svc_layout_handle},
};

const svc_room svc_room_layout = {
	.name = "layout",
	.create = layout_create,
	.destroy = layout_destroy,  /* its waiting calls stop with the resolver's */
	.methods = layout_methods,
	.n_methods = SVC_ROOM_COUNT(layout_methods),
};

/* ---- upload: ShouldUpload, PUT /buildid/... ---- */

static void upload_reply(void *arg, struct evhttp_request *req, int status, struct evbuffer *body)
{
	const svc_room_ctx *c = arg;
	c->reply(c->arg, req, "upload", status, body);
}

static void upload_replaced(void *arg, const sym_build_id *id)
{
	const svc_room_ctx *c = arg;
	c->replaced(c->arg, id);
}

static void *upload_create(const svc_room_ctx *c, svc_error *err)
{
	const svc_server_options *o = c->flags;
	svc_upload_options uo = {
		.base = c->base, .store = c->store, .fetcher = c->fetcher,
		.replaced = upload_replaced, .pool = c->pool,
		.token_file = o->upload_token_file, .allow_remote = o->upload_allow_remote,
		.trusted_proxies = o->trusted_proxies,
		.max_upload_bytes = o->max_upload_bytes,
		.default_wait_ms = c->default_wait_ms, .max_wait_ms = c->max_wait_ms,
		.max_candidates = c->max_mappings,
		.reply = upload_reply, .arg = (void *)c,
	};
	return svc_upload_create(&uo, err);
}

static void upload_destroy(void *obj)
{
	svc_upload_destroy(obj);
}

static void upload_metrics(const void *obj, base_buf *b)
{
	svc_upload_render_metrics(obj, b);
}

static unsigned upload_in_flight(const void *obj)
{
	return svc_upload_in_flight(obj);
}

static bool upload_route(void *obj, struct evhttp_request *req, const char *path,
			 const char *query)
{
	return svc_upload_handle(obj, req, path, query);
}

static const svc_room_method upload_methods[] = {
	{.name = "ShouldUpload", .handle = svc_upload_should_handle},
};
static const svc_room_route upload_routes[] = {{EVHTTP_REQ_PUT, "/buildid/", upload_route}};

const svc_room svc_room_upload = {
	.name = "upload",
	.create = upload_create,
	.destroy = upload_destroy,
	.render_metrics = upload_metrics,
	.in_flight = upload_in_flight,
	.methods = upload_methods,
	.n_methods = SVC_ROOM_COUNT(upload_methods),
	.routes = upload_routes,
	.n_routes = SVC_ROOM_COUNT(upload_routes),
};

/* ---- profile: SymbolizeProfile ---- */

static void *profile_create(const svc_room_ctx *c, svc_error *err)
{
	(void)err;
	svc_profile_options po = {
		.base = c->base, .resolver = c->resolver, .pool = c->pool,
		/* A profile may be gzipped inside the request: its own caps. */
		.max_profile_bytes = (size_t)c->max_request_bytes * SVC_PROFILE_BYTES_PER_REQUEST,
		.max_mappings = c->max_mappings,
		.max_locations = (size_t)c->max_locations * SVC_PROFILE_LOCATIONS_PER_CALL,
		.default_wait_ms = c->default_wait_ms, .max_wait_ms = c->max_wait_ms,
		.max_new_lookups = c->max_new_lookups,
	};
	return svc_profile_create(&po);
}

static void profile_destroy(void *obj)
{
	svc_profile_destroy(obj);
}

static void profile_metrics(const void *obj, base_buf *b)
{
	svc_profile_render_metrics(obj, b);
}

static const svc_room_method profile_methods[] = {
	{.name = "SymbolizeProfile", .handle = svc_profile_handle},
};

const svc_room svc_room_profile = {
	.name = "profile",
	.create = profile_create,
	.destroy = profile_destroy,
	.render_metrics = profile_metrics,
	.methods = profile_methods,
	.n_methods = SVC_ROOM_COUNT(profile_methods),
};

/* ---- otlp: SymbolizeOTLP (OpenTelemetry profiles, issue 27) ---- */

static void otlp_reply(void *arg, struct evhttp_request *req, int status, struct evbuffer *body)
{
	const svc_room_ctx *c = arg;
	c->reply(c->arg, req, "otlp", status, body);
}

static void otlp_serve(void *arg, const svc_rpc_request *r, const svc_rpc_sink *sink)
{
	const svc_room_ctx *c = arg;
	c->serve(c->arg, r, sink);
}

static void *otlp_create(const svc_room_ctx *c, svc_error *err)
{
	const svc_server_options *o = c->flags;
	svc_otlp_options oo = {
		.base = c->base, .resolver = c->resolver, .pool = c->pool,
		/* protobuf-c's structs outweigh the wire bytes: its own cap. */
		.max_decoded_bytes = (size_t)c->max_request_bytes * SVC_PROFILE_BYTES_PER_REQUEST * 4,
		.max_mappings = c->max_mappings,
		.max_locations = (size_t)c->max_locations * SVC_PROFILE_LOCATIONS_PER_CALL,
		.default_wait_ms = c->default_wait_ms, .max_wait_ms = c->max_wait_ms,
		.max_new_lookups = c->max_new_lookups,
		.forward_url = o->otlp_forward, .queue_bytes = o->otlp_queue_bytes,
		.export_wait_ms = o->otlp_max_wait_ms, .max_request_bytes = c->max_request_bytes,
		.reply = otlp_reply, .serve = otlp_serve, .arg = (void *)c,
	};
	return svc_otlp_create(&oo, err);
}

static void otlp_destroy(void *obj)
{
	svc_otlp_destroy(obj);
}

static void otlp_metrics(const void *obj, base_buf *b)
{
	svc_otlp_render_metrics(obj, b);
}

static bool otlp_route(void *obj, struct evhttp_request *req, const char *path,
		       const char *query)
{
	(void)path;
	(void)query;
	return svc_otlp_http_handle(obj, req);
}

static const svc_room_method otlp_methods[] = {
	{.name = "SymbolizeOTLP", .handle = svc_otlp_handle,
	 .request = &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor,
	 .response = &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor},
	/* OTLP/gRPC's Export, under the collector's own service. */
	{.name = "Export", .handle = svc_otlp_export_handle, .service = SVC_OTLP_SERVICE,
	 .json_flags = SVC_RPC_JSON_OTLP,
	 .request = &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor,
	 .response = &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__descriptor},
};

static const svc_room_route otlp_routes[] = {
	{EVHTTP_REQ_POST, SVC_OTLP_HTTP_PATH, otlp_route},
};

const svc_room svc_room_otlp = {
	.name = "otlp",
	.create = otlp_create,
	.destroy = otlp_destroy,
	.render_metrics = otlp_metrics,
	.methods = otlp_methods,
	.n_methods = SVC_ROOM_COUNT(otlp_methods),
	.routes = otlp_routes,
	.n_routes = SVC_ROOM_COUNT(otlp_routes),
};

/* ---- debuginfod: GET|HEAD /buildid/... ---- */

static void debuginfod_reply(void *arg, struct evhttp_request *req, int status,
			     struct evbuffer *body)
{
	const svc_room_ctx *c = arg;
	c->reply(c->arg, req, "debuginfod", status, body);
}

static int debuginfod_status(void *arg, const sym_build_id *id, struct evbuffer *body)
{
	const svc_room_ctx *c = arg;
	return c->status(c->arg, id, body);
}

static void *debuginfod_create(const svc_room_ctx *c, svc_error *err)
{
	(void)err;
	const svc_server_options *o = c->flags;
	svc_debuginfod_options dopt = {
		.store = c->store, .fetcher = c->fetcher,
		.pool = c->pool,
		.debug_dirs = c->config->debug_dirs, .n_debug_dirs = c->config->n_debug_dirs,
		.max_hops = o->max_hops, .max_section_bytes = c->config->max_debuginfo_size,
		.reply = debuginfod_reply, .arg = (void *)c,
		.status = c->status ? debuginfod_status : NULL, .status_arg = (void *)c,
		.resolver = c->resolver, .packages = c->packages,
		.max_source_bytes = c->config->max_debuginfo_size,
	};
	return svc_debuginfod_create(&dopt);
}

static void debuginfod_destroy(void *obj)
{
	svc_debuginfod_destroy(obj);
}

static void debuginfod_metrics(const void *obj, base_buf *b)
{
	svc_debuginfod_render_metrics(obj, b);
}

static bool debuginfod_route(void *obj, struct evhttp_request *req, const char *path,
			     const char *query)
{
	(void)query;
	return svc_debuginfod_handle(obj, req, path);
}

static const svc_room_route debuginfod_routes[] = {
	{EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, "/buildid/", debuginfod_route},
};

const svc_room svc_room_debuginfod = {
	.name = "debuginfod",
	.create = debuginfod_create,
	.destroy = debuginfod_destroy,
	.render_metrics = debuginfod_metrics,
	.routes = debuginfod_routes,
	.n_routes = SVC_ROOM_COUNT(debuginfod_routes),
};

/* ---- the table ---- */

const svc_room *const svc_daemon_rooms[] = {
	&svc_room_symbolize,
	&svc_room_layout,
	&svc_room_upload,
	&svc_room_profile,
	&svc_room_otlp,
	&svc_room_debuginfod,
};
const size_t svc_daemon_n_rooms = SVC_ROOM_COUNT(svc_daemon_rooms);
