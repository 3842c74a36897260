// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolver: single-flight resolution of build IDs to loaded indexes
 * (svc_resolver.h). This file: the resolver's life and its API. A call is
 * answered now from the index cache or the remembered failures, else it
 * waits on the build ID's flight (svc_resolve_flight.c), started here when
 * there is none; svc_resolver_impl.h lists the files of the steps.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_clock.h"

static const char *const status_names[] = {"ok", "not_found", "error", "no_symbols",
					   "too_large"};

const char *svc_resolve_status_name(svc_resolve_status s)
{
	return (unsigned)s < 5 ? status_names[s] : "unknown";
}

svc_resolver *svc_resolver_create(const svc_resolver_options *opts)
{
	svc_resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	svc_flight_table_init(&r->flights);
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
	svc_flight *f;
	while ((f = svc_flight_any(&r->flights))) {
		svc_resolve_flight_fail(svc_resolve_flight_of(f), SVC_RESOLVE_ERROR, "%s",
					"shutting down");
		svc_resolve_flight_finish(svc_resolve_flight_of(f));
	}
	svc_flight_table_deinit(&r->flights);
	svc_resolve_neg_clear(r);
	svc_resolve_neg_map_deinit(&r->negs);
	svc_resolve_failed_clear(r);
	svc_resolve_failed_map_deinit(&r->failed);
	free(r);
}

/* Fills *now with a failure that is known without waiting. */
static void answer_now(svc_resolution *now, svc_resolve_status status, const char *error)
{
	now->status = status;
	snprintf(now->error, sizeof(now->error), "%s", error);
}

/* Answers from memory (index cache, remembered failures); false: not known yet. */
static bool resolve_from_memory(svc_resolver *r, const sym_build_id *id, svc_resolution *now)
{
	svc_index_entry *e = svc_index_cache_get(r->o.cache, id);
	if (e) {
		r->st.memory_hits++;
		now->status = SVC_RESOLVE_OK;
		now->entry = e;
		if (e->recheck_ms && base_mono_ms() >= e->recheck_ms)
			svc_resolve_recheck(r, e);
		return true;
	}
	r->st.memory_misses++;
	const svc_resolve_negative *n = svc_resolve_neg_find(r, id);
	if (n) {
		r->st.negative_hits++;
		answer_now(now, n->status, n->error);
		return true;
	}
	return false;
}

svc_resolve_waiter *svc_resolver_resolve(svc_resolver *r, const sym_build_id *id,
					 svc_resolve_cb cb, void *arg, svc_resolution *now)
{
	memset(now, 0, sizeof(*now));
	if (resolve_from_memory(r, id, now))
		return NULL;
	svc_resolve_waiter *w = calloc(1, sizeof(*w));
	if (!w) {
		answer_now(now, SVC_RESOLVE_ERROR, "out of memory");
		return NULL;
	}
	svc_flight *f = svc_flight_find(&r->flights, id);
	if (f) {
		r->st.joined++;
	} else {
		svc_resolve_flight *rf = NULL;
		if (r->stopping || !(rf = svc_resolve_flight_new(r, id, SVC_RESOLVE_STAGE_LOAD))) {
			free(w);
			answer_now(now, SVC_RESOLVE_ERROR,
				   r->stopping ? "shutting down" : "out of memory");
			return NULL;
		}
		if (!svc_resolve_load_start(rf)) {
			svc_resolve_flight_drop(rf);
			free(w);
			answer_now(now, SVC_RESOLVE_ERROR, "cannot queue the index load");
			return NULL;
		}
		f = &rf->fl;
	}
	w->cb = cb;
	w->arg = arg;
	svc_flight_join(f, &w->fw);
	return w;
}

svc_resolve_waiter *svc_resolver_resolve_kind(svc_resolver *r, const sym_build_id *id,
					      svc_artifact_kind kind, svc_resolve_cb cb, void *arg,
					      svc_resolution *now)
{
	(void)kind;
	return svc_resolver_resolve(r, id, cb, arg, now);
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
	switch (svc_resolve_flight_of(w->fw.flight)->stage) {
	case SVC_RESOLVE_STAGE_LOAD:
		return "loading the index";
	case SVC_RESOLVE_STAGE_FETCH:
		return "fetching debug info";
	default:
		return svc_resolve_flight_of(w->fw.flight)->build_waiting
			       ? "waiting for room in the build memory budget"
			       : "building the index";
	}
}

void svc_resolver_release(svc_resolver *r, svc_index_entry *e)
{
	svc_index_entry_release(r->o.cache, e);
}

const svc_resolver_stats *svc_resolver_get_stats(const svc_resolver *r)
{
	return &r->st;
}
