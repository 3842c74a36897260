// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_queue: download slots (a global limit and one per server) and the
 * queue of flights waiting for one (svc_fetch_impl.h). The queue is FIFO and
 * bounded: a flight that would have to wait while it is full is refused, so a
 * burst of build IDs cannot make it grow without limit.
 */
#include "service/fetch/svc_fetch_impl.h"

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
	return SVC_OK;
}
