// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the Connect protocol helpers (service/svc_connect): codes and
 * statuses, the JSON error body, Connect-Timeout-Ms, Accept-Encoding lists,
 * and gzip both ways under a cap (corrupt, truncated, trailing data, bombs).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/rpc/svc_connect.h"
#include "test.h"

TEST(codes_map_to_connect_http_statuses)
{
	CHECK_EQ_U(svc_connect_http_status(SVC_CONNECT_INVALID_ARGUMENT), 400);
	CHECK_EQ_U(svc_connect_http_status(SVC_CONNECT_RESOURCE_EXHAUSTED), 429);
	CHECK_EQ_U(svc_connect_http_status(SVC_CONNECT_UNAVAILABLE), 503);
	CHECK_EQ_U(svc_connect_http_status(SVC_CONNECT_DEADLINE_EXCEEDED), 504);
	CHECK_EQ_U(svc_connect_http_status(SVC_CONNECT_UNIMPLEMENTED), 501);
	CHECK_STREQ(svc_connect_code_name(SVC_CONNECT_RESOURCE_EXHAUSTED), "resource_exhausted");
	CHECK_STREQ(svc_connect_code_name((svc_connect_code)99), "unknown");
}

TEST(error_body_is_escaped_json)
{
	struct evbuffer *b = evbuffer_new();
	svc_error e;
	svc_error_set(&e, SVC_E_INVALID, "%s", "bad \"id\"\\\n\x01");
	svc_connect_error_body(b, &e);
	size_t n = evbuffer_get_length(b);
	char *s = calloc(1, n + 1);
	evbuffer_copyout(b, s, n);
	/* the message escaped, then the ErrorInfo detail of grpc-status-details-bin:
	 * base64 (unpadded) of ErrorInfo{reason "INVALID", domain "symbolizer"} */
	CHECK_STREQ(s, "{\"code\":\"invalid_argument\",\"message\":\"bad \\\"id\\\"\\\\\\u000a\\u0001\","
		       "\"details\":[{\"type\":\"google.rpc.ErrorInfo\",\"value\":\"CgdJTlZBTElEEgpzeW1ib2xpemVy\","
		       "\"debug\":{\"reason\":\"INVALID\",\"domain\":\"symbolizer\"}}]}");
	free(s);
	evbuffer_free(b);
}

TEST(error_body_without_message_still_has_details)
{
	struct evbuffer *b = evbuffer_new();
	svc_error e;
	svc_error_set(&e, SVC_E_TOO_LARGE, "%s", "");
	svc_connect_error_body(b, &e);
	size_t n = evbuffer_get_length(b);
	char *s = calloc(1, n + 1);
	evbuffer_copyout(b, s, n);
	CHECK_STREQ(s, "{\"code\":\"resource_exhausted\",\"details\":[{\"type\":\"google.rpc.ErrorInfo\","
		       "\"value\":\"CglUT09fTEFSR0USCnN5bWJvbGl6ZXI\","
		       "\"debug\":{\"reason\":\"TOO_LARGE\",\"domain\":\"symbolizer\"}}]}");
	free(s);
	evbuffer_free(b);
}

TEST(timeout_header)
{
	int64_t ms = -1;
	CHECK(svc_connect_parse_timeout("0", &ms) && ms == 0);
	CHECK(svc_connect_parse_timeout("1500", &ms) && ms == 1500);
	CHECK(svc_connect_parse_timeout("9999999999", &ms) && ms == 9999999999);
	CHECK(!svc_connect_parse_timeout("", &ms));
	CHECK(!svc_connect_parse_timeout("12345678901", &ms)); /* 11 digits */
	CHECK(!svc_connect_parse_timeout("-5", &ms));
	CHECK(!svc_connect_parse_timeout("10s", &ms));
	CHECK(!svc_connect_parse_timeout(" 10", &ms));
}

TEST(accept_encoding_lists)
{
	CHECK(svc_connect_lists_gzip("gzip"));
	CHECK(svc_connect_lists_gzip("br, GZIP;q=0.5"));
	CHECK(svc_connect_lists_gzip("identity,gzip"));
	CHECK(!svc_connect_lists_gzip("gzip;q=0"));
	CHECK(!svc_connect_lists_gzip("gzipx, br"));
	CHECK(!svc_connect_lists_gzip(""));
	CHECK(!svc_connect_lists_gzip("x-gzip"));
}

static struct evbuffer *gz_with(svc_gzip_library lib, int level, const void *data, size_t n)
{
	struct evbuffer *b = evbuffer_new();
	if (!svc_gzip_with(lib, level, data, n, b)) {
		evbuffer_free(b);
		return NULL;
	}
	return b;
}

static struct evbuffer *gz(const void *data, size_t n)
{
	return gz_with(SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT, data, n);
}

/* Each library's stream, at each of its levels, inflates (zlib) to the input:
 * compressible, random (stored blocks: the worst case of ISA-L's room), empty. */
