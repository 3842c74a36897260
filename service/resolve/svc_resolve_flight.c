// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_flight: a resolver flight's record, result and end
 * (svc_resolver_impl.h). At the end an artifact goes into its kind's cache,
 * a failure is remembered for a while (svc_resolve_negative.c) when its kind
 * remembers them, and every waiter gets the result, in the order they came.
 * Called by the driver (svc_resolve_drive.c) and the API; calls no stage.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_build_id.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"
#include "base/base_log.h"

static const char *const status_names[] = {"ok",	     "not_found", "error",
					   "no_symbols", "too_large", "pending"};

const char *svc_resolve_status_name(svc_resolve_status s)
{
	return (unsigned)s < sizeof(status_names) / sizeof(status_names[0]) ? status_names[s]
										     : "unknown";
}

svc_resolve_flight *svc_resolve_flight_new(svc_resolver *r, const sym_build_id *id,
					   svc_artifact_kind kind, enum svc_resolve_stage stage)
{
	svc_resolve_flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!svc_flight_add(&r->flights[kind], &f->fl, id)) {
		free(f);
		return NULL;
	}
	f->r = r;
	f->kind = kind;
	f->stage = stage;
	if (kind == SVC_ARTIFACT_SYMBOLS)
		r->st.in_flight++;
	return f;
}

static void flight_unlink(svc_resolve_flight *f)
{
	svc_flight_remove(&f->r->flights[f->kind], &f->fl);
	if (f->kind == SVC_ARTIFACT_SYMBOLS)
		f->r->st.in_flight--;
}

void svc_resolve_flight_drop(svc_resolve_flight *f)
{
	flight_unlink(f);
	free(f);
}

void svc_resolve_flight_fail(svc_resolve_flight *f, svc_resolve_status status, const char *fmt,
			     const char *what)
{
	f->status = status;
	snprintf(f->error, sizeof(f->error), fmt, what);
}

int64_t svc_resolve_recheck_interval_ms(const svc_resolver *r)
{
	int64_t ttl = r->o.negative_ttl_ms;
	return ttl <= 0 ? 1000 : ttl > SVC_RESOLVE_NEG_TTL_CAP_MS ? SVC_RESOLVE_NEG_TTL_CAP_MS : ttl;
}

const char *svc_resolve_flight_doing(const svc_resolve_flight *f)
{
	if (f->stage == SVC_RESOLVE_STAGE_BUILD && f->build_waiting)
		return "waiting for room in the build memory budget";
	if (f->stage >= SVC_RESOLVE_STAGE_DONE)
		return "finishing";
	return svc_resolve_kinds[f->kind].doing[f->stage];
}

/* Puts the flight's artifact into its kind's cache; the entry (referenced) or NULL. */
static svc_index_entry *cache_result(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	svc_index_entry *entry = svc_resolve_kinds[f->kind].cache_put(r->caches[f->kind], f);
	f->blob = NULL;
	f->index = NULL;
	f->artifact = NULL;
	if (!entry) {
		f->status = SVC_RESOLVE_ERROR;
		snprintf(f->error, sizeof(f->error), "out of memory");
		return NULL;
	}
	entry->kind = f->kind;
	if (f->kind == SVC_ARTIFACT_SYMBOLS) {
		entry->recheck_ms = f->from_executable
					    ? base_mono_ms() + svc_resolve_recheck_interval_ms(r)
					    : 0;
	}
	return entry;
}

static void remember_failure(svc_resolve_flight *f)
{
	svc_resolve_neg_remember(f->r, &f->fl.id, f->status, f->error);
	char hex[SYM_BUILD_ID_HEX_MAX], q[320];
	sym_build_id_to_hex(&f->fl.id, hex);
	base_logf(f->status == SVC_RESOLVE_ERROR ? BASE_LOG_WARN : BASE_LOG_INFO,
		  "build id not resolved", "build_id=%s status=%s error=%s", hex,
		  svc_resolve_status_name(f->status), base_log_quote(q, sizeof(q), f->error));
}

/* The artifact a flight holds that did not go into a cache. */
static void free_result(svc_resolve_flight *f)
{
	if (f->artifact)
		svc_resolve_kinds[f->kind].free_artifact(f->artifact);
	sym_index_destroy(f->index);
	svc_string_rank_free(&f->strings);
	free(f->blob);
	svc_fetcher_s3_read_cancel(f->s3_read);  /* ended during S3 (shutdown) */
	f->s3_read = NULL;
	free(f->s3_body);
}

void svc_resolve_flight_finish(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	flight_unlink(f);
	if (f->dep) {  /* ended before the file's resolution (shutdown) */
		svc_flight_leave(&f->dep->fw);
		free(f->dep);
		f->dep = NULL;
	}
	if (f->pinned)
		stor_unpin(r->o.store, SVC_STORE_KEY(&f->fl.id));
	if (f->alt_pinned)
		stor_unpin(r->o.store, SVC_STORE_KEY(&f->alt_id));

	svc_index_entry *entry = NULL;
	if (f->status == SVC_RESOLVE_OK)
		entry = cache_result(f);
	else if (svc_resolve_kinds[f->kind].remembered &&
		 !(f->recheck && !svc_flight_has_waiters(&f->fl)))
		remember_failure(f);
	/* else a background look for debug info found none: the old index stays. */
	free_result(f);

	svc_flight_waiter *fw;
	while ((fw = svc_flight_pop(&f->fl))) {
		svc_resolve_waiter *w = (svc_resolve_waiter *)fw;
		svc_resolution res = {.status = f->status};
		snprintf(res.error, sizeof(res.error), "%s", f->error);
		if (entry) {
			svc_index_entry_ref(entry);
			res.entry = entry;
		}
		w->cb(w->arg, &res);
		free(w);
	}
	svc_index_entry_release(r->caches[f->kind], entry);
	free(f);
}
