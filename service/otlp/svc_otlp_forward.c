// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_forward: the forward queue and its sender (svc_otlp_forward.h).
 * A FIFO of packed requests; the head is sent (svc_http_get with a prepare
 * hook that makes it a POST, and a header hook that reads Retry-After and
 * grpc-status), then popped when delivered or dropped, or sent again after
 * the delay the answer or the backoff gives.
 */
#include "service/otlp/svc_otlp_forward.h"
#include "service/otlp/svc_otlp_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "base/base_clock.h"
#include "base/base_expo.h"
#include "base/base_log.h"
#include "base/base_version.h"
#include "service/core/svc_url_display.h"
#include "service/fetch/svc_upstream_http.h"
#include "service/rpc/svc_grpc.h"

#define GRPC_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"
#define HTTP_PATH "/v1development/profiles"
#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 10000
#define ANSWER_MAX (4u << 20)  /* an Export response's bytes we read */

enum drop_reason { DROP_QUEUE_FULL, DROP_REJECTED, DROP_GAVE_UP, DROP_SHUTDOWN, N_DROP };
static const char *const drop_names[N_DROP] = {"queue_full", "rejected", "retries_exhausted",
					       "shutdown"};

typedef struct item {
	struct item *next;
	uint8_t *buf;               /* SVC_OTLP_FWD_HEADROOM bytes, then the message */
	size_t len;
	int64_t first_ms;
	unsigned attempts;
} item;

struct svc_otlp_fwd {
	svc_otlp_fwd_options o;
	char *url;                  /* where the POST goes (http(s)://...) */
	char *shown;                /* the URL as given, for logs */
	bool grpc, tls;
	svc_http *http;
	struct event *timer;        /* the next try */
	item *head, *tail;
	uint64_t queued;            /* bytes of the items (with their headers) */
	svc_http_req *sending;
	/* The answer being read (header hook). */
	int64_t retry_after_ms;
	int grpc_status;            /* -1: none seen */
	char grpc_message[160];
	int64_t backoff_ms;
	uint64_t forwarded, retries, rejected_profiles, dropped[N_DROP];
};

static uint64_t item_bytes(const item *it)
{
	return sizeof(*it) + SVC_OTLP_FWD_HEADROOM + it->len;
}

/* ---- the URL ---- */

/* grpc(s):// -> http(s):// with Export's path; http(s):// with
 * /v1development/profiles when it has no path. */
static bool target(svc_otlp_fwd *f, const char *url, svc_error *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *path = NULL, *out = NULL;
	bool ok = false;
	if (!u)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), false;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
		svc_error_set(err, SVC_E_INVALID, "--otlp-forward %.200s: not a URL", url);
		goto out;
	}
	f->grpc = !strcasecmp(scheme, "grpc") || !strcasecmp(scheme, "grpcs");
	f->tls = !strcasecmp(scheme, "https") || !strcasecmp(scheme, "grpcs");
	if (!f->grpc && strcasecmp(scheme, "http") && strcasecmp(scheme, "https")) {
		svc_error_set(err, SVC_E_INVALID,
			      "--otlp-forward %.200s: the scheme is http, https (OTLP/HTTP), "
			      "grpc or grpcs (OTLP/gRPC)", url);
		goto out;
	}
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	bool bare = !path || !strcmp(path, "") || !strcmp(path, "/");
	if ((f->grpc || bare) &&
	    curl_url_set(u, CURLUPART_PATH, f->grpc ? GRPC_PATH : HTTP_PATH, 0) != CURLUE_OK)
		goto nomem;
	if (curl_url_set(u, CURLUPART_SCHEME, f->tls ? "https" : "http", 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK || !(f->url = strdup(out)))
		goto nomem;
	ok = true;
	goto out;
nomem:
	svc_error_set(err, SVC_E_NOMEM, "out of memory");
out:
	curl_free(scheme);
	curl_free(path);
	curl_free(out);
	curl_url_cleanup(u);
	return ok;
}

/* ---- sending ---- */

