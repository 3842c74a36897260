// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_queue: download slots (a global limit and one per server) and the
 * queue of flights waiting for one (svc_fetch_impl.h). The queue is FIFO and
 * bounded: a flight that would have to wait while it is full is refused, so a
 * burst of build IDs cannot make it grow without limit.
 *
 * A server whose every slot has been busy for --upstream-busy-defer (twelve
 * trickling downloads, say) does not hold up build IDs it may not even have:
 * a flight that would wait for it asks the servers after it first, and comes
 * back to it only when they do not have the file (svc_walk_advance). Flights
 * already queued for it are moved on by the defer timer.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdlib.h>

#include <event2/event.h>

#include "base/base_clock.h"

void svc_queue_init(svc_fetch_queue *q, size_t max)
{
	*q = (svc_fetch_queue){.max = max};
}

bool svc_queue_push(svc_fetch_queue *q, svc_fetch_flight *fl)
{
	if (q->len >= q->max)
		return false;
	fl->queued = true;
	fl->qnext = NULL;
	if (q->tail)
		q->tail->qnext = fl;
	else
		q->head = fl;
	q->tail = fl;
	q->len++;
	return true;
}

void svc_queue_remove(svc_fetch_queue *q, svc_fetch_flight *fl)
{
	if (!fl->queued)
		return;
	svc_fetch_flight *prev = NULL;
	for (svc_fetch_flight *x = q->head; x; prev = x, x = x->qnext)
		if (x == fl) {
			if (prev)
				prev->qnext = x->qnext;
			else
				q->head = x->qnext;
			if (q->tail == x)
				q->tail = prev;
			break;
		}
	fl->queued = false;
	fl->qnext = NULL;
	q->len--;
	q->full_logged = false;
}

static bool slot_free(const svc_fetcher *f, const svc_upstream *u)
{
	return f->active < f->cfg.max_concurrent_fetches &&
	       u->active < f->cfg.max_fetches_per_upstream;
}

void svc_slot_busy_update(svc_fetcher *f, svc_upstream *u)
{
	if (u->active < f->cfg.max_fetches_per_upstream)
		u->busy_since = 0;
	else if (!u->busy_since)
		u->busy_since = base_mono_ms();
}

svc_http_opts svc_slot_http_opts(const svc_fetcher *f, const svc_upstream *u, int64_t total_ms,
				 uint64_t max_size)
{
	return (svc_http_opts){
		.timeout_ms = f->cfg.upstream_timeout_ms,
		.total_ms = total_ms,
		.min_progress = f->cfg.upstream_min_progress,
		.max_size = max_size,
		.peer = u->peer,
		.spool_dir = f->spool_dir,
		.netrc = f->cfg.upstream_netrc[0] ? f->cfg.upstream_netrc : NULL,
		.redirects = (svc_http_redirects)f->cfg.upstream_redirects,
	};
}

svc_http_req *svc_slot_get(svc_fetcher *f, svc_upstream *u, const char *url,
			   const svc_http_opts *o, svc_http_done_fn done, void *arg)
{
	svc_breaker_request(&u->breaker, base_mono_ms());
	f->active++;
	u->active++;
	svc_slot_busy_update(f, u);
	u->st.requests++;
	svc_http_req *req = svc_http_get(f->http, url, o, done, arg);
	if (!req)
		svc_slot_release(f, u);
	return req;
}

void svc_slot_release(svc_fetcher *f, svc_upstream *u)
{
	f->active--;
	u->active--;
	svc_slot_busy_update(f, u);
	svc_breaker_request_end(&u->breaker);
}

/* Could fl put its server off, now or once the server has been busy long
 * enough? */
static bool may_defer(const svc_fetch_flight *fl)
{
	const svc_fetcher *f = fl->f;
	/* Never past the peer tier: the owner downloads for the whole replica
	 * set, and going around it would download a second time. */
	return !fl->revisit && fl->attempt == 0 && fl->server + 1 < f->n_ups && fl->server < 64 &&
	       !f->ups[fl->server].peer && f->ups[fl->server].busy_since != 0;
}

bool svc_slot_should_defer(const svc_fetch_flight *fl, int64_t now_ms)
{
	return may_defer(fl) &&
	       now_ms - fl->f->ups[fl->server].busy_since >= fl->f->cfg.upstream_busy_defer_ms;
}

/* Wakes the defer timer when the first queued flight could move on. */
static void arm_defer(svc_fetcher *f)
{
	if (!f->defer_timer || evtimer_pending(f->defer_timer, NULL))
		return;
	int64_t now = base_mono_ms(), when = -1;
	for (svc_fetch_flight *fl = f->queue.head; fl; fl = fl->qnext) {
		if (!may_defer(fl))
			continue;
		int64_t t = f->ups[fl->server].busy_since + f->cfg.upstream_busy_defer_ms;
		if (when < 0 || t < when)
			when = t;
	}
	if (when < 0)
		return;
	int64_t d = when > now ? when - now : 0;
	struct timeval tv = {d / 1000, (d % 1000) * 1000};
	evtimer_add(f->defer_timer, &tv);
}

void svc_slot_defer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_fetcher *f = arg;
	int64_t now = base_mono_ms();
	size_t n = 0;
	svc_fetch_flight **moving = malloc((f->queue.len ? f->queue.len : 1) * sizeof(*moving));
	for (svc_fetch_flight *fl = f->queue.head; moving && fl; fl = fl->qnext)
		if (svc_slot_should_defer(fl, now))
			moving[n++] = fl;
	for (size_t i = 0; i < n; i++) {
		/* Out of the queue; the walk defers the busy server and goes on. */
		svc_queue_remove(&f->queue, moving[i]);
		svc_walk_next(moving[i]);
	}
	free(moving);
	arm_defer(f);
}

void svc_slot_dispatch(svc_fetcher *f)
{
	svc_fetch_flight *fl = f->queue.head;
	while (fl && f->active < f->cfg.max_concurrent_fetches) {
		svc_fetch_flight *next = fl->qnext;
		if (svc_walk_executable_unwanted(fl)) {
			/* Learned while it waited: the server serves no such executable.
			 * The walk goes on from the flight's timer, not from here. */
			svc_queue_remove(&f->queue, fl);
			svc_walk_skip_executable(fl);
			svc_fetch_flight_schedule(fl, 0);
		} else if (slot_free(f, &f->ups[fl->server])) {
			svc_queue_remove(&f->queue, fl);
			svc_download_start(fl);
		}
		fl = next;
	}
}

svc_errc svc_slot_request(svc_fetch_flight *fl, svc_error *err)
{
	svc_fetcher *f = fl->f;
	bool free_now = slot_free(f, &f->ups[fl->server]);
	if (free_now && !f->queue.head) {
		svc_download_start(fl);
		return SVC_OK;
	}
	if (!svc_queue_push(&f->queue, fl)) {
		if (free_now) {
			/* The dispatch below would start it at once: no need to wait. */
			svc_download_start(fl);
			return SVC_OK;
		}
		return svc_error_set(err, SVC_E_OVERLOADED,
				     "download queue full (%zu build IDs waiting for a slot)",
				     f->queue.len);
	}
	svc_slot_dispatch(f);
	if (fl->queued)
		arm_defer(f);
	return SVC_OK;
}
