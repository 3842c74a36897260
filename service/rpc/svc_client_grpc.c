// SPDX-License-Identifier: Apache-2.0
/*
 * svc_client_grpc: symbolctl's calls over gRPC (HTTP/2 with prior knowledge,
 * libcurl on nghttp2) and gRPC-Web (HTTP/1.1) (svc_client.h): the request as
 * one length-prefixed message, grpc-timeout, the response's message and its
 * status from the trailers (gRPC: HTTP/2 trailers, which libcurl hands to the
 * header callback; gRPC-Web: the trailer frame, or headers for a
 * trailers-only answer). grpc-message is percent-decoded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/base_buf.h"
#include "service/rpc/svc_client.h"
#include "service/rpc/svc_grpc.h"

typedef struct status {
	int code;                  /* -1: none seen */
	char message[512];
} status;

static void percent_decode(const char *in, size_t n, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned v;
		if (in[i] == '%' && i + 2 < n && sscanf(in + i + 1, "%2x", &v) == 1) {
			out[o++] = (char)v;
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
}

/* "grpc-status: N" and "grpc-message: M" lines (headers, trailers or a
 * gRPC-Web trailer frame's). */
static void status_line(status *st, const char *line, size_t n)
{
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n'))
		n--;
	if (n > 12 && strncasecmp(line, "grpc-status:", 12) == 0)
		st->code = atoi(line + 12);
	else if (n > 13 && strncasecmp(line, "grpc-message:", 13) == 0) {
		size_t k = 13;
		while (k < n && line[k] == ' ')
			k++;
		percent_decode(line + k, n - k, st->message, sizeof(st->message));
	}
}

static size_t header_cb(char *p, size_t size, size_t n, void *arg)
{
	status_line(arg, p, size * n);
	return size * n;
}

static size_t write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	size_t len = size * n;
	return base_buf_append(arg, ptr, len) ? len : 0;
}

/* The response body: the message frame into res, a trailer frame into st. */
static bool frames(const uint8_t *p, size_t n, status *st, svc_client_result *res)
{
	while (n >= SVC_GRPC_PREFIX) {
		size_t len = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
		if (len > n - SVC_GRPC_PREFIX)
			return false;
		const uint8_t *m = p + SVC_GRPC_PREFIX;
		if (p[0] & SVC_GRPC_TRAILER_FLAG) {
			for (size_t i = 0; i < len;) {
				const uint8_t *nl = memchr(m + i, '\n', len - i);
				size_t end = nl ? (size_t)(nl - m) + 1 : len;
				status_line(st, (const char *)m + i, end - i);
				i = end;
			}
		} else if (p[0] != 0 || res->body) {
			return false;  /* compressed (we ask for none) or a second message */
		} else if (!(res->body = malloc(len ? len : 1))) {
			return false;
		} else {
			memcpy(res->body, m, len);
			res->body_size = len;
		}
		p += SVC_GRPC_PREFIX + len;
		n -= SVC_GRPC_PREFIX + len;
	}
	return n == 0;
}

svc_errc svc_client_grpc_unary(const svc_client_call *call, svc_client_result *res)
{
	memset(res, 0, sizeof(*res));
	bool web = call->protocol == SVC_CLIENT_GRPC_WEB;
	size_t sl = strlen(call->server);
	while (sl && call->server[sl - 1] == '/')
		sl--;
	const char *path = call->method;
	while (*path == '/')
		path++;
	base_buf ub, req, b;
	base_buf_init(&ub, SVC_CLIENT_URL_MAX);
	base_buf_init(&req, SIZE_MAX);
	base_buf_init(&b, call->max_response ? call->max_response : 256u << 20);
	uint8_t prefix[SVC_GRPC_PREFIX];
	svc_grpc_prefix(prefix, 0, (uint32_t)call->request_size);
	CURL *h = curl_easy_init();
	svc_errc out = SVC_E_NOMEM;
	if (!h || !base_buf_append(&ub, call->server, sl) || !base_buf_printf(&ub, "/%s", path) ||
	    !base_buf_append(&ub, "", 1) || !base_buf_append(&req, prefix, sizeof(prefix)) ||
	    !base_buf_append(&req, call->request, call->request_size)) {
		snprintf(res->code, sizeof(res->code), "invalid_argument");
		snprintf(res->message, sizeof(res->message), "%s",
			 ub.over ? "server URL over the 64 KiB limit" : "out of memory");
		out = ub.over ? SVC_E_INVALID : SVC_E_NOMEM;
		goto done;
	}
	const char *url = (const char *)ub.data;
	struct curl_slist *hdrs = NULL;
	hdrs = curl_slist_append(hdrs, web ? "Content-Type: application/grpc-web+proto"
					   : "Content-Type: application/grpc");
	hdrs = curl_slist_append(hdrs, web ? "X-Grpc-Web: 1" : "TE: trailers");
	hdrs = curl_slist_append(hdrs, "Expect:");
	char tbuf[64];
	if (call->timeout_ms > 0) {
		snprintf(tbuf, sizeof(tbuf), "grpc-timeout: %lldm", (long long)call->timeout_ms);
		hdrs = curl_slist_append(hdrs, tbuf);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)call->timeout_ms + 1000);
	}
	status st = {.code = -1};
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, web ? CURL_HTTP_VERSION_1_1
						     : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req.len);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &st);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "symbolctl");
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->http_status);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		snprintf(res->message, sizeof(res->message), "%.300s: %s", url,
			 b.over ? "response too large" : curl_easy_strerror(rc));
		snprintf(res->code, sizeof(res->code), "%s",
			 rc == CURLE_OPERATION_TIMEDOUT ? "deadline_exceeded" : "unavailable");
		out = rc == CURLE_OPERATION_TIMEDOUT ? SVC_E_DEADLINE : SVC_E_UPSTREAM;
		goto done;
	}
	out = SVC_E_UPSTREAM;
	if (res->http_status != 200) {
		snprintf(res->code, sizeof(res->code), "unknown");
		snprintf(res->message, sizeof(res->message), "HTTP %ld (not a gRPC answer)",
			 res->http_status);
	} else if (!frames(b.data, b.len, &st, res)) {
		snprintf(res->code, sizeof(res->code), "internal");
		snprintf(res->message, sizeof(res->message), "malformed gRPC response body");
	} else if (st.code != 0) {
		snprintf(res->code, sizeof(res->code), "%s",
			 st.code < 0 ? "internal" : svc_connect_code_name(st.code));
		snprintf(res->message, sizeof(res->message), "%s",
			 st.code < 0 ? "no grpc-status in the answer" : st.message);
	} else if (!res->body) {
		snprintf(res->code, sizeof(res->code), "internal");
		snprintf(res->message, sizeof(res->message), "grpc-status 0 without a message");
	} else {
		out = SVC_OK;
	}
	if (out != SVC_OK)
		svc_client_result_deinit(res);
done:
	if (h)
		curl_easy_cleanup(h);
	base_buf_deinit(&ub);
	base_buf_deinit(&req);
	base_buf_deinit(&b);
	return out;
}