static void send_head(svc_otlp_fwd *f);

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	send_head(arg);
}

static bool prepare(const void *arg, void *easy, void *headers)
{
	const svc_otlp_fwd *f = arg;
	struct curl_slist **h = headers, *n;
	const item *it = f->head;
	const uint8_t *body = it->buf + (f->grpc ? 0 : SVC_OTLP_FWD_HEADROOM);
	size_t len = it->len + (f->grpc ? SVC_OTLP_FWD_HEADROOM : 0);
	static const char *const http_h[] = {"Content-Type: application/x-protobuf", "Expect:"};
	static const char *const grpc_h[] = {"Content-Type: application/grpc", "TE: trailers",
					     "Expect:"};
	const char *const *add = f->grpc ? grpc_h : http_h;
	size_t n_add = f->grpc ? 3 : 2;
	for (size_t i = 0; i < n_add; i++) {
		if (!(n = curl_slist_append(*h, add[i])))
			return false;
		*h = n;
	}
	curl_easy_setopt(easy, CURLOPT_POST, 1L);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, (const char *)body);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (f->grpc) {
		curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
				 f->tls ? (long)CURL_HTTP_VERSION_2TLS
					: (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
		/* A connection per request: Debian 12's libcurl 7.88.1 fails the
		 * second stream on an HTTP/2 connection reused after a gRPC
		 * server's trailers ("Error in the HTTP2 framing layer"; the curl
		 * tool does the same against grpcio). */
		curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
	}
	return true;
}

static void on_header(const void *arg, const char *line, size_t len)
{
	svc_otlp_fwd *f = (svc_otlp_fwd *)arg;
	const char *colon = memchr(line, ':', len);
	if (!colon)
		return;
	size_t nl = (size_t)(colon - line), vl = len - nl - 1;
	const char *v = colon + 1;
	if (nl == 11 && !strncasecmp(line, "retry-after", 11)) {
		f->retry_after_ms = svc_otlp_retry_after_ms(v, vl);
	} else if (nl == 11 && !strncasecmp(line, "grpc-status", 11)) {
		f->grpc_status = atoi(v);  /* stops at the line's end */
	} else if (nl == 12 && !strncasecmp(line, "grpc-message", 12)) {
		while (vl && (*v == ' '))
			v++, vl--;
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
			vl--;
		snprintf(f->grpc_message, sizeof(f->grpc_message), "%.*s", (int)vl, v);
	} else if (nl == 23 && !strncasecmp(line, "grpc-status-details-bin", 23)) {
		int64_t ms = svc_otlp_grpc_retry_info_ms(v, vl);
		if (ms >= 0)
			f->retry_after_ms = ms;
	}
}

static void done_cb(svc_http_result *res, void *arg);

static void send_head(svc_otlp_fwd *f)
{
	if (f->sending || !f->head || event_pending(f->timer, EV_TIMEOUT, NULL))
		return;
	item *it = f->head;
	if (!it->attempts)
		it->first_ms = base_mono_ms();
	it->attempts++;
	if (f->grpc)
		svc_grpc_prefix(it->buf, 0, (uint32_t)it->len);
	f->retry_after_ms = -1;
	f->grpc_status = -1;
	f->grpc_message[0] = '\0';
	svc_http_opts o = {
		.timeout_ms = f->o.attempt_ms, .total_ms = f->o.attempt_ms * 3, .min_progress = 1,
		.max_size = ANSWER_MAX, .redirects = SVC_HTTP_REDIRECT_NONE,
		.prepare = prepare, .prepare_arg = f, .on_header = on_header, .header_arg = f,
	};
	f->sending = svc_http_get(f->http, f->url, &o, done_cb, f);
	if (!f->sending) {  /* could not start: try again later */
		struct timeval tv = {1, 0};
		event_add(f->timer, &tv);
	}
}

static void pop(svc_otlp_fwd *f)
{
	item *it = f->head;
	f->head = it->next;
	if (!f->head)
		f->tail = NULL;
	f->queued -= item_bytes(it);
	free(it->buf);
	free(it);
}

