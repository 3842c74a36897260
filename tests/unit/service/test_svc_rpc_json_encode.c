// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the JSON encoder's fast path (service/rpc/
 * svc_rpc_json_encode_fast.c), its plainest one (svc_rpc_json_encode_plain.c)
 * and its number writer: integers of each kind at every digit-count boundary
 * (checked against printf), the wire the fast path hands to the general one
 * (a longer tag, another wire type, a field met twice, a repeated field in two
 * runs, an unknown field), empty messages, a response's runs (strings of
 * every length around the 16-byte chunks, with a byte that needs care at each
 * place; lines, functions, locations) against JSON written here with printf,
 * and the JSON cap met at every length of a response, the output always the
 * same bytes.
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

/* s as a JSON string at out (only '"', '\\' and '\n' need care here). */
static size_t quoted(char *out, const char *s)
{
	size_t n = 0;
	out[n++] = '"';
	for (; *s; s++) {
		if (*s == '"' || *s == '\\' || *s == '\n')
			out[n++] = '\\';
		out[n++] = *s == '\n' ? 'n' : *s;
	}
	out[n++] = '"';
	return n;
}

/* The JSON of r as the encoder must write it, at out. */
static size_t expected(const Symbolizer__V1__SymbolizeResponse *r, char *out)
{
	size_t n = (size_t)sprintf(out, "{\"stringTable\":[");
	for (size_t i = 0; i < r->n_string_table; i++) {
		n += i ? (size_t)sprintf(out + n, ",") : 0;
		n += quoted(out + n, r->string_table[i]);
	}
	n += (size_t)sprintf(out + n, "],\"functions\":[");
	for (size_t i = 0; i < r->n_functions; i++) {
		const Symbolizer__V1__Function *f = r->functions[i];
		n += (size_t)sprintf(out + n, "%s{\"name\":\"%" PRIu64 "\",\"systemName\":\"%" PRIu64
				     "\",\"filename\":\"%" PRIu64 "\",\"startLine\":\"%" PRId64 "\"}",
				     i ? "," : "", f->name, f->system_name, f->filename,
				     f->start_line);
	}
	n += (size_t)sprintf(out + n, "],\"locations\":[");
	for (size_t i = 0; i < r->n_locations; i++) {
		const Symbolizer__V1__LocationResult *l = r->locations[i];
		n += (size_t)sprintf(out + n, "%s{", i ? "," : "");
		for (size_t k = 0; k < l->n_lines; k++) {
			const Symbolizer__V1__Line *ln = l->lines[k];
			n += (size_t)sprintf(out + n, "%s{", k ? "," : "\"lines\":[");
			n += ln->function_index ? (size_t)sprintf(out + n, "\"functionIndex\":\"%" PRIu64
								  "\",", ln->function_index) : 0;
			n += (size_t)sprintf(out + n, "\"line\":\"%" PRId64 "\",\"column\":\"%" PRId64 "\"}",
					     ln->line, ln->column);
		}
		n += (size_t)sprintf(out + n, "%s\"normalizedAddress\":\"%" PRIu64 "\"}",
				     l->n_lines ? "]," : "", l->normalized_address);
	}
	return n + (size_t)sprintf(out + n, "]}");
}

