/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_otlp: OpenTelemetry profiles in, symbolized profiles out (issue 27).
 * The SymbolizeOTLP method (Connect: proto and JSON; a row of the method
 * table, so every transport of it serves it): an
 * opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest
 * of opentelemetry-proto v1.11.0 (proto/otlp) in, the same request out with
 * lines, functions and strings filled in for every location that had no lines
 * and whose mapping names a file the daemon resolves (by the mapping's
 * process.executable.build_id.{gnu,htlhash,profiling,go} attribute). Every
 * other field, location and frame passes through unchanged; a frame that
 * cannot be resolved keeps its address and mapping. Mappings are resolved and
 * waited for as Symbolize does (svc_mappings); the fill and the packing run on
 * a worker for big requests.
 */
#ifndef SVC_OTLP_H
#define SVC_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"

struct event_base;
struct evbuffer;
struct evhttp_request;

/* The OTLP collector's service and the OTLP/HTTP route. */
#define SVC_OTLP_SERVICE "opentelemetry.proto.collector.profiles.v1development.ProfilesService"
#define SVC_OTLP_EXPORT_PATH "/" SVC_OTLP_SERVICE "/Export"
#define SVC_OTLP_HTTP_PATH "/v1development/profiles"

typedef struct svc_otlp_options {
	struct event_base *base;
	svc_resolver *resolver;
	svc_pool *pool;
	size_t max_decoded_bytes;       /* protobuf-c's memory for one request */
	size_t max_mappings;            /* per request */
	size_t max_locations;           /* per request */
	int64_t default_wait_ms;
	int64_t max_wait_ms;
	uint32_t max_new_lookups;
	/* The receiver (Export, OTLP/HTTP and OTLP/gRPC). */
	const char *forward_url;        /* --otlp-forward (NULL: none) */
	uint64_t queue_bytes;           /* --otlp-queue-bytes */
	int64_t export_wait_ms;         /* --otlp-max-wait: waiting for build IDs */
	uint64_t max_request_bytes;     /* a body, for the OTLP/HTTP route's 413 */
	const char *user_agent;         /* of the forwarder */
	/* The composition root's hooks (svc_room_ctx's reply and serve). */
	void (*reply)(void *arg, struct evhttp_request *req, int status, struct evbuffer *body);
	void (*serve)(void *arg, const svc_rpc_request *r, const svc_rpc_sink *sink);
	void *arg;
} svc_otlp_options;

typedef struct svc_otlp svc_otlp;

/* NULL with err set (a bad --otlp-forward URL, out of memory). */
svc_otlp *svc_otlp_create(const svc_otlp_options *o, svc_error *err);
void svc_otlp_destroy(svc_otlp *s);

/* SymbolizeOTLP (svc_rpc_handler_fn); ctx is the svc_otlp. */
void svc_otlp_handle(void *ctx, svc_rpc_call *call);

/*
 * opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export
 * (svc_rpc_handler_fn; a method of the table under its own service, so
 * served over gRPC; OTLP/HTTP's route calls it too): the request enriched as
 * SymbolizeOTLP does, waiting at most --otlp-max-wait for build IDs, then
 * queued for --otlp-forward; the answer is an empty
 * ExportProfilesServiceResponse, or resource_exhausted (HTTP 503) when the
 * forward queue is full. Without --otlp-forward it is enriched, counted and
 * let go (a pipeline's step with nowhere to pass it on: for testing).
 */
void svc_otlp_export_handle(void *ctx, svc_rpc_call *call);

/* OTLP/HTTP: POST /v1development/profiles (svc_otlp_http.c), answered
 * through the reply hook. True: the request was the route's. */
bool svc_otlp_http_handle(svc_otlp *s, struct evhttp_request *req);

/* symbolizer_otlp_requests_total, symbolizer_otlp_locations_total{result},
 * symbolizer_otlp_frames_total; the receiver's
 * symbolizer_otlp_received_total, symbolizer_otlp_enriched_total and the
 * forwarder's (svc_otlp_forward.h). */
void svc_otlp_render_metrics(const svc_otlp *s, base_buf *b);

#endif
