/*
 * Unit tests of the generic Connect handler (service/rpc/svc_rpc): a table
 * of test-only methods, registered as the daemon registers Symbolize, called
 * through a real evhttp server on 127.0.0.1 (port 0) with libcurl. Binary
 * bodies, gzip both ways (on the loop and on a worker), a deadline that
 * passes, the error mapping of every svc_errc (Connect JSON body and HTTP
 * status), 405/415/501, the request caps, shutdown, and the metrics.
 *
 * The server's loop runs on a thread of its own; the test's thread is the
 * client. The methods:
 *   Echo    answers its body, at once
 *   Fail    fails with the svc_errc given as the body's first byte
 *   Late    answers its body 150 ms later (a timer on the loop)
 *   Worker  answers its body, packed and compressed on a pool worker
 *   Hang    answers when the server shuts down (its stop hook); it starts
 *           the shutdown itself, 30 ms later
 */
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
#include "service/rpc/svc_client.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_rpc.h"
#include "test.h"

/* ---- the server ---- */

typedef struct fixture {
	struct event_base *base;
	struct evhttp *http;
	svc_pool *pool;
	svc_rpc *rpc;
	int port;
	pthread_t thread;
} fixture;

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

static bool fixture_start(fixture *f)
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
	/* The table: one line a method, as in the daemon's (svc_server.c). */
	const svc_rpc_method methods[] = {
		{"Echo", echo_handle, f},
		{"Fail", fail_handle, f},
		{"Late", late_handle, f},
		{"Worker", worker_handle, f},
		{"Hang", hang_handle, f},
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

typedef struct reply {
	long status;
	char ctype[128], cenc[64], allow[64];
	base_buf body;
} reply;

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
static bool request(const fixture *f, const char *path, const void *body, size_t n,
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

static void fixture_stop(fixture *f)
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

static const char *const PROTO[] = {"Content-Type: application/proto", NULL};

/* A Connect error reply: its JSON code is code, with a message. */
static bool is_connect_error(const reply *r, const char *code)
{
	char want[64];
	snprintf(want, sizeof(want), "{\"code\":\"%s\",\"message\":\"", code);
	return strcmp(r->ctype, "application/json") == 0 &&
	       strncmp((const char *)r->body.data, want, strlen(want)) == 0;
}

/*
 * Calls method with body and headers: the reply must be HTTP status with the
 * Connect error code in its JSON body, and text in it (NULL: any).
 */
static void expect_error(const fixture *f, const char *method, const void *body, size_t n,
			 const char *const *headers, long status, const char *code,
			 const char *text)
{
	char path[128];
	snprintf(path, sizeof(path), "/test.v1.TestService/%s", method);
	reply r;
	bool sent = request(f, path, body, n, headers, &r);
	const char *got = (const char *)r.body.data;
	if (!sent || r.status != status || !is_connect_error(&r, code) ||
	    (text && !strstr(got, text)))
		TEST_FAIL_("%s: HTTP %ld %s, expected %ld {\"code\":\"%s\"...%s}", method, r.status,
			   got, status, code, text ? text : "");
	base_buf_deinit(&r.body);
}

/* ---- the tests ---- */

TEST(binary_body_round_trip)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	uint8_t body[200];
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(255 - i);  /* NULs and high bytes */
	reply r;
	CHECK(request(&f, "/test.v1.TestService/Echo", body, sizeof(body), PROTO, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_STREQ(r.ctype, "application/proto");
	CHECK_STREQ(r.cenc, "");  /* under gzip_min_bytes, and not asked for */
	CHECK(r.body.len == sizeof(body) && memcmp(r.body.data, body, sizeof(body)) == 0);
	base_buf_deinit(&r.body);
	/* An empty message is a message. */
	CHECK(request(&f, "/test.v1.TestService/Echo", "", 0, PROTO, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_EQ_U(r.body.len, 0);
	base_buf_deinit(&r.body);
	fixture_stop(&f);
}

/* The body gzipped, Content-Encoding and Accept-Encoding gzip; the answer inflated. */
static void gzip_round_trip(fixture *f, const char *method, size_t n, bool want_gzip)
{
	uint8_t *plain = malloc(n);
	struct evbuffer *z = evbuffer_new();
	REQUIRE(plain && z);
	for (size_t i = 0; i < n; i++)
		plain[i] = (uint8_t)(i * 7 % 13);
	REQUIRE(svc_gzip(plain, n, z));
	size_t zn = evbuffer_get_length(z);
	const char *const headers[] = {"Content-Type: application/proto", "Content-Encoding: gzip",
				       "Accept-Encoding: gzip", NULL};
	char path[64];
	snprintf(path, sizeof(path), "/test.v1.TestService/%s", method);
	reply r;
	CHECK(request(f, path, evbuffer_pullup(z, -1), zn, headers, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_STREQ(r.cenc, want_gzip ? "gzip" : "");
	void *out = NULL;
	size_t out_n = r.body.len;
	if (want_gzip)
		CHECK(svc_gunzip(r.body.data, r.body.len, 1u << 20, &out, &out_n) == SVC_OK);
	const void *got = want_gzip ? out : r.body.data;
	CHECK(got && out_n == n && memcmp(got, plain, n) == 0);
	free(out);
	base_buf_deinit(&r.body);
	evbuffer_free(z);
	free(plain);
}

TEST(gzip_request_and_response)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	gzip_round_trip(&f, "Echo", 5000, true);
	gzip_round_trip(&f, "Echo", 100, false);     /* under gzip_min_bytes */
	gzip_round_trip(&f, "Worker", 20000, true);  /* compressed on the worker */
	/* A client that does not accept gzip gets the plain bytes. */
	uint8_t big[4000] = {0};
	reply r;
	CHECK(request(&f, "/test.v1.TestService/Worker", big, sizeof(big), PROTO, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_STREQ(r.cenc, "");
	CHECK_EQ_U(r.body.len, sizeof(big));
	base_buf_deinit(&r.body);
	fixture_stop(&f);
}

TEST(request_caps)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	uint8_t *big = calloc(1, 1 << 20);
	REQUIRE(big);
	expect_error(&f, "Echo", big, 65 * 1024, PROTO, 429, "resource_exhausted",
		     "request body of 66560 bytes is over the limit of 65536");
	/* A small gzip of a big body: refused while inflating, at the cap. */
	struct evbuffer *z = evbuffer_new();
	REQUIRE(z && svc_gzip(big, 1 << 20, z));
	const char *const gz[] = {"Content-Type: application/proto", "Content-Encoding: gzip",
				  NULL};
	expect_error(&f, "Echo", evbuffer_pullup(z, -1), evbuffer_get_length(z), gz, 429,
		     "resource_exhausted", "request inflates past the limit of 65536 bytes");
	expect_error(&f, "Echo", "\x1f\x8b\x08\x00junk", 8, gz, 400, "invalid_argument",
		     "not valid gzip");
	evbuffer_free(z);
	free(big);
	fixture_stop(&f);
}

TEST(deadline_passes)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	const char *const soon[] = {"Content-Type: application/proto", "Connect-Timeout-Ms: 20",
				    NULL};
	expect_error(&f, "Late", "abc", 3, soon, 504, "deadline_exceeded", "deadline passed");
	/* Without a deadline (or a longer one) the late answer is the answer. */
	const char *const later[] = {"Content-Type: application/proto",
				     "Connect-Timeout-Ms: 5000", NULL};
	reply r;
	CHECK(request(&f, "/test.v1.TestService/Late", "abc", 3, later, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK(r.body.len == 3 && memcmp(r.body.data, "abc", 3) == 0);
	base_buf_deinit(&r.body);
	CHECK(request(&f, "/test.v1.TestService/Late", "abc", 3, PROTO, &r));
	CHECK_EQ_U(r.status, 200);
	base_buf_deinit(&r.body);
	const char *const bad[] = {"Content-Type: application/proto", "Connect-Timeout-Ms: soon",
				   NULL};
	expect_error(&f, "Late", "abc", 3, bad, 400, "invalid_argument", "Connect-Timeout-Ms");
	fixture_stop(&f);
}

TEST(every_error_code_maps_to_its_connect_code_and_status)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	for (int code = SVC_OK + 1; code < SVC_E_N_CODES; code++) {
		uint8_t body = (uint8_t)code;
		expect_error(&f, "Fail", &body, 1, PROTO, svc_errc_http_status(code),
			     svc_connect_code_name(svc_errc_connect(code)), svc_errc_name(code));
	}
	fixture_stop(&f);
}

TEST(protocol_errors)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	const char *const json[] = {"Content-Type: application/json", NULL};
	expect_error(&f, "Echo", "{}", 2, json, 415, "unimplemented",
		     "content type application/json is not supported");
	expect_error(&f, "Nope", "x", 1, PROTO, 501, "unimplemented",
		     "test.v1.TestService has no method Nope");
	reply r;
	CHECK(request(&f, "/test.v1.TestService/Echo", NULL, 0, PROTO, &r));
	CHECK_EQ_U(r.status, 405);
	CHECK_STREQ(r.allow, "POST");
	base_buf_deinit(&r.body);
	const char *const br[] = {"Content-Type: application/proto", "Content-Encoding: br", NULL};
	expect_error(&f, "Echo", "x", 1, br, 501, "unimplemented", "Content-Encoding br");
	const char *const v2[] = {"Content-Type: application/proto",
				  "Connect-Protocol-Version: 2", NULL};
	expect_error(&f, "Echo", "x", 1, v2, 400, "invalid_argument", "Connect-Protocol-Version");
	/* Not under the service: the handler leaves it to the other routes. */
	CHECK(request(&f, "/other", NULL, 0, NULL, &r));
	CHECK_EQ_U(r.status, 404);
	base_buf_deinit(&r.body);
	fixture_stop(&f);
}

TEST(shutdown_answers_waiting_calls_and_refuses_new_ones)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	expect_error(&f, "Hang", "x", 1, PROTO, 503, "unavailable", "server shutting down");
	expect_error(&f, "Echo", "x", 1, PROTO, 503, "unavailable", "server shutting down");
	fixture_stop(&f);
}

TEST(metrics_by_method_and_code)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	reply r;
	for (int i = 0; i < 3; i++) {
		CHECK(request(&f, "/test.v1.TestService/Echo", "x", 1, PROTO, &r));
		base_buf_deinit(&r.body);
	}
	uint8_t nf = SVC_E_NOT_FOUND;
	CHECK(request(&f, "/test.v1.TestService/Fail", &nf, 1, PROTO, &r));
	base_buf_deinit(&r.body);
	CHECK(request(&f, "/metrics", NULL, 0, NULL, &r));
	const char *m = (const char *)r.body.data;
	CHECK(strstr(m, "# TYPE symbolizer_rpc_requests_total counter\n"));
	CHECK(strstr(m, "symbolizer_rpc_requests_total{method=\"Echo\",code=\"ok\"} 3\n"));
	CHECK(strstr(m, "symbolizer_rpc_requests_total{method=\"Fail\",code=\"not_found\"} 1\n"));
	CHECK(strstr(m, "symbolizer_rpc_requests_total{method=\"Fail\",code=\"ok\"} 0\n"));
	CHECK(strstr(m, "symbolizer_rpc_duration_seconds_count{method=\"Echo\"} 3\n"));
	CHECK(strstr(m, "symbolizer_rpc_duration_seconds_count{method=\"Fail\"} 1\n"));
	CHECK(strstr(m, "symbolizer_calls_in_flight 0\n"));
	base_buf_deinit(&r.body);
	fixture_stop(&f);
}

/* symbolctl's client (svc_client) builds its URL whole: a 3,000-byte server URL
 * of "/." segments (which libcurl folds away) still reaches Echo, and a URL over
 * SVC_CLIENT_URL_MAX is refused with a message instead of being cut. */
TEST(client_url_is_never_cut)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	base_buf server;
	base_buf_init(&server, SIZE_MAX);
	base_buf_printf(&server, "http://127.0.0.1:%d", f.port);
	for (int i = 0; i < 1500; i++)
		base_buf_append(&server, "/.", 2);
	base_buf_append(&server, "", 1);
	svc_client_call call = {.server = (const char *)server.data,
				.method = "test.v1.TestService/Echo",
				.request = "hello",
				.request_size = 5};
	svc_client_result res;
	CHECK(svc_client_unary(&call, &res) == SVC_OK);
	CHECK_EQ_U(res.http_status, 200);
	CHECK(res.body_size == 5 && memcmp(res.body, "hello", 5) == 0);
	svc_client_result_deinit(&res);

	server.len--;  /* drop the NUL, grow past the limit */
	for (int i = 0; i < SVC_CLIENT_URL_MAX / 2; i++)
		base_buf_append(&server, "/.", 2);
	base_buf_append(&server, "", 1);
	call.server = (const char *)server.data;
	CHECK(svc_client_unary(&call, &res) == SVC_E_INVALID);
	CHECK_EQ_U(res.http_status, 0);
	CHECK(strstr(res.message, "over the 64 KiB limit") != NULL);
	svc_client_result_deinit(&res);
	base_buf_deinit(&server);
	fixture_stop(&f);
}

/* svc_client_get (symbolctl version --server): the body of a 200, the status and
 * a message for anything else; a response over its cap is refused. */
TEST(client_get)
{
	fixture f;
	REQUIRE(fixture_start(&f));
	char server[64];
	snprintf(server, sizeof(server), "http://127.0.0.1:%d/", f.port);
	svc_client_result res;
	CHECK(svc_client_get(server, "/metrics", 5000, 0, &res) == SVC_OK);
	CHECK_EQ_U(res.http_status, 200);
	CHECK(res.body_size > 0 && memmem(res.body, res.body_size, "symbolizer_rpc", 14));
	svc_client_result_deinit(&res);
	CHECK(svc_client_get(server, "/metrics", 5000, 4, &res) == SVC_E_UPSTREAM);
	CHECK(strstr(res.message, "response too large") != NULL);
	svc_client_result_deinit(&res);
	CHECK(svc_client_get(server, "nope", 5000, 0, &res) == SVC_E_UPSTREAM);
	CHECK_EQ_U(res.http_status, 404);
	CHECK(strstr(res.message, "/nope: HTTP 404") != NULL);
	CHECK(res.body == NULL);
	svc_client_result_deinit(&res);
	fixture_stop(&f);
}

/* svc_client_json_field: flat objects as /version and Connect errors send them. */
TEST(client_json_field)
{
	const char *j = "{\"code\":\"not_found\",\"message\":\"a \\\"b\\\" c\",\"n\":\"\"}";
	const uint8_t *d = (const uint8_t *)j;
	char out[16];
	CHECK(svc_client_json_field(d, strlen(j), "code", out, sizeof(out)));
	CHECK(strcmp(out, "not_found") == 0);
	CHECK(svc_client_json_field(d, strlen(j), "message", out, sizeof(out)));
	CHECK(strcmp(out, "a \"b\" c") == 0);
	CHECK(svc_client_json_field(d, strlen(j), "n", out, sizeof(out)) && out[0] == '\0');
	CHECK(!svc_client_json_field(d, strlen(j), "version", out, sizeof(out)));
	CHECK(svc_client_json_field(d, strlen(j), "code", out, 4) && strcmp(out, "not") == 0);
	CHECK(!svc_client_json_field(d, 8, "code", out, sizeof(out)));
}

TEST_MAIN()