TEST(a_response_s_runs_as_printf_writes_them)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	enum { NS = 1 + 3 * 41, NF = 40, NL = 30 };
	/* Strings of 0 to 40 bytes: plain, with a '"' and with a '\n' at a place
	 * that moves through them (a chunk's every byte, the tail's). */
	char *strings[NS], buf[NS][48];
	strings[0] = "";
	for (int len = 0; len <= 40; len++)
		for (int v = 0; v < 3; v++) {
			char *t = buf[1 + len * 3 + v];
			for (int i = 0; i < len; i++)
				t[i] = (char)('a' + (i * 7 + len) % 26);
			t[len] = '\0';
			if (v && len)
				t[(len * 5 + v) % len] = v == 1 ? '"' : '\n';
			strings[1 + len * 3 + v] = t;
		}
	Symbolizer__V1__Function fs[NF], *fps[NF];
	for (int i = 0; i < NF; i++) {
		symbolizer__v1__function__init(&fs[i]);
		fs[i].name = (uint64_t)i * 37 + 1, fs[i].system_name = (uint64_t)i * 1001 + 2;
		fs[i].filename = (uint64_t)i + 3, fs[i].start_line = (int64_t)i * i * i * 977 + 9;
		fps[i] = &fs[i];
	}
	Symbolizer__V1__Line ls[NL][3], *lps[NL][3];
	Symbolizer__V1__LocationResult locs[NL], *locps[NL];
	for (int i = 0; i < NL; i++) {
		symbolizer__v1__location_result__init(&locs[i]);
		for (int k = 0; k < i % 4; k++) {
			symbolizer__v1__line__init(&ls[i][k]);
			ls[i][k].function_index = (uint64_t)(i + k) % 7;  /* 0: omitted */
			ls[i][k].line = (int64_t)i * 100 + k + 1, ls[i][k].column = k + 1;
			lps[i][k] = &ls[i][k];
		}
		locs[i].n_lines = (size_t)(i % 4), locs[i].lines = lps[i];
		locs[i].normalized_address = (uint64_t)i * 0x1234567 + 0x400000;
		locps[i] = &locs[i];
	}
	Symbolizer__V1__SymbolizeResponse r = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
	r.n_string_table = NS, r.string_table = strings;
	r.n_functions = NF, r.functions = fps;
	r.n_locations = NL, r.locations = locps;
	size_t n = symbolizer__v1__symbolize_response__get_packed_size(&r);
	uint8_t *wire = malloc(n);
	char *want = malloc(64 << 10), *got = malloc(64 << 10);
	REQUIRE(wire && want && got);
	symbolizer__v1__symbolize_response__pack(&r, wire);
	size_t want_len = expected(&r, want);
	CHECK_EQ_U(encode_cap(j, wire, n, SIZE_MAX, got, 64 << 10), SVC_OK);
	CHECK_EQ_U(strlen(got), want_len);
	CHECK_STREQ(got, want);
	/* Caps from past the full length down through the last 4 KB: the same
	 * bytes or too large (never under the length), and once refused,
	 * refused under every smaller cap. */
	bool refused = false;
	for (size_t cap = want_len + 256; cap + 4096 > want_len; cap--) {
		svc_errc rc = encode_cap(j, wire, n, cap, got, 64 << 10);
		CHECK(rc == SVC_OK || rc == SVC_E_TOO_LARGE);
		CHECK(!(refused && rc == SVC_OK));
		CHECK(!(cap == want_len + 256 && rc != SVC_OK));
		CHECK(!(cap < want_len && rc == SVC_OK));
		refused = rc != SVC_OK;
		if (rc == SVC_OK)
			CHECK_STREQ(got, want);
	}
	free(wire);
	free(want);
	free(got);
	svc_rpc_json_destroy(j);
}

TEST(strings_at_the_end_of_the_wire)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	/* A last string of each length, its bytes the wire's last: nothing read past it. */
	for (size_t len = 0; len <= 40; len++) {
		uint8_t *wire = malloc(2 + len);
		REQUIRE(wire);
		wire[0] = 0x0a, wire[1] = (uint8_t)len;
		for (size_t i = 0; i < len; i++)
			wire[2 + i] = (uint8_t)('A' + i % 26);
		char got[128], want[128];
		snprintf(want, sizeof(want), "{\"stringTable\":[\"%.*s\"]}", (int)len, (char *)wire + 2);
		CHECK_EQ_U(encode_cap(j, wire, 2 + len, SIZE_MAX, got, sizeof(got)), SVC_OK);
		CHECK_STREQ(got, want);
		free(wire);
	}
	svc_rpc_json_destroy(j);
}

TEST_MAIN()
