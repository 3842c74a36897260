// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the generic Connect handler (service/rpc/svc_rpc): a table
 * of test-only methods (rpc_fixture.h), registered as the daemon registers
 * Symbolize, called through a real evhttp server on 127.0.0.1 (port 0) with
 * libcurl. Binary bodies, gzip both ways (on the loop and on a worker), a
 * deadline that passes, the error mapping of every svc_errc (Connect JSON
 * body and HTTP status), 405/415/501, the request caps, shutdown, and the
 * metrics.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/base_buf.h"
#include "rpc_fixture.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_rpc.h"
#include "test.h"

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

TEST_MAIN()
