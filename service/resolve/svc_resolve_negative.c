// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_negative: the failures the resolver remembers (svc_resolver.h):
 * a flight's result other than OK is answered from memory until it expires
 * (error TTL for failures; not found, no symbols and too large at most a
 * minute), so that a flood of calls for a missing build ID costs nothing.
 * Bounded by count (svc_resolver_options.negative_entries): least recently
 * used first out, so a flood of random unknown build IDs keeps the bound and
 * does not push out the entries in use.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/resolve/svc_packages.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"

static void lru_unlink(svc_resolver *r, svc_resolve_negative *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		r->neg_lru = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		r->neg_mru = n->prev;
	n->prev = n->next = NULL;
}

static void lru_push(svc_resolver *r, svc_resolve_negative *n)
{
	n->prev = r->neg_mru;
	n->next = NULL;
	if (r->neg_mru)
		r->neg_mru->next = n;
	else
		r->neg_lru = n;
	r->neg_mru = n;
}

static void neg_remove(svc_resolver *r, svc_resolve_negative *n)
{
	svc_resolve_neg_key key = &n->id;
	svc_resolve_neg_map_remove(&r->negs, &key);
	lru_unlink(r, n);
	free(n);
}

void svc_resolve_neg_clear(svc_resolver *r)
{
	while (r->neg_lru)
		neg_remove(r, r->neg_lru);
	svc_resolve_neg_map_clear(&r->negs);
}

/* Not expired, and the package catalogue has not grown since. */
static bool still_true(const svc_resolver *r, const svc_resolve_negative *n)
{
	return n->expiry_ms > base_mono_ms() &&
	       n->catalogue == svc_packages_generation(r->o.packages);
}

const svc_resolve_negative *svc_resolve_neg_peek(const svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative *const *slot = svc_resolve_neg_map_get(&r->negs, &id);
	return slot && still_true(r, *slot) ? *slot : NULL;
}

const svc_resolve_negative *svc_resolve_neg_find(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (!slot)
		return NULL;
	if (!still_true(r, *slot)) {
		neg_remove(r, *slot);
		return NULL;
	}
	lru_unlink(r, *slot);
	lru_push(r, *slot);
	return *slot;
}

/* The record of id, added when absent (NULL: out of memory). */
static svc_resolve_negative *neg_get(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (slot) {
		lru_unlink(r, *slot);
		lru_push(r, *slot);
		return *slot;
	}
	while (r->neg_lru && svc_resolve_neg_map_size(&r->negs) >= r->neg_max) {
		neg_remove(r, r->neg_lru);
		r->st.negative_evictions++;
	}
	svc_resolve_negative *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->id = *id;
	svc_resolve_neg_key key = &n->id;
	if (!(slot = svc_resolve_neg_map_put(&r->negs, &key, NULL))) {
		free(n);
		return NULL;
	}
	*slot = n;
	lru_push(r, n);
	return n;
}

void svc_resolve_neg_remember(svc_resolver *r, const sym_build_id *id, svc_resolve_status status,
			      const char *error)
{
	int64_t ttl = status == SVC_RESOLVE_ERROR     ? r->o.error_ttl_ms
		      : status == SVC_RESOLVE_PENDING ? SVC_RESOLVE_PENDING_TTL_MS
						      : r->o.negative_ttl_ms;
	if (status != SVC_RESOLVE_ERROR && ttl > SVC_RESOLVE_NEG_TTL_CAP_MS)
		ttl = SVC_RESOLVE_NEG_TTL_CAP_MS;
	if (ttl <= 0 || r->neg_max == 0)
		return;
	svc_resolve_negative *n = neg_get(r, id);
	if (!n)
		return;
	n->status = status;
	snprintf(n->error, sizeof(n->error), "%s", error);
	n->expiry_ms = base_mono_ms() + ttl;
	n->catalogue = svc_packages_generation(r->o.packages);
}

void svc_resolve_neg_forget(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (slot)
		neg_remove(r, *slot);
}