static void drop(svc_otlp_fwd *f, enum drop_reason why, const char *detail)
{
	f->dropped[why]++;
	base_logf(BASE_LOG_WARN, "otlp forward dropped", "reason=%s url=%s attempts=%u error=\"%s\"",
		  drop_names[why], f->shown, f->head->attempts, detail);
	pop(f);
}

/* A delivered request's answer: a partial_success is logged and counted. */
static void delivered(svc_otlp_fwd *f, const uint8_t *body, size_t len)
{
	if (f->grpc) {
		if (len < SVC_GRPC_PREFIX || body[0] != 0)
			len = 0;  /* compressed or no message: nothing to read */
		else
			body += SVC_GRPC_PREFIX, len -= SVC_GRPC_PREFIX;
	}
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r =
		len ? opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
			      NULL, len, body)
		    : NULL;
	if (r && r->partial_success &&
	    (r->partial_success->rejected_profiles || r->partial_success->error_message[0])) {
		f->rejected_profiles += (uint64_t)(r->partial_success->rejected_profiles > 0
							   ? r->partial_success->rejected_profiles : 0);
		base_logf(BASE_LOG_WARN, "otlp forward partial success",
			  "url=%s rejected_profiles=%" PRId64 " message=\"%.200s\"", f->shown,
			  r->partial_success->rejected_profiles, r->partial_success->error_message);
	}
	if (r)
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
			r, NULL);
	f->forwarded++;
	f->backoff_ms = 0;
	pop(f);
}

/* Retried after the server's delay or the backoff, unless it gave up. */
static void retry(svc_otlp_fwd *f, const char *why)
{
	item *it = f->head;
	int64_t delay = f->retry_after_ms;
	if (delay < 0) {
		f->backoff_ms = f->backoff_ms ? f->backoff_ms * 2 : BACKOFF_FIRST_MS;
		if (f->backoff_ms > BACKOFF_MAX_MS)
			f->backoff_ms = BACKOFF_MAX_MS;
		delay = f->backoff_ms;
	}
	if (base_mono_ms() + delay - it->first_ms > f->o.give_up_ms) {
		drop(f, DROP_GAVE_UP, why);
		return;
	}
	f->retries++;
	base_logf(BASE_LOG_INFO, "otlp forward retry", "url=%s delay_ms=%" PRId64 " error=\"%s\"",
		  f->shown, delay, why);
	struct timeval tv = {delay / 1000, (delay % 1000) * 1000};
	event_add(f->timer, &tv);
}

static void done_cb(svc_http_result *res, void *arg)
{
	svc_otlp_fwd *f = arg;
	char why[256];
	f->sending = NULL;
	if (res->failure == SVC_HTTP_CANCELLED)
		return;
	if (res->failure == SVC_HTTP_CONNECT || res->failure == SVC_HTTP_TIMEOUT ||
	    res->failure == SVC_HTTP_NETWORK) {
		retry(f, res->error);
	} else if (res->failure != SVC_HTTP_OK) {
		drop(f, DROP_REJECTED, res->error);
	} else if (res->status < 200 || res->status > 299) {
		snprintf(why, sizeof(why), "HTTP %ld", res->status);
		if (svc_otlp_http_retryable(res->status))
			retry(f, why);
		else
			drop(f, DROP_REJECTED, why);
	} else if (f->grpc && f->grpc_status != 0) {
		snprintf(why, sizeof(why), "grpc-status %d %s", f->grpc_status, f->grpc_message);
		if (f->grpc_status < 0)
			drop(f, DROP_REJECTED, "an answer without grpc-status");
		else if (svc_otlp_grpc_retryable(f->grpc_status))
			retry(f, why);
		else
			drop(f, DROP_REJECTED, why);
	} else {
		delivered(f, res->body, res->body ? res->size : 0);
	}
	send_head(f);
}

/* ---- the queue ---- */

