// SPDX-License-Identifier: Apache-2.0
/*
 * svc_h2_stream: one HTTP/2 stream of a gRPC call (svc_h2_impl.h): its
 * request's headers (the header list capped), its message (capped from the
 * prefix on), the call through the RPC table (svc_rpc_serve: Connect's
 * handler, checks, caps, deadline and metrics), then the response: HEADERS,
 * one length-prefixed message in DATA, and trailers with grpc-status and
 * grpc-message (and grpc-status-details-bin for an error); an error is a
 * trailers-only response. gRPC-Web (application/grpc-web, +proto,
 * -text) on the same streams: the trailers are the last length-prefixed
 * frame of the DATA (flag 0x80), -text's request and response in base64.
 * A stream closed while its call runs is orphaned and freed by the call's
 * answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <nghttp2/nghttp2.h>

#include "base/base_clock.h"
#include "service/http/svc_h2_impl.h"
#include "service/rpc/svc_grpc.h"

#define MAKE_NV(n, v, vlen)                                                                   \
	{(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vlen), NGHTTP2_NV_FLAG_NONE}
#define NV(n, v) MAKE_NV(n, v, strlen(v))

h2_stream *h2_stream_new(h2_conn *c, int32_t id)
{
	h2_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	svc_h2 *h = c->h;
	s->conn = c;
	s->id = id;
	s->opened_ms = base_mono_ms();
	uint64_t cap = h->o.max_message_bytes + SVC_GRPC_PREFIX;
	base_buf_init(&s->body, cap > SIZE_MAX ? SIZE_MAX : (size_t)cap);
	s->next = c->streams;
	if (c->streams)
		c->streams->prev = s;
	c->streams = s;
	h->n_streams++;
	h->streams_total++;
	return s;
}

/* A unary answer's bytes: referenced by the socket's buffer (no copy) and
 * freed when the last reference is written and the stream gone. */
typedef struct h2_pin {
	struct evbuffer *buf;
	unsigned refs;
} h2_pin;

static void unpin(const void *data, size_t len, void *arg)
{
	(void)data, (void)len;
	h2_pin *p = arg;
	if (--p->refs == 0) {
		evbuffer_free(p->buf);
		free(p);
	}
}

static void stream_free(h2_stream *s)
{
	base_buf_deinit(&s->body);
	free(s->decoded);
	if (s->pin)
		unpin(NULL, 0, s->pin);
	else if (s->out)
		evbuffer_free(s->out);
	free(s);
}

/* Off its connection: freed, or orphaned while its call runs. */
static void detach(h2_stream *s)
{
	if (!s->conn)
		return;
	h2_conn_unlink_stream(s->conn, s);
	s->conn->h->n_streams--;
	s->conn = NULL;
	if (!s->calling)
		stream_free(s);
}

void h2_stream_closed(h2_stream *s)
{
	detach(s);
}

void h2_stream_conn_gone(h2_stream *s)
{
	detach(s);
}

static void copy_value(char *dst, size_t size, const uint8_t *v, size_t len, bool *bad)
{
	if (len >= size) {
		*bad = true;
		len = size - 1;
	}
	memcpy(dst, v, len);
	dst[len] = '\0';
}

bool h2_stream_header(h2_stream *s, const uint8_t *name, size_t nlen, const uint8_t *value,
		      size_t vlen)
{
	svc_h2 *h = s->conn->h;
	s->header_bytes += nlen + vlen + 32;  /* RFC 9113's size of an entry */
	if (s->header_bytes > h->o.max_header_list_bytes) {
		h->header_list_too_large++;
		return false;
	}
#define IS(lit) (nlen == sizeof(lit) - 1 && memcmp(name, lit, nlen) == 0)
	if (IS(":method"))
		s->post = vlen == 4 && memcmp(value, "POST", 4) == 0;
	else if (IS(":path"))
		copy_value(s->path, sizeof(s->path), value, vlen, &s->bad_header);
	else if (IS("content-type")) {
		copy_value(s->ctype, sizeof(s->ctype), value, vlen, &s->bad_header);
		bool json;
		if (svc_grpc_content_type(s->ctype, "application/grpc-web-text", &json) &&
		    s->body.max < SIZE_MAX / 2)
			s->body.max = s->body.max / 3 * 4 + 8;  /* base64 of the capped bytes */
	}
	else if (IS("grpc-encoding"))
		copy_value(s->encoding, sizeof(s->encoding), value, vlen, &s->bad_header);
	else if (IS("grpc-accept-encoding"))
		copy_value(s->accept, sizeof(s->accept), value, vlen, &s->bad_header);
	else if (IS("grpc-timeout"))
		copy_value(s->timeout, sizeof(s->timeout), value, vlen, &s->bad_header);
#undef IS
	return true;
}

