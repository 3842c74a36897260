// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc_web: gRPC-Web over HTTP/1.1 on the RPC routes (svc_grpc_impl.h),
 * for browsers and proxies without HTTP/2: the request's one length-prefixed
 * message (binary, or base64 for application/grpc-web-text), the call through
 * the RPC table (svc_rpc_serve, as Connect and gRPC), and the response's
 * message frame then a trailer frame (flag 0x80, "grpc-status:0\r\n"); an
 * error is trailers-only (grpc-status and grpc-message headers, no body).
 * CORS for browser dashboards, off unless --cors-allowed-origins: the
 * allowed Origin echoed, grpc-status and grpc-message exposed, preflights
 * answered; Connect calls on the same routes get the same headers.
 * Reference: grpc/doc/PROTOCOL-WEB.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "service/http/svc_grpc_impl.h"
#include "service/rpc/svc_grpc.h"

#define WEB "application/grpc-web"
#define WEB_TEXT "application/grpc-web-text"
#define EXPOSED                                                                                \
	"grpc-status, grpc-message, grpc-status-details-bin, grpc-encoding, grpc-accept-encoding"
#define ALLOWED_HEADERS                                                                        \
	"content-type, x-grpc-web, x-user-agent, grpc-timeout, grpc-encoding, "                  \
	"grpc-accept-encoding, connect-protocol-version, connect-timeout-ms, "                 \
	"content-encoding, accept-encoding"

struct svc_grpc_web {
	svc_grpc_web_options o;
	char *origins;               /* --cors-allowed-origins, NULL: off */
};

typedef struct web_call {
	svc_grpc_web *w;
	struct evhttp_request *req;
	bool text, json;
	uint8_t *decoded;            /* the base64 body's bytes */
} web_call;

svc_grpc_web *svc_grpc_web_create(const svc_grpc_web_options *o)
{
	svc_grpc_web *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->o = *o;
	if (o->cors_allowed_origins && *o->cors_allowed_origins &&
	    !(w->origins = strdup(o->cors_allowed_origins))) {
		free(w);
		return NULL;
	}
	w->o.cors_allowed_origins = w->origins;
	return w;
}

void svc_grpc_web_destroy(svc_grpc_web *w)
{
	if (!w)
		return;
	free(w->origins);
	free(w);
}

/* ---- CORS ---- */

