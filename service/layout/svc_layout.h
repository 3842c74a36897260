/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_layout: the GetTypeLayouts method of the RPC layer (svc_rpc.h): struct
 * and union layouts of one build ID's DWARF (symbolizer/sym_layout.h).
 *
 * The layout index is a derived artifact of the build ID's resolution, the
 * resolver's (svc_resolver.h, SVC_ARTIFACT_LAYOUT): the file is fetched into
 * the store, or found there, as for Symbolize; then the layout index is
 * loaded from the store or built on a worker once per build ID (single
 * flight) from the stored file and its dwz file, stored, and kept in memory
 * under a byte budget; an upload of a new file drops it. A call decodes,
 * waits as long as its wait budget (Options.max_wait_ms or the default,
 * within Connect-Timeout-Ms; svc_rpc_flow, svc_resolve_set), then answers
 * with the layouts, or PENDING with a retry hint while the work goes on.
 *
 * Loop thread only.
 */
#ifndef SVC_LAYOUT_H
#define SVC_LAYOUT_H

#include <stdint.h>

#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"

struct event_base;

typedef struct svc_layout_options {
	struct event_base *base;
	svc_resolver *resolver;
	int64_t default_wait_ms;
	int64_t max_wait_ms;
	uint32_t max_queries;             /* types + fields per call */
} svc_layout_options;

typedef struct svc_layout svc_layout;

/* NULL when out of memory. The options' objects must outlive it. */
svc_layout *svc_layout_create(const svc_layout_options *o);
/* Its calls must have ended. NULL is a no-op. */
void svc_layout_destroy(svc_layout *ly);

/* The method's handler (svc_rpc_handler_fn); ctx is the svc_layout. */
void svc_layout_handle(void *ctx, svc_rpc_call *call);

#endif
