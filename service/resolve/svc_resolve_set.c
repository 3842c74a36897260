// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_set: a call's identities resolved, and the wait for them
 * (svc_resolve_set.h). One resolver waiter per item that waits, one timer for
 * the call's wait budget.
 */
#include "service/resolve/svc_resolve_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

struct wait {
	svc_resolve_set *s;
	size_t i;
	svc_resolve_waiter *w;
};
_Static_assert(sizeof(struct wait) <= SVC_RESOLVE_SET_WAIT_BYTES, "SVC_RESOLVE_SET_WAIT_BYTES");

struct svc_resolve_set {
	struct event_base *base;
	svc_resolver *resolver;
	size_t n;
	struct wait *waits;
	size_t waiting;
	struct event *timer;
	svc_resolve_answer_fn answer;
	void *answer_arg;
	void (*done)(void *arg);
	void *done_arg;
	uint32_t max_new;          /* 0: no bound */
	uint32_t started_new;
	char bound_why[128];
};

svc_resolve_set *svc_resolve_set_create(struct event_base *base, svc_resolver *r, size_t n,
					svc_resolve_answer_fn answer, void *arg)
{
	svc_resolve_set *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->waits = calloc(n ? n : 1, sizeof(*s->waits));
	if (!s->waits) {
		free(s);
		return NULL;
	}
	s->base = base;
	s->resolver = r;
	s->n = n;
	s->answer = answer;
	s->answer_arg = arg;
	return s;
}

void svc_resolve_set_destroy(svc_resolve_set *s)
{
	if (!s)
		return;
	if (s->timer)
		event_free(s->timer);
	for (size_t i = 0; i < s->n; i++)
		if (s->waits[i].w)
			svc_resolver_cancel(s->resolver, s->waits[i].w);
	free(s->waits);
	free(s);
}

void svc_resolve_set_bound_new(svc_resolve_set *s, uint32_t max)
{
	s->max_new = max;
	snprintf(s->bound_why, sizeof(s->bound_why),
		 "not looked up yet: this call started %u new lookups "
		 "(--max-new-lookups-per-call); ask again",
		 max);
}

/* A resolution that says "not yet" (a package scan under way) is answered
 * PENDING like work still going on. */
static void answer_resolved(svc_resolve_set *s, size_t i, svc_resolution *res)
{
	svc_resolve_answer a = {.res = res};
	if (res->status == SVC_RESOLVE_PENDING)
		a = (svc_resolve_answer){.pending = true, .why = res->error,
					 .retry_after_ms = SVC_RESOLVE_PENDING_TTL_MS};
	s->answer(s->answer_arg, i, &a);
}

static void answer_pending(svc_resolve_set *s, size_t i, const char *why, uint32_t retry_ms)
{
	svc_resolve_answer a = {.pending = true, .why = why, .retry_after_ms = retry_ms};
	s->answer(s->answer_arg, i, &a);
}

static void finish(svc_resolve_set *s)
{
	if (s->timer)
		event_del(s->timer);
	s->done(s->done_arg);  /* may destroy s */
}

static void resolved_cb(void *arg, svc_resolution *res)
{
	struct wait *cw = arg;
	svc_resolve_set *s = cw->s;
	cw->w = NULL;
	answer_resolved(s, cw->i, res);
	if (--s->waiting == 0)
		finish(s);
}

/* What is unresolved is PENDING, its work going on. */
static void give_up(svc_resolve_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct wait *cw = &s->waits[i];
		if (!cw->w)
			continue;
		const char *stage = svc_resolver_waiter_stage(cw->w);
		answer_pending(s, i, stage, strstr(stage, "fetch") ? 1000 : 500);
		svc_resolver_cancel(s->resolver, cw->w);
		cw->w = NULL;
	}
	s->waiting = 0;
}

void svc_resolve_set_stop(svc_resolve_set *s)
{
	if (!s->waiting)
		return;
	give_up(s);
	finish(s);
}

bool svc_resolve_set_waiting(const svc_resolve_set *s)
{
	return s->waiting != 0;
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_resolve_set_stop(arg);
}

/* A build ID nothing is known of, past the set's bound on new lookups. */
static bool over_new_lookups(svc_resolve_set *s, const sym_build_id *id)
{
	if (!s->max_new || !svc_resolver_is_new(s->resolver, id))
		return false;
	if (s->started_new >= s->max_new)
		return true;
	s->started_new++;
	return false;
}

void svc_resolve_set_add(svc_resolve_set *s, size_t i, const sym_build_id *id,
			 svc_artifact_kind kind)
{
	if (over_new_lookups(s, id)) {
		answer_pending(s, i, s->bound_why, 1000);
		return;
	}
	svc_resolution now;
	struct wait *cw = &s->waits[i];
	cw->s = s;
	cw->i = i;
	cw->w = svc_resolver_resolve_kind(s->resolver, id, kind, resolved_cb, cw, &now);
	if (cw->w)
		s->waiting++;
	else
		answer_resolved(s, i, &now);
}

bool svc_resolve_set_wait(svc_resolve_set *s, int64_t wait_ms, void (*done)(void *arg),
			  void *arg)
{
	s->done = done;
	s->done_arg = arg;
	if (s->waiting == 0)
		return true;
	s->timer = evtimer_new(s->base, timer_cb, s);
	struct timeval tv = {(time_t)(wait_ms / 1000), (suseconds_t)((wait_ms % 1000) * 1000)};
	if (!s->timer || evtimer_add(s->timer, &tv) != 0) {
		give_up(s);
		return true;
	}
	return false;
}
