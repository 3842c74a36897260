// SPDX-License-Identifier: Apache-2.0
/*
 * svc_symbolize: the Symbolize method (svc_symbolize.h).
 *
 * One call per request: it decodes the body into a per-call arena, validates
 * the batch, then resolves every mapping (svc_resolver: memory cache, store,
 * sources, index build). It waits for the unresolved ones until its wait
 * budget (Options.max_wait_ms or the default, within Connect-Timeout-Ms) runs
 * out; those answer PENDING with a retry hint while their work goes on. Then
 * it looks every location up and builds the response with a string table and
 * a function table (each distinct string and function once), packs and
 * compresses it (svc_rpc_call_encode) and answers. Big batches do the lookups
 * and the packing on a worker thread.
 */
#include "service/symbolize/svc_symbolize.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"
#include "base/base_expo.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_mappings.h"
#include "service/symbolize/svc_request.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

enum { MAP_STATUSES = 8 };  /* MappingResult.Status values */

struct svc_symbolize {
	svc_symbolize_options o;
	/* Metrics (loop thread). */
	uint64_t frames;                   /* lines sent (inline frames included) */
	uint64_t locations, locations_symbolized;
	uint64_t mappings[MAP_STATUSES];   /* per-mapping answers by status */
	uint64_t worker_lookups;           /* calls whose lookups ran on a worker */
};

struct call {
	svc_symbolize *sy;
	svc_rpc_call *rpc;
	base_arena arena;
	Symbolizer__V1__SymbolizeRequest *msg;
	svc_lookup_mapping *maps;
	svc_mappings *resolve;      /* the mappings' resolution and the wait for it */
	bool on_worker;
	/* Results of the lookup phase (svc_lookup). */
	svc_lookup_result out;
};

svc_symbolize *svc_symbolize_create(const svc_symbolize_options *o)
{
	svc_symbolize *sy = calloc(1, sizeof(*sy));
	if (sy)
		sy->o = *o;
	return sy;
}

void svc_symbolize_destroy(svc_symbolize *sy)
{
	free(sy);
}

/* ---- end of a call ---- */

/* After the answer: lets go of what the call holds. */
static void call_free(struct call *c)
{
	svc_mappings_destroy(c->resolve);
	free(c->maps);
	base_arena_deinit(&c->arena);
	free(c);
}

static void finish_error(struct call *c, const svc_error *err)
{
	svc_rpc_call_fail(c->rpc, err);
	call_free(c);
}

