// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_fetch: the symbol index's FETCH stage (svc_resolver_impl.h):
 * the fetcher brought the debug info (or the executable) into the store, or
 * found it there, or found nothing; this names the next stage: BUILD with the
 * file pinned, or DONE with the failure. A background recheck (an index
 * built from an executable alone, looking for debug info again; the driver
 * starts it) that finds the executable again ends here, and one that finds
 * debug info goes on to rebuild the index with it. A leaf: the driver
 * (svc_resolve_drive.c) calls the fetcher and hands its answer here.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_build_id.h"

#include "base/base_log.h"

/* A fetch that found nothing usable ends the flight with its status. */
static void fetch_failed(svc_resolve_flight *f, const svc_fetch_result *res)
{
	const char *e = res->error[0] ? res->error : NULL;
	switch (res->status) {
	case SVC_FETCH_NOT_FOUND:
		svc_resolve_flight_fail(f, SVC_RESOLVE_NOT_FOUND, "%s", e ? e : "not found");
		break;
	case SVC_FETCH_TOO_LARGE:
		svc_resolve_flight_fail(f, SVC_RESOLVE_TOO_LARGE, "%s", e ? e : "too large");
		break;
	case SVC_FETCH_PENDING:
		svc_resolve_flight_fail(f, SVC_RESOLVE_PENDING, "%s", e ? e : "package scan in progress");
		break;
	default:
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", e ? e : "fetch failed");
		break;
	}
}

/* Keeps the file (and its dwz file) in the store while the build reads it. */
static void pin_files(svc_resolve_flight *f, const svc_fetch_result *res)
{
	stor_db *store = f->r->o.store;
	stor_pin(store, SVC_STORE_KEY(&f->fl.id));
	f->pinned = true;
	f->has_alt = res->has_alt;
	if (res->has_alt) {
		f->alt_id = res->alt_id;
		f->alt_status = res->alt_status;
		stor_pin(store, SVC_STORE_KEY(&f->alt_id));
		f->alt_pinned = true;
	}
}

enum svc_resolve_stage svc_resolve_fetch_next(svc_resolve_flight *f, const svc_fetch_result *res)
{
	svc_resolver *r = f->r;
	if (res->status != SVC_FETCH_OK) {
		fetch_failed(f, res);
		return SVC_RESOLVE_STAGE_DONE;
	}
	f->from_executable = res->kind == STOR_KIND_EXECUTABLE;
	if (f->recheck && !svc_flight_has_waiters(&f->fl) && f->from_executable) {
		/* Still no debug info: the index in the cache serves on. */
		svc_resolve_flight_fail(f, SVC_RESOLVE_NOT_FOUND, "%s", "no debug info yet");
		return SVC_RESOLVE_STAGE_DONE;
	}
	if (f->recheck && !f->from_executable) {
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(&f->fl.id, hex);
		base_logf(BASE_LOG_INFO, "debug info found for an index built from the executable",
			  "build_id=%s source=%s", hex, base_log_quote(q, sizeof(q), res->source));
		r->st.upgrades++;
	}
	if (res->cached)
		r->st.store_file_hits++;
	else
		r->st.source_fetches++;
	if (r->stopping) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		return SVC_RESOLVE_STAGE_DONE;
	}
	pin_files(f, res);
	stor_meta m;
	if (stor_get_meta(r->o.store, SVC_STORE_KEY(&f->fl.id), &m, NULL) == STOR_OK)
		f->file_time = m.fetch_time;
	/* The same file failed to build before: not again before its backoff. */
	if (svc_resolve_failed_check(f))
		return SVC_RESOLVE_STAGE_DONE;
	if (svc_resolve_s3_wanted(f)) {  /* another replica may have built it */
		f->s3_then = SVC_RESOLVE_STAGE_BUILD;
		return SVC_RESOLVE_STAGE_S3;
	}
	return SVC_RESOLVE_STAGE_BUILD;
}
