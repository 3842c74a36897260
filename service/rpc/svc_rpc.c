// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc: the Connect handler's route, request checks, method table and
 * metrics (svc_rpc.h); a call's life is in svc_rpc_call.c.
 */
#include "service/rpc/svc_rpc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <protobuf-c/protobuf-c.h>

#include "base/base_expo.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_rpc_impl.h"

/* The JSON codecs of a method whose types the row names or the service
 * descriptor has; false: out of memory. */
static bool add_json(svc_rpc_row *row, const ProtobufCServiceDescriptor *sd)
{
	const ProtobufCMessageDescriptor *in = row->m.request, *out = row->m.response;
	const ProtobufCMethodDescriptor *md =
		!(in && out) && sd ? protobuf_c_service_descriptor_get_method_by_name(sd, row->m.name)
				   : NULL;
	if (md)
		in = md->input, out = md->output;
	if (!in || !out)
		return true;
	row->json_in = svc_rpc_json_create_opts(in, row->m.json_flags);
	row->json_out = svc_rpc_json_create_opts(out, row->m.json_flags);
	return row->json_in && row->json_out;
}

svc_rpc *svc_rpc_create(const svc_rpc_options *o, const svc_rpc_method *methods,
			size_t n_methods)
{
	svc_rpc *rpc = calloc(1, sizeof(*rpc));
	if (!rpc)
		return NULL;
	rpc->o = *o;
	size_t n = strlen(o->service) + 3;
	rpc->prefix = malloc(n);
	rpc->service = strdup(o->service);  /* the caller's string may go away */
	rpc->rows = calloc(n_methods ? n_methods : 1, sizeof(*rpc->rows));
	if (!rpc->prefix || !rpc->service || !rpc->rows) {
		svc_rpc_destroy(rpc);
		return NULL;
	}
	snprintf(rpc->prefix, n, "/%s/", o->service);
	rpc->prefix_len = n - 1;
	rpc->o.service = rpc->service;
	rpc->n_rows = n_methods;
	for (size_t i = 0; i < n_methods; i++) {
		rpc->rows[i].m = methods[i];
		const char *svc = methods[i].service ? methods[i].service : o->service;
		size_t pn = strlen(svc) + strlen(methods[i].name) + 3;
		if (!(rpc->rows[i].path = malloc(pn))) {
			svc_rpc_destroy(rpc);
			return NULL;
		}
		snprintf(rpc->rows[i].path, pn, "/%s/%s", svc, methods[i].name);
		base_histogram_init(&rpc->rows[i].seconds, base_latency_bounds,
				    base_latency_n_bounds);
		if (!add_json(&rpc->rows[i], o->descriptor)) {
			svc_rpc_destroy(rpc);
			return NULL;
		}
	}
	return rpc;
}

void svc_rpc_destroy(svc_rpc *rpc)
{
	if (!rpc)
		return;
	for (size_t i = 0; rpc->rows && i < rpc->n_rows; i++) {
		svc_rpc_json_destroy(rpc->rows[i].json_in);
		svc_rpc_json_destroy(rpc->rows[i].json_out);
		free(rpc->rows[i].path);
	}
	free(rpc->rows);
	free(rpc->prefix);
	free(rpc->service);
	free(rpc);
}

/* ---- errors before a call starts ---- */

void svc_rpc_send(svc_rpc *rpc, struct evhttp_request *req, int status, struct evbuffer *body)
{
	if (rpc->o.reply)
		rpc->o.reply(rpc->o.arg, req, status, body);
	else
		evhttp_send_reply(req, status, NULL, body);
}

struct evbuffer *svc_rpc_error_body(struct evhttp_request *req, const svc_error *err)
{
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return NULL;
	svc_connect_error_body(b, err);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	return b;
}

void svc_rpc_reply_error(svc_rpc *rpc, svc_rpc_row *row, struct evhttp_request *req,
			 const svc_error *err)
{
	if (row)
		row->requests[svc_errc_connect(err->code)]++;
	struct evbuffer *b = svc_rpc_error_body(req, err);
	svc_rpc_send(rpc, req, svc_errc_http_status(err->code), b);
	if (b)
		evbuffer_free(b);
}

/* ---- the checks of a request ---- */

static const char *header(struct evhttp_request *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req), name);
}

