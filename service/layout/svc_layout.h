/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_layout: the GetTypeLayouts method of the RPC layer (svc_rpc.h): struct
 * and union layouts of one build ID's DWARF (symbolizer/sym_layout.h).
 *
 * A call resolves the build ID as Symbolize does (svc_resolver: the file is
 * fetched into the store, or found there), then the layout index is built
 * once per build ID on a worker (not during symbol index builds) from the
 * stored file and its dwz file, and kept in memory (the last max_cached); one build per build ID at
 * a time (single flight, svc_flight.h), every call for it waits on that one.
 * A call waits as long as its wait budget (Options.max_wait_ms or the
 * default, within Connect-Timeout-Ms), then answers PENDING with a retry hint
 * while the work goes on. The blob is kept in the store next to the file
 * (stor_put_layout), so a restart loads it instead of building; one of another
 * version (SYM_LAYOUT_VERSION) or corrupt is built again.
 *
 * Loop thread only; builds run on the pool.
 */
#ifndef SVC_LAYOUT_H
#define SVC_LAYOUT_H

#include <stdint.h>

#include "service/core/svc_pool.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"
#include "storage/stor_db.h"

struct event_base;

typedef struct svc_layout_options {
	struct event_base *base;
	svc_resolver *resolver;
	stor_db *store;
	svc_pool *pool;
	int64_t default_wait_ms;
	int64_t max_wait_ms;
	uint64_t max_decompressed_bytes;  /* 0: the builder's default */
	uint32_t max_queries;             /* types + fields per call */
	uint32_t max_cached;              /* layout indexes kept in memory */
} svc_layout_options;

typedef struct svc_layout svc_layout;

/* NULL when out of memory. The options' objects must outlive it. */
svc_layout *svc_layout_create(const svc_layout_options *o);
/* Before the pool goes: no build starts afterwards (flights end with ERROR). */
void svc_layout_stop(svc_layout *ly);
/* The store got a new file for id (an upload): the built layouts go. */
void svc_layout_forget(svc_layout *ly, const sym_build_id *id);
/* After the resolver's destroy (which ends the flights waiting on it). NULL: no-op. */
void svc_layout_destroy(svc_layout *ly);

/* The method's handler (svc_rpc_handler_fn); ctx is the svc_layout. */
void svc_layout_handle(void *ctx, svc_rpc_call *call);

#endif
