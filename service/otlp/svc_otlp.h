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
} svc_otlp_options;

typedef struct svc_otlp svc_otlp;

svc_otlp *svc_otlp_create(const svc_otlp_options *o);
void svc_otlp_destroy(svc_otlp *s);

/* SymbolizeOTLP (svc_rpc_handler_fn); ctx is the svc_otlp. */
void svc_otlp_handle(void *ctx, svc_rpc_call *call);

/* symbolizer_otlp_requests_total, symbolizer_otlp_locations_total{result},
 * symbolizer_otlp_frames_total. */
void svc_otlp_render_metrics(const svc_otlp *s, base_buf *b);

#endif
