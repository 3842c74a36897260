/*
 * svc_fetch_flight: the flight table (svc_fetch_impl.h): one flight per build
 * ID being fetched (single flight), keyed in a base_hash_map; its waiters, its
 * timer, and its end, when every waiter gets the result.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

svc_flight *svc_flight_find(svc_fetcher *f, const sym_build_id *id)
{
	svc_flight **fl = svc_flight_map_get(&f->flights, id);
	return fl ? *fl : NULL;
}

static void flight_free(svc_flight *fl)
{
	while (fl->waiters) {
		svc_waiter *w = fl->waiters;
		fl->waiters = w->next;
		free(w);
	}
	if (fl->timer)
		event_free(fl->timer);
	free(fl);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_walk_on_timer(arg);
}

svc_flight *svc_flight_create(svc_fetcher *f, const sym_build_id *id, svc_fetch_kind kind,
			      svc_waiter *w)
{
	svc_flight *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->f = f;
	fl->id = *id;
	sym_build_id_to_hex(id, fl->hex);
	fl->kind = kind;
	fl->timer = evtimer_new(f->base, timer_cb, fl);
	bool inserted = false;
	svc_flight **slot = fl->timer ? svc_flight_map_put(&f->flights, id, &inserted) : NULL;
	if (!slot) {
		flight_free(fl);
		return NULL;
	}
	*slot = fl;
	fl->waiters = w;
	fl->wtail = &w->next;
	stor_pin(f->store, id->bytes, id->len);
	svc_flight_schedule(fl, 0);
	return fl;
}

void svc_flight_add_waiter(svc_flight *fl, svc_waiter *w)
{
	*fl->wtail = w;
	fl->wtail = &w->next;
}

void svc_flight_schedule(svc_flight *fl, int64_t delay_ms)
{
	struct timeval tv = {delay_ms / 1000, (delay_ms % 1000) * 1000};
	evtimer_add(fl->timer, &tv);
}

void svc_flight_finish(svc_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_flight_map_remove(&f->flights, &fl->id);
	fl->res.build_id = fl->id;
	/* Callbacks may start new fetches, of this build ID too: it is unmapped. */
	while (fl->waiters) {
		svc_waiter *w = fl->waiters;
		fl->waiters = w->next;
		w->cb(&fl->res, w->arg);
		free(w);
	}
	stor_unpin(f->store, fl->id.bytes, fl->id.len);
	flight_free(fl);
}

/* The callback of an internal (dwz) waiter. */
static bool is_alt_waiter(const svc_waiter *w)
{
	return w->cb == svc_walk_alt_done;
}

void svc_flight_abort_all(svc_fetcher *f, const char *why)
{
	/* Callbacks cannot start fetches now (shutting_down): the map stays put. */
	size_t pos = 0;
	for (svc_flight_map_entry *e; (e = svc_flight_map_next(&f->flights, &pos));) {
		svc_flight *fl = e->value;
		svc_fetch_result res;
		memset(&res, 0, sizeof(res));
		res.build_id = fl->id;
		res.status = SVC_FETCH_ERROR;
		snprintf(res.error, sizeof(res.error), "%s", why);
		/* Internal (alt) waiters are dropped: their flight goes as well. */
		for (svc_waiter *w = fl->waiters; w; w = w->next)
			if (!is_alt_waiter(w))
				w->cb(&res, w->arg);
		stor_unpin(f->store, fl->id.bytes, fl->id.len);
		flight_free(fl);
	}
	svc_flight_map_clear(&f->flights);
}
