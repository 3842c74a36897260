/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_mappings: the first half of a symbolizing call (Symbolize,
 * SymbolizeProfile): resolves each mapping of the call (svc_resolver: memory
 * cache, store, sources, index build) and waits for the unresolved ones until
 * the call's wait budget runs out; those answer PENDING with a retry hint
 * while their work goes on. The call then looks its locations up (svc_lookup).
 * Loop thread only.
 */
#ifndef SVC_MAPPINGS_H
#define SVC_MAPPINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/resolve/svc_resolver.h"
#include "service/symbolize/svc_lookup.h"

struct event_base;

typedef struct svc_mappings svc_mappings;

/* What a waiting mapping holds besides its svc_lookup_mapping (a call's
 * count of the memory it holds while it waits). */
#define SVC_MAPPINGS_WAIT_BYTES 32u

/*
 * For maps[0..n) (each with pb set; those with skip set are left alone). The
 * array must outlive it. NULL when out of memory.
 */
svc_mappings *svc_mappings_create(struct event_base *base, svc_resolver *resolver,
				  svc_lookup_mapping *maps, size_t n);
/*
 * Cancels what still waits and lets go of the indexes the mappings hold
 * (maps[i].entry). NULL is a no-op.
 */
void svc_mappings_destroy(svc_mappings *m);

/*
 * Checks each mapping (INVALID with the reason) and resolves it. True when
 * every mapping is answered now (done is never called); false when some wait:
 * done(arg) then runs once, on the loop, when the last resolves, wait_ms
 * passes (they answer PENDING) or svc_mappings_stop() is called.
 */
bool svc_mappings_start(svc_mappings *m, int64_t wait_ms, void (*done)(void *arg), void *arg);

/*
 * Bounds the build IDs nothing is known of (svc_resolver_is_new) that one
 * start may begin resolving; past max they answer PENDING ("not looked up
 * yet") with a retry hint. 0: no bound (the default). Before start.
 */
void svc_mappings_bound_new_lookups(svc_mappings *m, uint32_t max);

/* True while some mapping waits. */
bool svc_mappings_waiting(const svc_mappings *m);
/* The waiting mappings answer PENDING now, then done runs (shutdown). */
void svc_mappings_stop(svc_mappings *m);

#endif