static void finish_errorf(struct call *c, svc_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void finish_errorf(struct call *c, svc_errc code, const char *fmt, ...)
{
	svc_error err;
	va_list ap;
	va_start(ap, fmt);
	svc_error_vset(&err, code, fmt, ap);
	va_end(ap);
	finish_error(c, &err);
}

static void finish_ok(struct call *c)
{
	svc_symbolize *sy = c->sy;
	/* Counted when answered (not when the deadline passed first). */
	if (svc_rpc_call_ok(c->rpc)) {
		sy->frames += c->out.frames;
		sy->locations += c->msg->n_locations;
		sy->locations_symbolized += c->out.symbolized;
		for (size_t i = 0; i < c->msg->n_mappings; i++)
			if ((unsigned)c->maps[i].status < MAP_STATUSES)
				sy->mappings[c->maps[i].status]++;
	}
	call_free(c);
}

/* ---- lookups ---- */

static void lookup_work(void *arg)
{
	struct call *c = arg;
	svc_lookup_run(c->msg, c->maps, &c->arena, c->sy->o.responses,
		       svc_rpc_call_response(c->rpc), &c->out);
	if (c->out.err.code == SVC_OK && !svc_rpc_call_encode(c->rpc))
		svc_error_set(&c->out.err, SVC_E_NOMEM, "out of memory packing the response");
}

static void lookup_done(void *arg, bool cancelled)
{
	struct call *c = arg;
	c->on_worker = false;
	if (cancelled) {
		finish_errorf(c, SVC_E_SHUTTING_DOWN, "server shutting down");
		return;
	}
	if (c->out.err.code != SVC_OK) {
		finish_error(c, &c->out.err);
		return;
	}
	finish_ok(c);
}

static void lookup_start(struct call *c)
{
	svc_symbolize *sy = c->sy;
	if (sy->o.pool && c->msg->n_locations >= sy->o.worker_lookup_min) {
		c->on_worker = true;
		sy->worker_lookups++;
		if (svc_pool_submit(sy->o.pool, c, lookup_work, lookup_done))
			return;
		c->on_worker = false;
	}
	lookup_work(c);
	lookup_done(c, false);
}

/* ---- mapping resolution ---- */

static void resolved(void *arg)
{
	lookup_start(arg);
}

/* On shutdown: a waiting call answers now. */
static void stop_hook(void *arg)
{
	struct call *c = arg;
	if (c->resolve && svc_mappings_waiting(c->resolve))
		svc_mappings_stop(c->resolve);  /* may free c */
}

/* ---- request ---- */

static int64_t wait_budget_ms(struct call *c)
{
	const Symbolizer__V1__Options *opt = c->msg->options;
	return svc_rpc_call_wait_budget_ms(c->rpc, opt ? opt->max_wait_ms : 0,
					   c->sy->o.default_wait_ms, c->sy->o.max_wait_ms);
}

static bool over_limits(struct call *c, size_t n_mappings, size_t n_locations)
{
	const svc_symbolize_options *o = &c->sy->o;
	if (n_mappings <= o->max_mappings && n_locations <= o->max_locations)
		return false;
	finish_errorf(c, SVC_E_TOO_LARGE,
		      "batch of %zu mappings and %zu locations is over the limits (%u, %u)",
		      n_mappings, n_locations, o->max_mappings, o->max_locations);
	return true;
}

/* The request into c->msg; false when the call was answered (an error). */
static bool decode(struct call *c)
{
	size_t len;
	const uint8_t *body = svc_rpc_call_body(c->rpc, &len);
	/* An oversized batch is refused before it takes memory to decode. */
	svc_request_shape shape;
	svc_request_count(body, len, &shape);
	if (over_limits(c, shape.n_mappings, shape.n_locations))
		return false;
	/* The decoded request and the response live in the arena; its cap bounds both. */
	base_arena_init(&c->arena, 64u * 1024 * 1024 + 24 * len);
	c->msg = svc_request_decode(body, len, &shape, &c->arena);
	svc_rpc_call_drop_body(c->rpc);
	if (!c->msg) {
		bool full = c->arena.cap && c->arena.used * 2 > c->arena.cap;
		if (full)
			finish_errorf(c, SVC_E_TOO_LARGE, "request too large to decode");
		else
			finish_errorf(c, SVC_E_INVALID,
				      "request body is not a valid symbolizer.v1.SymbolizeRequest");
		return false;
	}
	Symbolizer__V1__SymbolizeRequest *r = c->msg;
	if (over_limits(c, r->n_mappings, r->n_locations))
		return false;
	for (size_t i = 0; i < r->n_locations; i++) {
		if (r->locations[i]->mapping_index >= r->n_mappings) {
			finish_errorf(c, SVC_E_INVALID,
				      "locations[%zu].mapping_index %u: the request has %zu mappings",
				      i, r->locations[i]->mapping_index, r->n_mappings);
			return false;
		}
	}
	return true;
}

void svc_symbolize_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_symbolize *sy = ctx;
	struct call *c = calloc(1, sizeof(*c));
	if (!c) {
		svc_rpc_call_failf(rpc, SVC_E_NOMEM, "out of memory");
		return;
	}
	c->sy = sy;
	c->rpc = rpc;
	svc_lookup_result_init(&c->out);
	svc_rpc_call_on_stop(rpc, stop_hook, c);
	if (!decode(c))
		return;
	size_t n = c->msg->n_mappings;
	c->maps = calloc(n ? n : 1, sizeof(*c->maps));
	if (c->maps)
		c->resolve = svc_mappings_create(sy->o.base, sy->o.resolver, c->maps, n);
	if (!c->resolve) {
		finish_errorf(c, SVC_E_NOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		c->maps[i].pb = c->msg->mappings[i];
	svc_mappings_bound_new_lookups(c->resolve, sy->o.max_new_lookups);
	if (svc_mappings_start(c->resolve, wait_budget_ms(c), resolved, c)) {
		lookup_start(c);
		return;
	}
	/* What the call holds while it waits: the decoded request, mostly. */
	uint64_t held = c->arena.used + n * (sizeof(*c->maps) + SVC_MAPPINGS_WAIT_BYTES);
	if (!svc_rpc_call_wait(rpc, held)) {
		/* The work goes on without it: a retry finds it done. */
		svc_rpc_call_fail_waiting(rpc, held);
		call_free(c);  /* the mappings stop waiting, without calling back */
	}
}

/* ---- metrics ---- */

static const char *const map_status_names[MAP_STATUSES] = {
	"unspecified", "ok", "not_found", "pending", "error", "no_symbols", "invalid", "too_large",
};

void svc_symbolize_render_metrics(const svc_symbolize *sy, base_buf *b)
{
	base_expo_family(b, "symbolizer_frames_symbolized_total", "counter",
			 "Frames (lines, inlined ones included) sent in Symbolize responses.");
	base_expo_u64(b, "symbolizer_frames_symbolized_total", "", sy->frames);
	base_expo_family(b, "symbolizer_locations_total", "counter",
			 "Locations asked for, by whether they got at least one line.");
	base_expo_u64(b, "symbolizer_locations_total", "result=\"symbolized\"",
		      sy->locations_symbolized);
	base_expo_u64(b, "symbolizer_locations_total", "result=\"unsymbolized\"",
		      sy->locations - sy->locations_symbolized);
	base_expo_family(b, "symbolizer_mappings_total", "counter",
			 "Mappings answered, by MappingResult status.");
	char labels[64];
	for (int i = 1; i < MAP_STATUSES; i++) {
		snprintf(labels, sizeof(labels), "status=\"%s\"", map_status_names[i]);
		base_expo_u64(b, "symbolizer_mappings_total", labels, sy->mappings[i]);
	}
	base_expo_family(b, "symbolizer_worker_lookups_total", "counter",
			 "Symbolize calls whose lookups ran on a worker thread.");
	base_expo_u64(b, "symbolizer_worker_lookups_total", "", sy->worker_lookups);
}
