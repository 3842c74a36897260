// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_flight: the flight tables (svc_fetch_impl.h): one flight per
 * (build ID, policy) being fetched, kept by the shared single-flight table
 * (service/core/svc_flight.h, one table per policy) with its waiters in
 * arrival order; its timer, and its end, when every waiter gets the result.
 * A leaf: the timer's callback is the driver's, handed in.
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/core/svc_build_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

static svc_flight_table *table(svc_fetcher *f, svc_fetch_policy p)
{
	return &f->flights[svc_fetch_policy_index(p)];
}

svc_fetch_flight *svc_fetch_flight_find(svc_fetcher *f, const sym_build_id *id,
					svc_fetch_policy policy)
{
	/* base is the first member: the table's flight is the fetch's. */
	return (svc_fetch_flight *)svc_flight_find(table(f, policy), id);
}

bool svc_fetch_flight_any(const svc_fetcher *f, const sym_build_id *id)
{
	for (unsigned i = 0; i < SVC_FETCH_POLICIES; i++)
		if (svc_flight_find(&f->flights[i], id))
			return true;
	return false;
}

size_t svc_fetch_flight_count(const svc_fetcher *f)
{
	size_t n = 0;
	for (unsigned i = 0; i < SVC_FETCH_POLICIES; i++)
		n += svc_flight_count(&f->flights[i]);
	return n;
}

static svc_fetch_waiter *pop_waiter(svc_fetch_flight *fl)
{
	return (svc_fetch_waiter *)svc_flight_pop(&fl->base);
}

static void flight_free(svc_fetch_flight *fl)
{
	for (svc_fetch_waiter *w; (w = pop_waiter(fl));)
		free(w);
	if (fl->timer)
		event_free(fl->timer);
	free(fl->path_hint);
	free(fl->alt_where);
	free(fl);
}

static svc_fetch_flight *flight_create(svc_fetcher *f, const sym_build_id *id,
				       svc_fetch_kind kind, svc_fetch_policy policy,
				       svc_fetch_waiter *w, event_callback_fn on_timer)
{
	svc_fetch_flight *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->f = f;
	sym_build_id_to_hex(id, fl->hex);
	fl->kind = kind;
	fl->policy = policy;
	fl->timer = evtimer_new(f->base, on_timer, fl);
	if (!fl->timer || !svc_flight_add(table(f, policy), &fl->base, id)) {
		flight_free(fl);
		return NULL;
	}
	svc_flight_join(&fl->base, &w->base);
	stor_pin(f->store, SVC_STORE_KEY(id));
	svc_fetch_flight_resume_in(fl, SVC_STAGE_STORE, 0);
	return fl;
}

svc_fetch_flight *svc_fetch_flight_get(svc_fetcher *f, const sym_build_id *id,
				       svc_fetch_kind kind, svc_fetch_policy policy,
				       svc_fetch_waiter *w, event_callback_fn on_timer)
{
	f->st.started++;
	svc_fetch_flight *fl = svc_fetch_flight_find(f, id, policy);
	if (fl) {
		f->st.joined++;
		svc_flight_join(&fl->base, &w->base);
		return fl;
	}
	return flight_create(f, id, kind, policy, w, on_timer);
}

svc_fetch_stage svc_fetch_flight_resume_in(svc_fetch_flight *fl, svc_fetch_stage at,
					   int64_t delay_ms)
{
	struct timeval tv = {delay_ms / 1000, (delay_ms % 1000) * 1000};
	fl->resume = at;
	evtimer_add(fl->timer, &tv);
	return SVC_STAGE_WAIT;
}

void svc_fetch_flight_finish(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_flight_remove(table(f, fl->policy), &fl->base);
	fl->res.build_id = fl->base.id;
	/* Callbacks may start new fetches, of this build ID too: it is unmapped. */
	for (svc_fetch_waiter *w; (w = pop_waiter(fl));) {
		w->cb(&fl->res, w->arg);
		free(w);
	}
	stor_unpin(f->store, SVC_STORE_KEY(&fl->base.id));
	flight_free(fl);
}

static void abort_table(svc_fetcher *f, svc_flight_table *t, const char *why)
{
	/* Callbacks cannot start fetches now (shutting_down). */
	for (svc_flight *base; (base = svc_flight_any(t));) {
		svc_fetch_flight *fl = (svc_fetch_flight *)base;
		svc_flight_remove(t, base);
		svc_fetch_result res;
		memset(&res, 0, sizeof(res));
		res.build_id = fl->base.id;
		res.status = SVC_FETCH_ERROR;
		snprintf(res.error, sizeof(res.error), "%s", why);
		/* Internal (alt) waiters are dropped: their flight goes as well. */
		for (svc_fetch_waiter *w; (w = pop_waiter(fl));) {
			if (!w->internal)
				w->cb(&res, w->arg);
			free(w);
		}
		stor_unpin(f->store, SVC_STORE_KEY(&fl->base.id));
		flight_free(fl);
	}
}

void svc_fetch_flight_abort_all(svc_fetcher *f, const char *why)
{
	for (unsigned i = 0; i < SVC_FETCH_POLICIES; i++)
		abort_table(f, &f->flights[i], why);
}
