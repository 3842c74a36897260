/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_symbolize: the Symbolize method of the RPC layer (svc_rpc.h), the
 * first of its table. The RPC layer hands it the request's bytes; it decodes
 * them into a per-call arena, validates the batch, resolves every mapping
 * (svc_resolver), waits for the unresolved ones until its wait budget runs
 * out (those answer PENDING with a retry hint while their work goes on), then
 * looks every location up and packs the response (svc_lookup), on a worker
 * for big batches. It owns the families symbolizer_frames_symbolized_total,
 * symbolizer_locations_total, symbolizer_mappings_total and
 * symbolizer_worker_lookups_total.
 */
#ifndef SVC_SYMBOLIZE_H
#define SVC_SYMBOLIZE_H

#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"
#include "service/symbolize/svc_response.h"

struct event_base;

typedef struct svc_symbolize_options {
	struct event_base *base;
	svc_resolver *resolver;
	svc_pool *pool;                 /* big batches' lookups (NULL: on the loop) */
	svc_response_pool *responses;   /* tables lent to calls (NULL: private ones) */
	uint32_t max_mappings;          /* per call */
	uint32_t max_locations;         /* per call */
	int64_t default_wait_ms;        /* how long a call waits for fetches/builds by default */
	int64_t max_wait_ms;            /* cap on a request's Options.max_wait_ms */
	uint32_t worker_lookup_min;     /* locations from which lookups run on the pool */
	/* Build IDs one call may start resolving (nothing known of them yet); the
	 * others answer PENDING with a retry hint, for the next call. 0: no bound. */
	uint32_t max_new_lookups;
} svc_symbolize_options;

typedef struct svc_symbolize svc_symbolize;

/* NULL when out of memory. The options' objects must outlive it. */
svc_symbolize *svc_symbolize_create(const svc_symbolize_options *o);
/* Its calls must have ended. NULL is a no-op. */
void svc_symbolize_destroy(svc_symbolize *sy);

/* The method's handler (svc_rpc_handler_fn); ctx is the svc_symbolize. */
void svc_symbolize_handle(void *ctx, svc_rpc_call *call);

/* The method's own families. */
void svc_symbolize_render_metrics(const svc_symbolize *sy, base_buf *b);

#endif
