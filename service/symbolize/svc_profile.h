/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_profile: the SymbolizeProfile method of the RPC layer (svc_rpc.h): a
 * pprof profile in, the same profile symbolized out. It decodes the profile
 * (svc_profile_decode: gzip, limits, checks), resolves the mappings its
 * unsymbolized locations use and waits for them as Symbolize does
 * (svc_mappings), then, on a worker, looks the locations up and fills the
 * profile's tables (svc_profile_fill), packs it (gzipped when the input was)
 * and answers with a MappingResult per mapping, so that PENDING and failed
 * mappings are reported and never dropped silently.
 */
#ifndef SVC_PROFILE_H
#define SVC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"

struct event_base;

/*
 * The server's caps for a profile, from its per-request ones: a profile may
 * come gzipped inside a request of --max-request-bytes and be this many times
 * bigger once inflated, and hold this many times --max-locations.
 */
#define SVC_PROFILE_BYTES_PER_REQUEST 4u
#define SVC_PROFILE_LOCATIONS_PER_CALL 16u

typedef struct svc_profile_options {
	struct event_base *base;
	svc_resolver *resolver;
	svc_pool *pool;                 /* lookups and packing (NULL: on the loop) */
	size_t max_profile_bytes;       /* the profile once inflated */
	size_t max_mappings;            /* per profile */
	size_t max_locations;           /* per profile */
	int64_t default_wait_ms;
	int64_t max_wait_ms;
	uint32_t max_new_lookups;       /* per call, as for Symbolize (0: no bound) */
} svc_profile_options;

typedef struct svc_profile svc_profile;

/* NULL when out of memory. The options' objects must outlive it. */
svc_profile *svc_profile_create(const svc_profile_options *o);
/* Its calls must have ended. NULL is a no-op. */
void svc_profile_destroy(svc_profile *sp);

/* The method's handler (svc_rpc_handler_fn); ctx is the svc_profile. */
void svc_profile_handle(void *ctx, svc_rpc_call *call);

/* symbolizer_profile_locations_total{result}, symbolizer_profile_frames_total. */
void svc_profile_render_metrics(const svc_profile *sp, base_buf *b);

#endif
