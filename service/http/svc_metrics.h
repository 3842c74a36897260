/*
 * svc_metrics: the daemon's counters, and /metrics in the Prometheus text
 * format (version 0.0.4). Counters the server owns live in svc_metrics; the
 * rest (caches, store, fetcher, upstreams, index builds) is read from the
 * modules that keep it when /metrics is rendered. Loop thread only.
 */
#ifndef SVC_METRICS_H
#define SVC_METRICS_H

#include <stdint.h>

#include "service/rpc/svc_connect.h"
#include "base/base_histogram.h"

struct evbuffer;
struct svc_server;

enum { SVC_MAP_STATUSES = 8 };  /* MappingResult.Status values */

#define SVC_METRICS_MAX_HTTP 64

typedef struct svc_metrics {
	uint64_t rpc_requests[SVC_CONNECT_N_CODES];   /* Symbolize calls by Connect code */
	base_histogram rpc_seconds;                    /* Symbolize latency */
	struct {
		const char *handler;
		int status;
		uint64_t count;
	} http[SVC_METRICS_MAX_HTTP];                 /* every HTTP reply by handler, status */
	unsigned n_http;
	uint64_t frames;                              /* lines sent (inline frames included) */
	uint64_t locations, locations_symbolized;
	uint64_t mappings[SVC_MAP_STATUSES];          /* per-mapping answers by status */
	uint64_t worker_lookups;                      /* calls whose lookups ran on a worker */
	uint64_t inflight_calls;
} svc_metrics;

void svc_metrics_init(svc_metrics *m);
void svc_metrics_http(svc_metrics *m, const char *handler, int status);

/* Appends the whole exposition to buf. */
void svc_metrics_render(struct svc_server *s, struct evbuffer *buf);

#endif
