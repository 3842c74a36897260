// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of symbolctl's Connect client (service/rpc/svc_client) against
 * the test server of rpc_fixture.h: URLs built whole, GETs, and the JSON
 * fields it reads from error bodies and /version.
 */
#include <stdio.h>
#include <string.h>

#include "base/base_buf.h"
#include "rpc_fixture.h"
#include "service/rpc/svc_client.h"
#include "test.h"

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
