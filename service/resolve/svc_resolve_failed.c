// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_failed: index builds that failed (svc_resolver_impl.h). A file
 * whose build fails (bad DWARF, over the inflate cap, a missing dwz file) is
 * not built again when the negative entry expires: the failure is kept with
 * the stored file's fetch_time, and the next build of that same file waits
 * for a backoff that doubles with each failure (four error TTLs and at least
 * a minute, then twice that, ... at most an hour). A new file for the build ID (an upload, debug
 * info replacing an executable) is built at once. At most
 * SVC_RESOLVE_FAILED_MAX are kept; past that the one retried soonest goes.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"

static void failed_remove(svc_resolver *r, svc_resolve_failed *x)
{
	svc_resolve_failed_key k = &x->id;
	svc_resolve_failed_map_remove(&r->failed, &k);
	free(x);
}

void svc_resolve_failed_clear(svc_resolver *r)
{
	size_t pos = 0;
	svc_resolve_failed_map_entry *e;
	while ((e = svc_resolve_failed_map_next(&r->failed, &pos)))
		free(e->value);
	svc_resolve_failed_map_clear(&r->failed);
}

const svc_resolve_failed *svc_resolve_failed_peek(const svc_resolver *r, const sym_build_id *id)
{
	svc_resolve_failed *const *slot = svc_resolve_failed_map_get(&r->failed, &id);
	return slot ? *slot : NULL;
}

/* Makes room: the entry retried soonest goes. */
static void failed_evict(svc_resolver *r)
{
	size_t pos = 0;
	svc_resolve_failed_map_entry *e;
	svc_resolve_failed *oldest = NULL;
	while ((e = svc_resolve_failed_map_next(&r->failed, &pos)))
		if (!oldest || e->value->retry_ms < oldest->retry_ms)
			oldest = e->value;
	if (oldest)
		failed_remove(r, oldest);
}

bool svc_resolve_failed_check(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	const sym_build_id *id = &f->fl.id;
	svc_resolve_failed *const *slot = svc_resolve_failed_map_get(&r->failed, &id);
	if (!slot)
		return false;
	svc_resolve_failed *x = *slot;
	int64_t now = base_mono_ms();
	if (x->file_time != f->file_time) {
		failed_remove(r, x);   /* another file: build it */
		return false;
	}
	if (now >= x->retry_ms)
		return false;          /* time to try again (the entry stays, for the backoff) */
	r->st.builds_skipped++;
	f->status = x->status;
	snprintf(f->error, sizeof(f->error),
		 "index build failed %u time(s); tried again in %.0f s or when the file "
		 "changes: %.150s",
		 x->failures, (double)(x->retry_ms - now) / 1000.0, x->error);
	return true;
}

void svc_resolve_failed_update(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	const sym_build_id *id = &f->fl.id;
	svc_resolve_failed **slot = svc_resolve_failed_map_get(&r->failed, &id);
	if (f->status == SVC_RESOLVE_OK) {
		if (slot)
			failed_remove(r, *slot);
		return;
	}
	if (f->status == SVC_RESOLVE_PENDING)  /* the file was replaced: no failure of it */
		return;
	svc_resolve_failed *x = slot ? *slot : NULL;
	if (!x) {
		if (svc_resolve_failed_map_size(&r->failed) >= SVC_RESOLVE_FAILED_MAX)
			failed_evict(r);
		if (!(x = calloc(1, sizeof(*x))))
			return;
		x->id = *id;
		svc_resolve_failed_key k = &x->id;
		if (!(slot = svc_resolve_failed_map_put(&r->failed, &k, NULL))) {
			free(x);
			return;
		}
		*slot = x;
	}
	if (x->file_time != f->file_time)
		x->failures = 0;
	x->failures++;
	x->file_time = f->file_time;
	x->status = f->status;
	snprintf(x->error, sizeof(x->error), "%s", f->error);
	int64_t backoff = 4 * r->o.error_ttl_ms;
	if (backoff < SVC_RESOLVE_FAILED_BACKOFF_MIN_MS)
		backoff = SVC_RESOLVE_FAILED_BACKOFF_MIN_MS;
	for (uint32_t i = 1; i < x->failures && backoff < SVC_RESOLVE_FAILED_BACKOFF_MAX_MS; i++)
		backoff *= 2;
	if (backoff > SVC_RESOLVE_FAILED_BACKOFF_MAX_MS)
		backoff = SVC_RESOLVE_FAILED_BACKOFF_MAX_MS;
	x->retry_ms = base_mono_ms() + backoff;
}
