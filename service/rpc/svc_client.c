// SPDX-License-Identifier: Apache-2.0
/*
 * svc_client: Connect unary calls with libcurl (svc_client.h).
 */
#include "service/rpc/svc_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/base_buf.h"

/* The response body, capped (base_buf sets over when it would pass max). */
static size_t write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	size_t len = size * n;
	return base_buf_append(arg, ptr, len) ? len : 0;
}

bool svc_client_json_field(const uint8_t *data, size_t size, const char *key, char *out,
			   size_t out_size)
{
	char pat[40];
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	size_t pl = strlen(pat);
	out[0] = '\0';
	for (size_t i = 0; i + pl <= size; i++) {
		if (memcmp(data + i, pat, pl) != 0)
			continue;
		size_t o = 0;
		for (size_t j = i + pl; j < size && data[j] != '"' && o + 1 < out_size; j++) {
			if (data[j] == '\\' && j + 1 < size)
				j++;
			out[o++] = (char)data[j];
		}
		out[o] = '\0';
		return true;
	}
	return false;
}

/* The whole URL in ub, never cut: server without trailing slashes, "/", path
 * without leading ones, NUL. Not SVC_OK: res says why. */
static svc_errc build_url(const char *server, const char *path, base_buf *ub,
			  svc_client_result *res)
{
	size_t sl = strlen(server);
	while (sl && server[sl - 1] == '/')
		sl--;
	while (*path == '/')
		path++;
	base_buf_init(ub, SVC_CLIENT_URL_MAX);
	if (base_buf_append(ub, server, sl) && base_buf_printf(ub, "/%s", path) &&
	    base_buf_append(ub, "", 1))
		return SVC_OK;
	snprintf(res->message, sizeof(res->message), "%s",
		 ub->over ? "server URL over the 64 KiB limit" : "out of memory");
	snprintf(res->code, sizeof(res->code), "invalid_argument");
	return ub->over ? SVC_E_INVALID : SVC_E_NOMEM;
}

/* A transport failure of curl_easy_perform, into res; its code. */
static svc_errc transport_error(svc_client_result *res, const char *url, CURLcode rc, bool over)
{
	snprintf(res->message, sizeof(res->message), "%.300s: %s", url,
		 over ? "response too large" : curl_easy_strerror(rc));
	snprintf(res->code, sizeof(res->code), "%s",
		 rc == CURLE_OPERATION_TIMEDOUT ? "deadline_exceeded" : "unavailable");
	return rc == CURLE_OPERATION_TIMEDOUT ? SVC_E_DEADLINE : SVC_E_UPSTREAM;
}

bool svc_client_protocol_parse(const char *name, svc_client_protocol *p)
{
	static const char *const names[] = {"connect", "grpc", "grpc-web"};
	for (int i = 0; i < 3; i++)
		if (strcmp(name, names[i]) == 0)
			return *p = (svc_client_protocol)i, true;
	return false;
}

svc_errc svc_client_unary(const svc_client_call *call, svc_client_result *res)
{
	if (call->protocol != SVC_CLIENT_CONNECT)
		return svc_client_grpc_unary(call, res);
	memset(res, 0, sizeof(*res));
	CURL *h = curl_easy_init();
	if (!h) {
		snprintf(res->message, sizeof(res->message), "libcurl: cannot create a handle");
		return SVC_E_NOMEM;
	}
	base_buf ub;
	svc_errc uerr = build_url(call->server, call->method, &ub, res);
	if (uerr != SVC_OK) {
		base_buf_deinit(&ub);
		curl_easy_cleanup(h);
		return uerr;
	}
	const char *url = (const char *)ub.data;
	struct curl_slist *hdrs = NULL;
	hdrs = curl_slist_append(hdrs, "Content-Type: application/proto");
	hdrs = curl_slist_append(hdrs, "Connect-Protocol-Version: 1");
	hdrs = curl_slist_append(hdrs, "Expect:");
	char tbuf[64];
	if (call->timeout_ms > 0) {
		snprintf(tbuf, sizeof(tbuf), "Connect-Timeout-Ms: %lld", (long long)call->timeout_ms);
		hdrs = curl_slist_append(hdrs, tbuf);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)call->timeout_ms + 1000);
	}
	base_buf b;
	base_buf_init(&b, call->max_response ? call->max_response : 256u << 20);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, call->request);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)call->request_size);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "symbolctl");
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->http_status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	svc_errc out = SVC_OK;
	if (rc != CURLE_OK) {
		out = transport_error(res, url, rc, b.over);
	} else if (res->http_status != 200) {
		svc_client_json_field(b.data, b.len, "code", res->code, sizeof(res->code));
		svc_client_json_field(b.data, b.len, "message", res->message, sizeof(res->message));
		if (!res->code[0])
			snprintf(res->code, sizeof(res->code), "unknown");
		if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "HTTP %ld", res->http_status);
		out = SVC_E_UPSTREAM;
	} else {
		res->body = base_buf_take(&b, &res->body_size);
	}
	base_buf_deinit(&b);
	base_buf_deinit(&ub);
	return out;
}

void svc_client_result_deinit(svc_client_result *res)
{
	free(res->body);
	res->body = NULL;
}

svc_errc svc_client_get(const char *server, const char *path, int64_t timeout_ms,
			size_t max_response, svc_client_result *res)
{
	memset(res, 0, sizeof(*res));
	base_buf ub;
	svc_errc out = build_url(server, path, &ub, res);
	CURL *h = out == SVC_OK ? curl_easy_init() : NULL;
	if (!h) {
		if (out == SVC_OK) {
			snprintf(res->message, sizeof(res->message), "libcurl: cannot create a handle");
			out = SVC_E_NOMEM;
		}
		base_buf_deinit(&ub);
		return out;
	}
	const char *url = (const char *)ub.data;
	base_buf b;
	base_buf_init(&b, max_response ? max_response : 256u << 20);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "symbolctl");
	if (timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->http_status);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		out = transport_error(res, url, rc, b.over);
	} else if (res->http_status != 200) {
		snprintf(res->code, sizeof(res->code), "unknown");
		snprintf(res->message, sizeof(res->message), "%.300s: HTTP %ld", url,
			 res->http_status);
		out = SVC_E_UPSTREAM;
	} else {
		res->body = base_buf_take(&b, &res->body_size);
	}
	base_buf_deinit(&b);
	base_buf_deinit(&ub);
	return out;
}
