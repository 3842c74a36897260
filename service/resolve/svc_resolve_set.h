/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_resolve_set: resolve-and-wait for one call. The call gives it N
 * identities (each an item index and a build ID, with the kind of derived
 * artifact it needs) and a wait budget (the RPC layer computes it from the
 * call's deadline and the request's max_wait_ms); each item is answered
 * exactly once through the set's answer function: resolved now (memory),
 * resolved while the call waits, or PENDING (with what its work is doing and a
 * retry hint) when the budget runs out, on shutdown (svc_resolve_set_stop: the
 * method's stop hook), or when the call's bound on new lookups is reached.
 * The work of a PENDING item goes on; a retry finds it done.
 *
 * Symbolize, SymbolizeProfile and GetTypeLayouts wait through it; what an
 * answer means for their wire format is theirs. Loop thread only.
 */
#ifndef SVC_RESOLVE_SET_H
#define SVC_RESOLVE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/resolve/svc_resolver.h"

struct event_base;

typedef struct svc_resolve_set svc_resolve_set;

/* What a waiting item holds (a call's count of the memory it holds while it waits). */
#define SVC_RESOLVE_SET_WAIT_BYTES 32u

typedef struct svc_resolve_answer {
	bool pending;             /* not resolved within the budget (or not started) */
	svc_resolution *res;      /* !pending: the resolution; res->entry (OK) is the receiver's */
	const char *why;          /* pending: what its work is doing, or why none started */
	uint32_t retry_after_ms;  /* pending: when to ask again */
} svc_resolve_answer;

/* Item i's answer; a is valid during the call only. */
typedef void (*svc_resolve_answer_fn)(void *arg, size_t i, const svc_resolve_answer *a);

/* For items 0..n). NULL when out of memory. */
svc_resolve_set *svc_resolve_set_create(struct event_base *base, svc_resolver *r, size_t n,
					svc_resolve_answer_fn answer, void *arg);
/* Cancels what still waits (never answered then). NULL is a no-op. */
void svc_resolve_set_destroy(svc_resolve_set *s);

/*
 * Bounds the build IDs nothing is known of (svc_resolver_is_new) that the set
 * may begin resolving; past max they answer PENDING ("not looked up yet")
 * with a retry hint. 0: no bound (the default). Before the first add.
 */
void svc_resolve_set_bound_new(svc_resolve_set *s, uint32_t max);

/* Resolves item i (i < n, each at most once): answered now, or it waits. */
void svc_resolve_set_add(svc_resolve_set *s, size_t i, const sym_build_id *id,
			 svc_artifact_kind kind);

/*
 * After the adds. True when every item is answered (done never runs); false
 * when some wait: done(arg) then runs once, on the loop, when the last one
 * resolves, wait_ms passes or svc_resolve_set_stop() is called (the waiting
 * ones answer PENDING first).
 */
bool svc_resolve_set_wait(svc_resolve_set *s, int64_t wait_ms, void (*done)(void *arg),
			  void *arg);

/* True while some item waits. */
bool svc_resolve_set_waiting(const svc_resolve_set *s);
/* The waiting items answer PENDING now, then done runs (shutdown). */
void svc_resolve_set_stop(svc_resolve_set *s);

#endif
