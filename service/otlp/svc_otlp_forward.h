/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_otlp_forward: --otlp-forward, the enriched OTLP profiles requests on to
 * a downstream receiver, as an OpenTelemetry Collector's exporter passes
 * them: OTLP/HTTP (http:// or https://, a protobuf POST to the URL's path or
 * /v1development/profiles when it has none) or OTLP/gRPC (grpc:// over h2c,
 * grpcs:// over TLS; ProfilesService/Export), through libcurl's multi
 * interface on the loop (svc_upstream_http, the fetcher's driver; its own
 * multi handle). One request in flight at a time, in arrival order.
 *
 * OTLP's rules (opentelemetry.io/docs/specs/otlp): HTTP 429, 502, 503, 504
 * and transport failures are retried, as gRPC's CANCELLED,
 * DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE, UNAVAILABLE
 * and DATA_LOSS; a Retry-After header (seconds or an HTTP date) or a gRPC
 * RetryInfo sets the delay, else an exponential backoff (250 ms doubling to
 * 10 s); a request still undelivered 5 minutes after its first try is
 * dropped. Anything else is a permanent refusal (dropped, logged). A
 * partial_success in the answer is logged and its rejected profiles counted.
 *
 * The queue is bounded in bytes (--otlp-queue-bytes, the request in flight
 * included): a request that does not fit is refused at once (the receiver
 * answers 503 with Retry-After), so a downstream that is gone costs at most
 * that much memory.
 *
 * Loop thread only.
 */
#ifndef SVC_OTLP_FORWARD_H
#define SVC_OTLP_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"

struct event_base;

/* Bytes a queued request has free in front of it (gRPC's message prefix). */
#define SVC_OTLP_FWD_HEADROOM 5

typedef struct svc_otlp_fwd_options {
	struct event_base *base;
	const char *url;            /* http(s)://, grpc:// or grpcs:// */
	uint64_t queue_bytes;       /* the queue's bound */
	const char *user_agent;
	int64_t attempt_ms;         /* one attempt's progress window (0: 10 s) */
	int64_t give_up_ms;         /* after the first try (0: 5 min) */
} svc_otlp_fwd_options;

typedef struct svc_otlp_fwd svc_otlp_fwd;

/* NULL with err set (INVALID: the URL; NOMEM). */
svc_otlp_fwd *svc_otlp_fwd_create(const svc_otlp_fwd_options *o, svc_error *err);
/* Drops what is queued (counted as dropped{reason="shutdown"}). NULL: no-op. */
void svc_otlp_fwd_destroy(svc_otlp_fwd *f);

/*
 * Queues a packed ExportProfilesServiceRequest of len bytes at
 * buf + SVC_OTLP_FWD_HEADROOM (buf malloc'ed; taken on success). False when
 * it does not fit in the queue (counted as dropped{reason="queue_full"}):
 * buf is still the caller's.
 */
bool svc_otlp_fwd_push(svc_otlp_fwd *f, uint8_t *buf, size_t len);

/* The queue's bytes now and its bound. */
uint64_t svc_otlp_fwd_queued(const svc_otlp_fwd *f);

/* symbolizer_otlp_forwarded_total, symbolizer_otlp_dropped_total{reason},
 * symbolizer_otlp_forward_retries_total,
 * symbolizer_otlp_forward_rejected_profiles_total,
 * symbolizer_otlp_queue_bytes, symbolizer_otlp_queue_max_bytes. */
void svc_otlp_fwd_render_metrics(const svc_otlp_fwd *f, base_buf *b);

#endif
