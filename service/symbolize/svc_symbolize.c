// SPDX-License-Identifier: Apache-2.0
/*
 * svc_symbolize: the Symbolize method (svc_symbolize.h), as the steps of the
 * method lifecycle (svc_rpc_flow: decode, limit, wait, work, encode).
 *
 * decode: the body into a per-call arena, the batch checked against the
 * caps (before decoding too, from its shape). wait: every mapping resolved
 * through the resolver's resolve-and-wait service (svc_mappings on
 * svc_resolve_set) within the wait budget (Options.max_wait_ms or the
 * default, within Connect-Timeout-Ms); the unresolved ones answer PENDING
 * with a retry hint while their work goes on. work: every location looked
 * up and the response built with a string table and a function table (each
 * distinct string and function once; svc_lookup), on a worker for big
 * batches; the flow packs and compresses it and answers.
 */
#include "service/symbolize/svc_symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"
#include "base/base_expo.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_mappings.h"
#include "service/symbolize/svc_request.h"
#include "service/rpc/svc_rpc_flow.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

enum { MAP_STATUSES = 8 };  /* MappingResult.Status values */

struct svc_symbolize {
	svc_symbolize_options o;
	svc_rpc_flow_conf flow;
	/* Metrics (loop thread). */
	uint64_t frames;                   /* lines sent (inline frames included) */
	uint64_t locations, locations_symbolized;
	uint64_t mappings[MAP_STATUSES];   /* per-mapping answers by status */
	uint64_t worker_lookups;           /* calls whose lookups ran on a worker */
};

struct call {
	svc_rpc_flow fl;            /* first: the call's lifecycle (svc_rpc_flow) */
	base_arena arena;
	Symbolizer__V1__SymbolizeRequest *msg;
	svc_request_locations locs;  /* its Locations (svc_request_decode's arrays) */
	svc_lookup_mapping *maps;
	svc_mappings *resolve;      /* the mappings' resolution and the wait for it */
	/* Results of the lookup phase (svc_lookup). */
	svc_lookup_result out;
};

svc_symbolize *svc_symbolize_create(const svc_symbolize_options *o)
{
	svc_symbolize *sy = calloc(1, sizeof(*sy));
	if (!sy)
		return NULL;
	sy->o = *o;
	sy->flow = (svc_rpc_flow_conf){o->pool, o->default_wait_ms, o->max_wait_ms};
	return sy;
}

void svc_symbolize_destroy(svc_symbolize *sy)
{
	free(sy);
}

static svc_symbolize *sy_of(const struct call *c)
{
	return c->fl.method;
}

/* ---- the steps of a call (svc_rpc_flow) ---- */

static void release(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_mappings_destroy(c->resolve);
	free(c->maps);
	base_arena_deinit(&c->arena);
}

static void answered(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_symbolize *sy = sy_of(c);
	sy->frames += c->out.frames;
	sy->locations += c->locs.n;
	sy->locations_symbolized += c->out.symbolized;
	for (size_t i = 0; i < c->msg->n_mappings; i++)
		if ((unsigned)c->maps[i].status < MAP_STATUSES)
			sy->mappings[c->maps[i].status]++;
}

static void work(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	const svc_rpc_json *json = svc_rpc_call_json_out(fl->rpc);
	svc_lookup_run(c->msg, &c->locs, c->maps, &c->arena, sy_of(c)->o.responses, json,
		       svc_rpc_call_response(fl->rpc), &c->out);
	if (json && c->out.err.code == SVC_OK)
		svc_rpc_call_response_is_json(fl->rpc);   /* not transcoded again */
	fl->err = c->out.err;
}

static bool on_worker(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_symbolize *sy = sy_of(c);
	if (c->locs.n < sy->o.worker_lookup_min)
		return false;
	sy->worker_lookups++;
	return true;
}

static void stop(svc_rpc_flow *fl)
{
	svc_mappings_stop(((struct call *)fl)->resolve);  /* resumes: may free the call */
}

static svc_rpc_flow_wait wait_mappings(svc_rpc_flow *fl, int64_t budget_ms, uint64_t *held)
{
	struct call *c = (struct call *)fl;
	svc_symbolize *sy = sy_of(c);
	size_t n = c->msg->n_mappings;
	c->maps = calloc(n ? n : 1, sizeof(*c->maps));
	if (c->maps)
		c->resolve = svc_mappings_create(sy->o.base, sy->o.resolver, c->maps, n,
						 sy->o.max_new_lookups);
	if (!c->resolve) {
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory");
		return SVC_RPC_FLOW_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		c->maps[i].pb = c->msg->mappings[i];
	/* What the call holds while it waits: the decoded request, mostly. */
	*held = c->arena.used + n * (sizeof(*c->maps) + SVC_MAPPINGS_WAIT_BYTES);
	return svc_mappings_wait(c->resolve, fl, budget_ms);
}

static bool over_limits(struct call *c, size_t n_mappings, size_t n_locations)
{
	const svc_symbolize_options *o = &sy_of(c)->o;
	if (n_mappings <= o->max_mappings && n_locations <= o->max_locations)
		return false;
	svc_error_set(&c->fl.err, SVC_E_TOO_LARGE,
		      "batch of %zu mappings and %zu locations is over the limits (%u, %u)",
		      n_mappings, n_locations, o->max_mappings, o->max_locations);
	return true;
}

/* The request into c->msg; false: c->fl.err says why. */
static bool decode(svc_rpc_flow *fl, const uint8_t *body, size_t len)
{
	struct call *c = (struct call *)fl;
	svc_lookup_result_init(&c->out);
	/* An oversized batch is refused before it takes memory to decode. */
	svc_request_shape shape;
	svc_request_count(body, len, &shape);
	if (over_limits(c, shape.n_mappings, shape.n_locations))
		return false;
	/* The decoded request and the response live in the arena; its cap bounds both. */
	base_arena_init(&c->arena, 64u * 1024 * 1024 + 24 * len);
	c->msg = svc_request_decode(body, len, &shape, &c->arena, &c->locs);
	if (!c->msg) {
		bool full = c->arena.cap && c->arena.used * 2 > c->arena.cap;
		if (full)
			svc_error_set(&fl->err, SVC_E_TOO_LARGE, "request too large to decode");
		else
			svc_error_set(&fl->err, SVC_E_INVALID,
				      "request body is not a valid symbolizer.v1.SymbolizeRequest");
		return false;
	}
	Symbolizer__V1__SymbolizeRequest *r = c->msg;
	if (over_limits(c, r->n_mappings, c->locs.n))
		return false;
	for (size_t i = 0; i < c->locs.n; i++) {
		if (c->locs.mapping_index[i] >= r->n_mappings) {
			svc_error_set(&fl->err, SVC_E_INVALID,
				      "locations[%zu].mapping_index %u: the request has %zu mappings",
				      i, c->locs.mapping_index[i], r->n_mappings);
			return false;
		}
	}
	fl->asked_wait_ms = r->options ? r->options->max_wait_ms : 0;
	return true;
}

static const svc_rpc_flow_ops symbolize_ops = {
	.call_size = sizeof(struct call),
	.decode = decode,
	.wait = wait_mappings,
	.stop = stop,
	.on_worker = on_worker,
	.work = work,
	.answered = answered,
	.release = release,
};

void svc_symbolize_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_symbolize *sy = ctx;
	svc_rpc_flow_run(rpc, &symbolize_ops, &sy->flow, sy);
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