TEST(gzip_libraries_round_trip)
{
	size_t n = 200000;
	uint8_t *data = malloc(n);
	uint64_t x = 88172645463325252ull;
	svc_gzip_library lib;
	CHECK(svc_gzip_library_parse("libdeflate", &lib) && lib == SVC_GZIP_LIBDEFLATE);
	CHECK(svc_gzip_library_parse("isal", &lib) && lib == SVC_GZIP_ISAL);
	CHECK(!svc_gzip_library_parse("zlib", &lib) && !svc_gzip_library_parse("", &lib));
	CHECK_STREQ(svc_gzip_library_name(SVC_GZIP_LIBDEFLATE), "libdeflate");
	CHECK(svc_gzip_level_ok(SVC_GZIP_ISAL, 3) && !svc_gzip_level_ok(SVC_GZIP_ISAL, 4));
	CHECK(svc_gzip_level_ok(SVC_GZIP_LIBDEFLATE, 12) && !svc_gzip_level_ok(SVC_GZIP_LIBDEFLATE, 13));
	CHECK(!svc_gzip_level_ok(SVC_GZIP_ISAL, -2));
	CHECK_EQ_U(svc_gzip_level(SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT), 0);
	CHECK_EQ_U(svc_gzip_level(SVC_GZIP_LIBDEFLATE, SVC_GZIP_LEVEL_DEFAULT), 1);
	struct evbuffer *bad = evbuffer_new();
	CHECK(!svc_gzip_with(SVC_GZIP_ISAL, 4, "x", 1, bad) && evbuffer_get_length(bad) == 0);
	evbuffer_free(bad);
	/* Every level of each library, the default last (-1). */
	const struct {
		svc_gzip_library lib;
		int level;
	} codecs[] = {
		{SVC_GZIP_ISAL, 0}, {SVC_GZIP_ISAL, 1}, {SVC_GZIP_ISAL, 2}, {SVC_GZIP_ISAL, 3},
		{SVC_GZIP_LIBDEFLATE, 0}, {SVC_GZIP_LIBDEFLATE, 1}, {SVC_GZIP_LIBDEFLATE, 6},
		{SVC_GZIP_LIBDEFLATE, 12}, {SVC_GZIP_ISAL, -1}, {SVC_GZIP_LIBDEFLATE, -1},
	};
	for (int kind = 0; kind < 3; kind++) {
		size_t len = kind == 2 ? 0 : n;
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			data[i] = kind == 0 ? (uint8_t)("symbolizer"[i % 10] + i / 5000 % 3)
					    : (uint8_t)x;
		}
		for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
			struct evbuffer *b = gz_with(codecs[c].lib, codecs[c].level, data, len);
			REQUIRE(b);
			size_t zn = evbuffer_get_length(b);
			/* libdeflate's 0 stores; every other level compresses */
			bool stores = codecs[c].lib == SVC_GZIP_LIBDEFLATE && codecs[c].level == 0;
			CHECK(kind != 0 || stores || zn < len / 10);
			void *out = NULL;
			size_t out_n = 1;
			CHECK_EQ_U(svc_gunzip(evbuffer_pullup(b, -1), zn, n, &out, &out_n), SVC_OK);
			CHECK_EQ_U(out_n, len);
			CHECK(len == 0 || (out && memcmp(out, data, len) == 0));
			free(out);
			evbuffer_free(b);
		}
	}
	free(data);
}

TEST(gzip_round_trip_and_cap)
{
	size_t n = 300000;
	uint8_t *data = malloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)(i * 7 % 251);
	struct evbuffer *b = gz(data, n);
	REQUIRE(b);
	size_t zn = evbuffer_get_length(b);
	uint8_t *z = evbuffer_pullup(b, -1);
	void *out = NULL;
	size_t out_n = 0;
	CHECK_EQ_U(svc_gunzip(z, zn, n, &out, &out_n), SVC_OK);
	CHECK_EQ_U(out_n, n);
	CHECK(out && memcmp(out, data, n) == 0);
	free(out);
	out = NULL;
	/* One byte under the size: over the cap, and no output. */
	CHECK_EQ_U(svc_gunzip(z, zn, n - 1, &out, &out_n), SVC_E_TOO_LARGE);
	CHECK(out == NULL);
	/* Truncated, corrupt, with trailing garbage: refused. */
	CHECK_EQ_U(svc_gunzip(z, zn - 5, n, &out, &out_n), SVC_E_INVALID);
	uint8_t *bad = malloc(zn + 3);
	memcpy(bad, z, zn);
	memcpy(bad + zn, "xyz", 3);
	CHECK_EQ_U(svc_gunzip(bad, zn + 3, n, &out, &out_n), SVC_E_INVALID);
	memcpy(bad, z, zn);
	bad[zn / 2] ^= 0xff;
	bad[zn / 2 + 1] ^= 0x55;
	CHECK(svc_gunzip(bad, zn, n, &out, &out_n) != SVC_OK);
	CHECK_EQ_U(svc_gunzip("\x1f\x8b\x08\x00garbage", 11, n, &out, &out_n), SVC_E_INVALID);
	CHECK_EQ_U(svc_gunzip("", 0, n, &out, &out_n), SVC_E_INVALID);
	free(bad);
	free(data);
	evbuffer_free(b);
}

TEST(gzip_bomb_stops_at_the_cap)
{
	/* 64 MiB of zeros compress to ~64 KiB; a 1 MiB cap must stop it early. */
	size_t n = 64u << 20;
	uint8_t *zeros = calloc(1, n);
	struct evbuffer *b = gz(zeros, n);
	free(zeros);
	REQUIRE(b);
	void *out = NULL;
	size_t out_n = 0;
	CHECK_EQ_U(svc_gunzip(evbuffer_pullup(b, -1), evbuffer_get_length(b), 1u << 20, &out,
			      &out_n),
		   SVC_E_TOO_LARGE);
	CHECK(out == NULL);
	evbuffer_free(b);
}

TEST_MAIN()
