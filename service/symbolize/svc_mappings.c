// SPDX-License-Identifier: Apache-2.0
/*
 * svc_mappings: resolution of a call's mappings and the wait for them
 * (svc_mappings.h).
 */
#include "service/symbolize/svc_mappings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "service/core/svc_build_id.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct wait {
	svc_mappings *m;
	size_t map;
	svc_resolve_waiter *w;
};
_Static_assert(sizeof(struct wait) <= SVC_MAPPINGS_WAIT_BYTES, "SVC_MAPPINGS_WAIT_BYTES");

struct svc_mappings {
	struct event_base *base;
	svc_resolver *resolver;
	svc_lookup_mapping *maps;
	size_t n;
	struct wait *waits;
	size_t waiting;
	struct event *timer;
	void (*done)(void *arg);
	void *arg;
	uint32_t max_new_lookups;  /* 0: no bound */
};

svc_mappings *svc_mappings_create(struct event_base *base, svc_resolver *resolver,
				  svc_lookup_mapping *maps, size_t n)
{
	svc_mappings *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->waits = calloc(n ? n : 1, sizeof(*m->waits));
	if (!m->waits) {
		free(m);
		return NULL;
	}
	m->base = base;
	m->resolver = resolver;
	m->maps = maps;
	m->n = n;
	return m;
}

void svc_mappings_destroy(svc_mappings *m)
{
	if (!m)
		return;
	if (m->timer)
		event_free(m->timer);
	for (size_t i = 0; i < m->n; i++) {
		if (m->waits[i].w)
			svc_resolver_cancel(m->resolver, m->waits[i].w);
		svc_resolver_release(m->resolver, m->maps[i].entry);
		m->maps[i].entry = NULL;
	}
	free(m->waits);
	free(m);
}

static void apply_resolution(svc_lookup_mapping *m, svc_resolution *res)
{
	switch (res->status) {
	case SVC_RESOLVE_OK:
		m->status = STATUS(OK);
		m->entry = res->entry;
		return;
	case SVC_RESOLVE_NOT_FOUND:
		m->status = STATUS(NOT_FOUND);
		break;
	case SVC_RESOLVE_NO_SYMBOLS:
		m->status = STATUS(NO_SYMBOLS);
		break;
	case SVC_RESOLVE_TOO_LARGE:
		m->status = STATUS(TOO_LARGE);
		break;
	default:
		m->status = STATUS(ERROR);
		m->retry_after_ms = 5000;
		break;
	}
	snprintf(m->error, sizeof(m->error), "%s", res->error);
}

static void finish(svc_mappings *m)
{
	if (m->timer)
		event_del(m->timer);
	m->done(m->arg);  /* may destroy m */
}

static void resolved_cb(void *arg, svc_resolution *res)
{
	struct wait *cw = arg;
	svc_mappings *m = cw->m;
	cw->w = NULL;
	apply_resolution(&m->maps[cw->map], res);
	if (--m->waiting == 0)
		finish(m);
}

/* What is unresolved is PENDING, its work going on. */
static void give_up(svc_mappings *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct wait *cw = &m->waits[i];
		if (!cw->w)
			continue;
		svc_lookup_mapping *lm = &m->maps[i];
		const char *stage = svc_resolver_waiter_stage(cw->w);
		lm->status = STATUS(PENDING);
		snprintf(lm->error, sizeof(lm->error), "%s", stage);
		lm->retry_after_ms = strstr(stage, "fetch") ? 1000 : 500;
		svc_resolver_cancel(m->resolver, cw->w);
		cw->w = NULL;
	}
	m->waiting = 0;
}

void svc_mappings_stop(svc_mappings *m)
{
	if (!m->waiting)
		return;
	give_up(m);
	finish(m);
}

bool svc_mappings_waiting(const svc_mappings *m)
{
	return m->waiting != 0;
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_mappings_stop(arg);
}

/* Why a mapping cannot be resolved; NULL when it can. */
static const char *check(const Symbolizer__V1__Mapping *pm, sym_build_id *id)
{
	const char *bad = svc_build_id_check(pm->build_id, id);
	if (!bad && (unsigned)pm->address_kind > SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_SECTION)
		bad = "address_kind is not one of ELF, RUNTIME, FILE_OFFSET, SECTION";
	if (!bad && pm->section && strlen(pm->section) > 255)
		bad = "section name longer than 255 bytes";
	if (!bad && pm->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME &&
	    pm->memory_limit != 0 && pm->memory_limit <= pm->memory_start)
		bad = "memory_limit must be above memory_start";
	return bad;
}

void svc_mappings_bound_new_lookups(svc_mappings *m, uint32_t max)
{
	m->max_new_lookups = max;
}

/* A build ID nothing is known of, past the call's bound on new lookups. */
static bool over_new_lookups(svc_mappings *m, const sym_build_id *id, uint32_t *started)
{
	if (!m->max_new_lookups || !svc_resolver_is_new(m->resolver, id))
		return false;
	if (*started >= m->max_new_lookups)
		return true;
	(*started)++;
	return false;
}

bool svc_mappings_start(svc_mappings *m, int64_t wait_ms, void (*done)(void *arg), void *arg)
{
	uint32_t started = 0;
	m->done = done;
	m->arg = arg;
	for (size_t i = 0; i < m->n; i++) {
		svc_lookup_mapping *lm = &m->maps[i];
		if (lm->skip)
			continue;
		const char *bad = check(lm->pb, &lm->id);
		if (bad) {
			lm->status = STATUS(INVALID);
			snprintf(lm->error, sizeof(lm->error), "%s", bad);
			continue;
		}
		if (over_new_lookups(m, &lm->id, &started)) {
			lm->status = STATUS(PENDING);
			snprintf(lm->error, sizeof(lm->error),
				 "not looked up yet: this call started %u new lookups "
				 "(--max-new-lookups-per-call); ask again",
				 m->max_new_lookups);
			lm->retry_after_ms = 1000;
			continue;
		}
		svc_resolution now;
		m->waits[i].m = m;
		m->waits[i].map = i;
		svc_resolve_waiter *w =
			svc_resolver_resolve(m->resolver, &lm->id, resolved_cb, &m->waits[i], &now);
		if (w) {
			m->waits[i].w = w;
			m->waiting++;
		} else {
			apply_resolution(lm, &now);
		}
	}
	if (m->waiting == 0)
		return true;
	m->timer = evtimer_new(m->base, timer_cb, m);
	struct timeval tv = {(time_t)(wait_ms / 1000), (suseconds_t)((wait_ms % 1000) * 1000)};
	if (!m->timer || evtimer_add(m->timer, &tv) != 0) {
		give_up(m);
		return true;
	}
	return false;
}
