// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_fetch: a flight's FETCH step (svc_resolver_impl.h): the fetcher
 * brings the debug info (or the executable) into the store, then the flight
 * goes on to BUILD with the file pinned. Also the background rechecks: an
 * index built from an executable alone starts, at most once an interval, a
 * flight of its own at this step to look for debug info again; when some
 * turns up, the index is rebuilt with it.
 */
#include "service/resolve/svc_resolver_impl.h"

#include "base/base_clock.h"
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
	default:
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", e ? e : "fetch failed");
		break;
	}
	svc_resolve_flight_finish(f);
}

/* Keeps the file (and its dwz file) in the store while the build reads it. */
static void pin_files(svc_resolve_flight *f, const svc_fetch_result *res)
{
	stor_db *store = f->r->o.store;
	stor_pin(store, f->fl.id.bytes, f->fl.id.len);
	f->pinned = true;
	f->has_alt = res->has_alt;
	if (res->has_alt) {
		f->alt_id = res->alt_id;
		f->alt_status = res->alt_status;
		stor_pin(store, f->alt_id.bytes, f->alt_id.len);
		f->alt_pinned = true;
	}
}

static void fetch_cb(const svc_fetch_result *res, void *arg)
{
	svc_resolve_flight *f = arg;
	svc_resolver *r = f->r;
	if (res->status != SVC_FETCH_OK) {
		fetch_failed(f, res);
		return;
	}
	f->from_executable = res->kind == STOR_KIND_EXECUTABLE;
	if (f->recheck && !svc_flight_has_waiters(&f->fl) && f->from_executable) {
		/* Still no debug info: the index in the cache serves on. */
		svc_resolve_flight_fail(f, SVC_RESOLVE_NOT_FOUND, "%s", "no debug info yet");
		svc_resolve_flight_finish(f);
		return;
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
		svc_resolve_flight_finish(f);
		return;
	}
	pin_files(f, res);
	stor_meta m;
	if (stor_get_meta(r->o.store, f->fl.id.bytes, f->fl.id.len, &m, NULL) == STOR_OK)
		f->file_time = m.fetch_time;
	if (svc_resolve_failed_check(f)) {
		/* The same file failed to build before: not again before its backoff. */
		svc_resolve_flight_finish(f);
		return;
	}
	f->stage = SVC_RESOLVE_STAGE_BUILD;
	if (!svc_resolve_build_start(f)) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "cannot queue the index build");
		svc_resolve_flight_finish(f);
	}
}

bool svc_resolve_fetch_start(svc_resolve_flight *f)
{
	return svc_fetch_start(f->r->o.fetcher, &f->fl.id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
			       fetch_cb, f) == SVC_OK;
}

/* ---- background rechecks ---- */

int64_t svc_resolve_recheck_interval_ms(const svc_resolver *r)
{
	int64_t ttl = r->o.negative_ttl_ms;
	return ttl <= 0 ? 1000 : ttl > SVC_RESOLVE_NEG_TTL_CAP_MS ? SVC_RESOLVE_NEG_TTL_CAP_MS : ttl;
}

void svc_resolve_recheck(svc_resolver *r, svc_index_entry *e)
{
	e->recheck_ms = base_mono_ms() + svc_resolve_recheck_interval_ms(r);
	if (r->stopping || svc_flight_find(&r->flights, &e->id))
		return;
	svc_resolve_flight *f = svc_resolve_flight_new(r, &e->id, SVC_RESOLVE_STAGE_FETCH);
	if (!f)
		return;
	f->recheck = true;
	r->st.rechecks++;
	if (!svc_resolve_fetch_start(f))
		svc_resolve_flight_drop(f);
}
