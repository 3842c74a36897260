/*
 * svc_symbolize: the Symbolize RPC (Connect unary, application/proto).
 *
 * One svc_call per request: it checks the Connect headers, inflates and
 * unpacks the body into a per-call arena, validates the batch, then resolves
 * every mapping (svc_resolver: memory cache, store, sources, index build). It
 * waits for the unresolved ones until its wait budget (Options.max_wait_ms or
 * the server's default, within Connect-Timeout-Ms) runs out; those answer
 * PENDING with a retry hint while their work goes on. Then it looks every
 * location up, builds the response with a string table and a function table
 * (each distinct string and function once), packs it (gzip when the client
 * accepts it) and replies. Big batches do the lookups and the packing on a
 * worker thread.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"
#include "service/rpc/svc_connect.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_request.h"
#include "service/http/svc_server_impl.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct svc_call {
	svc_server *s;
	struct evhttp_request *req;
	struct svc_call *prev, *next;
	base_arena arena;
	Symbolizer__V1__SymbolizeRequest *msg;
	svc_lookup_mapping *maps;
	struct call_wait *waits;
	size_t waiting;
	struct event *timer;
	struct timespec start;
	int64_t deadline_ms;         /* monotonic; 0 = none */
	bool gzip_out;
	bool on_worker;
	/* Results of the lookup phase (svc_lookup). */
	svc_lookup_result out;
};

struct call_wait {
	struct svc_call *c;
	size_t map;
	svc_resolve_waiter *w;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *header(struct evhttp_request *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req), name);
}

/* ---- end of a call ---- */