/* Sets err and returns false, for `return refuse(...)` in the checks. */
static bool refuse(svc_error *err, svc_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool refuse(svc_error *err, svc_errc code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	svc_error_vset(err, code, fmt, ap);
	va_end(ap);
	return false;
}

/* Whether ctype is type, alone or with parameters ("; charset=utf-8"). */
static bool is_type(const char *ctype, const char *type)
{
	size_t n = strlen(type);
	return strncasecmp(ctype, type, n) == 0 && (ctype[n] == '\0' || ctype[n] == ';' ||
						    ctype[n] == ' ');
}

/*
 * Content-Type: application/proto, or application/json for a method of the
 * service descriptor (Connect: an unsupported codec is HTTP 415).
 */
static bool check_codec(const svc_rpc_row *row, struct evhttp_request *req,
			struct evkeyvalq *oh, svc_rpc_call_headers *h, svc_error *err)
{
	const char *ctype = header(req, "Content-Type");
	h->json = false;
	if (ctype && is_type(ctype, "application/proto"))
		return true;
	if (ctype && row->json_in && is_type(ctype, "application/json")) {
		h->json = true;
		return true;
	}
	const char *accepted = row->json_in ? "application/proto, application/json"
					    : "application/proto";
	evhttp_add_header(oh, "Accept-Post", accepted);
	return refuse(err, SVC_E_MEDIA_TYPE, "content type %s is not supported; use %s",
		      ctype ? ctype : "(none)", accepted);
}

/* The checks that need no call, in the order the protocol gives them. */
static bool check_request(svc_rpc *rpc, const svc_rpc_row *row, struct evhttp_request *req,
			  svc_rpc_call_headers *h, svc_error *err)
{
	struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(oh, "Allow", "POST");
		return refuse(err, SVC_E_METHOD, "%s is called with POST (Connect unary)",
			      row->m.name);
	}
	if (!check_codec(row, req, oh, h, err))
		return false;
	const char *version = header(req, "Connect-Protocol-Version");
	const char *timeout = header(req, "Connect-Timeout-Ms");
	const char *cenc = header(req, "Content-Encoding");
	const char *aenc = header(req, "Accept-Encoding");
	size_t body_len = evbuffer_get_length(evhttp_request_get_input_buffer(req));
	h->timeout_ms = -1;
	if (rpc->stopping)
		return refuse(err, SVC_E_SHUTTING_DOWN, "server shutting down");
	if (version && strcmp(version, "1") != 0)
		return refuse(err, SVC_E_INVALID,
			      "Connect-Protocol-Version %.32s is not supported (1 is)", version);
	if (timeout && !svc_connect_parse_timeout(timeout, &h->timeout_ms))
		return refuse(err, SVC_E_INVALID, "Connect-Timeout-Ms must be 1 to 10 digits");
	if (cenc && strcasecmp(cenc, "identity") != 0 && strcasecmp(cenc, "gzip") != 0) {
		evhttp_add_header(oh, "Accept-Encoding", "gzip");
		return refuse(err, SVC_E_UNIMPLEMENTED,
			      "Content-Encoding %.32s is not supported (gzip is)", cenc);
	}
	if (rpc->n_calls >= rpc->o.max_inflight_calls)
		return refuse(err, SVC_E_OVERLOADED, "too many calls in progress (%u); retry later",
			      rpc->o.max_inflight_calls);
	if (body_len > rpc->o.max_request_bytes)
		return refuse(err, SVC_E_TOO_LARGE,
			      "request body of %zu bytes is over the limit of %" PRIu64, body_len,
			      rpc->o.max_request_bytes);
	h->gzip_in = cenc && strcasecmp(cenc, "gzip") == 0;
	h->gzip_out = aenc && svc_connect_lists_gzip(aenc);
	return true;
}

/* ---- the route ---- */

/* The row of a full path ("/<service>/<Method>"; a method of another service too). */
static svc_rpc_row *find_method(svc_rpc *rpc, const char *path)
{
	for (size_t i = 0; i < rpc->n_rows; i++)
		if (strcmp(rpc->rows[i].path, path) == 0)
			return &rpc->rows[i];
	return NULL;
}

bool svc_rpc_handle(svc_rpc *rpc, struct evhttp_request *req, const char *path)
{
	svc_rpc_row *row = find_method(rpc, path);
	if (!row && strncmp(path, rpc->prefix, rpc->prefix_len) != 0)
		return false;
	const char *name = path + rpc->prefix_len;
	svc_error err;
	if (!row) {
		svc_error_set(&err, SVC_E_UNIMPLEMENTED, "%s has no method %.200s", rpc->o.service,
			      name);
		/* Counted under the first method, as ever: a label per unknown name
		 * would let any client grow the family without bound. */
		svc_rpc_reply_error(rpc, rpc->n_rows ? &rpc->rows[0] : NULL, req, &err);
		return true;
	}
	svc_rpc_call_headers h;
	if (!check_request(rpc, row, req, &h, &err)) {
		svc_rpc_reply_error(rpc, row, req, &err);
		return true;
	}
	svc_rpc_call_start(rpc, row, req, &h);
	return true;
}

/* ---- calls of other transports (svc_rpc_sink) ---- */

bool svc_rpc_has_path(const svc_rpc *rpc, const char *path)
{
	return find_method((svc_rpc *)rpc, path) != NULL;
}

