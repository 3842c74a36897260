// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_budget: the global memory budget of index builds
 * (svc_resolver_options.build_memory_bytes; svc_resolver_impl.h). Each build
 * counts its expected memory: the file as read from the store, plus the debug
 * sections it reads at their inflated sizes, plus the inflated copy of the
 * compressed ones (sym_inflate_estimate; about what libdw and the builder
 * hold). A build that does not fit waits in a FIFO queue (it is not failed)
 * until running builds give their share back; one build always runs, however
 * large (the inflate cap, sized from the budget, bounds it). The worker asks
 * for room (under the mutex: in_use is shared with the workers); queueing
 * runs on the loop, and the driver (svc_resolve_drive.c) starts the queued
 * builds that fit (svc_resolve_budget_next) after each build.
 */
#include "service/resolve/svc_resolver_impl.h"

#include <pthread.h>

/* One lock for every resolver's budget (there is one resolver per daemon). */
static pthread_mutex_t budget_mu = PTHREAD_MUTEX_INITIALIZER;

/* Under the mutex: takes bytes when they fit; queued: the queue is not empty
 * (a newcomer waits behind it). */
static bool take_locked(svc_resolver *r, uint64_t bytes, bool behind_queue)
{
	bool fits = r->build_in_use == 0 ||
		    (!behind_queue && r->build_in_use + bytes <= r->build_max);
	if (!fits)
		return false;
	r->build_in_use += bytes;
	if (r->build_in_use > r->build_peak)
		r->build_peak = r->build_in_use;
	return true;
}

bool svc_resolve_budget_take(svc_resolve_flight *f)
{
	if (f->build_reserved)
		return true;
	svc_resolver *r = f->r;
	pthread_mutex_lock(&budget_mu);
	bool ok = take_locked(r, f->build_bytes, r->bq_len > 0);
	pthread_mutex_unlock(&budget_mu);
	f->build_reserved = ok;
	f->build_no_room = !ok;
	return ok;
}

svc_resolve_flight *svc_resolve_budget_next(svc_resolver *r)
{
	svc_resolve_flight *f = r->bq_head;
	if (!f || r->stopping)
		return NULL;
	pthread_mutex_lock(&budget_mu);
	bool ok = take_locked(r, f->build_bytes, false);
	if (ok) {
		r->bq_head = f->qnext;
		if (!r->bq_head)
			r->bq_tail = NULL;
		r->bq_len--;
	}
	pthread_mutex_unlock(&budget_mu);
	if (!ok)
		return NULL;
	f->qnext = NULL;
	f->build_waiting = false;
	f->build_reserved = true;
	return f;
}

void svc_resolve_budget_give(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	if (f->build_no_room) {
		/* Back from a worker that found no room: into the queue. */
		f->build_no_room = false;
		f->build_waiting = true;
		f->qnext = NULL;
		pthread_mutex_lock(&budget_mu);
		if (r->bq_tail)
			r->bq_tail->qnext = f;
		else
			r->bq_head = f;
		r->bq_tail = f;
		r->bq_len++;
		pthread_mutex_unlock(&budget_mu);
		r->st.builds_queued++;
	} else if (f->build_reserved) {
		pthread_mutex_lock(&budget_mu);
		r->build_in_use -= f->build_bytes;
		pthread_mutex_unlock(&budget_mu);
		f->build_reserved = false;
	}
}

void svc_resolve_budget_drop_queue(svc_resolver *r)
{
	pthread_mutex_lock(&budget_mu);
	for (svc_resolve_flight *f = r->bq_head; f; f = f->qnext)
		f->build_waiting = false;
	r->bq_head = r->bq_tail = NULL;
	r->bq_len = 0;
	pthread_mutex_unlock(&budget_mu);
}

void svc_resolver_build_memory(const svc_resolver *r, uint64_t *max, uint64_t *in_use,
			       uint64_t *peak, size_t *queued)
{
	pthread_mutex_lock(&budget_mu);
	*max = r->build_max;
	*in_use = r->build_in_use;
	*peak = r->build_peak;
	*queued = r->bq_len;
	pthread_mutex_unlock(&budget_mu);
}