static void call_free(struct svc_call *c)
{
	svc_server *s = c->s;
	if (c->timer)
		event_free(c->timer);
	if (c->waits) {
		for (size_t i = 0; i < c->msg->n_mappings; i++)
			if (c->waits[i].w)
				svc_resolver_cancel(s->resolver, c->waits[i].w);
		free(c->waits);
	}
	if (c->maps) {
		for (size_t i = 0; i < c->msg->n_mappings; i++)
			svc_resolver_release(s->resolver, c->maps[i].entry);
		free(c->maps);
	}
	svc_lookup_result_deinit(&c->out);
	base_arena_deinit(&c->arena);
	if (c->prev)
		c->prev->next = c->next;
	else if (s->calls == c)
		s->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_calls--;
	free(c);
	svc_server_call_ended(s);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void finish_error(struct svc_call *c, svc_connect_code code, const char *msg)
{
	svc_server *s = c->s;
	s->metrics.rpc_requests[code]++;
	base_histogram_observe(&s->metrics.rpc_seconds, seconds_since(&c->start));
	svc_server_reply_connect_error(s, c->req, code, msg);
	c->req = NULL;
	call_free(c);
}

static void finish_ok(struct svc_call *c)
{
	svc_server *s = c->s;
	svc_metrics *m = &s->metrics;
	m->rpc_requests[SVC_CONNECT_OK]++;
	base_histogram_observe(&m->rpc_seconds, seconds_since(&c->start));
	m->frames += c->out.frames;
	m->locations += c->msg->n_locations;
	m->locations_symbolized += c->out.symbolized;
	for (size_t i = 0; i < c->msg->n_mappings; i++)
		if ((unsigned)c->maps[i].status < SVC_MAP_STATUSES)
			m->mappings[c->maps[i].status]++;
	struct evkeyvalq *h = evhttp_request_get_output_headers(c->req);
	evhttp_add_header(h, "Content-Type", "application/proto");
	evhttp_add_header(h, "Accept-Encoding", "gzip");
	if (c->out.gzipped)
		evhttp_add_header(h, "Content-Encoding", "gzip");
	svc_server_reply(s, c->req, "rpc", 200, c->out.body);
	c->req = NULL;
	call_free(c);
}

/* ---- lookups ---- */

static void lookup_work(void *arg)
{
	struct svc_call *c = arg;
	svc_lookup_run(c->msg, c->maps, &c->arena, c->s->responses,
		       c->gzip_out ? c->s->o.gzip_min_bytes : UINT64_MAX, &c->out);
}

static void lookup_done(void *arg, bool cancelled)
{
	struct svc_call *c = arg;
	c->on_worker = false;
	if (cancelled) {
		finish_error(c, SVC_CONNECT_UNAVAILABLE, "server shutting down");
		return;
	}
	if (c->out.code != SVC_CONNECT_OK) {
		finish_error(c, c->out.code, c->out.error);
		return;
	}
	if (c->deadline_ms && mono_ms() > c->deadline_ms) {
		finish_error(c, SVC_CONNECT_DEADLINE_EXCEEDED,
			     "the call's deadline passed before the answer was ready");
		return;
	}
	finish_ok(c);
}

static void lookup_start(struct svc_call *c)
{
	svc_server *s = c->s;
	if (c->timer)
		event_del(c->timer);
	if (s->pool && c->msg->n_locations >= s->o.worker_lookup_min) {
		c->on_worker = true;
		s->metrics.worker_lookups++;
		if (svc_pool_submit(s->pool, c, lookup_work, lookup_done))
			return;
		c->on_worker = false;
	}
	lookup_work(c);
	lookup_done(c, false);
}

/* ---- mapping resolution ---- */

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

static void resolved_cb(void *arg, svc_resolution *res)
{
	struct call_wait *cw = arg;
	struct svc_call *c = cw->c;
	cw->w = NULL;
	apply_resolution(&c->maps[cw->map], res);
	if (--c->waiting == 0)
		lookup_start(c);
}

/* The wait budget is spent (or the server stops): what is unresolved is PENDING. */
static void stop_waiting(struct svc_call *c)
{
	for (size_t i = 0; i < c->msg->n_mappings; i++) {
		struct call_wait *cw = &c->waits[i];
		if (!cw->w)
			continue;
		svc_lookup_mapping *m = &c->maps[i];
		const char *stage = svc_resolver_waiter_stage(cw->w);
		m->status = STATUS(PENDING);
		snprintf(m->error, sizeof(m->error), "%s", stage);
		m->retry_after_ms = strstr(stage, "fetch") ? 1000 : 500;
		svc_resolver_cancel(c->s->resolver, cw->w);
		cw->w = NULL;
	}
	c->waiting = 0;
	lookup_start(c);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	stop_waiting(arg);
}

void svc_symbolize_stop_waiting(svc_server *s)
{
	struct svc_call *c = s->calls;
	while (c) {
		struct svc_call *next = c->next;
		if (c->waiting)
			stop_waiting(c);  /* may free c */
		c = next;
	}
}

/* Lowercase hex, even length, 1..64 bytes (DESIGN.md). */
static const char *check_build_id(const char *hex, sym_build_id *id)
{
	size_t n = strlen(hex);
	if (n == 0)
		return "build_id is empty";
	if (n % 2 || n > 2 * SYM_BUILD_ID_MAX)
		return "build_id must be lowercase hex of even length, 2 to 128 digits";
	for (size_t i = 0; i < n; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return "build_id must be lowercase hex of even length, 2 to 128 digits";
	if (!sym_build_id_from_hex(hex, n, id))
		return "build_id is not valid hex";
	return NULL;
}

static void resolve_all(struct svc_call *c)
{
	svc_server *s = c->s;
	size_t n = c->msg->n_mappings;
	for (size_t i = 0; i < n; i++) {
		const Symbolizer__V1__Mapping *pm = c->msg->mappings[i];
		svc_lookup_mapping *m = &c->maps[i];
		m->pb = pm;
		const char *bad = check_build_id(pm->build_id, &m->id);
		if (!bad && (unsigned)pm->address_kind > SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_FILE_OFFSET)
			bad = "address_kind is not one of ELF, RUNTIME, FILE_OFFSET";
		if (!bad && pm->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME &&
		    pm->memory_limit != 0 && pm->memory_limit <= pm->memory_start)
			bad = "memory_limit must be above memory_start";
		if (bad) {
			m->status = STATUS(INVALID);
			snprintf(m->error, sizeof(m->error), "%s", bad);
			continue;
		}
		svc_resolution now;
		c->waits[i].c = c;
		c->waits[i].map = i;
		svc_resolve_waiter *w =
			svc_resolver_resolve(s->resolver, &m->id, resolved_cb, &c->waits[i], &now);
		if (w) {
			c->waits[i].w = w;
			c->waiting++;
		} else {
			apply_resolution(m, &now);
		}
	}
}

/* ---- request ---- */

static int64_t wait_budget_ms(struct svc_call *c, int64_t timeout_ms)
{
	svc_server *s = c->s;
	int64_t wait = s->o.default_wait_ms;
	const Symbolizer__V1__Options *opt = c->msg->options;
	if (opt && opt->max_wait_ms)
		wait = opt->max_wait_ms < s->o.max_wait_ms ? opt->max_wait_ms : s->o.max_wait_ms;
	if (timeout_ms >= 0) {
		/* Keep a fifth of the deadline (at most 200 ms) for the lookups. */
		int64_t reserve = timeout_ms / 5 < 200 ? timeout_ms / 5 : 200;
		if (timeout_ms - reserve < wait)
			wait = timeout_ms - reserve;
	}
	return wait < 0 ? 0 : wait;
}

void svc_symbolize_handle(svc_server *s, struct evhttp_request *req)
{
	struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(oh, "Allow", "POST");
		struct evbuffer *b = evbuffer_new();
		svc_connect_error_body(b, SVC_CONNECT_UNIMPLEMENTED,
				       "Symbolize is called with POST (Connect unary)");
		evhttp_add_header(oh, "Content-Type", "application/json");
		s->metrics.rpc_requests[SVC_CONNECT_UNIMPLEMENTED]++;
		svc_server_reply(s, req, "rpc", 405, b);
		evbuffer_free(b);
		return;
	}
	svc_connect_code code = SVC_CONNECT_OK;
	char msg[256] = "";
	const char *ctype = header(req, "Content-Type");
	const char *version = header(req, "Connect-Protocol-Version");
	const char *timeout = header(req, "Connect-Timeout-Ms");
	const char *cenc = header(req, "Content-Encoding");
	const char *aenc = header(req, "Accept-Encoding");
	int64_t timeout_ms = -1;
	if (!ctype || (strcasecmp(ctype, "application/proto") != 0 &&
		       strncasecmp(ctype, "application/proto;", 18) != 0)) {
		/* Connect: an unsupported codec is HTTP 415, whatever the body says. */
		evhttp_add_header(oh, "Accept-Post", "application/proto");
		struct evbuffer *b = evbuffer_new();
		snprintf(msg, sizeof(msg), "content type %s is not supported; use application/proto",
			 ctype ? ctype : "(none)");
		svc_connect_error_body(b, SVC_CONNECT_UNIMPLEMENTED, msg);
		evhttp_add_header(oh, "Content-Type", "application/json");
		s->metrics.rpc_requests[SVC_CONNECT_UNIMPLEMENTED]++;
		svc_server_reply(s, req, "rpc", 415, b);
		evbuffer_free(b);
		return;
	}
	if (s->stopping) {
		code = SVC_CONNECT_UNAVAILABLE;
		snprintf(msg, sizeof(msg), "server shutting down");
	} else if (version && strcmp(version, "1") != 0) {
		code = SVC_CONNECT_INVALID_ARGUMENT;
		snprintf(msg, sizeof(msg), "Connect-Protocol-Version %.32s is not supported (1 is)",
			 version);
	} else if (timeout && !svc_connect_parse_timeout(timeout, &timeout_ms)) {
		code = SVC_CONNECT_INVALID_ARGUMENT;
		snprintf(msg, sizeof(msg), "Connect-Timeout-Ms must be 1 to 10 digits");
	} else if (cenc && strcasecmp(cenc, "identity") != 0 && strcasecmp(cenc, "gzip") != 0) {
		code = SVC_CONNECT_UNIMPLEMENTED;
		evhttp_add_header(oh, "Accept-Encoding", "gzip");
		snprintf(msg, sizeof(msg), "Content-Encoding %.32s is not supported (gzip is)",
			 cenc);
	} else if (s->n_calls >= s->o.max_inflight_calls) {
		code = SVC_CONNECT_RESOURCE_EXHAUSTED;
		snprintf(msg, sizeof(msg), "too many calls in progress (%u); retry later",
			 s->o.max_inflight_calls);
	}
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t body_len = evbuffer_get_length(in);
	if (code == SVC_CONNECT_OK && body_len > s->o.max_request_bytes) {
		code = SVC_CONNECT_RESOURCE_EXHAUSTED;
		snprintf(msg, sizeof(msg), "request body of %zu bytes is over the limit of %" PRIu64,
			 body_len, s->o.max_request_bytes);
	}
	if (code != SVC_CONNECT_OK) {
		s->metrics.rpc_requests[code]++;
		svc_server_reply_connect_error(s, req, code, msg);
		return;
	}

	struct svc_call *c = calloc(1, sizeof(*c));
	if (!c) {
		s->metrics.rpc_requests[SVC_CONNECT_RESOURCE_EXHAUSTED]++;
		svc_server_reply_connect_error(s, req, SVC_CONNECT_RESOURCE_EXHAUSTED,
					       "out of memory");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	c->s = s;
	c->req = req;
	c->next = s->calls;
	if (s->calls)
		s->calls->prev = c;
	s->calls = c;
	s->n_calls++;
	if (timeout_ms >= 0)
		c->deadline_ms = mono_ms() + timeout_ms;
	c->gzip_out = aenc && svc_connect_lists_gzip(aenc);
	svc_lookup_result_init(&c->out);

	const uint8_t *body = body_len ? evbuffer_pullup(in, -1) : (const uint8_t *)"";
	void *inflated = NULL;
	size_t msg_len = body_len;
	if (cenc && strcasecmp(cenc, "gzip") == 0) {
		int rc = svc_gunzip(body, body_len, s->o.max_request_bytes, &inflated, &msg_len);
		if (rc == -2) {
			snprintf(msg, sizeof(msg), "request inflates past the limit of %" PRIu64
				 " bytes", s->o.max_request_bytes);
			finish_error(c, SVC_CONNECT_RESOURCE_EXHAUSTED, msg);
			return;
		}
		if (rc != 0) {
			finish_error(c, SVC_CONNECT_INVALID_ARGUMENT,
				     "request body is not valid gzip");
			return;
		}
		body = inflated;
	}
	/* An oversized batch is refused before it takes memory to decode. */
	svc_request_shape shape;
	svc_request_count(body, msg_len, &shape);
	if (shape.n_mappings > s->o.max_mappings || shape.n_locations > s->o.max_locations) {
		free(inflated);
		evbuffer_drain(in, body_len);
		snprintf(msg, sizeof(msg),
			 "batch of %zu mappings and %zu locations is over the limits (%u, %u)",
			 shape.n_mappings, shape.n_locations, s->o.max_mappings, s->o.max_locations);
		finish_error(c, SVC_CONNECT_RESOURCE_EXHAUSTED, msg);
		return;
	}
	/* The decoded request and the response live in the arena; its cap bounds both. */
	base_arena_init(&c->arena, 64u * 1024 * 1024 + 24 * msg_len);
	c->msg = svc_request_decode(body, msg_len, &shape, &c->arena);
	free(inflated);
	evbuffer_drain(in, body_len);
	if (!c->msg) {
		bool full = c->arena.cap && c->arena.used * 2 > c->arena.cap;
		finish_error(c, full ? SVC_CONNECT_RESOURCE_EXHAUSTED : SVC_CONNECT_INVALID_ARGUMENT,
			     full ? "request too large to decode"
				  : "request body is not a valid symbolizer.v1.SymbolizeRequest");
		return;
	}
	Symbolizer__V1__SymbolizeRequest *r = c->msg;
	if (r->n_mappings > s->o.max_mappings || r->n_locations > s->o.max_locations) {
		snprintf(msg, sizeof(msg),
			 "batch of %zu mappings and %zu locations is over the limits (%u, %u)",
			 r->n_mappings, r->n_locations, s->o.max_mappings, s->o.max_locations);
		finish_error(c, SVC_CONNECT_RESOURCE_EXHAUSTED, msg);
		return;
	}
	for (size_t i = 0; i < r->n_locations; i++) {
		if (r->locations[i]->mapping_index >= r->n_mappings) {
			snprintf(msg, sizeof(msg),
				 "locations[%zu].mapping_index %u: the request has %zu mappings", i,
				 r->locations[i]->mapping_index, r->n_mappings);
			finish_error(c, SVC_CONNECT_INVALID_ARGUMENT, msg);
			return;
		}
	}
	c->maps = calloc(r->n_mappings ? r->n_mappings : 1, sizeof(*c->maps));
	c->waits = calloc(r->n_mappings ? r->n_mappings : 1, sizeof(*c->waits));
	if (!c->maps || !c->waits) {
		finish_error(c, SVC_CONNECT_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	resolve_all(c);
	if (c->waiting == 0) {
		lookup_start(c);
		return;
	}
	int64_t wait = wait_budget_ms(c, timeout_ms);
	c->timer = evtimer_new(s->base, timer_cb, c);
	struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)((wait % 1000) * 1000)};
	if (!c->timer || evtimer_add(c->timer, &tv) != 0)
		stop_waiting(c);
}