static bool origin_allowed(const svc_grpc_web *w, const char *origin)
{
	if (!w->origins || !origin)
		return false;
	size_t n = strlen(origin);
	for (const char *p = w->origins; *p;) {
		size_t len = strcspn(p, ",");
		const char *item = p;
		while (len && *item == ' ')
			item++, len--;
		while (len && item[len - 1] == ' ')
			len--;
		if ((len == 1 && *item == '*') || (len == n && strncasecmp(item, origin, n) == 0))
			return true;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return false;
}

/* The CORS headers of an allowed origin; true when a preflight was answered. */
static bool cors(svc_grpc_web *w, struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	const char *origin = evhttp_find_header(in, "Origin");
	if (!origin_allowed(w, origin))
		return false;
	evhttp_add_header(out, "Access-Control-Allow-Origin", origin);
	evhttp_add_header(out, "Vary", "Origin");
	evhttp_add_header(out, "Access-Control-Expose-Headers", EXPOSED);
	if (evhttp_request_get_command(req) != EVHTTP_REQ_OPTIONS ||
	    !evhttp_find_header(in, "Access-Control-Request-Method"))
		return false;
	evhttp_add_header(out, "Access-Control-Allow-Methods", "POST");
	evhttp_add_header(out, "Access-Control-Allow-Headers", ALLOWED_HEADERS);
	evhttp_add_header(out, "Access-Control-Max-Age", "7200");
	w->o.reply(w->o.arg, req, 204, NULL);
	return true;
}

/* ---- a call ---- */

static void add_frame(struct evbuffer *b, uint8_t flags, const void *data, size_t n)
{
	uint8_t prefix[SVC_GRPC_PREFIX];
	svc_grpc_prefix(prefix, flags, (uint32_t)n);
	evbuffer_add(b, prefix, sizeof(prefix));
	evbuffer_add(b, data, n);
}

static void answer(void *arg, const svc_error *err, struct evbuffer *response, bool gzipped)
{
	web_call *c = arg;
	struct evkeyvalq *out = evhttp_request_get_output_headers(c->req);
	const char *ctype = c->text ? (c->json ? WEB_TEXT "+json" : WEB_TEXT "+proto")
				    : (c->json ? WEB "+json" : WEB "+proto");
	evhttp_add_header(out, "Content-Type", ctype);
	evhttp_add_header(out, "grpc-accept-encoding", "gzip,identity");
	struct evbuffer *frames = evbuffer_new(), *body = evbuffer_new();
	size_t n = response ? evbuffer_get_length(response) : 0;
	if (err || !frames || !body || n > UINT32_MAX) {
		svc_error e;
		if (!err) {
			svc_error_set(&e, SVC_E_NOMEM, "out of memory writing the response");
			err = &e;
		}
		char status[12], msg[512], details[SVC_GRPC_DETAILS_MAX];
		snprintf(status, sizeof(status), "%d", svc_grpc_status(err->code));
		svc_grpc_percent_encode(err->msg, msg, sizeof(msg));
		evhttp_add_header(out, "grpc-status", status);  /* trailers-only */
		if (msg[0])
			evhttp_add_header(out, "grpc-message", msg);
		if (svc_grpc_status_details(err, details, sizeof(details)))
			evhttp_add_header(out, "grpc-status-details-bin", details);
		c->w->o.reply(c->w->o.arg, c->req, 200, NULL);
	} else {
		if (gzipped)
			evhttp_add_header(out, "grpc-encoding", "gzip");
		const void *msg = n ? (const void *)evbuffer_pullup(response, -1) : "";
		static const char trailer[] = "grpc-status:0\r\n";
		add_frame(frames, gzipped ? 1 : 0, msg, n);
		add_frame(frames, SVC_GRPC_TRAILER_FLAG, trailer, sizeof(trailer) - 1);
		if (c->text) {
			size_t fn = evbuffer_get_length(frames);
			svc_grpc_base64_encode(evbuffer_pullup(frames, -1), fn, body);
		} else {
			evbuffer_add_buffer(body, frames);
		}
		c->w->o.reply(c->w->o.arg, c->req, 200, body);
	}
	if (frames)
		evbuffer_free(frames);
	if (body)
		evbuffer_free(body);
	free(c->decoded);
	free(c);
}

static void refuse(web_call *c, svc_errc code, const char *msg)
{
	svc_error err;
	svc_error_set(&err, code, "%s", msg);
	answer(c, &err, NULL, false);
}

/* The request's bytes (decoded from base64 for -text); false: answered. */
static bool request_bytes(web_call *c, const uint8_t **p, size_t *n)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(c->req);
	size_t len = evbuffer_get_length(in);
	const uint8_t *raw = len ? evbuffer_pullup(in, -1) : (const uint8_t *)"";
	if (!raw) {
		refuse(c, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (!c->text) {
		*p = raw, *n = len;
		return true;
	}
	if (!(c->decoded = malloc(len / 4 * 3 + 1))) {
		refuse(c, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (svc_grpc_base64_decode((const char *)raw, len, c->decoded, n) != SVC_OK) {
		refuse(c, SVC_E_INVALID, "grpc-web-text: the body is not base64");
		return false;
	}
	*p = c->decoded;
	return true;
}

static void serve(svc_grpc_web *w, web_call *c, const char *path)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(c->req);
	const char *timeout = evhttp_find_header(in, "grpc-timeout");
	const char *enc = evhttp_find_header(in, "grpc-encoding");
	svc_rpc_request r = {.path = path, .json = c->json, .timeout_ms = -1};
	if (timeout && !svc_grpc_parse_timeout(timeout, &r.timeout_ms))
		return refuse(c, SVC_E_INVALID,
			      "grpc-timeout must be 1 to 8 digits and a unit (HMSmun)");
	if (enc && strcasecmp(enc, "identity") != 0 && strcasecmp(enc, "gzip") != 0)
		return refuse(c, SVC_E_UNIMPLEMENTED,
			      "grpc-encoding is not supported (gzip, identity are)");
	r.gzip_out = svc_grpc_lists_gzip(evhttp_find_header(in, "grpc-accept-encoding"));
	const uint8_t *bytes;
	size_t n;
	if (!request_bytes(c, &bytes, &n))
		return;
	svc_error err;
	bool compressed;
	if (svc_grpc_parse_unary(bytes, n, w->o.max_message_bytes, &r.body, &r.len, &compressed,
				 &err) != SVC_OK)
		return answer(c, &err, NULL, false);
	if (compressed && !(enc && strcasecmp(enc, "gzip") == 0))
		return refuse(c, SVC_E_INTERNAL, "compressed message without grpc-encoding");
	r.gzip_in = compressed;
	svc_rpc_sink sink = {.answer = answer, .arg = c};
	bool serving = !w->o.serving || w->o.serving(w->o.arg);
	if (!svc_grpc_services_serve(w->o.rpc, serving, path, r.body, r.len, compressed, &sink))
		svc_rpc_serve(w->o.rpc, &r, &sink);
}

bool svc_grpc_web_handle(svc_grpc_web *w, struct evhttp_request *req, const char *path)
{
	if (cors(w, req))
		return true;
	const char *ctype = evhttp_find_header(evhttp_request_get_input_headers(req),
					       "Content-Type");
	bool json = false, text = false;
	if (svc_grpc_content_type(ctype, WEB_TEXT, &json))
		text = true;
	else if (!svc_grpc_content_type(ctype, WEB, &json))
		return false;
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST)
		return false;  /* Connect's answer: 405 with Allow */
	web_call *c = calloc(1, sizeof(*c));
	if (!c) {
		w->o.reply(w->o.arg, req, 500, NULL);
		return true;
	}
	c->w = w;
	c->req = req;
	c->text = text;
	c->json = json;
	serve(w, c, path);
	return true;
}
