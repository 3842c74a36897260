// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_describe: what the resolver knows of one build ID, from memory
 * only (svc_resolver.h: svc_resolver_describe, svc_resolver_is_new): the
 * index cache, the flight in progress, the remembered failure, the failed
 * build; and the build memory budget. Nothing here starts work.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_identity.h"

#include <stdio.h>
#include <string.h>

#include "base/base_clock.h"

bool svc_resolver_is_new(const svc_resolver *r, const sym_build_id *in)
{
	sym_build_id canon, *id = &canon;
	svc_identity_canonical(r->o.store, in, &canon);
	return !svc_index_cache_peek(r->o.cache, id) && !svc_resolve_neg_peek(r, id) &&
	       !svc_flight_find(&r->flights[SVC_ARTIFACT_SYMBOLS], id);
}

static const char *stage_name(const svc_resolve_flight *f)
{
	switch (f->stage) {
	case SVC_RESOLVE_STAGE_LOAD: return "loading the index";
	case SVC_RESOLVE_STAGE_FETCH: return "fetching debug info";
	default: return f->build_waiting ? "waiting for build memory" : "building the index";
	}
}

void svc_resolver_describe(const svc_resolver *r, const sym_build_id *in, svc_resolver_info *out)
{
	sym_build_id canon, *id = &canon;
	svc_identity_canonical(r->o.store, in, &canon);
	memset(out, 0, sizeof(*out));
	int64_t mono = base_mono_ms(), to_real = base_real_ms() - mono;
	const svc_index_entry *e = svc_index_cache_peek(r->o.cache, id);
	if (e) {
		out->loaded = true;
		out->index_bytes = e->bytes;
		out->from_executable = e->recheck_ms != 0;
		out->source = e->info.source;
	}
	const svc_flight *fl = svc_flight_find(&r->flights[SVC_ARTIFACT_SYMBOLS], id);
	if (fl) {
		const svc_resolve_flight *f = (const svc_resolve_flight *)fl;
		out->stage = stage_name(f);
		out->build_queued = f->build_waiting;
	}
	const svc_resolve_negative *n = svc_resolve_neg_peek(r, id);
	if (n) {
		out->negative = true;
		out->neg_status = n->status;
		snprintf(out->neg_error, sizeof(out->neg_error), "%s", n->error);
		out->neg_expires_ms = n->expiry_ms + to_real;
	}
	const svc_resolve_failed *x = svc_resolve_failed_peek(r, id);
	if (x) {
		out->build_failed = true;
		out->failed_status = x->status;
		snprintf(out->failed_error, sizeof(out->failed_error), "%s", x->error);
		out->failures = x->failures;
		out->failed_file_time = x->file_time;
		out->retry_at_ms = x->retry_ms + to_real;
	}
}
