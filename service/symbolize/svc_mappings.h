/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_mappings: the mappings of a symbolizing call (Symbolize,
 * SymbolizeProfile) on the resolver's resolve-and-wait service
 * (svc_resolve_set.h): each mapping is checked (INVALID with the reason),
 * given to the set, and its answer written as a MappingResult status, error
 * and retry hint. The call then looks its locations up (svc_lookup). Loop
 * thread only.
 */
#ifndef SVC_MAPPINGS_H
#define SVC_MAPPINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/resolve/svc_resolve_set.h"
#include "service/rpc/svc_rpc_flow.h"
#include "service/symbolize/svc_lookup.h"

struct event_base;

typedef struct svc_mappings svc_mappings;

/* What a waiting mapping holds besides its svc_lookup_mapping (a call's
 * count of the memory it holds while it waits). */
#define SVC_MAPPINGS_WAIT_BYTES SVC_RESOLVE_SET_WAIT_BYTES

/*
 * For maps[0..n) (each with pb set; those with skip set are left alone). The
 * array must outlive it. max_new_lookups bounds the build IDs nothing is
 * known of it starts resolving (svc_resolve_set_bound_new; 0: no bound).
 * NULL when out of memory.
 */
svc_mappings *svc_mappings_create(struct event_base *base, svc_resolver *resolver,
				  svc_lookup_mapping *maps, size_t n, uint32_t max_new_lookups);
/*
 * Cancels what still waits and lets go of the indexes the mappings hold
 * (maps[i].entry). NULL is a no-op.
 */
void svc_mappings_destroy(svc_mappings *m);

/*
 * Checks and resolves each mapping. True when every mapping is answered now
 * (done is never called); false when some wait: done(arg) then runs once, on
 * the loop, when the last resolves, wait_ms passes (they answer PENDING) or
 * svc_mappings_stop() is called.
 */
bool svc_mappings_start(svc_mappings *m, int64_t wait_ms, void (*done)(void *arg), void *arg);

/* The waiting mappings answer PENDING now, then done runs (shutdown). */
void svc_mappings_stop(svc_mappings *m);

/*
 * The wait step of a symbolizing method (svc_rpc_flow_ops.wait): starts m
 * and resumes fl when the mappings are answered (READY: answered now).
 */
svc_rpc_flow_wait svc_mappings_wait(svc_mappings *m, svc_rpc_flow *fl, int64_t wait_ms);

#endif
