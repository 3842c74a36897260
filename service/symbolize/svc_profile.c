// SPDX-License-Identifier: Apache-2.0
/*
 * svc_profile: the SymbolizeProfile method (svc_profile.h), as the steps of
 * the method lifecycle (svc_rpc_flow), like Symbolize: decode the profile,
 * wait for its mappings (svc_mappings on svc_resolve_set), fill and pack it.
 */
#include "service/symbolize/svc_profile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <zlib.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"
#include "base/base_expo.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_mappings.h"
#include "service/symbolize/svc_profile_decode.h"
#include "service/symbolize/svc_profile_fill.h"
#include "service/rpc/svc_rpc_flow.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct svc_profile {
	svc_profile_options o;
	svc_rpc_flow_conf flow;
	/* Metrics (loop thread): what answered calls did. */
	uint64_t locations_symbolized, locations_unsymbolized, frames;
};

struct call {
	svc_rpc_flow fl;               /* first: the call's lifecycle (svc_rpc_flow) */
	base_arena arena;
	bool no_inline, no_demangle;
	svc_profile_doc doc;
	svc_lookup_mapping *maps;      /* one per Profile.mapping */
	Symbolizer__V1__Mapping *pbs;  /* what svc_mappings checks and normalizes with */
	svc_mappings *resolve;
	svc_profile_fill_stats st;
};

svc_profile *svc_profile_create(const svc_profile_options *o)
{
	svc_profile *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->o = *o;
	sp->flow = (svc_rpc_flow_conf){o->pool, o->default_wait_ms, o->max_wait_ms};
	return sp;
}

void svc_profile_destroy(svc_profile *sp)
{
	free(sp);
}

static svc_profile *sp_of(const struct call *c)
{
	return c->fl.method;
}

static void release(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_mappings_destroy(c->resolve);
	free(c->maps);
	free(c->pbs);
	svc_profile_doc_release(&c->doc);
	base_arena_deinit(&c->arena);
}

/* ---- the answer ---- */

/* src gzipped into *out (malloc); false out of memory. */
static bool gzip_all(const uint8_t *src, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	size_t cap = deflateBound(&z, len) + 32;
	uint8_t *o = malloc(cap);
	bool ok = o != NULL;
	const uint8_t *p = src;
	size_t left = len;
	z.next_out = o;
	while (ok) {
		uInt chunk = left > (1u << 30) ? 1u << 30 : (uInt)left;
		z.next_in = (uint8_t *)p;
		z.avail_in = chunk;
		z.avail_out = (uInt)(cap - (size_t)(z.next_out - o));
		int rc = deflate(&z, chunk == left ? Z_FINISH : Z_NO_FLUSH);
		p += chunk - z.avail_in;
		left -= chunk - z.avail_in;
		if (rc == Z_STREAM_END)
			break;
		ok = rc == Z_OK || rc == Z_BUF_ERROR;
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	if (!ok)
		free(o);
	*out = ok ? o : NULL;
	return ok;
}

static Symbolizer__V1__MappingResult **mapping_results(struct call *c)
{
	size_t n = c->doc.p->n_mapping;
	Symbolizer__V1__MappingResult *r = base_arena_alloc(&c->arena, (n ? n : 1) * sizeof(*r));
	Symbolizer__V1__MappingResult **ptrs =
		base_arena_alloc(&c->arena, (n ? n : 1) * sizeof(*ptrs));
	if (!r || !ptrs)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const svc_lookup_mapping *m = &c->maps[i];
		uint32_t f = m->entry ? m->entry->info.flags : 0;
		symbolizer__v1__mapping_result__init(&r[i]);
		r[i].status = m->status;
		r[i].error = (char *)m->error;
		r[i].retry_after_ms = m->retry_after_ms;
		r[i].has_functions = (f & SYM_INDEX_HAS_FUNCTIONS) != 0;
		r[i].has_filenames = (f & SYM_INDEX_HAS_FILENAMES) != 0;
		r[i].has_line_numbers = (f & SYM_INDEX_HAS_LINE_NUMBERS) != 0;
		r[i].has_inline_frames = (f & SYM_INDEX_HAS_INLINE_FRAMES) != 0;
		ptrs[i] = &r[i];
	}
	return ptrs;
}

/* The profile packed (gzipped when the input was) into the response's body. */
static bool pack(struct call *c)
{
	Perftools__Profiles__Profile *p = c->doc.p;
	size_t len = perftools__profiles__profile__get_packed_size(p), glen = 0;
	uint8_t *buf = malloc(len ? len : 1), *gz = NULL;
	if (!buf)
		return false;
	perftools__profiles__profile__pack(p, buf);
	if (c->doc.gzipped && !gzip_all(buf, len, &gz, &glen)) {
		free(buf);
		return false;
	}
	Symbolizer__V1__SymbolizeProfileResponse resp;
	symbolizer__v1__symbolize_profile_response__init(&resp);
	resp.profile.data = gz ? gz : buf;
	resp.profile.len = gz ? glen : len;
	resp.n_mappings = p->n_mapping;
	resp.mappings = mapping_results(c);
	resp.locations_symbolized = c->st.symbolized;
	resp.locations_unsymbolized = c->st.unsymbolized;
	bool ok = resp.mappings != NULL;
	size_t size = ok ? symbolizer__v1__symbolize_profile_response__get_packed_size(&resp) : 0;
	struct evbuffer *body = svc_rpc_call_response(c->fl.rpc);
	struct evbuffer_iovec v;
	if (ok && size) {
		ok = evbuffer_reserve_space(body, (ev_ssize_t)size, &v, 1) == 1;
		if (ok) {
			symbolizer__v1__symbolize_profile_response__pack(&resp, v.iov_base);
			v.iov_len = size;
			ok = evbuffer_commit_space(body, &v, 1) == 0;
		}
	}
	free(buf);
	free(gz);
	return ok;
}

