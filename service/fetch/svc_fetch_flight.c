// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_flight: the flight table (svc_fetch_impl.h): one flight per build
 * ID being fetched, kept by the shared single-flight table (service/core/
 * svc_flight.h) with its waiters in arrival order; its timer, and its end,
 * when every waiter gets the result.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

svc_fetch_flight *svc_fetch_flight_find(svc_fetcher *f, const sym_build_id *id)
{
	/* base is the first member: the table's flight is the fetch's. */
	return (svc_fetch_flight *)svc_flight_find(&f->flights, id);
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

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_walk_on_timer(arg);
}

svc_fetch_flight *svc_fetch_flight_create(svc_fetcher *f, const sym_build_id *id,
					  svc_fetch_kind kind, svc_fetch_waiter *w)
{
	svc_fetch_flight *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->f = f;
	sym_build_id_to_hex(id, fl->hex);
	fl->kind = kind;
	fl->timer = evtimer_new(f->base, timer_cb, fl);
	if (!fl->timer || !svc_flight_add(&f->flights, &fl->base, id)) {
		flight_free(fl);
		return NULL;
	}
	svc_flight_join(&fl->base, &w->base);
	stor_pin(f->store, id->bytes, id->len);
	svc_fetch_flight_schedule(fl, 0);
	return fl;
}

void svc_fetch_flight_add_waiter(svc_fetch_flight *fl, svc_fetch_waiter *w)
{
	svc_flight_join(&fl->base, &w->base);
}

void svc_fetch_flight_schedule(svc_fetch_flight *fl, int64_t delay_ms)
{
	struct timeval tv = {delay_ms / 1000, (delay_ms % 1000) * 1000};
	evtimer_add(fl->timer, &tv);
}

void svc_fetch_flight_finish(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_flight_remove(&f->flights, &fl->base);
	fl->res.build_id = fl->base.id;
	/* Callbacks may start new fetches, of this build ID too: it is unmapped. */
	for (svc_fetch_waiter *w; (w = pop_waiter(fl));) {
		w->cb(&fl->res, w->arg);
		free(w);
	}
	stor_unpin(f->store, fl->base.id.bytes, fl->base.id.len);
	flight_free(fl);
}

/* The callback of an internal (dwz) waiter. */
static bool is_alt_waiter(const svc_fetch_waiter *w)
{
	return w->cb == svc_walk_alt_done;
}

void svc_fetch_flight_abort_all(svc_fetcher *f, const char *why)
{
	/* Callbacks cannot start fetches now (shutting_down). */
	for (svc_flight *base; (base = svc_flight_any(&f->flights));) {
		svc_fetch_flight *fl = (svc_fetch_flight *)base;
		svc_flight_remove(&f->flights, base);
		svc_fetch_result res;
		memset(&res, 0, sizeof(res));
		res.build_id = fl->base.id;
		res.status = SVC_FETCH_ERROR;
		snprintf(res.error, sizeof(res.error), "%s", why);
		/* Internal (alt) waiters are dropped: their flight goes as well. */
		for (svc_fetch_waiter *w; (w = pop_waiter(fl));) {
			if (!is_alt_waiter(w))
				w->cb(&res, w->arg);
			free(w);
		}
		stor_unpin(f->store, fl->base.id.bytes, fl->base.id.len);
		flight_free(fl);
	}
}
