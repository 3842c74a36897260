// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the JSON decoder's one pass over the text
 * (service/rpc/svc_rpc_json_scan.c under svc_rpc_json_decode): what a
 * streaming parser can get wrong. A valid body cut at every byte, nesting
 * at the bound and one past it, escapes (surrogate pairs, lone surrogates),
 * malformed and overlong UTF-8, integers at the 64-bit edges and in
 * exponent form, whitespace between every token, bytes after the value,
 * and keys given twice (the last value in the first one's place, as
 * json-c's tree had it, counted once against the wire cap). The decoder it replaced is the reference of
 * tests/fuzz/fuzz_json_differential.c.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"
#include "test.h"

/* Decodes text (n bytes) into w (fresh, 1 MiB cap); the code, msg in *err. */
static svc_errc dec(svc_rpc_json *j, const char *text, size_t n, base_buf *w, svc_error *err)
{
	base_buf_init(w, 1 << 20);
	err->msg[0] = '\0';
	return svc_rpc_json_decode(j, text, n, 1000, w, err);
}

/* The error message of decoding text ("" when it decodes). */
static const char *msg_of(svc_rpc_json *j, const char *text)
{
	static svc_error err;
	base_buf w;
	svc_errc rc = dec(j, text, strlen(text), &w, &err);
	base_buf_deinit(&w);
	return rc == SVC_OK ? "" : err.msg;
}

/* Whether a and b decode to the same wire bytes (both accepted). */
static bool same_wire(svc_rpc_json *j, const char *a, const char *b)
{
	base_buf wa, wb;
	svc_error err;
	bool ok = dec(j, a, strlen(a), &wa, &err) == SVC_OK &&
		  dec(j, b, strlen(b), &wb, &err) == SVC_OK && wa.len == wb.len &&
		  !memcmp(wa.data, wb.data, wa.len);
	if (!ok)
		fprintf(stderr, "  not the same wire: %s | %s (%s)\n", a, b, err.msg);
	base_buf_deinit(&wa);
	base_buf_deinit(&wb);
	return ok;
}

/* The build ID the first mapping of text decodes to (static), NULL when refused. */
static const char *build_id_of(svc_rpc_json *j, const char *text)
{
	static char out[256];
	base_buf w;
	svc_error err;
	const char *r = NULL;
	if (dec(j, text, strlen(text), &w, &err) == SVC_OK) {
		Symbolizer__V1__SymbolizeRequest *m =
			symbolizer__v1__symbolize_request__unpack(NULL, w.len, w.data);
		if (m && m->n_mappings == 1) {
			snprintf(out, sizeof(out), "%s", m->mappings[0]->build_id);
			r = out;
		}
		symbolizer__v1__symbolize_request__free_unpacked(m, NULL);
	}
	base_buf_deinit(&w);
	return r;
}

static const char *const bodies[] = {
	"{\"mappings\":[{\"buildId\":\"ab\\u00e9\\ud83d\\ude00\\n\",\"memoryStart\":\"4096\","
	"\"memoryLimit\":8192,\"addressKind\":\"ADDRESS_KIND_FILE_OFFSET\"}],"
	"\"locations\":[{\"address\":\"4100\",\"mappingIndex\":0},{\"address\":1.5e3}],"
	"\"unknown\":{\"a\":[true,false,null,-1.25E-2,\"x\"]},\"options\":{}}",
	" { \"locations\" : [ { \"address\" : 12 } ] } ",
};

TEST(every_truncation_is_refused_cleanly)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++) {
		size_t n = strlen(bodies[b]);
		base_buf w;
		svc_error err;
		REQUIRE(dec(j, bodies[b], n, &w, &err) == SVC_OK);
		base_buf_deinit(&w);
		size_t last = n;  /* a prefix ending in whitespace past '}' is whole */
		while (last && bodies[b][last - 1] == ' ')
			last--;
		for (size_t cut = 0; cut < last; cut++) {
			svc_errc rc = dec(j, bodies[b], cut, &w, &err);
			if (rc != SVC_E_INVALID || w.len != 0)
				fprintf(stderr, "  cut at %zu: %d %s\n", cut, (int)rc, err.msg);
			CHECK_EQ_U(rc, SVC_E_INVALID);
			CHECK_EQ_U(w.len, 0);  /* nothing of a refused request */
			base_buf_deinit(&w);
		}
	}
	CHECK_STREQ(msg_of(j, "{\"mappings\":[{\"buildId\":\"ab"),
		    "invalid JSON request: the JSON text ends early");
	svc_rpc_json_destroy(j);
}