void svc_rpc_serve(svc_rpc *rpc, const svc_rpc_request *r, const svc_rpc_sink *sink)
{
	const char *name = strncmp(r->path, rpc->prefix, rpc->prefix_len) == 0
				   ? r->path + rpc->prefix_len : NULL;
	svc_rpc_row *row = find_method(rpc, r->path);
	svc_error err;
	if (!row) {
		svc_error_set(&err, SVC_E_UNIMPLEMENTED, "no method %.200s", r->path);
		if (rpc->n_rows && name)  /* as svc_rpc_handle counts it */
			rpc->rows[0].requests[SVC_CONNECT_UNIMPLEMENTED]++;
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	if (rpc->stopping)
		svc_error_set(&err, SVC_E_SHUTTING_DOWN, "server shutting down");
	else if (r->json && !row->json_in)
		svc_error_set(&err, SVC_E_UNIMPLEMENTED, "%s has no JSON codec", row->m.name);
	else if (rpc->n_calls >= rpc->o.max_inflight_calls)
		svc_error_set(&err, SVC_E_OVERLOADED, "too many calls in progress (%u); retry later",
			      rpc->o.max_inflight_calls);
	else if (r->len > rpc->o.max_request_bytes)
		svc_error_set(&err, SVC_E_TOO_LARGE,
			      "request message of %zu bytes is over the limit of %" PRIu64, r->len,
			      rpc->o.max_request_bytes);
	else
		err.code = SVC_OK;
	if (err.code != SVC_OK) {
		row->requests[svc_errc_connect(err.code)]++;
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	svc_rpc_call_start_sink(rpc, row, r, sink);
}

const char *svc_rpc_service(const svc_rpc *rpc)
{
	return rpc->service;
}

size_t svc_rpc_n_methods(const svc_rpc *rpc)
{
	return rpc->n_rows;
}

const char *svc_rpc_method_name(const svc_rpc *rpc, size_t i)
{
	return i < rpc->n_rows ? rpc->rows[i].m.name : NULL;
}

/* ---- lifecycle ---- */

void svc_rpc_shutdown(svc_rpc *rpc)
{
	rpc->stopping = true;
	svc_rpc_call *c = rpc->calls;
	while (c) {
		svc_rpc_call *next = c->next;
		if (c->on_stop)
			c->on_stop(c->stop_arg);  /* may end c */
		c = next;
	}
}

unsigned svc_rpc_calls_in_flight(const svc_rpc *rpc)
{
	return rpc->n_calls;
}

/* ---- metrics ---- */

void svc_rpc_render_metrics(const svc_rpc *rpc, base_buf *b)
{
	char labels[160];
	base_expo_family(b, "symbolizer_rpc_requests_total", "counter",
			 "RPC calls by method and Connect code.");
	for (size_t i = 0; i < rpc->n_rows; i++) {
		const svc_rpc_row *r = &rpc->rows[i];
		for (int c = 0; c < SVC_CONNECT_N_CODES; c++) {
			if (!r->requests[c] && c != SVC_CONNECT_OK)
				continue;
			snprintf(labels, sizeof(labels), "method=\"%s\",code=\"%s\"", r->m.name,
				 svc_connect_code_name(c));
			base_expo_u64(b, "symbolizer_rpc_requests_total", labels, r->requests[c]);
		}
	}
	base_expo_family(b, "symbolizer_rpc_duration_seconds", "histogram",
			 "Latency of RPC calls, from the request's arrival to its reply.");
	for (size_t i = 0; i < rpc->n_rows; i++) {
		snprintf(labels, sizeof(labels), "method=\"%s\"", rpc->rows[i].m.name);
		base_expo_histogram(b, "symbolizer_rpc_duration_seconds", labels,
				    &rpc->rows[i].seconds);
	}
}

void svc_rpc_render_calls(const svc_rpc *rpc, base_buf *b)
{
	/* Every method's calls (Symbolize's alone when the help was written). */
	base_expo_family(b, "symbolizer_calls_in_flight", "gauge", "Symbolize calls in progress.");
	base_expo_u64(b, "symbolizer_calls_in_flight", "", rpc->n_calls);
	base_expo_family(b, "symbolizer_waiting_calls_bytes", "gauge",
			 "Memory held by calls that wait for fetches and builds (--waiting-calls-bytes).");
	base_expo_u64(b, "symbolizer_waiting_calls_bytes", "", rpc->waiting_bytes);
	base_expo_family(b, "symbolizer_waiting_calls_refused_total", "counter",
			 "Calls answered resource_exhausted: waiting would pass --waiting-calls-bytes.");
	base_expo_u64(b, "symbolizer_waiting_calls_refused_total", "", rpc->waiting_refused);
}
