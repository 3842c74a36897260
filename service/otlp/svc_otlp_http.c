// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_http: OTLP/HTTP's profiles route, POST /v1development/profiles
 * (opentelemetry.io/docs/specs/otlp/#otlphttp), in front of the Export method
 * of the RPC table (svc_otlp_export_handle, through the composition root's
 * serve hook: the same caps, gzip inflation, in-flight limit and metrics as
 * every method). Content-Type application/x-protobuf or application/json
 * (OTLP/JSON: the method's codec has SVC_RPC_JSON_OTLP, hex IDs), gzip or
 * identity Content-Encoding; the answer is the ExportProfilesServiceResponse
 * in the request's encoding, or a google.rpc.Status in it with OTLP's
 * status: 400 for a bad request, 413 over a cap, 415 for a type or encoding
 * we do not take, 503 with Retry-After when overloaded (the forward queue
 * full, too many calls, shutting down), 500 otherwise.
 */
#include "service/otlp/svc_otlp.h"
#include "service/otlp/svc_otlp_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "service/rpc/svc_grpc.h"
#include "service/rpc/svc_wire.h"

#define PROTOBUF "application/x-protobuf"
#define JSON "application/json"
#define RETRY_AFTER_S "1"

typedef struct http_call {
	const svc_otlp_options *o;
	struct evhttp_request *req;
	bool json;
} http_call;

static bool is_type(const char *ctype, const char *type)
{
	size_t n = strlen(type);
	return ctype && strncasecmp(ctype, type, n) == 0 &&
	       (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

/* OTLP/HTTP's status for an error of ours. */
static int http_status(svc_errc code)
{
	switch (code) {
	case SVC_E_INVALID:
		return 400;
	case SVC_E_TOO_LARGE:
		return 413;
	case SVC_E_MEDIA_TYPE:
	case SVC_E_UNIMPLEMENTED:
		return 415;
	case SVC_E_METHOD:
		return 405;
	case SVC_E_OVERLOADED:
	case SVC_E_SHUTTING_DOWN:
	case SVC_E_NOMEM:
		return 503;
	case SVC_E_DEADLINE:
		return 504;
	default:
		return 500;
	}
}

/* msg as a JSON string's contents (quotes, backslashes, controls escaped). */
static void json_escape(struct evbuffer *b, const char *msg)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p == '"' || *p == '\\')
			evbuffer_add_printf(b, "\\%c", *p);
		else if (*p < 0x20)
			evbuffer_add_printf(b, "\\u%04x", *p);
		else
			evbuffer_add(b, p, 1);
	}
}

/* google.rpc.Status {code = 1, message = 2} in the request's encoding. */
static void status_body(struct evbuffer *b, bool json, int code, const char *msg)
{
	if (json) {
		evbuffer_add_printf(b, "{\"code\":%d,\"message\":\"", code);
		json_escape(b, msg);
		evbuffer_add(b, "\"}", 2);
		return;
	}
	size_t n = strlen(msg);
	uint8_t head[1 + 10 + 1 + 10], *p = head;
	*p++ = SVC_WIRE_TAG(1, SVC_WIRE_VARINT);
	p = svc_wire_put_varint(p, (uint64_t)(uint32_t)code);
	*p++ = SVC_WIRE_TAG(2, SVC_WIRE_LEN);
	p = svc_wire_put_varint(p, n);
	evbuffer_add(b, head, (size_t)(p - head));
	evbuffer_add(b, msg, n);
}

static void send_error(const svc_otlp_options *o, struct evhttp_request *req, bool json,
		       const svc_error *err)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	int status = http_status(err->code);
	struct evbuffer *b = evbuffer_new();
	evhttp_add_header(out, "Content-Type", json ? JSON : PROTOBUF);
	if (status == 503 || status == 429)
		evhttp_add_header(out, "Retry-After", RETRY_AFTER_S);
	if (b)
		status_body(b, json, svc_grpc_status(err->code), err->msg);
	o->reply(o->arg, req, status, b);
	if (b)
		evbuffer_free(b);
}

static void answer(void *arg, const svc_error *err, struct evbuffer *response, bool gzipped)
{
	http_call *c = arg;
	if (err) {
		send_error(c->o, c->req, c->json, err);
	} else {
		struct evkeyvalq *out = evhttp_request_get_output_headers(c->req);
		evhttp_add_header(out, "Content-Type", c->json ? JSON : PROTOBUF);
		if (gzipped)
			evhttp_add_header(out, "Content-Encoding", "gzip");
		c->o->reply(c->o->arg, c->req, 200, response);
	}
	free(c);
}

static bool refuse(const svc_otlp_options *o, struct evhttp_request *req, bool json,
		   svc_errc code, const char *msg)
{
	svc_error err;
	svc_error_set(&err, code, "%s", msg);
	send_error(o, req, json, &err);
	return true;
}

bool svc_otlp_http_handle(svc_otlp *s, struct evhttp_request *req)
{
	const svc_otlp_options *o = svc_otlp_options_of(s);
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *ctype = evhttp_find_header(in, "Content-Type");
	const char *cenc = evhttp_find_header(in, "Content-Encoding");
	bool json = is_type(ctype, JSON);
	if (!json && !is_type(ctype, PROTOBUF)) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Accept-Post",
				  PROTOBUF ", " JSON);
		return refuse(o, req, false, SVC_E_MEDIA_TYPE,
			      "OTLP/HTTP takes application/x-protobuf or application/json");
	}
	if (cenc && strcasecmp(cenc, "gzip") != 0 && strcasecmp(cenc, "identity") != 0)
		return refuse(o, req, json, SVC_E_MEDIA_TYPE,
			      "Content-Encoding is not supported (gzip, identity are)");
	struct evbuffer *body = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(body);
	if (len > o->max_request_bytes)
		return refuse(o, req, json, SVC_E_TOO_LARGE,
			      "the request body is over --max-request-bytes");
	const uint8_t *bytes = len ? evbuffer_pullup(body, -1) : (const uint8_t *)"";
	http_call *c = calloc(1, sizeof(*c));
	if (!bytes || !c) {
		free(c);
		return refuse(o, req, json, SVC_E_NOMEM, "out of memory");
	}
	*c = (http_call){o, req, json};
	const char *aenc = evhttp_find_header(in, "Accept-Encoding");
	svc_rpc_request r = {
		.path = SVC_OTLP_EXPORT_PATH, .body = bytes, .len = len,
		.gzip_in = cenc && strcasecmp(cenc, "gzip") == 0,
		.gzip_out = aenc && strcasestr(aenc, "gzip") != NULL,
		.json = json, .timeout_ms = -1,
	};
	svc_rpc_sink sink = {.answer = answer, .arg = c};
	o->serve(o->arg, &r, &sink);
	return true;
}
