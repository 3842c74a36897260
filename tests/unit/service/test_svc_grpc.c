// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the gRPC protocol helpers (service/rpc/svc_grpc): the unary
 * message prefix (truncated, trailing, reserved flags, over the cap),
 * grpc-timeout's units, grpc-message's percent-encoding, content types, and
 * the status of every svc_errc (gRPC's codes, numbered as the gRPC
 * specification numbers them, equal to Connect's names), and
 * grpc-status-details-bin's google.rpc.Status (the exact bytes, unpadded).
 */
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/rpc/svc_grpc.h"
#include "test.h"

TEST(unary_message_prefix)
{
	const uint8_t ok[] = {0, 0, 0, 0, 3, 'a', 'b', 'c'};
	const uint8_t *msg = NULL;
	size_t n = 0;
	bool z = true;
	svc_error err;
	CHECK_EQ_U(svc_grpc_parse_unary(ok, sizeof(ok), 100, &msg, &n, &z, &err), SVC_OK);
	CHECK(n == 3 && memcmp(msg, "abc", 3) == 0 && !z);
	const uint8_t empty[] = {0, 0, 0, 0, 0};
	CHECK_EQ_U(svc_grpc_parse_unary(empty, 5, 100, &msg, &n, &z, &err), SVC_OK);
	CHECK(n == 0);
	const uint8_t gz[] = {1, 0, 0, 0, 1, 'x'};
	CHECK_EQ_U(svc_grpc_parse_unary(gz, sizeof(gz), 100, &msg, &n, &z, &err), SVC_OK);
	CHECK(z && n == 1);
	/* none, truncated prefix, truncated message, trailing bytes, flags */
	CHECK_EQ_U(svc_grpc_parse_unary(ok, 0, 100, &msg, &n, &z, &err), SVC_E_INVALID);
	CHECK_EQ_U(svc_grpc_parse_unary(ok, 4, 100, &msg, &n, &z, &err), SVC_E_INVALID);
	CHECK_EQ_U(svc_grpc_parse_unary(ok, 7, 100, &msg, &n, &z, &err), SVC_E_INVALID);
	CHECK(strstr(err.msg, "truncated"));
	const uint8_t two[] = {0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0};
	CHECK_EQ_U(svc_grpc_parse_unary(two, sizeof(two), 100, &msg, &n, &z, &err), SVC_E_INVALID);
	const uint8_t flags[] = {2, 0, 0, 0, 0};
	CHECK_EQ_U(svc_grpc_parse_unary(flags, 5, 100, &msg, &n, &z, &err), SVC_E_INVALID);
	/* over the cap from the prefix alone (4 GiB - 1 declared) */
	const uint8_t huge[] = {0, 0xff, 0xff, 0xff, 0xff};
	CHECK_EQ_U(svc_grpc_parse_unary(huge, 5, 1 << 20, &msg, &n, &z, &err), SVC_E_TOO_LARGE);
	CHECK(strstr(err.msg, "4294967295"));
}

TEST(prefix_written_big_endian)
{
	uint8_t p[SVC_GRPC_PREFIX];
	svc_grpc_prefix(p, 0x80, 0x01020304);
	const uint8_t want[] = {0x80, 1, 2, 3, 4};
	CHECK(memcmp(p, want, 5) == 0);
}

TEST(timeout_units)
{
	int64_t ms = -1;
	CHECK(svc_grpc_parse_timeout("1H", &ms) && ms == 3600000);
	CHECK(svc_grpc_parse_timeout("2M", &ms) && ms == 120000);
	CHECK(svc_grpc_parse_timeout("3S", &ms) && ms == 3000);
	CHECK(svc_grpc_parse_timeout("250m", &ms) && ms == 250);
	CHECK(svc_grpc_parse_timeout("1500u", &ms) && ms == 2);  /* rounded up */
	CHECK(svc_grpc_parse_timeout("1n", &ms) && ms == 1);
	CHECK(svc_grpc_parse_timeout("0m", &ms) && ms == 0);
	CHECK(svc_grpc_parse_timeout("99999999H", &ms) && ms == 99999999LL * 3600000);
	CHECK(!svc_grpc_parse_timeout("123456789S", &ms));  /* 9 digits */
	CHECK(!svc_grpc_parse_timeout("S", &ms));
	CHECK(!svc_grpc_parse_timeout("10", &ms));
	CHECK(!svc_grpc_parse_timeout("10s", &ms));
	CHECK(!svc_grpc_parse_timeout("-1S", &ms));
	CHECK(!svc_grpc_parse_timeout("", &ms));
}

TEST(message_percent_encoded)
{
	char out[64];
	svc_grpc_percent_encode("bad id: caf\xc3\xa9 100%\n", out, sizeof(out));
	CHECK_STREQ(out, "bad id: caf%C3%A9 100%25%0A");
	/* cut at a whole escape */
	char small[6];
	svc_grpc_percent_encode("ab\ncd", small, sizeof(small));
	CHECK_STREQ(small, "ab%0A");
	svc_grpc_percent_encode("abc\n", small, sizeof(small));
	CHECK_STREQ(small, "abc");
}

TEST(every_error_has_the_specs_status)
{
	/* PROTOCOL-HTTP2.md / statuscodes.md numbers, Connect's names. */
	static const struct {
		svc_errc code;
		int grpc;
	} want[] = {
		{SVC_OK, 0},
		{SVC_E_INVALID, 3},            /* INVALID_ARGUMENT */
		{SVC_E_NOT_FOUND, 5},          /* NOT_FOUND */
		{SVC_E_UNIMPLEMENTED, 12},     /* UNIMPLEMENTED */
		{SVC_E_METHOD, 12},
		{SVC_E_MEDIA_TYPE, 12},
		{SVC_E_TOO_LARGE, 8},          /* RESOURCE_EXHAUSTED */
		{SVC_E_OVERLOADED, 8},
		{SVC_E_UNAUTHENTICATED, 16},   /* UNAUTHENTICATED */
		{SVC_E_NOMEM, 8},
		{SVC_E_DEADLINE, 4},           /* DEADLINE_EXCEEDED */
		{SVC_E_SHUTTING_DOWN, 14},     /* UNAVAILABLE */
		{SVC_E_UPSTREAM, 14},
		{SVC_E_BAD_FILE, 9},           /* FAILED_PRECONDITION */
		{SVC_E_NO_SYMBOLS, 9},
		{SVC_E_STORE, 13},             /* INTERNAL */
		{SVC_E_NO_SPACE, 8},
		{SVC_E_IO, 13},
		{SVC_E_INTERNAL, 13},
	};
	CHECK_EQ_U(sizeof(want) / sizeof(want[0]), SVC_E_N_CODES);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ_U(svc_grpc_status(want[i].code), want[i].grpc);
	/* Connect's names are gRPC's codes, in order (connectrpc.com/docs/protocol). */
	CHECK_STREQ(svc_connect_code_name(1), "canceled");
	CHECK_STREQ(svc_connect_code_name(7), "permission_denied");
	CHECK_STREQ(svc_connect_code_name(10), "aborted");
	CHECK_STREQ(svc_connect_code_name(11), "out_of_range");
	CHECK_STREQ(svc_connect_code_name(15), "data_loss");
	CHECK_STREQ(svc_connect_code_name(16), "unauthenticated");
}

TEST(content_types)
{
	bool json = true;
	CHECK(svc_grpc_content_type("application/grpc", "application/grpc", &json) && !json);
	CHECK(svc_grpc_content_type("application/grpc+proto", "application/grpc", &json) && !json);
	CHECK(svc_grpc_content_type("application/grpc+json", "application/grpc", &json) && json);
	CHECK(svc_grpc_content_type("application/grpc;charset=x", "application/grpc", &json));
	CHECK(!svc_grpc_content_type("application/grpc-web", "application/grpc", &json));
	CHECK(!svc_grpc_content_type("application/grpc+thrift", "application/grpc", &json));
	CHECK(!svc_grpc_content_type("application/proto", "application/grpc", &json));
	CHECK(!svc_grpc_content_type(NULL, "application/grpc", &json));
	CHECK(svc_grpc_content_type("application/grpc-web+proto", "application/grpc-web", &json));
	CHECK(!svc_grpc_content_type("application/grpc-web-text", "application/grpc-web", &json));
	CHECK(svc_grpc_lists_gzip("identity,deflate,gzip"));
	CHECK(!svc_grpc_lists_gzip("identity"));
	CHECK(!svc_grpc_lists_gzip(NULL));
}

TEST(base64_both_ways_and_in_chunks)
{
	uint8_t out[64];
	size_t n = 0;
	CHECK_EQ_U(svc_grpc_base64_decode("aGVsbG8=", 8, out, &n), SVC_OK);
	CHECK(n == 5 && memcmp(out, "hello", 5) == 0);
	/* padded chunks one after another (gRPC-Web frames encoded apart) */
	CHECK_EQ_U(svc_grpc_base64_decode("aGk=aGVsbG8=YQ==", 16, out, &n), SVC_OK);
	CHECK(n == 8 && memcmp(out, "hihelloa", 8) == 0);
	CHECK_EQ_U(svc_grpc_base64_decode("", 0, out, &n), SVC_OK);
	CHECK(n == 0);
	CHECK_EQ_U(svc_grpc_base64_decode("aGk", 3, out, &n), SVC_E_INVALID);    /* length */
	CHECK_EQ_U(svc_grpc_base64_decode("a=Gk", 4, out, &n), SVC_E_INVALID);   /* early pad */
	CHECK_EQ_U(svc_grpc_base64_decode("aG=k", 4, out, &n), SVC_E_INVALID);   /* after pad */
	CHECK_EQ_U(svc_grpc_base64_decode("aG\nk", 4, out, &n), SVC_E_INVALID); /* alphabet */
	struct evbuffer *b = evbuffer_new();
	REQUIRE(b);
	CHECK(svc_grpc_base64_encode((const uint8_t *)"hello", 5, b));
	CHECK(svc_grpc_base64_encode((const uint8_t *)"\xfb\xff", 2, b));
	size_t len = evbuffer_get_length(b);
	char text[32] = {0};
	evbuffer_copyout(b, text, len);
	CHECK_STREQ(text, "aGVsbG8=+/8=");
	evbuffer_free(b);
}

TEST(status_details_bin)
{
	svc_error e;
	char out[SVC_GRPC_DETAILS_MAX];
	svc_error_set(&e, SVC_E_INVALID, "bad");
	/* Status{code 3, message "bad", details [Any{ErrorInfo URL,
	 * ErrorInfo{reason "INVALID", domain "symbolizer"}}]}, base64 unpadded */
	size_t n = svc_grpc_status_details(&e, out, sizeof(out));
	CHECK_STREQ(out, "CAMSA2JhZBpBCih0eXBlLmdvb2dsZWFwaXMuY29tL2dvb2dsZS5ycGMuRXJyb3JJbmZvEh"
			 "UKB0lOVkFMSUQSCnN5bWJvbGl6ZXI");
	CHECK_EQ_U(n, 99);
	CHECK_EQ_U(svc_grpc_status_details(&e, out, 99), 0);  /* no room for the NUL */
	CHECK_EQ_U(svc_grpc_status_details(&e, out, 100), 99);
	/* the longest message fits SVC_GRPC_DETAILS_MAX */
	memset(e.msg, 'x', sizeof(e.msg) - 1);
	e.msg[sizeof(e.msg) - 1] = '\0';
	e.code = SVC_E_MEDIA_TYPE;
	CHECK(svc_grpc_status_details(&e, out, sizeof(out)) > 340);
}

TEST(error_info_alone)
{
	/* The ErrorInfo of status_details_bin's Status, alone (Connect's details). */
	svc_error e;
	char out[SVC_GRPC_ERROR_INFO_MAX], reason[SVC_GRPC_REASON_MAX];
	svc_error_set(&e, SVC_E_INVALID, "bad");
	CHECK_EQ_U(svc_grpc_error_info(&e, out, sizeof(out)), 28);
	CHECK_STREQ(out, "CgdJTlZBTElEEgpzeW1ib2xpemVy");
	CHECK_EQ_U(svc_grpc_error_info(&e, out, 28), 0);  /* no room for the NUL */
	svc_grpc_error_reason(SVC_E_TOO_LARGE, reason);
	CHECK_STREQ(reason, "TOO_LARGE");
	/* every code's fits SVC_GRPC_ERROR_INFO_MAX */
	for (int c = 0; c < SVC_E_N_CODES; c++) {
		svc_error_set(&e, (svc_errc)c, "x");
		CHECK(svc_grpc_error_info(&e, out, sizeof(out)) > 20);
	}
}

TEST_MAIN()
