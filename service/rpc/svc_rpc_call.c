// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_call: one Connect call from its start (the body taken and
 * inflated) to its reply (the response encoded, or a Connect error), with
 * the accounting of both (svc_rpc.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_clock.h"
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

/* The request's message: the input buffer's bytes, inflated when gzipped. */
static bool take_body(svc_rpc_call *c, bool gzip_in, svc_error *err)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(c->req);
	size_t len = evbuffer_get_length(in);
	c->drain = len;
	c->body = len ? evbuffer_pullup(in, -1) : (const uint8_t *)"";
	c->body_len = len;
	if (!c->body) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (!gzip_in)
		return true;
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
	return true;
}

void svc_rpc_call_start(svc_rpc *rpc, svc_rpc_row *row, struct evhttp_request *req,
			int64_t timeout_ms, bool gzip_in, bool gzip_out)
{
	svc_rpc_call *c = calloc(1, sizeof(*c));
	struct evbuffer *response = c ? evbuffer_new() : NULL;
	if (!response) {
		free(c);
		svc_error err;
		svc_error_set(&err, SVC_E_NOMEM, "out of memory");
		svc_rpc_reply_error(rpc, row, req, &err);
		return;
	}
	c->start_ns = base_mono_ns();
	c->rpc = rpc;
	c->row = row;
	c->req = req;
	c->response = response;
	c->timeout_ms = timeout_ms;
	if (timeout_ms >= 0)
		c->deadline_ms = c->start_ns / 1000000 + timeout_ms;
	c->gzip_out = gzip_out;
	link_call(rpc, c);
	svc_error err;
	if (!take_body(c, gzip_in, &err)) {
		svc_rpc_call_fail(c, &err);
		return;
	}
	row->m.handle(row->m.ctx, c);
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
	if (c->drain)
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

bool svc_rpc_call_encode(svc_rpc_call *c)
{
	if (c->encoded)
		return true;
	size_t n = evbuffer_get_length(c->response);
	if (!c->gzip_out || n < c->rpc->o.gzip_min_bytes) {
		c->encoded = true;
		return true;
	}
	const void *plain = n ? (const void *)evbuffer_pullup(c->response, -1) : "";
	struct evbuffer *z = plain ? evbuffer_new() : NULL;
	if (!z)
		return false;
	if (!svc_gzip(plain, n, z)) {
		evbuffer_free(z);
		return false;
	}
	evbuffer_free(c->response);
	c->response = z;
	c->encoded = c->gzipped = true;
	return true;
}

/* ---- the end ---- */

/* Sends the reply (body may be NULL) and forgets the call. */
static void call_end(svc_rpc_call *c, int status, struct evbuffer *body)
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
	svc_rpc_send(rpc, c->req, status, body);
	evbuffer_free(c->response);
	free(c);
	if (rpc->o.call_ended)
		rpc->o.call_ended(rpc->o.arg);
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
	if (!svc_rpc_call_encode(c)) {
		svc_rpc_call_failf(c, SVC_E_NOMEM, "out of memory compressing the response");
		return false;
	}
	account(c, SVC_CONNECT_OK);
	struct evkeyvalq *h = evhttp_request_get_output_headers(c->req);
	evhttp_add_header(h, "Content-Type", "application/proto");
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