TEST(nesting_at_the_bound_and_past_it)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	/* The object and 63 arrays in an unknown field: 64 deep, the bound. */
	for (int extra = 0; extra <= 1; extra++) {
		char text[512] = "{\"x\":";
		for (int i = 0; i < 63 + extra; i++)
			strcat(text, "[");
		for (int i = 0; i < 63 + extra; i++)
			strcat(text, "]");
		strcat(text, "}");
		CHECK_STREQ(msg_of(j, text),
			    extra ? "invalid JSON request: nesting too deep at byte 68" : "");
	}
	svc_rpc_json_destroy(j);
}

TEST(escapes_and_surrogates)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	struct {
		const char *in, *out;
	} cases[] = {
		{"\\\"\\\\\\/\\b\\f\\n\\r\\t", "\"\\/\b\f\n\r\t"},
		{"\\ud83d\\ude00", "\xf0\x9f\x98\x80"},      /* a pair: one code point */
		{"\\uD83D\\uDE00x", "\xf0\x9f\x98\x80x"},
		{"\\ud800", "\xef\xbf\xbd"},                 /* lone: U+FFFD, as json-c */
		{"\\udc00a", "\xef\xbf\xbd" "a"},
		{"\\ud800\\u0041", "\xef\xbf\xbd" "A"},
		{"\\ud800\\ud800\\udc00", "\xef\xbf\xbd\xf0\x90\x80\x80"},
		{"a\\u00e9\\u20ac", "a\xc3\xa9\xe2\x82\xac"},
		{"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "{\"mappings\":[{\"buildId\":\"%s\"}]}", cases[i].in);
		const char *got = build_id_of(j, text);
		CHECK(got && !strcmp(got, cases[i].out));
	}
	const char *refused[] = {
		"{\"mappings\":[{\"buildId\":\"\\x\"}]}",
		"{\"mappings\":[{\"buildId\":\"\\u12G4\"}]}",
		"{\"mappings\":[{\"buildId\":\"\\u12\"}]}",
		"{\"mappings\":[{\"buildId\":\"a\tb\"}]}",  /* a raw control character */
		"{\"x\":\"\x01\"}",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK(strncmp(msg_of(j, refused[i]), "invalid JSON request: ", 22) == 0);
	CHECK_STREQ(msg_of(j, "{\"mappings\":[{\"buildId\":\"a\\u0000\"}]}"),
		    "invalid JSON request: field mappings[0].buildId: a NUL character (\\u0000) "
		    "in a string");
	svc_rpc_json_destroy(j);
}

TEST(utf8_malformed_and_overlong)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	/* Not even well formed: refused anywhere. */
	const char *malformed[] = {"\x80", "\xc3", "\xc3(", "\xe2\x82", "\xf8\x88\x80\x80\x80",
				   "\xff"};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "{\"x\":\"%s\"}", malformed[i]);
		CHECK(strncmp(msg_of(j, text), "invalid JSON request: invalid utf-8 string at byte ",
			      51) == 0);
	}
	/* Well formed but not valid (overlong, a surrogate, past U+10FFFF): a
	 * string field refuses it, an unknown field passes (json-c's check). */
	const char *overlong[] = {"\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
	for (size_t i = 0; i < sizeof(overlong) / sizeof(overlong[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "{\"mappings\":[{\"buildId\":\"%s\"}]}", overlong[i]);
		CHECK_STREQ(msg_of(j, text),
			    "invalid JSON request: field mappings[0].buildId: invalid UTF-8");
		snprintf(text, sizeof(text), "{\"x\":\"%s\"}", overlong[i]);
		CHECK_STREQ(msg_of(j, text), "");
	}
	svc_rpc_json_destroy(j);
}

TEST(integers_at_the_edges)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__type_member__descriptor);
	svc_rpc_json *r = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j && r);
	/* dims: int64. */
	CHECK(same_wire(j, "{\"dims\":[-9223372036854775808,9223372036854775807,0]}",
			"{\"dims\":[\"-9223372036854775808\",\"9223372036854775807\",\"-0\"]}"));
	CHECK(same_wire(j, "{\"dims\":[100,-100,1000]}", "{\"dims\":[1e2,-1E+2,1.0e3]}"));
	CHECK(same_wire(j, "{\"dims\":[0]}", "{\"dims\":[-0.0e5]}"));
	CHECK_STREQ(msg_of(j, "{\"dims\":[9223372036854775808]}"),
		    "invalid JSON request: field dims[0]: integer out of the field's range");
	CHECK_STREQ(msg_of(j, "{\"dims\":[-9223372036854775809]}"),
		    "invalid JSON request: an integer past 64 bits (no field holds it)");
	CHECK_STREQ(msg_of(j, "{\"dims\":[1e-2]}"),
		    "invalid JSON request: field dims[0]: not an integer");
	/* memoryStart: uint64. */
	CHECK(same_wire(r, "{\"mappings\":[{\"memoryStart\":18446744073709551615}]}",
			"{\"mappings\":[{\"memoryStart\":\"18446744073709551615\"}]}"));
	CHECK(same_wire(r, "{\"mappings\":[{\"memoryStart\":10000000000000000000}]}",
			"{\"mappings\":[{\"memoryStart\":1e19}]}"));
	CHECK_STREQ(msg_of(r, "{\"mappings\":[{\"memoryStart\":18446744073709551616}]}"),
		    "invalid JSON request: an integer past 64 bits (no field holds it)");
	CHECK_STREQ(msg_of(r, "{\"mappings\":[{\"memoryStart\":1.8446744073709551616e19}]}"),
		    "invalid JSON request: field mappings[0].memoryStart: integer out of the "
		    "field's range");
	/* Stricter than json-c: RFC 8259's numbers only. */
	const char *bad[] = {"01", "-01", "00", "1.", ".5", "-.5", "+1", "1e", "1e+", "-", "NaN",
			     "Infinity", "-Infinity", "0x10"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "{\"x\":%s}", bad[i]);
		CHECK(strncmp(msg_of(r, text), "invalid JSON request: ", 22) == 0);
	}
	/* json-c reads -.5 as a number: the reason says why it is not one here. */
	CHECK(strstr(msg_of(r, "{\"x\":-.5}"), "a number without digits before its point"));
	svc_rpc_json_destroy(j);
	svc_rpc_json_destroy(r);
}

