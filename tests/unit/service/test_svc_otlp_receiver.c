// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the OTLP receiver's and forwarder's own parsing: the JSON
 * codec's OTLP mode (SVC_RPC_JSON_OTLP: trace, span and profile IDs in hex,
 * either case in, lowercase out; other bytes fields still base64; the
 * .proto's names read too, 64-bit integers as numbers or strings; v1.11.0's
 * profiles messages have no enum left, so its numbers-out rule is idle) and the retry rules
 * (svc_otlp_retry.c: retryable statuses and codes, Retry-After in seconds
 * and as an HTTP date, gRPC's RetryInfo in grpc-status-details-bin).
 * End to end: tests/integration/otlp_forward_test.py.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base_clock.h"
#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "service/otlp/svc_otlp_impl.h"
#include "service/rpc/svc_rpc_json.h"
#include "test.h"

#define REQ &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor

static char *round_trip(svc_rpc_json *j, const char *text, svc_errc *code, svc_error *err)
{
	base_buf w, out;
	base_buf_init(&w, 1 << 20);
	base_buf_init(&out, 1 << 20);
	char *s = NULL;
	*code = svc_rpc_json_decode(j, text, strlen(text), 1000, &w, err);
	if (*code == SVC_OK && svc_rpc_json_encode(j, w.data, w.len, &out, err) == SVC_OK &&
	    base_buf_append(&out, "", 1)) {
		size_t n;
		s = (char *)base_buf_take(&out, &n);
	}
	base_buf_deinit(&w);
	base_buf_deinit(&out);
	return s;
}

TEST(otlp_json_hex_ids)
{
	svc_rpc_json *j = svc_rpc_json_create_opts(REQ, SVC_RPC_JSON_OTLP);
	REQUIRE(j);
	svc_errc code;
	svc_error err;
	char *s = round_trip(j,
			     "{\"dictionary\":{\"link_table\":[{\"traceId\":"
			     "\"0102030405060708090A0B0C0D0E0F10\",\"span_id\":\"a1b2c3d4e5f60708\"}],"
			     "\"attributeTable\":[{\"value\":{\"bytesValue\":\"AQI=\"}}]},"
			     "\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{"
			     "\"profileId\":\"000102030405060708090a0b0c0d0e0f\"}]}]}]}",
			     &code, &err);
	REQUIRE(s);
	CHECK(strstr(s, "\"traceId\":\"0102030405060708090a0b0c0d0e0f10\""));
	CHECK(strstr(s, "\"spanId\":\"a1b2c3d4e5f60708\""));
	CHECK(strstr(s, "\"profileId\":\"000102030405060708090a0b0c0d0e0f\""));
	CHECK(strstr(s, "\"bytesValue\":\"AQI=\""));  /* not an ID: base64 as ever */
	free(s);
	CHECK(!round_trip(j, "{\"dictionary\":{\"linkTable\":[{\"traceId\":\"0g\"}]}}", &code, &err));
	CHECK_EQ_U(code, SVC_E_INVALID);
	CHECK(strstr(err.msg, "not hex"));
	CHECK(!round_trip(j, "{\"dictionary\":{\"linkTable\":[{\"spanId\":\"abc\"}]}}", &code, &err));
	CHECK(strstr(err.msg, "odd number"));
	svc_rpc_json_destroy(j);
	/* Without the flag, the same field is base64 (Connect's SymbolizeOTLP). */
	j = svc_rpc_json_create(REQ);
	REQUIRE(j);
	s = round_trip(j, "{\"dictionary\":{\"linkTable\":[{\"spanId\":\"AQIDBAUGBwg=\"}]}}", &code,
		       &err);
	REQUIRE(s);
	CHECK(strstr(s, "\"spanId\":\"AQIDBAUGBwg=\""));
	free(s);
	svc_rpc_json_destroy(j);
}

TEST(otlp_json_names_and_int64)
{
	/* OTLP/JSON: lowerCamelCase or the .proto's names; 64-bit integers as
	 * strings or numbers (written as strings). */
	svc_rpc_json *j = svc_rpc_json_create_opts(REQ, SVC_RPC_JSON_OTLP);
	REQUIRE(j);
	svc_errc code;
	svc_error err;
	char *s = round_trip(j,
			     "{\"resource_profiles\":[{\"scope_profiles\":[{\"profiles\":[{"
			     "\"time_unix_nano\":1700000000000000000,\"durationNano\":\"5\"}]}]}]}",
			     &code, &err);
	CHECK_STREQ(s, "{\"resourceProfiles\":[{\"scopeProfiles\":[{\"profiles\":[{"
		       "\"timeUnixNano\":\"1700000000000000000\",\"durationNano\":\"5\"}]}]}]}");
	free(s);
	svc_rpc_json_destroy(j);
}

TEST(otlp_json_zeros_in_lists)
{
	/* Indices of 0 in repeated fields (packed or not): the encoder once
	 * wrote "[0" as "0" (a zero took no digit room; fuzz_otlp_json found it). */
	svc_rpc_json *j = svc_rpc_json_create_opts(REQ, SVC_RPC_JSON_OTLP);
	REQUIRE(j);
	svc_errc code;
	svc_error err;
	char *s = round_trip(j,
			     "{\"dictionary\":{\"mappingTable\":[{\"attributeIndices\":[0]},"
			     "{\"attributeIndices\":[1,0,0,10,0]}],\"stackTable\":[{"
			     "\"locationIndices\":[0]}]}}",
			     &code, &err);
	CHECK_STREQ(s, "{\"dictionary\":{\"mappingTable\":[{\"attributeIndices\":[0]},"
		       "{\"attributeIndices\":[1,0,0,10,0]}],\"stackTable\":[{"
		       "\"locationIndices\":[0]}]}}");
	free(s);
	svc_rpc_json_destroy(j);
}

TEST(otlp_retry_rules)
{
	CHECK(svc_otlp_http_retryable(429) && svc_otlp_http_retryable(502) &&
	      svc_otlp_http_retryable(503) && svc_otlp_http_retryable(504));
	CHECK(!svc_otlp_http_retryable(400) && !svc_otlp_http_retryable(500) &&
	      !svc_otlp_http_retryable(413));
	CHECK(svc_otlp_grpc_retryable(14) && svc_otlp_grpc_retryable(8) &&
	      svc_otlp_grpc_retryable(4));
	CHECK(!svc_otlp_grpc_retryable(3) && !svc_otlp_grpc_retryable(0) &&
	      !svc_otlp_grpc_retryable(16));
	CHECK_EQ_U(svc_otlp_retry_after_ms(" 120\r\n", 6), 120000);
	CHECK_EQ_U(svc_otlp_retry_after_ms("99999", 5), 3600000);  /* an hour at most */
	CHECK(svc_otlp_retry_after_ms("soon", 4) == -1);
	CHECK(svc_otlp_retry_after_ms("-5", 2) == -1);
	CHECK_EQ_U(svc_otlp_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", 29), 0);  /* past */
	/* google.rpc.Status{code 14, "bad", details [Any RetryInfo{2 s 50 ms}]} */
	const char *b64 = "CA4SA2JhZBo1Cih0eXBlLmdvb2dsZWFwaXMuY29tL2dvb2dsZS5ycGMuUmV0cnlJbmZvEgkKBwgCEIDh6xc";
	CHECK_EQ_U(svc_otlp_grpc_retry_info_ms(b64, strlen(b64)), 2050);
	CHECK(svc_otlp_grpc_retry_info_ms("CA4SA2JhZA", 10) == -1);  /* no details */
	CHECK(svc_otlp_grpc_retry_info_ms("!!!!", 4) == -1);
	CHECK(svc_otlp_grpc_retry_info_ms("", 0) == -1);
}

TEST_MAIN()
