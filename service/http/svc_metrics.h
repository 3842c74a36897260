/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_metrics: the HTTP room's counters (every reply by handler and status)
 * and /metrics, the Prometheus text exposition (version 0.0.4), assembled
 * from the families each room renders of its own (svc_rpc, svc_symbolize,
 * ...) in a fixed order. Loop thread only.
 */
#ifndef SVC_METRICS_H
#define SVC_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_buf.h"

struct evbuffer;
struct svc_server;

#define SVC_METRICS_MAX_HTTP 64

typedef struct svc_metrics {
	struct {
		const char *handler;
		int status;
		uint64_t count;
	} http[SVC_METRICS_MAX_HTTP];                 /* every HTTP reply by handler, status */
	unsigned n_http;
	int64_t started_ms;                           /* monotonic, for the uptime */
} svc_metrics;

void svc_metrics_init(svc_metrics *m);
void svc_metrics_http(svc_metrics *m, const char *handler, int status);

/* The HTTP room's families: symbolizer_http_requests_total; symbolizer_uptime_seconds. */
void svc_metrics_render_http(const svc_metrics *m, base_buf *b);
void svc_metrics_render_uptime(const svc_metrics *m, base_buf *b);

/* Appends the whole exposition to buf. False when out of memory. */
bool svc_metrics_render(struct svc_server *s, struct evbuffer *buf);

#endif