svc_otlp_fwd *svc_otlp_fwd_create(const svc_otlp_fwd_options *o, svc_error *err)
{
	svc_otlp_fwd *f = calloc(1, sizeof(*f));
	if (!f)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), NULL;
	f->o = *o;
	if (!f->o.attempt_ms)
		f->o.attempt_ms = 10000;
	if (!f->o.give_up_ms)
		f->o.give_up_ms = 300000;
	if (!target(f, o->url, err)) {
		free(f);
		return NULL;
	}
	f->shown = svc_url_display_dup(o->url);
	char ua[128];
	snprintf(ua, sizeof(ua), "symbolizer/%s (+OTLP profiles forwarder)", base_version());
	f->http = svc_http_create(o->base, o->user_agent ? o->user_agent : ua);
	f->timer = evtimer_new(o->base, timer_cb, f);
	if (!f->shown || !f->http || !f->timer) {
		svc_otlp_fwd_destroy(f);
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), NULL;
	}
	f->o.url = NULL;
	return f;
}

void svc_otlp_fwd_destroy(svc_otlp_fwd *f)
{
	if (!f)
		return;
	svc_http_destroy(f->http);  /* cancels the request in flight: no callback */
	if (f->timer)
		event_free(f->timer);
	while (f->head) {
		f->dropped[DROP_SHUTDOWN]++;
		pop(f);
	}
	free(f->url);
	free(f->shown);
	free(f);
}

bool svc_otlp_fwd_push(svc_otlp_fwd *f, uint8_t *buf, size_t len)
{
	item *it = malloc(sizeof(*it));
	if (!it)
		return false;
	*it = (item){.buf = buf, .len = len};
	if (len > UINT32_MAX || item_bytes(it) > f->o.queue_bytes - f->queued ||
	    f->queued > f->o.queue_bytes) {
		free(it);
		f->dropped[DROP_QUEUE_FULL]++;
		return false;
	}
	f->queued += item_bytes(it);
	if (f->tail)
		f->tail->next = it;
	else
		f->head = it;
	f->tail = it;
	send_head(f);
	return true;
}

uint64_t svc_otlp_fwd_queued(const svc_otlp_fwd *f)
{
	return f->queued;
}

void svc_otlp_fwd_render_metrics(const svc_otlp_fwd *f, base_buf *b)
{
	base_expo_family(b, "symbolizer_otlp_forwarded_total", "counter",
			 "OTLP profiles requests delivered downstream (--otlp-forward).");
	base_expo_u64(b, "symbolizer_otlp_forwarded_total", "", f->forwarded);
	base_expo_family(b, "symbolizer_otlp_dropped_total", "counter",
			 "OTLP profiles requests not delivered, by reason.");
	char labels[64];
	for (int i = 0; i < N_DROP; i++) {
		snprintf(labels, sizeof(labels), "reason=\"%s\"", drop_names[i]);
		base_expo_u64(b, "symbolizer_otlp_dropped_total", labels, f->dropped[i]);
	}
	base_expo_family(b, "symbolizer_otlp_forward_retries_total", "counter",
			 "Forward attempts retried (OTLP's retryable answers and transport errors).");
	base_expo_u64(b, "symbolizer_otlp_forward_retries_total", "", f->retries);
	base_expo_family(b, "symbolizer_otlp_forward_rejected_profiles_total", "counter",
			 "Profiles the downstream rejected in a partial_success.");
	base_expo_u64(b, "symbolizer_otlp_forward_rejected_profiles_total", "",
		      f->rejected_profiles);
	base_expo_family(b, "symbolizer_otlp_queue_bytes", "gauge",
			 "Bytes of the OTLP forward queue (the request in flight included).");
	base_expo_u64(b, "symbolizer_otlp_queue_bytes", "", f->queued);
	base_expo_family(b, "symbolizer_otlp_queue_max_bytes", "gauge",
			 "The OTLP forward queue's bound (--otlp-queue-bytes).");
	base_expo_u64(b, "symbolizer_otlp_queue_max_bytes", "", f->o.queue_bytes);
}