/* ---- the response ---- */

/* The kind of a gRPC content-type (H2_GRPC, H2_WEB, H2_WEB_TEXT), -1: none. */
static int kind_of(const char *ctype, bool *json)
{
	if (svc_grpc_content_type(ctype, "application/grpc-web-text", json))
		return H2_WEB_TEXT;
	if (svc_grpc_content_type(ctype, "application/grpc-web", json))
		return H2_WEB;
	if (svc_grpc_content_type(ctype, "application/grpc", json))
		return H2_GRPC;
	return -1;
}

/* The response's content-type: the request's kind, proto or JSON. */
static const char *response_type(const h2_stream *s)
{
	static const char *const types[3][2] = {
		{"application/grpc", "application/grpc+json"},
		{"application/grpc-web+proto", "application/grpc-web+json"},
		{"application/grpc-web-text+proto", "application/grpc-web-text+json"},
	};
	bool json = false;
	int k = kind_of(s->ctype, &json);
	return types[k < 0 ? H2_GRPC : k][json];
}

static ssize_t read_out(nghttp2_session *session, int32_t id, uint8_t *buf, size_t len,
			uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	(void)arg;
	(void)buf;
	h2_stream *s = src->ptr;
	size_t avail = evbuffer_get_length(s->out) - s->sent;
	if (s->streaming && !s->finished && avail == 0)
		return NGHTTP2_ERR_DEFERRED;  /* resumed by the next answer (reflect, watch) */
	/* The bytes move from s->out to the socket's buffer in
	 * h2_stream_send_data (no copy into nghttp2's frame buffer). */
	size_t n = avail < len ? avail : len;
	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (s->web) {  /* the trailers are in the DATA: END_STREAM after it */
		if (n == avail)
			*flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)n;
	}
	if (n == avail && (!s->streaming || s->finished)) {
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		char status[12];
		snprintf(status, sizeof(status), "%d", s->status);
		nghttp2_nv t[] = {NV("grpc-status", status), NV("grpc-message", s->message)};
		if (nghttp2_submit_trailer(session, id, t, s->message[0] ? 2 : 1) != 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

/* length bytes of a pinned answer from s->sent on: large pieces by
 * reference, small ones copied. False: out of memory. */
static bool add_pinned(h2_stream *s, struct evbuffer *out, size_t length)
{
	struct evbuffer_ptr pos;
	struct evbuffer_iovec vec[8];
	while (length) {
		if (evbuffer_ptr_set(s->out, &pos, s->sent, EVBUFFER_PTR_SET) != 0)
			return false;
		int nv = evbuffer_peek(s->out, (ev_ssize_t)length, &pos, vec, 8);
		if (nv <= 0)
			return false;
		for (int i = 0; i < nv && i < 8 && length; i++) {
			size_t k = vec[i].iov_len < length ? vec[i].iov_len : length;
			if (k < 1024) {
				if (evbuffer_add(out, vec[i].iov_base, k) != 0)
					return false;
			} else {
				s->pin->refs++;
				if (evbuffer_add_reference(out, vec[i].iov_base, k, unpin, s->pin) != 0) {
					s->pin->refs--;
					return false;
				}
			}
			s->sent += k, length -= k;
		}
	}
	return true;
}

int h2_stream_send_data(h2_stream *s, struct evbuffer *out, const uint8_t *framehd,
			size_t length, size_t padlen)
{
	static const uint8_t zeros[256];
	uint8_t pad = padlen ? (uint8_t)(padlen - 1) : 0;
	if (evbuffer_add(out, framehd, 9) != 0 || (padlen && evbuffer_add(out, &pad, 1) != 0) ||
	    !(s->pin ? add_pinned(s, out, length)
		     : evbuffer_remove_buffer(s->out, out, length) == (int)length) ||
	    (padlen > 1 && evbuffer_add(out, zeros, padlen - 1) != 0))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

/* A trailers-only response (an error, or grpc-status of err's code). */
static void send_error(h2_stream *s, const svc_error *err)
{
	char status[12], details[SVC_GRPC_DETAILS_MAX];
	snprintf(status, sizeof(status), "%d", svc_grpc_status(err->code));
	svc_grpc_percent_encode(err->msg, s->message, sizeof(s->message));
	size_t nd = svc_grpc_status_details(err, details, sizeof(details));
	nghttp2_nv nv[6] = {
		NV(":status", "200"),
		NV("content-type", response_type(s)),
		NV("grpc-accept-encoding", "gzip,identity"),
		NV("grpc-status", status),
	};
	size_t n = 4;
	if (s->message[0])
		nv[n++] = (nghttp2_nv)NV("grpc-message", s->message);
	if (nd)
		nv[n++] = (nghttp2_nv)MAKE_NV("grpc-status-details-bin", details, nd);
	nghttp2_session *session = s->conn->session;
	nghttp2_submit_response(session, s->id, nv, n, NULL);
}

/* A plain HTTP status, for a request that is not gRPC. */
static void send_http(h2_stream *s, const char *status)
{
	nghttp2_nv nv[] = {NV(":status", status)};
	nghttp2_submit_response(s->conn->session, s->id, nv, 1, NULL);
}

/* gRPC-Web: the trailer frame after the message, and -text's base64 of
 * both; false: out of memory. */
static bool web_trailers(h2_stream *s)
{
	static const char trailer[] = "grpc-status:0\r\n";
	uint8_t prefix[SVC_GRPC_PREFIX];
	svc_grpc_prefix(prefix, SVC_GRPC_TRAILER_FLAG, sizeof(trailer) - 1);
	if (evbuffer_add(s->out, prefix, sizeof(prefix)) != 0 ||
	    evbuffer_add(s->out, trailer, sizeof(trailer) - 1) != 0)
		return false;
	if (s->web != H2_WEB_TEXT)
		return true;
	struct evbuffer *text = evbuffer_new();
	size_t n = evbuffer_get_length(s->out);
	const uint8_t *raw = evbuffer_pullup(s->out, -1);
	if (!text || !raw || !svc_grpc_base64_encode(raw, n, text)) {
		if (text)
			evbuffer_free(text);
		return false;
	}
	evbuffer_free(s->out);
	s->out = text;
	return true;
}

static void answer(void *arg, const svc_error *err, struct evbuffer *response, bool gzipped)
{
	h2_stream *s = arg;
	s->calling = false;
	s->answered = true;
	if (!s->conn) {  /* the client left */
		stream_free(s);
		return;
	}
	h2_conn *c = s->conn;
	size_t n = response ? evbuffer_get_length(response) : 0;
	uint8_t prefix[SVC_GRPC_PREFIX];
	svc_error e;
	if (!err && (n > UINT32_MAX || !(s->out = evbuffer_new()))) {
		svc_error_set(&e, SVC_E_NOMEM, "out of memory writing the response");
		err = &e;
	}
	if (err) {
		send_error(s, err);
		h2_conn_flush(c);
		return;
	}
	svc_grpc_prefix(prefix, gzipped ? 1 : 0, (uint32_t)n);
	evbuffer_add(s->out, prefix, sizeof(prefix));
	evbuffer_remove_buffer(response, s->out, n);
	s->status = 0;
	if (s->web && !web_trailers(s)) {
		svc_error_set(&e, SVC_E_NOMEM, "out of memory writing the response");
		send_error(s, &e);
		h2_conn_flush(c);
		return;
	}
	if ((s->pin = malloc(sizeof(*s->pin))) != NULL)  /* else: moved, copied */
		*s->pin = (h2_pin){.buf = s->out, .refs = 1};
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_out};
	nghttp2_nv nv[] = {
		NV(":status", "200"),
		NV("content-type", response_type(s)),
		NV("grpc-accept-encoding", "gzip,identity"),
		NV("grpc-encoding", "gzip"),
	};
	nghttp2_submit_response(c->session, s->id, nv, gzipped ? 4 : 3, &dp);
	h2_conn_flush(c);
}

/* Refuses the stream's call now (before it starts). */
static void refuse(h2_stream *s, svc_errc code, const char *msg)
{
	svc_error err;
	svc_error_set(&err, code, "%s", msg);
	s->answered = true;
	send_error(s, &err);
}

/* ---- a bidirectional stream: server reflection ---- */

static bool is_reflection(const h2_stream *s)
{
	bool json;
	return s->post && svc_grpc_content_type(s->ctype, "application/grpc", &json) && !json &&
	       (strcmp(s->path, SVC_GRPC_REFLECTION_V1) == 0 ||
		strcmp(s->path, SVC_GRPC_REFLECTION_V1ALPHA) == 0);
}

static void start_or_resume(h2_stream *s);

/* Answers each whole message of the body, then starts or resumes the
 * response's DATA (the trailers follow once the request ends). */
static void reflect(h2_stream *s)
{
	size_t off = 0;
	while (s->body.len - off >= SVC_GRPC_PREFIX && s->status == 0) {
		const uint8_t *p = s->body.data + off;
		size_t n = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
		if (p[0] != 0) {
			s->status = svc_grpc_status(SVC_E_UNIMPLEMENTED);
			svc_grpc_percent_encode("reflection requests are not compressed here",
						s->message, sizeof(s->message));
			break;
		}
		if (s->body.len - off - SVC_GRPC_PREFIX < n)
			break;
		struct evbuffer *msg = evbuffer_new();
		uint8_t prefix[SVC_GRPC_PREFIX];
		if (!msg || !svc_grpc_reflection_answer(p + SVC_GRPC_PREFIX, n, msg)) {
			if (msg)
				evbuffer_free(msg);
			s->status = svc_grpc_status(SVC_E_NOMEM);
			break;
		}
		svc_grpc_prefix(prefix, 0, (uint32_t)evbuffer_get_length(msg));
		evbuffer_add(s->out, prefix, sizeof(prefix));
		evbuffer_add_buffer(s->out, msg);
		evbuffer_free(msg);
		off += SVC_GRPC_PREFIX + n;
	}
	memmove(s->body.data, s->body.data + off, s->body.len - off);
	s->body.len -= off;
	s->finished = s->request_done;
	start_or_resume(s);
}

/* The response of a stream answered as it goes: HEADERS once, then DATA as
 * s->out fills (read_out defers while it is empty and not finished). */
static void start_or_resume(h2_stream *s)
{
	nghttp2_session *session = s->conn->session;
	if (s->response_started) {
		nghttp2_session_resume_data(session, s->id);
		return;
	}
	s->response_started = true;
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = read_out};
	nghttp2_nv nv[] = {
		NV(":status", "200"),
		NV("content-type", "application/grpc"),
		NV("grpc-accept-encoding", "identity"),
	};
	nghttp2_submit_response(session, s->id, nv, 3, &dp);
}

/* Whether the stream is (now) a reflection stream, its data handled. */
static bool reflect_data(h2_stream *s, const uint8_t *data, size_t len)
{
	if (!s->streaming) {
		if (!is_reflection(s))
			return false;
		if (!(s->out = evbuffer_new())) {
			refuse(s, SVC_E_NOMEM, "out of memory");
			return true;
		}
		s->streaming = true;
	}
	if (!base_buf_append(&s->body, data, len) && s->status == 0) {
		s->status = svc_grpc_status(SVC_E_TOO_LARGE);
		svc_grpc_percent_encode("reflection request over the message limit", s->message,
					sizeof(s->message));
	}
	reflect(s);
	return true;
}

void h2_stream_data(h2_stream *s, const uint8_t *data, size_t len)
{
	if (s->answered)
		return;  /* refused already: the rest is dropped */
	if (reflect_data(s, data, len))
		return;
	if (!base_buf_append(&s->body, data, len)) {
		svc_error err;
		svc_error_set(&err, SVC_E_TOO_LARGE,
			      "gRPC message over the limit of %llu bytes",
			      (unsigned long long)s->conn->h->o.max_message_bytes);
		s->answered = true;
		send_error(s, &err);
		/* The client may stop sending once the answer is out (RFC 9113
		 * 8.1): RST_STREAM(NO_ERROR) after it, svc_h2_conn.c's on_sent. */
		s->reset_after_answer = true;
	}
}

/* gRPC-Web text: the body's base64 decoded in place of it; false: answered. */
static bool decode_text(h2_stream *s)
{
	size_t n = 0, room = s->body.len / 4 * 3 + 1;
	if (!(s->decoded = malloc(room))) {
		refuse(s, SVC_E_NOMEM, "out of memory");
		return false;
	}
	if (svc_grpc_base64_decode((const char *)s->body.data, s->body.len, s->decoded, &n) !=
	    SVC_OK) {
		refuse(s, SVC_E_INVALID, "grpc-web-text: the body is not base64");
		return false;
	}
	base_buf_deinit(&s->body);
	s->body.data = s->decoded;
	s->body.len = n;
	s->body.cap = room;
	s->decoded = NULL;
	return true;
}

/* The checks of gRPC's headers; false: answered. */
static bool check_headers(h2_stream *s, svc_rpc_request *r)
{
	int kind = kind_of(s->ctype, &r->json);
	if (kind < 0) {
		send_http(s, "415");  /* PROTOCOL-HTTP2.md: not gRPC */
		s->answered = true;
		return false;
	}
	if (!s->post) {
		send_http(s, "405");
		s->answered = true;
		return false;
	}
	s->web = (uint8_t)kind;
	if (s->bad_header) {
		refuse(s, SVC_E_INVALID, "a request header is over its length limit");
		return false;
	}
	if (kind == H2_WEB_TEXT && !decode_text(s))
		return false;
	r->timeout_ms = -1;
	if (s->timeout[0] && !svc_grpc_parse_timeout(s->timeout, &r->timeout_ms)) {
		refuse(s, SVC_E_INVALID, "grpc-timeout must be 1 to 8 digits and a unit (HMSmun)");
		return false;
	}
	if (s->encoding[0] && strcasecmp(s->encoding, "identity") != 0 &&
	    strcasecmp(s->encoding, "gzip") != 0) {
		refuse(s, SVC_E_UNIMPLEMENTED, "grpc-encoding is not supported (gzip, identity are)");
		return false;
	}
	r->gzip_out = svc_grpc_lists_gzip(s->accept);
	return true;
}

/* grpc.health.v1.Health/Watch: the status now, then NOT_SERVING at shutdown
 * (h2_stream_stopping); the stream stays open until then. */
static void health_message(h2_stream *s, int status)
{
	uint8_t m[SVC_GRPC_PREFIX + 2];
	svc_grpc_prefix(m, 0, 2);
	m[5] = 0x08;
	m[6] = (uint8_t)status;
	evbuffer_add(s->out, m, sizeof(m));
}

static bool watch(h2_stream *s)
{
	bool json;
	if (strcmp(s->path, SVC_GRPC_HEALTH_PREFIX "Watch") != 0 || !s->post ||
	    !svc_grpc_content_type(s->ctype, "application/grpc", &json) || json)
		return false;
	svc_h2 *h = s->conn->h;
	const uint8_t *msg;
	size_t n;
	bool z;
	svc_error err;
	char service[200];
	if (svc_grpc_parse_unary(s->body.data, s->body.len, 4096, &msg, &n, &z, &err) != SVC_OK ||
	    z || !svc_grpc_health_request(msg, n, service, sizeof(service))) {
		refuse(s, SVC_E_INVALID, "grpc.health.v1.HealthCheckRequest: malformed");
		return true;
	}
	if (!(s->out = evbuffer_new())) {
		refuse(s, SVC_E_NOMEM, "out of memory");
		return true;
	}
	s->streaming = s->watching = true;
	bool serving = !h->stopping && (!h->o.serving || h->o.serving(h->o.arg));
	bool known = !service[0] || strcmp(service, svc_rpc_service(h->o.rpc)) == 0;
	/* SERVING 1, NOT_SERVING 2, SERVICE_UNKNOWN 3 */
	health_message(s, !known ? 3 : serving ? 1 : 2);
	s->finished = h->stopping;
	start_or_resume(s);
	return true;
}

void h2_stream_stopping(h2_stream *s)
{
	if (!s->watching || s->finished)
		return;
	health_message(s, 2);
	s->finished = true;
	s->status = svc_grpc_status(SVC_E_SHUTTING_DOWN);
	svc_grpc_percent_encode("server shutting down", s->message, sizeof(s->message));
	nghttp2_session_resume_data(s->conn->session, s->id);
}

void h2_stream_request_done(h2_stream *s)
{
	s->request_done = true;
	if (s->answered)
		return;
	if (reflect_data(s, NULL, 0) || watch(s))
		return;
	svc_h2 *h = s->conn->h;
	svc_rpc_request r = {.path = s->path};
	if (!check_headers(s, &r))
		return;
	svc_error err;
	bool compressed = false;
	if (svc_grpc_parse_unary(s->body.data, s->body.len, h->o.max_message_bytes, &r.body,
				 &r.len, &compressed, &err) != SVC_OK) {
		s->answered = true;
		send_error(s, &err);
		return;
	}
	if (compressed && strcasecmp(s->encoding, "gzip") != 0) {
		/* PROTOCOL-HTTP2.md: a compressed message without its encoding. */
		refuse(s, SVC_E_INTERNAL, "compressed message without grpc-encoding");
		return;
	}
	r.gzip_in = compressed;
	svc_rpc_sink sink = {.answer = answer, .arg = s};
	s->calling = true;
	bool serving = !h->stopping && (!h->o.serving || h->o.serving(h->o.arg));
	if (!svc_grpc_services_serve(h->o.rpc, serving, s->path, r.body, r.len, compressed, &sink))
		svc_rpc_serve(h->o.rpc, &r, &sink);
}
