// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the JSON encoder's fast path (service/rpc/
 * svc_rpc_json_encode_fast.c) and its number writer: integers of each kind at
 * every digit-count boundary (checked against printf), the wire the fast path
 * hands to the general one (a longer tag, another wire type, a field met
 * twice, a repeated field in two runs, an unknown field), empty messages, and
 * the JSON cap met at every length of a response, the output always the same
 * bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/otlp/opentelemetry/proto/profiles/v1development/profiles.pb-c.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"
#include "service/rpc/svc_wire.h"
#include "test.h"

/* wire -> JSON under cap: the code, the text in out (NUL-terminated when OK). */
static svc_errc encode_cap(svc_rpc_json *j, const uint8_t *wire, size_t n, size_t cap,
			   char *out, size_t out_size)
{
	base_buf b;
	base_buf_init(&b, cap);
	svc_error err;
	svc_errc rc = svc_rpc_json_encode(j, wire, n, &b, &err);
	if (rc == SVC_OK && b.len < out_size) {
		memcpy(out, b.data, b.len);
		out[b.len] = '\0';
	} else if (out_size) {
		out[0] = '\0';
	}
	base_buf_deinit(&b);
	return rc;
}

/* One varint field (a one-byte tag) as a message's whole wire; its length. */
static size_t one_varint(uint8_t *wire, unsigned field, uint64_t v)
{
	wire[0] = (uint8_t)(field << 3);
	return (size_t)(svc_wire_put_varint(wire + 1, v) - wire);
}

/* The values around every power of ten, and the ends of each type. */
static size_t boundaries(uint64_t *v)
{
	size_t n = 0;
	uint64_t p = 1;
	for (int d = 0; d < 20; d++, p *= 10) {
		v[n++] = p - 1;
		v[n++] = p;
		v[n++] = p + 1;
	}
	v[n++] = UINT32_MAX;
	v[n++] = (uint64_t)INT32_MAX + 1;
	v[n++] = (uint64_t)INT64_MAX;
	v[n++] = (uint64_t)INT64_MAX + 1;
	v[n++] = UINT64_MAX;
	v[n++] = UINT64_MAX - 1;
	v[n++] = 12345678;
	v[n++] = 99990000;
	return n;
}

TEST(integers_of_each_kind_at_every_digit_count)
{
	svc_rpc_json *fn = svc_rpc_json_create(&symbolizer__v1__function__descriptor);
	svc_rpc_json *loc = svc_rpc_json_create(&symbolizer__v1__location__descriptor);
	svc_rpc_json *vt = svc_rpc_json_create(
		&opentelemetry__proto__profiles__v1development__value_type__descriptor);
	REQUIRE(fn && loc && vt);
	uint64_t vals[80];
	size_t nv = boundaries(vals);
	for (size_t i = 0; i < nv; i++) {
		uint64_t v = vals[i];
		uint8_t wire[16];
		char got[128], want[128];
		/* uint64 (Function.name): quoted unsigned. */
		size_t n = one_varint(wire, 1, v);
		CHECK_EQ_U(encode_cap(fn, wire, n, SIZE_MAX, got, sizeof(got)), SVC_OK);
		snprintf(want, sizeof(want), "{\"name\":\"%" PRIu64 "\"}", v);
		CHECK_STREQ(got, v ? want : "{}");
		/* int64 (Function.start_line): quoted signed. */
		n = one_varint(wire, 4, v);
		CHECK_EQ_U(encode_cap(fn, wire, n, SIZE_MAX, got, sizeof(got)), SVC_OK);
		snprintf(want, sizeof(want), "{\"startLine\":\"%" PRId64 "\"}", (int64_t)v);
		CHECK_STREQ(got, v ? want : "{}");
		/* uint32 (Location.mapping_index): the low 32 bits, unquoted (only a
		 * varint of 0 is the default omitted). */
		n = one_varint(wire, 1, v);
		CHECK_EQ_U(encode_cap(loc, wire, n, SIZE_MAX, got, sizeof(got)), SVC_OK);
		snprintf(want, sizeof(want), "{\"mappingIndex\":%" PRIu32 "}", (uint32_t)v);
		CHECK_STREQ(got, v ? want : "{}");
		/* int32 (ValueType.type_strindex): the low 32 bits, signed. */
		n = one_varint(wire, 1, v);
		CHECK_EQ_U(encode_cap(vt, wire, n, SIZE_MAX, got, sizeof(got)), SVC_OK);
		snprintf(want, sizeof(want), "{\"typeStrindex\":%" PRId32 "}",
			 (int32_t)(uint32_t)v);
		CHECK_STREQ(got, v ? want : "{}");
	}
	svc_rpc_json_destroy(fn);
	svc_rpc_json_destroy(loc);
	svc_rpc_json_destroy(vt);
}

