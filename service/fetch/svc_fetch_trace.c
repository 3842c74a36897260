// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_trace: each source's last outcome per build ID (svc_fetch_impl.h),
 * so that the status page of a build ID can say which directory or upstream was
 * asked, when, and what it answered. Generic over sources: a row per source
 * slot (the fetcher's sources in order, then its upstreams) and per kind
 * (debuginfo, executable), so a new kind of source slots in by being one more
 * source. Bounded: the last SVC_FETCH_TRACE_MAX build IDs, the oldest
 * forgotten first. Also what the answers teach about a server: whether it
 * serves executables it has no debug info for. Loop thread only.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_clock.h"

static const char *const outcome_names[] = {"none", "found", "not_found", "too_large",
					    "error", "rejected", "skipped", "pending"};

const char *svc_source_outcome_name(svc_source_outcome_kind k)
{
	return (unsigned)k < sizeof(outcome_names) / sizeof(outcome_names[0]) ? outcome_names[k]
									      : "unknown";
}

bool svc_trace_init(svc_fetch_trace *t, size_t cap)
{
	memset(t, 0, sizeof(*t));
	svc_trace_map_init(&t->map);
	t->cap = cap;
	t->ring = calloc(cap ? cap : 1, sizeof(*t->ring));
	return t->ring != NULL;
}

void svc_trace_deinit(svc_fetch_trace *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->ring[(t->head + i) % t->cap]);
	free(t->ring);
	svc_trace_map_deinit(&t->map);
	memset(t, 0, sizeof(*t));
}

static size_t n_slots(const svc_fetcher *f)
{
	return f->n_sources + f->n_ups;
}

/* The record of id, made (the oldest forgotten when full) when absent. */
static svc_trace_rec *rec_get(svc_fetcher *f, const sym_build_id *id)
{
	svc_fetch_trace *t = &f->trace;
	svc_trace_rec **slot = svc_trace_map_get(&t->map, &id);
	if (slot)
		return *slot;
	if (!t->cap)
		return NULL;
	svc_trace_rec *r = calloc(1, sizeof(*r) + 2 * n_slots(f) * sizeof(svc_trace_row));
	if (!r)
		return NULL;
	r->id = *id;
	if (t->len == t->cap) {
		svc_trace_rec *old = t->ring[t->head];
		svc_trace_key k = &old->id;
		svc_trace_map_remove(&t->map, &k);
		free(old);
		t->head = (t->head + 1) % t->cap;
		t->len--;
	}
	svc_trace_key k = &r->id;
	if (!(slot = svc_trace_map_put(&t->map, &k, NULL))) {
		free(r);
		return NULL;
	}
	*slot = r;
	t->ring[(t->head + t->len) % t->cap] = r;
	t->len++;
	return r;
}

void svc_trace_note(svc_fetch_flight *fl, size_t slot, svc_source_outcome_kind oc,
		    const char *error)
{
	svc_fetcher *f = fl->f;
	if (slot >= n_slots(f))
		return;
	svc_trace_rec *r = rec_get(f, &fl->base.id);
	if (!r)
		return;
	svc_trace_row *row = &r->rows[2 * slot + (fl->want == STOR_KIND_EXECUTABLE)];
	row->at_ms = base_real_ms();
	row->outcome = (uint8_t)oc;
	/* Cut to the row's size: the first words say the most. */
	snprintf(row->error, sizeof(row->error), "%.*s", (int)sizeof(row->error) - 1,
		 error ? error : "");
}

/* Whether the server serves executables the debuginfo walk did not find
 * (svc_fetch_walk.c asks it for executables only while that may be). */
static void learn_executables(svc_fetch_flight *fl, const svc_provider_answer *a)
{
	svc_upstream_stats *st = &fl->f->ups[fl->server].st;
	if (fl->want != STOR_KIND_EXECUTABLE || !a->answered)
		return;
	if (a->cls == SVC_ANSWER_FOUND) {
		st->serves_executables = true;
		st->executable_misses = 0;
	} else if (a->cls == SVC_ANSWER_NOT_FOUND && st->executable_misses < UINT32_MAX) {
		st->executable_misses++;
	}
}

void svc_trace_answer(svc_fetch_flight *fl, const svc_provider_answer *a)
{
	size_t slot = fl->f->n_sources + fl->server;
	learn_executables(fl, a);
	switch (a->cls) {
	case SVC_ANSWER_FOUND: break;  /* noted when its file is checked */
	case SVC_ANSWER_NOT_FOUND: svc_trace_note(fl, slot, SVC_SOURCE_NOT_FOUND, a->why); break;
	case SVC_ANSWER_TOO_LARGE: svc_trace_note(fl, slot, SVC_SOURCE_TOO_LARGE, a->why); break;
	default: svc_trace_note(fl, slot, SVC_SOURCE_ERROR, a->why); break;
	}
}

/* The name of a slot: an upstream's URL, or the source's own name (as the
 * status page has always shown them). */
static void slot_names(const svc_fetcher *f, size_t slot, svc_source_outcome *o)
{
	if (slot >= f->n_sources) {
		o->source = f->ups[slot - f->n_sources].url;
		o->type = "upstream";
		return;
	}
	o->type = f->sources[slot]->ops->name;
	o->source = o->type;
}

size_t svc_fetcher_describe(const svc_fetcher *f, const sym_build_id *id, svc_source_outcome *out,
			    size_t max, bool *in_flight)
{
	*in_flight = svc_fetch_flight_any(f, id);
	svc_trace_rec *const *slot = svc_trace_map_get(&f->trace.map, &id);
	if (!slot)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < 2 * n_slots(f) && n < max; i++) {
		const svc_trace_row *row = &(*slot)->rows[i];
		if (!row->at_ms)
			continue;
		svc_source_outcome *o = &out[n++];
		memset(o, 0, sizeof(*o));
		slot_names(f, i / 2, o);
		o->want = i % 2 ? "executable" : "debuginfo";
		o->outcome = (svc_source_outcome_kind)row->outcome;
		snprintf(o->error, sizeof(o->error), "%s", row->error);
		o->at_ms = row->at_ms;
	}
	return n;
}
