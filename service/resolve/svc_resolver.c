// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolver: single-flight resolution of build IDs to loaded indexes and
 * the other derived artifacts (svc_resolver.h). This file: the resolver's
 * life and its API. A call is answered now from memory, else it waits on the
 * flight of the build ID and kind, which the stage driver
 * (svc_resolve_drive.c) starts when there is none; svc_resolver_impl.h lists
 * the files of the stages.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdlib.h>

svc_resolver *svc_resolver_create(const svc_resolver_options *opts)
{
	svc_resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	for (int k = 0; k < SVC_ARTIFACT_KINDS; k++)
		svc_flight_table_init(&r->flights[k]);
	r->caches[SVC_ARTIFACT_SYMBOLS] = opts->cache;
	r->caches[SVC_ARTIFACT_LAYOUT] = svc_index_cache_create(
		opts->layout_cache_bytes ? opts->layout_cache_bytes : SVC_RESOLVE_LAYOUT_CACHE_DEFAULT);
	if (!r->caches[SVC_ARTIFACT_LAYOUT]) {
		free(r);
		return NULL;
	}
	svc_resolve_neg_map_init(&r->negs);
	svc_resolve_failed_map_init(&r->failed);
	r->neg_max = opts->negative_entries ? opts->negative_entries : SVC_RESOLVE_NEG_ENTRIES_DEFAULT;
	r->build_max = opts->build_memory_bytes ? opts->build_memory_bytes
						: SVC_RESOLVE_BUILD_MEMORY_DEFAULT;
	/* The inflate cap: by default the budget (a build past it cannot fit). */
	if (!r->o.max_decompressed_bytes)
		r->o.max_decompressed_bytes = r->build_max;
	base_histogram_init(&r->st.build_seconds, base_build_bounds, base_build_n_bounds);
	return r;
}

void svc_resolver_stop(svc_resolver *r)
{
	r->stopping = true;
}

void svc_resolver_destroy(svc_resolver *r)
{
	if (!r)
		return;
	r->stopping = true;
	svc_resolve_budget_drop_queue(r);
	/* The symbol flights first: the derived kinds' flights waiting on them end too. */
	for (int k = 0; k < SVC_ARTIFACT_KINDS; k++) {
		svc_flight *f;
		while ((f = svc_flight_any(&r->flights[k]))) {
			svc_resolve_flight_fail(svc_resolve_flight_of(f), SVC_RESOLVE_ERROR, "%s",
						"shutting down");
			svc_resolve_flight_finish(svc_resolve_flight_of(f));
		}
	}
	for (int k = 0; k < SVC_ARTIFACT_KINDS; k++)
		svc_flight_table_deinit(&r->flights[k]);
	for (int k = 0; k < SVC_ARTIFACT_KINDS; k++)
		if (k != SVC_ARTIFACT_SYMBOLS)
			svc_index_cache_destroy(r->caches[k]);
	svc_resolve_neg_clear(r);
	svc_resolve_neg_map_deinit(&r->negs);
	svc_resolve_failed_clear(r);
	svc_resolve_failed_map_deinit(&r->failed);
	free(r);
}

svc_resolve_waiter *svc_resolver_resolve(svc_resolver *r, const sym_build_id *id,
					 svc_resolve_cb cb, void *arg, svc_resolution *now)
{
	return svc_resolve_join(r, id, SVC_ARTIFACT_SYMBOLS, cb, arg, now);
}

svc_resolve_waiter *svc_resolver_resolve_kind(svc_resolver *r, const sym_build_id *id,
					      svc_artifact_kind kind, svc_resolve_cb cb, void *arg,
					      svc_resolution *now)
{
	return svc_resolve_join(r, id, kind, cb, arg, now);
}

void svc_resolver_cancel(svc_resolver *r, svc_resolve_waiter *w)
{
	(void)r;
	if (!w)
		return;
	svc_flight_leave(&w->fw);
	free(w);
}

const char *svc_resolver_waiter_stage(const svc_resolve_waiter *w)
{
	return svc_resolve_flight_doing(svc_resolve_flight_of(w->fw.flight));
}

void svc_resolver_release(svc_resolver *r, svc_index_entry *e)
{
	if (e)
		svc_index_entry_release(r->caches[e->kind], e);
}

void svc_resolver_forget(svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_neg_forget(r, id);
	for (int k = 0; k < SVC_ARTIFACT_KINDS; k++)
		svc_index_cache_remove(r->caches[k], id);
}

const svc_resolver_stats *svc_resolver_get_stats(const svc_resolver *r)
{
	return &r->st;
}