TEST(wire_the_fast_path_hands_on)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	static const struct {
		const char *what;
		uint8_t wire[24];
		size_t n;
		const char *want;
	} cases[] = {
		{"empty", {0}, 0, "{}"},
		{"an empty sub-message", {0x12, 0}, 2, "{\"functions\":[{}]}"},
		{"a two-byte tag for field 1", {0x8a, 0x00, 1, 'a', 0x0a, 1, 'b'}, 7,
		 "{\"stringTable\":[\"a\",\"b\"]}"},
		{"a two-byte tag inside a run", {0x0a, 1, 'a', 0x8a, 0x00, 1, 'b'}, 7,
		 "{\"stringTable\":[\"a\",\"b\"]}"},
		{"a repeated field in two runs", {0x0a, 1, 'a', 0x12, 0, 0x0a, 1, 'b'}, 8,
		 "{\"stringTable\":[\"a\",\"b\"],\"functions\":[{}]}"},
		{"a singular field twice", {0x12, 4, 0x08, 1, 0x08, 2}, 6,
		 "{\"functions\":[{\"name\":\"2\"}]}"},
		{"a singular field 0 then 5", {0x12, 4, 0x20, 0, 0x20, 5}, 6,
		 "{\"functions\":[{\"startLine\":\"5\"}]}"},
		{"an unknown field first", {0x12, 5, 0x78, 1, 0x18, 0x96, 0x01}, 7,
		 "{\"functions\":[{\"filename\":\"150\"}]}"},
		{"fields out of order", {0x12, 6, 0x20, 7, 0x10, 3, 0x08, 1}, 8,
		 "{\"functions\":[{\"startLine\":\"7\",\"systemName\":\"3\",\"name\":\"1\"}]}"},
		{"a default first", {0x12, 4, 0x08, 0, 0x10, 2}, 6,
		 "{\"functions\":[{\"systemName\":\"2\"}]}"},
		{"an empty string kept in a list", {0x0a, 0, 0x0a, 1, 'x'}, 5,
		 "{\"stringTable\":[\"\",\"x\"]}"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[256];
		svc_errc rc = encode_cap(j, cases[i].wire, cases[i].n, SIZE_MAX, got, sizeof(got));
		if (rc != SVC_OK || strcmp(got, cases[i].want))
			fprintf(stderr, "  %s: %s\n", cases[i].what, got);
		CHECK_EQ_U(rc, SVC_OK);
		CHECK_STREQ(got, cases[i].want);
	}
	/* Another wire type in a run, and a run cut short: the general path's errors. */
	const uint8_t wrong[] = {0x12, 0, 0x15, 1, 2, 3, 4};
	const uint8_t cut[] = {0x12, 0, 0x12, 5, 0x08};
	char got[64];
	CHECK_EQ_U(encode_cap(j, wrong, sizeof(wrong), SIZE_MAX, got, sizeof(got)),
		   SVC_E_INTERNAL);
	CHECK_EQ_U(encode_cap(j, cut, sizeof(cut), SIZE_MAX, got, sizeof(got)), SVC_E_INTERNAL);
	svc_rpc_json_destroy(j);
}

TEST(the_cap_is_met_at_every_length)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	Symbolizer__V1__SymbolizeResponse r = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
	char *strings[] = {"", "main", "needs \"escapes\"\n", "x.c"};
	Symbolizer__V1__Function f = SYMBOLIZER__V1__FUNCTION__INIT, *fp = &f;
	f.name = 1, f.system_name = 1, f.filename = 3, f.start_line = 123456789;
	Symbolizer__V1__Line line = SYMBOLIZER__V1__LINE__INIT, *lp = &line;
	line.line = 42, line.column = 7;
	Symbolizer__V1__LocationResult loc = SYMBOLIZER__V1__LOCATION_RESULT__INIT, *locp = &loc;
	loc.n_lines = 1, loc.lines = &lp, loc.normalized_address = 0x401000;
	r.n_string_table = 4, r.string_table = strings;
	r.n_functions = 1, r.functions = &fp;
	r.n_locations = 1, r.locations = &locp;
	uint8_t wire[256];
	size_t n = symbolizer__v1__symbolize_response__pack(&r, wire);
	char full[512], got[512];
	REQUIRE(encode_cap(j, wire, n, SIZE_MAX, full, sizeof(full)) == SVC_OK);
	CHECK_STREQ(full, "{\"stringTable\":[\"\",\"main\",\"needs \\\"escapes\\\"\\n\",\"x.c\"],"
			  "\"functions\":[{\"name\":\"1\",\"systemName\":\"1\",\"filename\":\"3\","
			  "\"startLine\":\"123456789\"}],\"locations\":[{\"lines\":[{\"line\":"
			  "\"42\",\"column\":\"7\"}],\"normalizedAddress\":\"4198400\"}]}");
	/* Under every cap: refused as too large, or the same bytes; refused
	 * under a cap means refused under every smaller one. */
	bool fits = false;
	for (size_t cap = 0; cap < strlen(full) + 100; cap++) {
		svc_errc rc = encode_cap(j, wire, n, cap, got, sizeof(got));
		CHECK(rc == SVC_OK || rc == SVC_E_TOO_LARGE);
		CHECK(!(fits && rc != SVC_OK));
		if (rc == SVC_OK) {
			fits = true;
			CHECK_STREQ(got, full);
		}
	}
	CHECK(fits);
	svc_rpc_json_destroy(j);
}

TEST_MAIN()
