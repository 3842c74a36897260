// SPDX-License-Identifier: Apache-2.0
/*
 * rpc_fixture: the test server of the generic Connect handler and its client
 * (rpc_fixture.h).
 */
#include "rpc_fixture.h"
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "base/base_buf.h"
#include "service/core/svc_pool.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_rpc.h"
#include "test.h"

/* ---- the server ---- */


/* Echo: the body back. */
static void echo_handle(void *ctx, svc_rpc_call *call)
{
	(void)ctx;
	size_t n;
	const uint8_t *body = svc_rpc_call_body(call, &n);
	if (evbuffer_add(svc_rpc_call_response(call), body, n) != 0) {
		svc_rpc_call_failf(call, SVC_E_NOMEM, "out of memory");
		return;
	}
	svc_rpc_call_ok(call);
}

/* Fail: the svc_errc of the body's first byte. */
static void fail_handle(void *ctx, svc_rpc_call *call)
{
	(void)ctx;
	size_t n;
	const uint8_t *body = svc_rpc_call_body(call, &n);
	svc_errc code = n ? (svc_errc)body[0] : SVC_E_INTERNAL;
	svc_rpc_call_failf(call, code, "failed as asked: %s", svc_errc_name(code));
}

/* Late: a timer answers. */
typedef struct late_call {
	struct event *timer;
	svc_rpc_call *call;
} late_call;

static void late_fire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	late_call *l = arg;
	echo_handle(NULL, l->call);
	event_free(l->timer);
	free(l);
}

static void late_handle(void *ctx, svc_rpc_call *call)
{
	fixture *f = ctx;
	late_call *l = calloc(1, sizeof(*l));
	struct timeval tv = {0, 150 * 1000};
	if (!l || !(l->timer = evtimer_new(f->base, late_fire, l))) {
		free(l);
		svc_rpc_call_failf(call, SVC_E_NOMEM, "out of memory");
		return;
	}
	l->call = call;
	evtimer_add(l->timer, &tv);
}

/* Worker: the response packed and compressed on the pool. */
static void worker_work(void *job)
{
	svc_rpc_call *call = job;
	size_t n;
	const uint8_t *body = svc_rpc_call_body(call, &n);
	evbuffer_add(svc_rpc_call_response(call), body, n);
	svc_rpc_call_encode(call);
}

static void worker_done(void *job, bool cancelled)
{
	if (cancelled)
		svc_rpc_call_failf(job, SVC_E_SHUTTING_DOWN, "server shutting down");
	else
		svc_rpc_call_ok(job);
}

static void worker_handle(void *ctx, svc_rpc_call *call)
{
	fixture *f = ctx;
	if (!svc_pool_submit(f->pool, call, worker_work, worker_done))
		svc_rpc_call_failf(call, SVC_E_NOMEM, "out of memory");
}

/* Hang: answers on shutdown, which it starts itself. */
static void hang_stop(void *arg)
{
	svc_rpc_call_failf(arg, SVC_E_SHUTTING_DOWN, "server shutting down");
}

static void hang_shutdown(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	fixture *f = arg;
	svc_rpc_shutdown(f->rpc);
}

static void hang_handle(void *ctx, svc_rpc_call *call)
{
	fixture *f = ctx;
	struct timeval tv = {0, 30 * 1000};
	svc_rpc_call_on_stop(call, hang_stop, call);
	event_base_once(f->base, -1, EV_TIMEOUT, hang_shutdown, f, &tv);
}

static void quit_written(struct evhttp_request *req, void *arg)
{
	(void)req;
	fixture *f = arg;
	event_base_loopexit(f->base, NULL);
}

/* The test's other routes: /metrics (the RPC families) and /quit. */
static void route(struct evhttp_request *req, void *arg)
{
	fixture *f = arg;
	const char *path = evhttp_request_get_uri(req);
	if (svc_rpc_handle(f->rpc, req, path))
		return;
	if (strcmp(path, "/quit") == 0) {
		evhttp_request_set_on_complete_cb(req, quit_written, f);
		evhttp_send_reply(req, 200, NULL, NULL);
		return;
	}
	struct evbuffer *out = evbuffer_new();
	if (strcmp(path, "/metrics") == 0 && out) {
		base_buf b;
		base_buf_init(&b, SIZE_MAX);
		svc_rpc_render_metrics(f->rpc, &b);
		svc_rpc_render_calls(f->rpc, &b);
		evbuffer_add(out, b.data, b.len);
		base_buf_deinit(&b);
		evhttp_send_reply(req, 200, NULL, out);
	} else {
		evhttp_send_reply(req, 404, NULL, NULL);
	}
	if (out)
		evbuffer_free(out);
}