TEST(digit_strings_of_every_length)
{
	/* An address as a string of digits is read 8 digits at a time (the
	 * common case's fast path): every length, leading zeros, a digit string
	 * the text ends in, and what is not one, against the number's form. */
	svc_rpc_json *r = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(r);
	const char *all = "18446744073709551615";
	for (size_t n = 1; n <= 20; n++) {
		for (int zeros = 0; zeros <= 3; zeros += 3) {
			char digits[32], a[96], b[96];
			snprintf(digits, sizeof(digits), "%.*s%.*s", zeros, "000", (int)n, all);
			snprintf(a, sizeof(a), "{\"locations\":[{\"address\":\"%s\"}]}", digits);
			snprintf(b, sizeof(b), "{\"locations\":[{\"address\":%.*s}]}", (int)n, all);
			CHECK(same_wire(r, a, b));  /* past 19 digits: the general path */
		}
	}
	CHECK_STREQ(msg_of(r, "{\"locations\":[{\"address\":\"18446744073709551616\"}]}"),
		    "invalid JSON request: field locations[0].address: integer out of the "
		    "field's range");
	CHECK(same_wire(r, "{\"locations\":[{\"address\":\"12345678\",\"mappingIndex\":\"1\"}]}",
			"{\"locations\":[{\"address\":12345678,\"mappingIndex\":1}]}"));
	CHECK(same_wire(r, "{\"locations\":[{\"address\":\"0000000000000000012\"}]}",
			"{\"locations\":[{\"address\":12}]}"));
	CHECK(same_wire(r, "{\"locations\":[{\"address\":\"1234567\\u0038\"}]}",
			"{\"locations\":[{\"address\":12345678}]}"));
	CHECK(strstr(msg_of(r, "{\"locations\":[{\"address\":\"12345678x\"}]}"),
		     "not an integer"));
	CHECK(strstr(msg_of(r, "{\"locations\":[{\"address\":\"\"}]}"), "not an integer"));
	/* The text ending inside the digits, where 8 bytes cannot be read. */
	const char *cut = "{\"locations\":[{\"address\":\"1234567890123";
	for (size_t n = strlen(cut) - 13; n <= strlen(cut); n++) {
		base_buf w;
		svc_error err;
		CHECK_EQ_U(dec(r, cut, n, &w, &err), SVC_E_INVALID);
		base_buf_deinit(&w);
	}
	svc_rpc_json_destroy(r);
}

