// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp: the SymbolizeOTLP method (svc_otlp.h) as the steps of the method
 * lifecycle (svc_rpc_flow), as SymbolizeProfile: decode and check the
 * request, resolve and wait for the mappings its unsymbolized locations use,
 * fill and pack.
 */
#include "service/otlp/svc_otlp.h"
#include "service/otlp/svc_otlp_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/base_arena.h"
#include "base/base_expo.h"
#include "service/otlp/svc_otlp_forward.h"
#include "service/rpc/svc_rpc_flow.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_mappings.h"

struct svc_otlp {
	svc_otlp_options o;
	svc_rpc_flow_conf flow;
	svc_rpc_flow_conf export_flow;  /* waits at most --otlp-max-wait */
	svc_otlp_fwd *fwd;              /* --otlp-forward (NULL: none) */
	uint64_t requests, symbolized, unsymbolized, frames; /* loop thread */
	uint64_t received, enriched;    /* Export */
};

struct call {
	svc_rpc_flow fl;             /* first (svc_rpc_flow) */
	base_arena arena;
	svc_otlp_doc doc;
	svc_lookup_mapping *maps;    /* one per mapping_table row */
	Symbolizer__V1__Mapping *pbs;
	svc_mappings *resolve;
	svc_otlp_fill_stats st;
	bool export;                 /* Export: the enriched request is forwarded */
	uint8_t *fwd_buf;            /* SVC_OTLP_FWD_HEADROOM, then the packed request */
	size_t fwd_len;
};

svc_otlp *svc_otlp_create(const svc_otlp_options *o, svc_error *err)
{
	svc_otlp *s = calloc(1, sizeof(*s));
	if (!s)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), NULL;
	s->o = *o;
	s->flow = (svc_rpc_flow_conf){o->pool, o->default_wait_ms, o->max_wait_ms};
	s->export_flow = (svc_rpc_flow_conf){o->pool, o->export_wait_ms, o->export_wait_ms};
	if (o->forward_url && *o->forward_url) {
		svc_otlp_fwd_options fo = {
			.base = o->base, .url = o->forward_url, .queue_bytes = o->queue_bytes,
			.user_agent = o->user_agent,
		};
		if (!(s->fwd = svc_otlp_fwd_create(&fo, err))) {
			free(s);
			return NULL;
		}
	}
	s->o.forward_url = NULL;  /* the caller's string */
	return s;
}

void svc_otlp_destroy(svc_otlp *s)
{
	if (!s)
		return;
	svc_otlp_fwd_destroy(s->fwd);
	free(s);
}

static svc_otlp *so_of(const struct call *c)
{
	return c->fl.method;
}

static void release(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_mappings_destroy(c->resolve);
	free(c->maps);
	free(c->pbs);
	svc_otlp_doc_release(&c->doc);
	base_arena_deinit(&c->arena);
	free(c->fwd_buf);
}

static bool decode(svc_rpc_flow *fl, const uint8_t *body, size_t len)
{
	struct call *c = (struct call *)fl;
	svc_otlp *so = so_of(c);
	const svc_otlp_options *o = &so->o;
	svc_otlp_limits lim = {o->max_decoded_bytes, o->max_mappings, o->max_locations};
	c->export = fl->conf == &so->export_flow;  /* the receiver's (Export), not SymbolizeOTLP */
	if (c->export)
		so->received++;
	base_arena_init(&c->arena, o->max_decoded_bytes);
	return svc_otlp_decode(body, len, &lim, &c->doc, &fl->err);
}

/* The mappings to resolve: those with an identity that unsymbolized
 * locations use (row 0 is the null mapping by the spec's rule). */
static bool prepare(struct call *c)
{
	otlp_dict *d = c->doc.dict;
	size_t n = d ? d->n_mapping_table : 0;
	c->maps = calloc(n ? n : 1, sizeof(*c->maps));
	c->pbs = calloc(n ? n : 1, sizeof(*c->pbs));
	if (!c->maps || !c->pbs)
		return false;
	for (size_t i = 0; i < n; i++) {
		Symbolizer__V1__Mapping *m = &c->pbs[i];
		symbolizer__v1__mapping__init(m);
		m->build_id = (char *)(c->doc.id_text[i] ? c->doc.id_text[i] : "");
		m->build_id_kind = (char *)(c->doc.id_kind[i] ? c->doc.id_kind[i] : "");
		m->memory_start = d->mapping_table[i]->memory_start;
		m->memory_limit = d->mapping_table[i]->memory_limit;
		m->file_offset = d->mapping_table[i]->file_offset;
		m->address_kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF;
		c->maps[i].pb = m;
		c->maps[i].skip = true;
	}
	for (size_t i = 0; d && i < d->n_location_table; i++) {
		const otlp_location *l = d->location_table[i];
		int32_t mi = l->mapping_index;
		if (mi > 0 && l->n_lines == 0 && c->doc.id_text[mi])
			c->maps[mi].skip = false;
	}
	svc_otlp *so = so_of(c);
	c->resolve = svc_mappings_create(so->o.base, so->o.resolver, c->maps, n, so->o.max_new_lookups);
	return c->resolve != NULL;
}

