// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_flight: a resolver flight's start and end (svc_resolver_impl.h).
 * At the end an index goes into the index cache, anything else is remembered
 * for a while (svc_resolve_negative.c), and every waiter gets the result, in
 * the order they came.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"
#include "base/base_log.h"

svc_resolve_flight *svc_resolve_flight_new(svc_resolver *r, const sym_build_id *id,
					   enum svc_resolve_stage stage)
{
	svc_resolve_flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!svc_flight_add(&r->flights, &f->fl, id)) {
		free(f);
		return NULL;
	}
	f->r = r;
	f->stage = stage;
	r->st.in_flight++;
	return f;
}

static void flight_unlink(svc_resolve_flight *f)
{
	svc_flight_remove(&f->r->flights, &f->fl);
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

static void free_blob(void *blob)
{
	free(blob);
}

/* Puts the flight's index into the cache; the entry (referenced) or NULL. */
static svc_index_entry *cache_result(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	svc_index_entry *entry = svc_index_cache_put(r->o.cache, &f->fl.id, f->blob, f->blob_size,
						     free_blob, f->index);
	f->blob = NULL;
	f->index = NULL;
	if (!entry) {
		f->status = SVC_RESOLVE_ERROR;
		snprintf(f->error, sizeof(f->error), "out of memory");
	} else {
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

void svc_resolve_flight_finish(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	flight_unlink(f);
	if (f->pinned)
		stor_unpin(r->o.store, f->fl.id.bytes, f->fl.id.len);
	if (f->alt_pinned)
		stor_unpin(r->o.store, f->alt_id.bytes, f->alt_id.len);

	svc_index_entry *entry = NULL;
	if (f->status == SVC_RESOLVE_OK)
		entry = cache_result(f);
	else if (!(f->recheck && !svc_flight_has_waiters(&f->fl)))
		remember_failure(f);
	/* else a background look for debug info found none: the old index stays. */
	free(f->blob);
	sym_index_destroy(f->index);

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
	svc_index_entry_release(r->o.cache, entry);
	free(f);
}
