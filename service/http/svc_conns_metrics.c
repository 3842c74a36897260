// SPDX-License-Identifier: Apache-2.0
/*
 * svc_conns_metrics: the connection table's counters for /metrics (open
 * connections and the cap, closes by reason, accept failures, bodies evhttp
 * could not parse, the uploads in flight).
 */
#include "base/base_expo.h"
#include "service/http/svc_conns_impl.h"

void svc_conns_render_metrics(const svc_conns *cs, base_buf *b)
{
	base_expo_family(b, "symbolizer_http_connections", "gauge", "Open client connections.");
	base_expo_u64(b, "symbolizer_http_connections", "", cs->open);
	base_expo_family(b, "symbolizer_http_connections_max", "gauge",
			 "The connection cap (--max-connections).");
	base_expo_u64(b, "symbolizer_http_connections_max", "", cs->max_conns);
	base_expo_family(b, "symbolizer_http_connections_closed_total", "counter",
			 "Connections the server closed: idle at the cap (evicted), "
			 "request deadline passed (request_timeout), request over the cap (too_large).");
	base_expo_u64(b, "symbolizer_http_connections_closed_total", "reason=\"evicted\"", cs->evicted);
	base_expo_u64(b, "symbolizer_http_connections_closed_total", "reason=\"request_timeout\"",
		      cs->timed_out);
	base_expo_u64(b, "symbolizer_http_connections_closed_total", "reason=\"too_large\"",
		      cs->too_large);
	base_expo_family(b, "symbolizer_http_accept_errors_total", "counter",
			 "accept() failures (EMFILE, ENFILE, ...); each pauses the listener.");
	base_expo_u64(b, "symbolizer_http_accept_errors_total", "", cs->accept_errors);
	base_expo_family(b, "symbolizer_http_malformed_bodies_total", "counter",
			 "Request bodies evhttp could not parse (answered 400).");
	base_expo_u64(b, "symbolizer_http_malformed_bodies_total", "", cs->rewritten);
	svc_upload_gate_render(&cs->gate, b);
}