TEST(whitespace_everywhere_and_bytes_after)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	CHECK(same_wire(j, "{\"mappings\":[{\"buildId\":\"ab\",\"memoryStart\":1}],"
			   "\"locations\":[{\"address\":\"2\"},{\"address\":3}]}",
			"\r\n\t {\t\"mappings\" \n:\r[ {\"buildId\"\t:\t\"ab\" , \"memoryStart\" : "
			"1 } ] ,\n\"locations\":\n[\n{ \"address\" :\"2\"} ,{\"address\":3\n}\n]\n}"
			"\n\t \r"));
	CHECK_STREQ(msg_of(j, "{} x"), "invalid JSON request: unexpected character at byte 3");
	CHECK_STREQ(msg_of(j, "{}}"), "invalid JSON request: unexpected character at byte 2");
	CHECK_STREQ(msg_of(j, "{}{}"), "invalid JSON request: unexpected character at byte 2");
	CHECK_STREQ(msg_of(j, "{}\0"), "");  /* strlen: the NUL is not in the text */
	base_buf w;
	svc_error err;
	CHECK_EQ_U(dec(j, "{}\0", 3, &w, &err), SVC_E_INVALID);
	base_buf_deinit(&w);
	/* A syntax error after a wrong type: the syntax error, as json-c's tree had it. */
	CHECK_STREQ(msg_of(j, "{\"mappings\":{},}"),
		    "invalid JSON request: quoted object property name expected at byte 15");
	CHECK_STREQ(msg_of(j, "[] x"), "invalid JSON request: unexpected character at byte 3");
	svc_rpc_json_destroy(j);
}

TEST(keys_given_twice)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	/* The last value, in the first one's place. */
	CHECK(same_wire(j, "{\"mappings\":[{\"buildId\":\"a\"}],\"locations\":[{\"address\":1}],"
			   "\"mappings\":[{\"buildId\":\"bb\"},{}]}",
			"{\"mappings\":[{\"buildId\":\"bb\"},{}],\"locations\":[{\"address\":1}]}"));
	CHECK(same_wire(j, "{\"mappings\":[{\"buildId\":\"a\",\"memoryStart\":5,\"buildId\":null}]}",
			"{\"mappings\":[{\"memoryStart\":5}]}"));
	/* Two nulls at one place in the wire, each replaced: the order they came. */
	CHECK(same_wire(j, "{\"mappings\":[{\"buildId\":null,\"memoryStart\":null,"
			   "\"memoryStart\":5,\"buildId\":\"x\"}]}",
			"{\"mappings\":[{\"buildId\":\"x\",\"memoryStart\":5}]}"));
	/* A refused value that a later one replaces is no error. */
	CHECK(same_wire(j, "{\"locations\":[{\"address\":true,\"mappingIndex\":2,\"address\":\"7\"}]}",
			"{\"locations\":[{\"address\":7,\"mappingIndex\":2}]}"));
	/* The first refusal standing, in the order the keys came. */
	CHECK_STREQ(msg_of(j, "{\"locations\":[{\"address\":true,\"mappingIndex\":-1}]}"),
		    "invalid JSON request: field locations[0].address: expected an integer (a "
		    "number or a string)");
	CHECK_STREQ(msg_of(j, "{\"options\":1,\"mappings\":2,\"options\":{}}"),
		    "invalid JSON request: field mappings: expected an array");
	/* The .proto name and the JSON name are two keys: both written, the last wins. */
	const char *text = "{\"mappings\":[{\"memory_start\":1,\"memoryStart\":2,\"memory_start\":3}]}";
	base_buf w;
	svc_error err;
	REQUIRE(dec(j, text, strlen(text), &w, &err) == SVC_OK);
	Symbolizer__V1__SymbolizeRequest *m =
		symbolizer__v1__symbolize_request__unpack(NULL, w.len, w.data);
	REQUIRE(m && m->n_mappings == 1);
	CHECK_EQ_U(m->mappings[0]->memory_start, 2);  /* memory_start's 3 took 1's place */
	symbolizer__v1__symbolize_request__free_unpacked(m, NULL);
	base_buf_deinit(&w);
	svc_rpc_json_destroy(j);
}

TEST(a_key_given_twice_holds_room_once)
{
	/* The wire cap is met by the message the text makes: two long values of
	 * one key never count together, though each came whole. */
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	char text[600];
	snprintf(text, sizeof(text), "{\"mappings\":[{\"buildId\":\"%0200d\",\"buildId\":\"%0200d\","
		 "\"memoryStart\":9}]}", 1, 2);
	base_buf w;
	svc_error err;
	REQUIRE(dec(j, text, strlen(text), &w, &err) == SVC_OK);
	size_t need = w.len;
	base_buf_deinit(&w);
	CHECK(need > 200 && need < 260);
	base_buf_init(&w, need);
	CHECK_EQ_U(svc_rpc_json_decode(j, text, strlen(text), 1000, &w, &err), SVC_OK);
	CHECK_EQ_U(w.len, need);
	base_buf_deinit(&w);
	base_buf_init(&w, need - 1);
	CHECK_EQ_U(svc_rpc_json_decode(j, text, strlen(text), 1000, &w, &err), SVC_E_TOO_LARGE);
	base_buf_deinit(&w);
	svc_rpc_json_destroy(j);
}

TEST_MAIN()