static svc_rpc_flow_wait wait_mappings(svc_rpc_flow *fl, int64_t budget_ms, uint64_t *held)
{
	struct call *c = (struct call *)fl;
	if (!prepare(c)) {
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory");
		return SVC_RPC_FLOW_FAILED;
	}
	size_t n = c->doc.dict ? c->doc.dict->n_mapping_table : 0;
	*held = c->doc.alloc.used + n * (sizeof(*c->maps) + SVC_MAPPINGS_WAIT_BYTES);
	return svc_mappings_wait(c->resolve, fl, budget_ms);
}

static void stop(svc_rpc_flow *fl)
{
	svc_mappings_stop(((struct call *)fl)->resolve);
}

/* Export: the enriched request packed for the forwarder (none: let go). */
static bool pack_forward(struct call *c)
{
	if (!so_of(c)->fwd)
		return true;
	otlp_request *r = c->doc.req;
	c->fwd_len =
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
			r);
	if (!(c->fwd_buf = malloc(SVC_OTLP_FWD_HEADROOM + c->fwd_len)))
		return false;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
		r, c->fwd_buf + SVC_OTLP_FWD_HEADROOM);
	return true;
}

/* The enriched request packed into the response's body. */
static bool pack(struct call *c)
{
	if (c->export)  /* an ExportProfilesServiceResponse: empty */
		return pack_forward(c);
	otlp_request *r = c->doc.req;
	size_t size =
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
			r);
	struct evbuffer *body = svc_rpc_call_response(c->fl.rpc);
	if (size == 0)
		return true;
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(body, (ev_ssize_t)size, &v, 1) != 1)
		return false;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
		r, v.iov_base);
	v.iov_len = size;
	return evbuffer_commit_space(body, &v, 1) == 0;
}

static void work(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_otlp_undo undo;
	if (svc_otlp_fill(&c->doc, c->maps, &c->arena, &c->st, &undo, &fl->err) && !pack(c))
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory packing the profiles");
	svc_otlp_unfill(&c->doc, &undo);
}

static bool on_worker(svc_rpc_flow *fl)
{
	const struct call *c = (const struct call *)fl;
	return c->doc.dict && c->doc.dict->n_location_table >= 256;
}

/* Export: into the forward queue, or resource_exhausted (503, retry later). */
static void before_answer(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_otlp *so = so_of(c);
	if (!c->export || !so->fwd)
		return;
	if (!svc_otlp_fwd_push(so->fwd, c->fwd_buf, c->fwd_len)) {
		svc_error_set(&fl->err, SVC_E_OVERLOADED,
			      "the OTLP forward queue is full (%" PRIu64 " bytes of --otlp-queue-bytes "
			      "%" PRIu64 "); retry later", svc_otlp_fwd_queued(so->fwd),
			      so->o.queue_bytes);
		return;
	}
	c->fwd_buf = NULL;  /* the queue's */
}

static void answered(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_otlp *so = so_of(c);
	if (c->export)
		so->enriched++;
	else
		so->requests++;
	so->symbolized += c->st.symbolized;
	so->unsymbolized += c->st.unsymbolized;
	so->frames += c->st.frames;
}

static const svc_rpc_flow_ops otlp_ops = {
	.call_size = sizeof(struct call),
	.decode = decode,
	.wait = wait_mappings,
	.stop = stop,
	.on_worker = on_worker,
	.work = work,
	.before_answer = before_answer,
	.answered = answered,
	.release = release,
};

void svc_otlp_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_otlp *so = ctx;
	svc_rpc_flow_run(rpc, &otlp_ops, &so->flow, so);
}

void svc_otlp_export_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_otlp *so = ctx;
	svc_rpc_flow_run(rpc, &otlp_ops, &so->export_flow, so);
}

void svc_otlp_render_metrics(const svc_otlp *s, base_buf *b)
{
	base_expo_family(b, "symbolizer_otlp_requests_total", "counter",
			 "SymbolizeOTLP requests answered.");
	base_expo_u64(b, "symbolizer_otlp_requests_total", "", s->requests);
	base_expo_family(b, "symbolizer_otlp_locations_total", "counter",
			 "OTLP locations without lines whose mapping resolved, by whether they got lines.");
	base_expo_u64(b, "symbolizer_otlp_locations_total", "result=\"symbolized\"", s->symbolized);
	base_expo_u64(b, "symbolizer_otlp_locations_total", "result=\"unsymbolized\"",
		      s->unsymbolized);
	base_expo_family(b, "symbolizer_otlp_frames_total", "counter",
			 "Lines (inlined frames included) added to OTLP profiles.");
	base_expo_u64(b, "symbolizer_otlp_frames_total", "", s->frames);
	base_expo_family(b, "symbolizer_otlp_received_total", "counter",
			 "OTLP profiles Export requests received (OTLP/HTTP and OTLP/gRPC).");
	base_expo_u64(b, "symbolizer_otlp_received_total", "", s->received);
	base_expo_family(b, "symbolizer_otlp_enriched_total", "counter",
			 "OTLP profiles Export requests enriched and accepted.");
	base_expo_u64(b, "symbolizer_otlp_enriched_total", "", s->enriched);
	if (s->fwd)
		svc_otlp_fwd_render_metrics(s->fwd, b);
}

const svc_otlp_options *svc_otlp_options_of(const svc_otlp *s)
{
	return &s->o;
}