/* ---- lookups (on a worker for anything but a tiny profile) ---- */

static void work(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	if (!svc_profile_fill(&c->doc, c->maps, c->no_inline, c->no_demangle, &c->arena, &c->st,
			      &fl->err))
		return;
	if (!pack(c))
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory packing the profile");
}

static bool on_worker(svc_rpc_flow *fl)
{
	return ((struct call *)fl)->doc.p->n_location >= 256;
}

static void answered(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_profile *sp = sp_of(c);
	sp->locations_symbolized += c->st.symbolized;
	sp->locations_unsymbolized += c->st.unsymbolized;
	sp->frames += c->st.frames;
}

static void stop(svc_rpc_flow *fl)
{
	svc_mappings_stop(((struct call *)fl)->resolve);  /* resumes: may free the call */
}

/* ---- request ---- */

/* The mappings to resolve: those of the locations without lines. */
static bool prepare_mappings(struct call *c)
{
	const Perftools__Profiles__Profile *p = c->doc.p;
	size_t n = p->n_mapping ? p->n_mapping : 1;
	c->maps = calloc(n, sizeof(*c->maps));
	c->pbs = calloc(n, sizeof(*c->pbs));
	if (!c->maps || !c->pbs)
		return false;
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[i];
		Symbolizer__V1__Mapping *m = &c->pbs[i];
		symbolizer__v1__mapping__init(m);
		/* Build IDs in profiles are hex, sometimes upper case. */
		m->build_id = base_arena_strdup(&c->arena, p->string_table[pm->build_id]);
		if (!m->build_id)
			return false;
		for (char *s = m->build_id; *s; s++)
			*s = (char)tolower((unsigned char)*s);
		m->memory_start = pm->memory_start;
		m->memory_limit = pm->memory_limit;
		m->file_offset = pm->file_offset;
		m->address_kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME;
		c->maps[i].pb = m;
		c->maps[i].skip = true;
		snprintf(c->maps[i].error, sizeof(c->maps[i].error),
			 "no location of the mapping needs symbols");
	}
	for (size_t i = 0; i < p->n_location; i++) {
		uint32_t mi = c->doc.loc_mapping[i];
		if (mi && p->location[i]->n_line == 0 && c->maps[mi - 1].skip) {
			c->maps[mi - 1].skip = false;
			c->maps[mi - 1].error[0] = '\0';
		}
	}
	svc_profile *sp = sp_of(c);
	c->resolve = svc_mappings_create(sp->o.base, sp->o.resolver, c->maps, p->n_mapping,
					 sp->o.max_new_lookups);
	return c->resolve != NULL;
}

/* The request and its profile; false: c->fl.err says why. */
static bool decode(svc_rpc_flow *fl, const uint8_t *body, size_t len)
{
	struct call *c = (struct call *)fl;
	const svc_profile_options *o = &sp_of(c)->o;
	Symbolizer__V1__SymbolizeProfileRequest *r =
		symbolizer__v1__symbolize_profile_request__unpack(NULL, len, body);
	if (!r) {
		svc_error_set(&fl->err, SVC_E_INVALID,
			      "request body is not a valid symbolizer.v1.SymbolizeProfileRequest");
		return false;
	}
	if (r->options) {
		c->no_inline = r->options->no_inline;
		c->no_demangle = r->options->no_demangle;
		fl->asked_wait_ms = r->options->max_wait_ms;
	}
	svc_profile_limits lim = {o->max_profile_bytes, o->max_mappings, o->max_locations};
	bool ok = svc_profile_decode(r->profile.data, r->profile.len, &lim, &c->arena, &c->doc,
				     &fl->err);
	symbolizer__v1__symbolize_profile_request__free_unpacked(r, NULL);
	return ok;
}

static svc_rpc_flow_wait wait_mappings(svc_rpc_flow *fl, int64_t budget_ms, uint64_t *held)
{
	struct call *c = (struct call *)fl;
	if (!prepare_mappings(c)) {
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory");
		return SVC_RPC_FLOW_FAILED;
	}
	/* What the call holds while it waits: the decoded profile, mostly. */
	size_t n = c->doc.p ? c->doc.p->n_mapping : 0;
	*held = c->arena.used + c->doc.big_bytes + n * (sizeof(*c->maps) + SVC_MAPPINGS_WAIT_BYTES);
	return svc_mappings_wait(c->resolve, fl, budget_ms);
}

static const svc_rpc_flow_ops profile_ops = {
	.call_size = sizeof(struct call),
	.decode = decode,
	.wait = wait_mappings,
	.stop = stop,
	.on_worker = on_worker,
	.work = work,
	.answered = answered,
	.release = release,
};

void svc_profile_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_profile *sp = ctx;
	svc_rpc_flow_run(rpc, &profile_ops, &sp->flow, sp);
}

void svc_profile_render_metrics(const svc_profile *sp, base_buf *b)
{
	base_expo_family(b, "symbolizer_profile_locations_total", "counter",
			 "SymbolizeProfile locations without lines, by whether they got lines.");
	base_expo_u64(b, "symbolizer_profile_locations_total", "result=\"symbolized\"",
		      sp->locations_symbolized);
	base_expo_u64(b, "symbolizer_profile_locations_total", "result=\"unsymbolized\"",
		      sp->locations_unsymbolized);
	base_expo_family(b, "symbolizer_profile_frames_total", "counter",
			 "Lines (inlined frames included) SymbolizeProfile added to profiles.");
	base_expo_u64(b, "symbolizer_profile_frames_total", "", sp->frames);
}
