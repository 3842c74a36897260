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
 * already queued for it are moved on by the defer timer (its callback is the
 * driver's, svc_fetch_on_defer). A leaf: it says whether a flight may start,
 * the driver starts it.
 */
#include "service/fetch/svc_fetch_impl.h"


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

bool svc_slot_free(const svc_fetcher *f, const svc_upstream *u)
{
	return f->active < f->cfg.max_concurrent_fetches &&
	       u->active < f->cfg.max_fetches_per_upstream;
}

static void svc_slot_busy_update(svc_fetcher *f, svc_upstream *u)
{
	if (u->active < f->cfg.max_fetches_per_upstream)
		u->busy_since = 0;
	else if (!u->busy_since)
		u->busy_since = base_mono_ms();
}

svc_provider_req *svc_slot_get(svc_fetcher *f, svc_upstream *u, const svc_provider_ask *ask,
			       svc_http_done_fn done, void *arg, svc_error *err)
{
	svc_breaker_request(&u->breaker, base_mono_ms());
	f->active++;
	u->active++;
	svc_slot_busy_update(f, u);
	u->st.requests++;
	svc_provider_req *req = u->prov->ops->start(u->prov, ask, done, arg, err);
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
void svc_slot_arm_defer(svc_fetcher *f)
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

svc_slot_answer svc_slot_request(svc_fetch_flight *fl, svc_error *err)
{
	svc_fetcher *f = fl->f;
	bool free_now = svc_slot_free(f, &f->ups[fl->server]);
	if (free_now && !f->queue.head)
		return SVC_SLOT_NOW;
	if (svc_queue_push(&f->queue, fl))
		return SVC_SLOT_QUEUED;
	if (free_now)
		return SVC_SLOT_NOW;  /* a dispatch would start it at once: no need to wait */
	svc_error_set(err, SVC_E_OVERLOADED, "download queue full (%zu build IDs waiting for a slot)",
		      f->queue.len);
	return SVC_SLOT_FULL;
}
