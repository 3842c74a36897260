// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_kinds: the kinds of derived artifact a resolution yields
 * (svc_artifact_kind; svc_resolver_impl.h), one row each: which stages the
 * kind has, what a waiter is told at each, its steps and its cache. The
 * driver (svc_resolve_drive.c) runs every kind the same way: single flight
 * per build ID and kind, steps on the worker pool, a cache with a byte
 * budget, forgotten when an upload replaces the file.
 *
 * Adding a kind: a value of svc_artifact_kind (svc_resolver.h), a file with
 * its LOAD and BUILD steps (as svc_resolve_layout.c), and a row here.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdlib.h>

static void free_blob(void *blob)
{
	free(blob);
}

/* The symbol index into the index cache. */
static svc_index_entry *symbols_cache_put(svc_index_cache *c, svc_resolve_flight *f)
{
	return svc_index_cache_put_ranked(c, &f->fl.id, f->blob, f->blob_size, free_blob, f->index,
					  &f->strings);
}

const svc_resolve_kind svc_resolve_kinds[SVC_ARTIFACT_KINDS] = {
	[SVC_ARTIFACT_SYMBOLS] = {
		.derived = false,
		.remembered = true,
		.doing = {
			[SVC_RESOLVE_STAGE_LOAD] = "loading the index",
			[SVC_RESOLVE_STAGE_FETCH] = "fetching debug info",
			[SVC_RESOLVE_STAGE_BUILD] = "building the index",
		},
		.load_work = svc_resolve_load_work,
		.load_next = svc_resolve_load_next,
		.build_work = svc_resolve_build_work,
		.build_next = svc_resolve_build_next,
		.cache_put = symbols_cache_put,
		.free_artifact = NULL,
	},
	[SVC_ARTIFACT_LAYOUT] = {
		.derived = true,
		.remembered = false,
		.doing = {
			[SVC_RESOLVE_STAGE_DEPEND] = "fetching debug info",
			[SVC_RESOLVE_STAGE_LOAD] = "building the layout index",
			[SVC_RESOLVE_STAGE_BUILD] = "building the layout index",
		},
		.load_work = svc_resolve_layout_load_work,
		.load_next = svc_resolve_layout_load_next,
		.build_work = svc_resolve_layout_build_work,
		.build_next = svc_resolve_layout_build_next,
		.cache_put = svc_resolve_layout_cache_put,
		.free_artifact = svc_resolve_layout_free,
	},
};