static void *loop_thread(void *arg)
{
	fixture *f = arg;
	event_base_dispatch(f->base);
	return NULL;
}

bool fixture_start(fixture *f)
{
	static bool curl_ready;
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			return false;
		atexit(curl_global_cleanup);
		curl_ready = true;
	}
	memset(f, 0, sizeof(*f));
	if (!(f->base = event_base_new()) || !(f->http = evhttp_new(f->base)) ||
	    !(f->pool = svc_pool_create(f->base, 1)))
		return false;
	/* The table: one line a method (the daemon's come from its rooms, svc_rooms.c). */
	const svc_rpc_method methods[] = {
		{.name = "Echo", .handle = echo_handle, .ctx = f},
		{.name = "Fail", .handle = fail_handle, .ctx = f},
		{.name = "Late", .handle = late_handle, .ctx = f},
		{.name = "Worker", .handle = worker_handle, .ctx = f},
		{.name = "Hang", .handle = hang_handle, .ctx = f},
	};
	svc_rpc_options o = {
		.service = "test.v1.TestService",
		.max_request_bytes = 64 * 1024,
		.gzip_min_bytes = 256,
		.max_inflight_calls = 8,
	};
	if (!(f->rpc = svc_rpc_create(&o, methods, sizeof(methods) / sizeof(methods[0]))))
		return false;
	evhttp_set_gencb(f->http, route, f);
	struct evhttp_bound_socket *s = evhttp_bind_socket_with_handle(f->http, "127.0.0.1", 0);
	if (!s)
		return false;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	if (getsockname(evhttp_bound_socket_get_fd(s), (struct sockaddr *)&sa, &sl) != 0)
		return false;
	f->port = ntohs(sa.sin_port);
	return pthread_create(&f->thread, NULL, loop_thread, f) == 0;
}

/* ---- the client ---- */


static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	return base_buf_append(&r->body, p, size * n) ? size * n : 0;
}

static void header_value(const char *line, size_t len, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return;
	const char *v = line + nl + 1;
	size_t vl = len - nl - 1;
	while (vl && (*v == ' '))
		v++, vl--;
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
		vl--;
	if (vl >= cap)
		vl = cap - 1;
	memcpy(out, v, vl);
	out[vl] = '\0';
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	header_value(p, size * n, "Content-Type", r->ctype, sizeof(r->ctype));
	header_value(p, size * n, "Content-Encoding", r->cenc, sizeof(r->cenc));
	header_value(p, size * n, "Allow", r->allow, sizeof(r->allow));
	return size * n;
}

/* POSTs body to path (GET when body is NULL) with the headers (NULL-ended). */
bool request(const fixture *f, const char *path, const void *body, size_t n,
	     const char *const *headers, reply *r)
{
	memset(r, 0, sizeof(*r));
	base_buf_init(&r->body, 16u << 20);
	CURL *c = curl_easy_init();
	if (!c)
		return false;
	char url[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", f->port, path);
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	for (size_t i = 0; headers && headers[i]; i++)
		h = curl_slist_append(h, headers[i]);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	base_buf_append(&r->body, "", 1);  /* text bodies end in NUL; len counts it */
	r->body.len--;
	return rc == CURLE_OK;
}

void fixture_stop(fixture *f)
{
	reply r;
	CHECK(request(f, "/quit", NULL, 0, NULL, &r));
	pthread_join(f->thread, NULL);
	base_buf_deinit(&r.body);
	svc_pool_destroy(f->pool);
	svc_rpc_destroy(f->rpc);
	if (f->http)
		evhttp_free(f->http);
	if (f->base)
		event_base_free(f->base);
}

