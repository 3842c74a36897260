// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_call: one Connect call from its start (the body taken, inflated,
 * and for JSON transcoded, on the pool when big) to its reply (the response
 * encoded, or a Connect error), with the accounting of both (svc_rpc.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_clock.h"
#include "service/core/svc_evbuffer.h"
#include "service/core/svc_pool.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_rpc_impl.h"

/* ---- the start ---- */

static void link_call(svc_rpc *rpc, svc_rpc_call *c)
{
	c->next = rpc->calls;
	if (rpc->calls)
		rpc->calls->prev = c;
	rpc->calls = c;
	rpc->n_calls++;
}

/* A JSON request's wire bytes in place of its text (freed with the call). */
static bool from_json(svc_rpc_call *c, svc_error *err)
{
	uint64_t cap = c->rpc->o.max_request_bytes;
	base_buf wire;
	base_buf_init(&wire, cap > SIZE_MAX ? SIZE_MAX : (size_t)cap);
	svc_errc rc = svc_rpc_json_decode(c->row->json_in, (const char *)c->body, c->body_len,
					  (size_t)(cap / 16) + 16, &wire, err);
	if (rc != SVC_OK) {
		base_buf_deinit(&wire);
		return false;
	}
	free(c->inflated);
	c->inflated = base_buf_take(&wire, &c->body_len);
	c->body = c->inflated ? c->inflated : (const uint8_t *)"";
	return true;
}

/* The request's message: the input buffer's bytes, inflated when gzipped
 * (and transcoded when JSON, but for a big JSON body: *later). */
static bool take_body(svc_rpc_call *c, bool gzip_in, bool *later, svc_error *err)
{
	if (c->req) {
		struct evbuffer *in = evhttp_request_get_input_buffer(c->req);
		size_t n = evbuffer_get_length(in);
		c->drain = n;
		c->body = n ? evbuffer_pullup(in, -1) : (const uint8_t *)"";
		c->body_len = n;
	}
	size_t len = c->body_len;
	if (!c->body) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (!gzip_in)
		return !c->json || (*later = c->rpc->o.pool && len >= SVC_RPC_JSON_WORKER_MIN) ||
		       from_json(c, err);
	uint64_t cap = c->rpc->o.max_request_bytes;
	svc_errc rc = svc_gunzip(c->body, len, cap, &c->inflated, &c->body_len);
	if (rc == SVC_E_TOO_LARGE) {
		svc_error_set(err, rc, "request inflates past the limit of %" PRIu64 " bytes", cap);
		return false;
	}
	if (rc != SVC_OK) {
		svc_error_set(err, rc, "%s", rc == SVC_E_NOMEM ? "out of memory inflating the request"
							    : "request body is not valid gzip");
		return false;
	}
	c->body = c->inflated;
	return !c->json || (*later = c->rpc->o.pool && c->body_len >= SVC_RPC_JSON_WORKER_MIN) ||
	       from_json(c, err);
}

/* ---- a big JSON request, parsed on the pool ---- */

static void json_work(void *arg)
{
	svc_rpc_call *c = arg;
	if (from_json(c, &c->decode_err))
		c->decode_err.code = SVC_OK;
}

static void json_done(void *arg, bool cancelled)
{
	svc_rpc_call *c = arg;
	if (cancelled)
		svc_rpc_call_failf(c, SVC_E_SHUTTING_DOWN, "server shutting down");
	else if (c->decode_err.code != SVC_OK)
		svc_rpc_call_fail(c, &c->decode_err);
	else
		c->row->m.handle(c->row->m.ctx, c);
}

/* Hands a big JSON request to the pool: the call's own copy of the text (the
 * worker never touches the HTTP request). False: parse it here instead. */
static bool json_later(svc_rpc_call *c)
{
	if (!c->inflated) {
		void *copy = malloc(c->body_len);
		if (!copy)
			return false;
		memcpy(copy, c->body, c->body_len);
		c->inflated = copy;
		c->body = copy;
	}
	c->decode_err.code = SVC_E_INTERNAL;
	return svc_pool_submit(c->rpc->o.pool, c, json_work, json_done);
}

/* A call of row (NULL: out of memory). */
static svc_rpc_call *call_new(svc_rpc *rpc, svc_rpc_row *row)
{
	svc_rpc_call *c = calloc(1, sizeof(*c));
	struct evbuffer *response = c ? evbuffer_new() : NULL;
	if (!response) {
		free(c);
		return NULL;
	}
	c->start_ns = base_mono_ns();
	c->rpc = rpc;
	c->row = row;
	c->response = response;
	return c;
}

/* The rest of a call's start, whatever its transport. */
static void call_begin(svc_rpc_call *c, const svc_rpc_call_headers *h)
{
	svc_rpc *rpc = c->rpc;
	svc_rpc_row *row = c->row;
	c->timeout_ms = h->timeout_ms;
	if (h->timeout_ms >= 0)
		c->deadline_ms = c->start_ns / 1000000 + h->timeout_ms;
	c->gzip_out = h->gzip_out;
	c->json = h->json;
	link_call(rpc, c);
	svc_error err;
	bool later = false;
	if (!take_body(c, h->gzip_in, &later, &err)) {
		svc_rpc_call_fail(c, &err);
		return;
	}
	if (later && json_later(c))
		return;  /* json_done goes on */
	if (later && !from_json(c, &err)) {
		svc_rpc_call_fail(c, &err);
		return;
	}
	row->m.handle(row->m.ctx, c);
}

void svc_rpc_call_start(svc_rpc *rpc, svc_rpc_row *row, struct evhttp_request *req,
			const svc_rpc_call_headers *h)
{
	svc_rpc_call *c = call_new(rpc, row);
	if (!c) {
		svc_error err;
		svc_error_set(&err, SVC_E_NOMEM, "out of memory");
		svc_rpc_reply_error(rpc, row, req, &err);
		return;
	}
	c->req = req;
	call_begin(c, h);
}

void svc_rpc_call_start_sink(svc_rpc *rpc, svc_rpc_row *row, const svc_rpc_request *r,
			     const svc_rpc_sink *sink)
{
	svc_rpc_call *c = call_new(rpc, row);
	if (!c) {
		svc_error err;
		svc_error_set(&err, SVC_E_NOMEM, "out of memory");
		row->requests[svc_errc_connect(err.code)]++;
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	c->sink = *sink;
	c->body = r->len ? r->body : (const uint8_t *)"";
	c->body_len = r->len;
	svc_rpc_call_headers h = {
		.timeout_ms = r->timeout_ms, .gzip_in = r->gzip_in, .gzip_out = r->gzip_out,
		.json = r->json,
	};
	call_begin(c, &h);
}

/* ---- what the method reads ---- */

const uint8_t *svc_rpc_call_body(const svc_rpc_call *c, size_t *len)
{
	*len = c->body_len;
	return c->body;
}

void svc_rpc_call_drop_body(svc_rpc_call *c)
{
	free(c->inflated);
	c->inflated = NULL;
	c->body = (const uint8_t *)"";
	c->body_len = 0;
	if (c->drain && c->req)
		evbuffer_drain(evhttp_request_get_input_buffer(c->req), c->drain);
	c->drain = 0;
}

int64_t svc_rpc_call_timeout_ms(const svc_rpc_call *c)
{
	return c->timeout_ms;
}

int64_t svc_rpc_call_deadline_ms(const svc_rpc_call *c)
{
	return c->deadline_ms;
}

int64_t svc_rpc_call_wait_budget_ms(const svc_rpc_call *c, int64_t asked_ms,
				    int64_t default_ms, int64_t max_ms)
{
	int64_t wait = asked_ms ? (asked_ms < max_ms ? asked_ms : max_ms) : default_ms;
	if (c->timeout_ms >= 0) {
		int64_t reserve = c->timeout_ms / 5 < 200 ? c->timeout_ms / 5 : 200;
		if (c->timeout_ms - reserve < wait)
			wait = c->timeout_ms - reserve;
	}
	return wait < 0 ? 0 : wait;
}

bool svc_rpc_call_wait(svc_rpc_call *c, uint64_t bytes)
{
	svc_rpc *rpc = c->rpc;
	uint64_t cap = rpc->o.waiting_calls_bytes;
	if (cap && (bytes > cap || rpc->waiting_bytes > cap - bytes)) {
		rpc->waiting_refused++;
		return false;
	}
	c->waiting_bytes += bytes;
	rpc->waiting_bytes += bytes;
	return true;
}

void svc_rpc_call_fail_waiting(svc_rpc_call *c, uint64_t bytes)
{
	svc_rpc_call_failf(c, SVC_E_OVERLOADED,
			   "calls that wait hold %" PRIu64 " bytes; this one (%" PRIu64
			   " bytes) would pass the limit of %" PRIu64 ": retry later",
			   c->rpc->waiting_bytes, bytes, c->rpc->o.waiting_calls_bytes);
}

void svc_rpc_call_on_stop(svc_rpc_call *c, void (*fn)(void *arg), void *arg)
{
	c->on_stop = fn;
	c->stop_arg = arg;
}

struct evbuffer *svc_rpc_call_response(svc_rpc_call *c)
{
	return c->response;
}

const svc_rpc_json *svc_rpc_call_json_out(const svc_rpc_call *c)
{
	return c->json ? c->row->json_out : NULL;
}

void svc_rpc_call_response_is_json(svc_rpc_call *c)
{
	c->json_written = c->json;
}

/* *body (a response's wire bytes) replaced by its JSON written by codec j.
 * False: *body kept, *err says why (SVC_E_NOMEM, or the response did not
 * transcode). */
static bool json_body(const svc_rpc_json *j, struct evbuffer **body, svc_error *err)
{
	size_t n = evbuffer_get_length(*body);
	const uint8_t *wire = n ? evbuffer_pullup(*body, -1) : (const uint8_t *)"";
	base_buf out;
	base_buf_init(&out, SIZE_MAX);
	if (!wire || !base_buf_reserve(&out, n * 3 + 64)) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory writing JSON");
		base_buf_deinit(&out);
		return false;
	}
	struct evbuffer *json = NULL;
	if (svc_rpc_json_encode(j, wire, n, &out, err) == SVC_OK && (json = evbuffer_new()) &&
	    svc_evbuffer_give(json, out.data, out.len)) {
		evbuffer_free(*body);
		*body = json;
		return true;
	}
	if (json)
		evbuffer_free(json);
	else if (err->code == SVC_OK)
		svc_error_set(err, SVC_E_NOMEM, "out of memory writing JSON");
	base_buf_deinit(&out);
	return false;
}

bool svc_rpc_call_encode(svc_rpc_call *c)
{
	if (c->encoded)
		return true;
	if (c->json && !c->json_written &&
	    !json_body(c->row->json_out, &c->response, &c->encode_err)) {
		c->encoded = true;
		return c->encode_err.code != SVC_E_NOMEM;
	}
	size_t n = evbuffer_get_length(c->response);
	if (!c->gzip_out || n < c->rpc->o.gzip_min_bytes) {
		c->encoded = true;
		return true;
	}
	const void *plain = n ? (const void *)evbuffer_pullup(c->response, -1) : "";
	struct evbuffer *z = plain ? evbuffer_new() : NULL;
	if (!z)
		return false;
	if (!svc_gzip_with(c->rpc->o.gzip_library, c->rpc->o.gzip_level, plain, n, z)) {
		evbuffer_free(z);
		return false;
	}
	evbuffer_free(c->response);
	c->response = z;
	c->encoded = c->gzipped = true;
	return true;
}

/* ---- the end ---- */

/* Takes the call off the list. */
static void call_unlink(svc_rpc_call *c)
{
	svc_rpc *rpc = c->rpc;
	svc_rpc_call_drop_body(c);
	rpc->waiting_bytes -= c->waiting_bytes;
	if (c->prev)
		c->prev->next = c->next;
	else if (rpc->calls == c)
		rpc->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	rpc->n_calls--;
}

/* Frees the call, then tells the server. */
static void call_free(svc_rpc_call *c)
{
	svc_rpc *rpc = c->rpc;
	evbuffer_free(c->response);
	free(c);
	if (rpc->o.call_ended)
		rpc->o.call_ended(rpc->o.arg);
}

/* Sends the reply (body may be NULL) and forgets the call. */
static void call_end(svc_rpc_call *c, int status, struct evbuffer *body)
{
	call_unlink(c);
	svc_rpc_send(c->rpc, c->req, status, body);
	call_free(c);
}

/* A sink's call: answers err (NULL: the response) and forgets the call. */
static void call_end_sink(svc_rpc_call *c, const svc_error *err)
{
	call_unlink(c);
	c->sink.answer(c->sink.arg, err, err ? NULL : c->response, c->gzipped);
	call_free(c);
}

static void account(svc_rpc_call *c, svc_connect_code code)
{
	c->row->requests[code]++;
	base_histogram_observe(&c->row->seconds, base_seconds_since(c->start_ns));
}

bool svc_rpc_call_ok(svc_rpc_call *c)
{
	if (c->deadline_ms && base_mono_ms() > c->deadline_ms) {
		svc_rpc_call_failf(c, SVC_E_DEADLINE,
				   "the call's deadline passed before the answer was ready");
		return false;
	}
	if (!svc_rpc_call_encode(c) || c->encode_err.code != SVC_OK) {
		if (c->encode_err.code == SVC_OK)
			svc_error_set(&c->encode_err, SVC_E_NOMEM,
				      "out of memory compressing the response");
		svc_error err = c->encode_err;
		svc_rpc_call_fail(c, &err);
		return false;
	}
	account(c, SVC_CONNECT_OK);
	if (!c->req) {
		call_end_sink(c, NULL);
		return true;
	}
	struct evkeyvalq *h = evhttp_request_get_output_headers(c->req);
	evhttp_add_header(h, "Content-Type", c->json ? "application/json" : "application/proto");
	evhttp_add_header(h, "Accept-Encoding", "gzip");
	if (c->gzipped)
		evhttp_add_header(h, "Content-Encoding", "gzip");
	call_end(c, 200, c->response);
	return true;
}

void svc_rpc_call_fail(svc_rpc_call *c, const svc_error *err)
{
	svc_connect_code code = svc_errc_connect(err->code);
	account(c, code);
	if (!c->req) {
		call_end_sink(c, err);
		return;
	}
	struct evbuffer *b = svc_rpc_error_body(c->req, err);
	call_end(c, svc_errc_http_status(err->code), b);
	if (b)
		evbuffer_free(b);
}

void svc_rpc_call_failf(svc_rpc_call *c, svc_errc code, const char *fmt, ...)
{
	svc_error err;
	va_list ap;
	va_start(ap, fmt);
	svc_error_vset(&err, code, fmt, ap);
	va_end(ap);
	svc_rpc_call_fail(c, &err);
}
