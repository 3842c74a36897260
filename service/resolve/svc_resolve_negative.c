// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_negative: the failures the resolver remembers (svc_resolver.h):
 * a flight's result other than OK is answered from memory until it expires
 * (error TTL for failures; not found, no symbols and too large at most a
 * minute), so that a flood of calls for a missing build ID costs nothing. At
 * most NEG_MAX_ENTRIES are kept: when full, the expired ones go, then all.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"
#include "base/base_vec.h"

#define NEG_MAX_ENTRIES 100000

static void neg_remove(svc_resolver *r, svc_resolve_negative *n)
{
	svc_resolve_neg_key key = &n->id;
	svc_resolve_neg_map_remove(&r->negs, &key);
	free(n);
}

void svc_resolve_neg_clear(svc_resolver *r)
{
	size_t pos = 0;
	svc_resolve_neg_map_entry *e;
	while ((e = svc_resolve_neg_map_next(&r->negs, &pos)))
		free(e->value);
	svc_resolve_neg_map_clear(&r->negs);
}

/* Drops the expired entries (collected first: the map may not change while iterated). */
static void neg_clear_expired(svc_resolver *r)
{
	int64_t now = base_mono_ms();
	base_vec expired;
	base_vec_init(&expired, sizeof(svc_resolve_negative *), NEG_MAX_ENTRIES);
	size_t pos = 0;
	svc_resolve_neg_map_entry *e;
	while ((e = svc_resolve_neg_map_next(&r->negs, &pos))) {
		svc_resolve_negative **slot;
		if (e->value->expiry_ms <= now && (slot = base_vec_push(&expired)))
			*slot = e->value;
	}
	for (size_t i = 0; i < expired.len; i++)
		neg_remove(r, BASE_VEC_AT(&expired, svc_resolve_negative *, i));
	base_vec_deinit(&expired);
}

const svc_resolve_negative *svc_resolve_neg_find(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (!slot)
		return NULL;
	if ((*slot)->expiry_ms <= base_mono_ms()) {
		neg_remove(r, *slot);
		return NULL;
	}
	return *slot;
}

/* The record of id, added when absent (NULL: out of memory). */
static svc_resolve_negative *neg_get(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (slot)
		return *slot;
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
	return n;
}

void svc_resolve_neg_remember(svc_resolver *r, const sym_build_id *id, svc_resolve_status status,
			      const char *error)
{
	int64_t ttl = status == SVC_RESOLVE_ERROR ? r->o.error_ttl_ms : r->o.negative_ttl_ms;
	if (status != SVC_RESOLVE_ERROR && ttl > SVC_RESOLVE_NEG_TTL_CAP_MS)
		ttl = SVC_RESOLVE_NEG_TTL_CAP_MS;
	if (ttl <= 0)
		return;
	if (svc_resolve_neg_map_size(&r->negs) >= NEG_MAX_ENTRIES) {
		neg_clear_expired(r);
		if (svc_resolve_neg_map_size(&r->negs) >= NEG_MAX_ENTRIES)
			svc_resolve_neg_clear(r);
	}
	svc_resolve_negative *n = neg_get(r, id);
	if (!n)
		return;
	n->status = status;
	snprintf(n->error, sizeof(n->error), "%s", error);
	n->expiry_ms = base_mono_ms() + ttl;
}

void svc_resolver_forget(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_negative **slot = svc_resolve_neg_map_get(&r->negs, &id);
	if (slot)
		neg_remove(r, *slot);
	svc_index_cache_remove(r->o.cache, id);
}
