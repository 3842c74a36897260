// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the protobuf JSON codec (service/rpc/svc_rpc_json): both
 * directions on the real symbolizer.v1 messages (checked against protobuf-c's
 * own pack and unpack), and on a test-only message of every scalar type
 * (bytes, floats, zigzag, fixed, packed), with the refusals: malformed JSON,
 * wrong types naming the field, ranges, caps, depth.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"
#include "test.h"

/* ---- helpers ---- */

/* JSON text -> wire with codec j; the code, the bytes in *wire (caller frees). */
static svc_errc decode(svc_rpc_json *j, const char *text, base_buf *wire, svc_error *err)
{
	base_buf_init(wire, 1 << 20);
	return svc_rpc_json_decode(j, text, strlen(text), 1000, wire, err);
}

/* wire -> JSON text (malloc'ed, NUL-terminated), NULL on failure. */
static char *encode(svc_rpc_json *j, const uint8_t *wire, size_t n)
{
	base_buf out;
	base_buf_init(&out, 1 << 20);
	svc_error err;
	if (svc_rpc_json_encode(j, wire, n, &out, &err) != SVC_OK) {
		fprintf(stderr, "  encode: %s\n", err.msg);
		base_buf_deinit(&out);
		return NULL;
	}
	base_buf_append(&out, "", 1);
	size_t len;
	return (char *)base_buf_take(&out, &len);
}

/* The error message of decoding text (a static copy), "" when it decodes. */
static const char *decode_error(svc_rpc_json *j, const char *text, svc_errc *code)
{
	static svc_error err;
	base_buf w;
	err.msg[0] = '\0';
	*code = decode(j, text, &w, &err);
	base_buf_deinit(&w);
	return *code == SVC_OK ? "" : err.msg;
}

/* ---- the real messages ---- */

TEST(request_from_json_matches_protobuf_c)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	const char *text =
		"{\"mappings\":[{\"buildId\":\"abcd\",\"memory_start\":\"4096\",\"memoryLimit\":8192,"
		"\"fileOffset\":\"18446744073709551615\",\"addressKind\":\"ADDRESS_KIND_RUNTIME\"},"
		"{\"build_id\":\"ef\",\"address_kind\":2}],"
		"\"locations\":[{\"mappingIndex\":1,\"address\":\"0x10\",\"isReturnAddress\":true}],"
		"\"options\":{\"noInline\":true,\"maxWaitMs\":\"250\"}}";
	svc_errc code;
	CHECK_STREQ(decode_error(j, text, &code), "invalid JSON request: field "
						  "locations[0].address: not an integer");
	text = "{\"mappings\":[{\"buildId\":\"abcd\",\"memory_start\":\"4096\",\"memoryLimit\":8192,"
	       "\"fileOffset\":\"18446744073709551615\",\"addressKind\":\"ADDRESS_KIND_RUNTIME\"},"
	       "{\"build_id\":\"ef\",\"address_kind\":2}],"
	       "\"locations\":[{\"mappingIndex\":1,\"address\":1e3,\"isReturnAddress\":true},"
	       "{\"address\":\"9007199254740993\"}],"
	       "\"options\":{\"noInline\":true,\"maxWaitMs\":\"250\",\"future\":{\"x\":[1]}},"
	       "\"unknownField\":[1,2,{}],\"locations2\":null}";
	base_buf w;
	svc_error err;
	REQUIRE(decode(j, text, &w, &err) == SVC_OK);
	Symbolizer__V1__SymbolizeRequest *r =
		symbolizer__v1__symbolize_request__unpack(NULL, w.len, w.data);
	REQUIRE(r);
	REQUIRE(r->n_mappings == 2 && r->n_locations == 2 && r->options);
	CHECK_STREQ(r->mappings[0]->build_id, "abcd");
	CHECK_EQ_U(r->mappings[0]->memory_start, 4096);
	CHECK_EQ_U(r->mappings[0]->memory_limit, 8192);
	CHECK_EQ_U(r->mappings[0]->file_offset, UINT64_MAX);
	CHECK_EQ_U(r->mappings[0]->address_kind, SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME);
	CHECK_STREQ(r->mappings[1]->build_id, "ef");
	CHECK_EQ_U(r->mappings[1]->address_kind,
		   SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_FILE_OFFSET);
	CHECK_EQ_U(r->locations[0]->mapping_index, 1);
	CHECK_EQ_U(r->locations[0]->address, 1000);
	CHECK(r->locations[0]->is_return_address);
	CHECK_EQ_U(r->locations[1]->address, 9007199254740993ull);  /* past a double's 53 bits */
	CHECK(r->options->no_inline && !r->options->no_demangle);
	CHECK_EQ_U(r->options->max_wait_ms, 250);
	symbolizer__v1__symbolize_request__free_unpacked(r, NULL);
	base_buf_deinit(&w);
	svc_rpc_json_destroy(j);
}

TEST(response_to_json_from_protobuf_c)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	Symbolizer__V1__SymbolizeResponse r = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
	char *strings[] = {"", "main", "a\"b\\c\n\x01", "bad\xff\xc3(utf8 \xc3\xa9"};
	r.n_string_table = 4;
	r.string_table = strings;
	Symbolizer__V1__Function f = SYMBOLIZER__V1__FUNCTION__INIT;
	f.name = 1;
	f.filename = 2;
	f.start_line = -7;
	Symbolizer__V1__Function *fp[] = {&f};
	r.n_functions = 1;
	r.functions = fp;
	Symbolizer__V1__Line l0 = SYMBOLIZER__V1__LINE__INIT, l1 = SYMBOLIZER__V1__LINE__INIT;
	l0.line = 42;
	l1.function_index = 0;
	l1.line = 7;
	l1.column = 3;
	Symbolizer__V1__Line *lp[] = {&l0, &l1};
	Symbolizer__V1__LocationResult loc = SYMBOLIZER__V1__LOCATION_RESULT__INIT,
				       empty = SYMBOLIZER__V1__LOCATION_RESULT__INIT;
	loc.n_lines = 2;
	loc.lines = lp;
	loc.normalized_address = UINT64_MAX;
	Symbolizer__V1__LocationResult *locp[] = {&loc, &empty};
	r.n_locations = 2;
	r.locations = locp;
	Symbolizer__V1__MappingResult m = SYMBOLIZER__V1__MAPPING_RESULT__INIT;
	m.status = SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_PENDING;
	m.retry_after_ms = 500;
	m.has_functions = true;
	Symbolizer__V1__MappingResult m2 = SYMBOLIZER__V1__MAPPING_RESULT__INIT;
	m2.status = 99;  /* a number the enum does not name */
	Symbolizer__V1__MappingResult *mp[] = {&m, &m2};
	r.n_mappings = 2;
	r.mappings = mp;
	size_t n = symbolizer__v1__symbolize_response__get_packed_size(&r);
	uint8_t *wire = malloc(n);
	symbolizer__v1__symbolize_response__pack(&r, wire);
	char *json = encode(j, wire, n);
	CHECK_STREQ(json,
		    "{\"stringTable\":[\"\",\"main\",\"a\\\"b\\\\c\\n\\u0001\","
		    "\"bad\xef\xbf\xbd\xef\xbf\xbd(utf8 \xc3\xa9\"],"
		    "\"functions\":[{\"name\":\"1\",\"filename\":\"2\",\"startLine\":\"-7\"}],"
		    "\"locations\":[{\"lines\":[{\"line\":\"42\"},{\"line\":\"7\",\"column\":\"3\"}],"
		    "\"normalizedAddress\":\"18446744073709551615\"},{}],"
		    "\"mappings\":[{\"status\":\"STATUS_PENDING\",\"retryAfterMs\":500,"
		    "\"hasFunctions\":true},{\"status\":99}]}");
	free(json);
	free(wire);
	svc_rpc_json_destroy(j);
}

/* Strings are scanned 8 bytes at a time: each character that needs care, at
 * every position around the words' edges, is still escaped (or replaced). */
TEST(string_escapes_at_every_position)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	static const char *const specials[] = {"\"", "\\", "\n", "\x01", "\x1f", "\x7f",
					       "\xc3\xa9", "\xff"};
	static const char *const written[] = {"\\\"", "\\\\", "\\n", "\\u0001", "\\u001f",
					      "\x7f", "\xc3\xa9", "\xef\xbf\xbd"};
	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		for (size_t pos = 0; pos < 24; pos++) {
			char str[40], want[80];
			memset(str, 'x', pos);
			snprintf(str + pos, sizeof(str) - pos, "%s%.*s", specials[k],
				 (int)(23 - pos), "yyyyyyyyyyyyyyyyyyyyyyy");
			snprintf(want, sizeof(want), "{\"stringTable\":[\"%.*s%s%.*s\"]}", (int)pos,
				 "xxxxxxxxxxxxxxxxxxxxxxxx", written[k], (int)(23 - pos),
				 "yyyyyyyyyyyyyyyyyyyyyyy");
			Symbolizer__V1__SymbolizeResponse r = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
			char *strings[] = {str};
			r.n_string_table = 1;
			r.string_table = strings;
			uint8_t wire[128];
			size_t n = symbolizer__v1__symbolize_response__pack(&r, wire);
			char *json = encode(j, wire, n);
			CHECK(json && strcmp(json, want) == 0);
			free(json);
		}
	}
	svc_rpc_json_destroy(j);
}

TEST(scattered_repeated_and_duplicate_singular_fields)
{
	/* string_table "a", functions {name 1}, string_table "b": one array; a
	 * MappingResult whose status comes twice: the last one wins. */
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
	REQUIRE(j);
	const uint8_t wire[] = {0x0a, 1, 'a', 0x12, 2, 0x08, 1, 0x0a, 1, 'b',
				0x22, 4, 0x08, 2, 0x08, 1, 0xf8, 0x07, 0x05 /* unknown 127 */};
	char *json = encode(j, wire, sizeof(wire));
	CHECK_STREQ(json, "{\"stringTable\":[\"a\",\"b\"],\"functions\":[{\"name\":\"1\"}],"
			  "\"mappings\":[{\"status\":\"STATUS_OK\"}]}");
	free(json);
	/* Bytes that are not a message of the type: an internal error, no crash. */
	base_buf out;
	base_buf_init(&out, 1 << 20);
	svc_error err;
	const uint8_t bad[] = {0x0a, 5, 'a'};
	CHECK_EQ_U(svc_rpc_json_encode(j, bad, sizeof(bad), &out, &err), SVC_E_INTERNAL);
	const uint8_t wrong_type[] = {0x0d, 1, 2, 3, 4};  /* string_table as fixed32 */
	out.len = 0;
	CHECK_EQ_U(svc_rpc_json_encode(j, wrong_type, sizeof(wrong_type), &out, &err),
		   SVC_E_INTERNAL);
	base_buf_deinit(&out);
	svc_rpc_json_destroy(j);
}

TEST(packed_repeated_int64_and_recursive_messages)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__type_member__descriptor);
	REQUIRE(j);
	const char *text = "{\"name\":\"a\",\"dims\":[\"3\",-1,4],"
			   "\"members\":[{\"name\":\"b\",\"members\":[{\"bitSize\":3}]}]}";
	base_buf w;
	svc_error err;
	REQUIRE(decode(j, text, &w, &err) == SVC_OK);
	Symbolizer__V1__TypeMember *m = symbolizer__v1__type_member__unpack(NULL, w.len, w.data);
	REQUIRE(m);
	REQUIRE(m->n_dims == 3 && m->n_members == 1 && m->members[0]->n_members == 1);
	CHECK(m->dims[0] == 3 && m->dims[1] == -1 && m->dims[2] == 4);
	CHECK_EQ_U(m->members[0]->members[0]->bit_size, 3);
	char *json = encode(j, w.data, w.len);
	CHECK_STREQ(json, "{\"name\":\"a\",\"dims\":[\"3\",\"-1\",\"4\"],"
			  "\"members\":[{\"name\":\"b\",\"members\":[{\"bitSize\":3}]}]}");
	free(json);
	symbolizer__v1__type_member__free_unpacked(m, NULL);
	base_buf_deinit(&w);
	/* Nested past the depth limit: refused (json-c's depth or ours), no crash. */
	char deep[2000] = "";
	for (int i = 0; i < 80; i++)
		strcat(deep, "{\"members\":[");
	strcat(deep, "{}");
	for (int i = 0; i < 80; i++)
		strcat(deep, "]}");
	svc_errc code;
	decode_error(j, deep, &code);
	CHECK_EQ_U(code, SVC_E_INVALID);
	svc_rpc_json_destroy(j);
}

TEST(refusals_name_the_field)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	svc_errc code;
	struct {
		const char *text, *msg;
	} cases[] = {
		{"", "invalid JSON request: an empty body is not a JSON object"},
		{"[]", "invalid JSON request: expected an object"},
		{"{\"mappings\":[{\"buildId\":\"ab\"}", "invalid JSON request: the JSON text ends early"},
		{"{} x", "invalid JSON request: unexpected character at byte 3"},
		{"{} \n", ""},
		{"{\"mappings\":{}}", "invalid JSON request: field mappings: expected an array"},
		{"{\"mappings\":[null]}", "invalid JSON request: field mappings[0]: null in a list"},
		{"{\"mappings\":[{\"buildId\":1}]}",
		 "invalid JSON request: field mappings[0].buildId: expected a string"},
		{"{\"mappings\":[{},{\"memoryStart\":-1}]}",
		 "invalid JSON request: field mappings[1].memoryStart: negative value for an "
		 "unsigned field"},
		{"{\"mappings\":[{\"memoryStart\":\"18446744073709551616\"}]}",
		 "invalid JSON request: field mappings[0].memoryStart: integer out of the field's "
		 "range"},
		{"{\"mappings\":[{\"memoryStart\":1.5}]}",
		 "invalid JSON request: field mappings[0].memoryStart: not an integer"},
		{"{\"mappings\":[{\"memoryStart\":true}]}",
		 "invalid JSON request: field mappings[0].memoryStart: expected an integer (a number "
		 "or a string)"},
		{"{\"locations\":[{\"mappingIndex\":4294967296}]}",
		 "invalid JSON request: field locations[0].mappingIndex: integer out of the field's "
		 "range"},
		{"{\"locations\":[{\"isReturnAddress\":1}]}",
		 "invalid JSON request: field locations[0].isReturnAddress: expected true or false"},
		{"{\"mappings\":[{\"addressKind\":\"RUNTIME\"}]}",
		 "invalid JSON request: field mappings[0].addressKind: unknown enum value name"},
		{"{\"mappings\":[{\"addressKind\":true}]}",
		 "invalid JSON request: field mappings[0].addressKind: expected an enum value's name "
		 "or number"},
		{"{\"options\":[]}", "invalid JSON request: field options: expected an object"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_STREQ(decode_error(j, cases[i].text, &code), cases[i].msg);
		CHECK_EQ_U(code, *cases[i].msg ? SVC_E_INVALID : SVC_OK);
	}
	/* Not JSON at all, and invalid UTF-8 in a string: json-c's refusal. */
	CHECK(strncmp(decode_error(j, "{\"a\":}", &code), "invalid JSON request: ", 22) == 0);
	CHECK_EQ_U(code, SVC_E_INVALID);
	decode_error(j, "{\"mappings\":[{\"buildId\":\"\xff\"}]}", &code);
	CHECK_EQ_U(code, SVC_E_INVALID);
	/* Past U+10FFFF: json-c lets it through, we do not. */
	CHECK_STREQ(decode_error(j, "{\"mappings\":[{\"buildId\":\"\xf4\x9d\x9b\xb6\"}]}", &code),
		    "invalid JSON request: field mappings[0].buildId: invalid UTF-8");
	/* Enum numbers, nulls, and both names of a field. */
	CHECK_STREQ(decode_error(j, "{\"mappings\":[{\"addressKind\":7,\"build_id\":null}],"
				    "\"options\":null}", &code), "");
	/* Caps: the wire's and the containers'. */
	base_buf w;
	svc_error err;
	base_buf_init(&w, 8);
	const char *big = "{\"mappings\":[{\"buildId\":\"0123456789abcdef\"}]}";
	CHECK_EQ_U(svc_rpc_json_decode(j, big, strlen(big), 100, &w, &err), SVC_E_TOO_LARGE);
	base_buf_deinit(&w);
	base_buf_init(&w, 1 << 20);
	CHECK_EQ_U(svc_rpc_json_decode(j, big, strlen(big), 2, &w, &err), SVC_E_TOO_LARGE);
	base_buf_deinit(&w);
	svc_rpc_json_destroy(j);
}

/* Issue 25, item 8: protobuf's JSON mapping, strictly: each of these is
 * invalid_argument (json-c alone clamps, rounds, cuts at NUL or takes them). */
TEST(strict_json_mapping)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	svc_errc code;
	struct {
		const char *text, *msg;
	} cases[] = {
		{"{\"mappings\":[{\"memoryStart\":18446744073709551616}]}",
		 "invalid JSON request: an integer past 64 bits (no field holds it)"},
		{"{\"mappings\":[{\"memoryStart\":99999999999999999999999}]}",
		 "invalid JSON request: an integer past 64 bits (no field holds it)"},
		{"{\"mappings\":[{\"memoryStart\":-9223372036854775809}]}",
		 "invalid JSON request: an integer past 64 bits (no field holds it)"},
		{"{\"mappings\":[{\"memoryStart\":4430.0000000000001}]}",
		 "invalid JSON request: field mappings[0].memoryStart: not an integer"},
		{"{\"mappings\":[{\"memoryStart\":\"4430.0000000000001\"}]}",
		 "invalid JSON request: field mappings[0].memoryStart: not an integer"},
		{"{\"mappings\":[{\"memoryStart\":1e20}]}",
		 "invalid JSON request: field mappings[0].memoryStart: integer out of the field's "
		 "range"},
		{"{\"mappings\":[{\"buildId\":\"ab\\u0000cd\"}]}",
		 "invalid JSON request: field mappings[0].buildId: a NUL character (\\u0000) in a "
		 "string"},
		{"{'mappings':[]}",
		 "invalid JSON request: a single-quoted string (JSON quotes with \")"},
		/* What is exact stays accepted. */
		{"{\"mappings\":[{\"memoryStart\":18446744073709551615}]}", ""},
		{"{\"mappings\":[{\"memoryStart\":4430.000}]}", ""},
		{"{\"mappings\":[{\"memoryStart\":4.43e3}]}", ""},
		{"{\"mappings\":[{\"memoryStart\":\"443000e-2\"}]}", ""},
		{"{\"mappings\":[{\"memoryStart\":0.0e5}]}", ""},
		{"{\"mappings\":[{\"buildId\":\"it's\"}]}", ""},
		{"{\"mappings\":[{\"memoryStart\":4.4300000000000000000000000000e3}]}", ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_STREQ(decode_error(j, cases[i].text, &code), cases[i].msg);
		CHECK_EQ_U(code, *cases[i].msg ? SVC_E_INVALID : SVC_OK);
	}
	/* Invalid UTF-8 in a key. */
	decode_error(j, "{\"map\xffpings\":[]}", &code);
	CHECK_EQ_U(code, SVC_E_INVALID);
	svc_rpc_json_destroy(j);
}

/* The decoder's short cuts: integers in strings read without strtoull (up
 * to 19 digits; longer ones, leading zeros, "-0" as before), a sub-message's
 * length in a placeholder byte (moved when 128 or more), and the container
 * count skipping strings with escaped quotes and brackets in them. */
TEST(decoder_short_cuts_read_back_by_protobuf_c)
{
	svc_rpc_json *j = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	REQUIRE(j);
	char id[300];
	memset(id, 'a', 256);
	id[256] = '\0';
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"mappings\":[{\"buildId\":\"%s\",\"memoryStart\":\"9999999999999999999\"},"
		 "{\"buildId\":\"x\\\"{[\\\\\",\"memoryStart\":\"10000000000000000000\"}],"
		 "\"locations\":[{\"address\":\"007\"},{\"address\":\"-0\"},"
		 "{\"address\":\"18446744073709551615\",\"mappingIndex\":\"1\"}]}", id);
	base_buf w;
	svc_error err;
	base_buf_init(&w, 1 << 20);
	/* 8 objects and arrays outside strings: the 2 in a string are not counted. */
	CHECK_EQ_U(svc_rpc_json_decode(j, text, strlen(text), 7, &w, &err), SVC_E_TOO_LARGE);
	REQUIRE(svc_rpc_json_decode(j, text, strlen(text), 8, &w, &err) == SVC_OK);
	Symbolizer__V1__SymbolizeRequest *r =
		symbolizer__v1__symbolize_request__unpack(NULL, w.len, w.data);
	REQUIRE(r && r->n_mappings == 2 && r->n_locations == 3);
	CHECK_STREQ(r->mappings[0]->build_id, id);  /* a sub-message of over 128 bytes */
	CHECK_EQ_U(r->mappings[0]->memory_start, 9999999999999999999ull);
	CHECK_STREQ(r->mappings[1]->build_id, "x\"{[\\");
	CHECK_EQ_U(r->mappings[1]->memory_start, 10000000000000000000ull);
	CHECK_EQ_U(r->locations[0]->address, 7);
	CHECK_EQ_U(r->locations[1]->address, 0);
	CHECK_EQ_U(r->locations[2]->address, UINT64_MAX);
	CHECK_EQ_U(r->locations[2]->mapping_index, 1);
	symbolizer__v1__symbolize_request__free_unpacked(r, NULL);
	base_buf_deinit(&w);
	svc_errc code;
	CHECK_STREQ(decode_error(j, "{\"locations\":[{\"address\":\"18446744073709551616\"}]}",
				 &code), "invalid JSON request: field locations[0].address: "
					 "integer out of the field's range");
	CHECK_STREQ(decode_error(j, "{\"locations\":[{\"address\":\"12a\"}]}", &code),
		    "invalid JSON request: field locations[0].address: not an integer");
	CHECK_STREQ(decode_error(j, "{\"locations\":[{\"address\":\"-1\"}]}", &code),
		    "invalid JSON request: field locations[0].address: "
		    "negative value for an unsigned field");
	svc_rpc_json_destroy(j);
}

/* ---- every scalar type, on a test-only message ---- */

static const ProtobufCEnumValue color_values[] = {{"RED", "RED", 0}, {"BLUE", "BLUE", 5}};
static const ProtobufCEnumValueIndex color_by_name[] = {{"BLUE", 1}, {"RED", 0}};
static const ProtobufCIntRange color_ranges[] = {{0, 0}, {5, 1}, {0, 2}};
static const ProtobufCEnumDescriptor color = {
	PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC, "t.Color", "Color", "Color", "t", 2, color_values,
	2, color_by_name, 2, color_ranges, NULL, NULL, NULL, NULL};

#define F(name, id, label, type, desc, flags) \
	{name, id, label, type, 0, 0, desc, NULL, flags, 0, NULL, NULL}
static const ProtobufCFieldDescriptor all_fields[] = {
	F("raw_bytes", 1, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BYTES, NULL, 0),
	F("d", 2, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_DOUBLE, NULL, 0),
	F("f", 3, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_FLOAT, NULL, 0),
	F("s64", 4, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SINT64, NULL, 0),
	F("s32", 5, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SINT32, NULL, 0),
	F("sf32", 6, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SFIXED32, NULL, 0),
	F("fx64", 7, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_FIXED64, NULL, 0),
	F("i32", 8, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT32, NULL, 0),
	F("packed_i32", 9, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_INT32, NULL,
	  PROTOBUF_C_FIELD_FLAG_PACKED),
	F("colors", 10, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_ENUM, &color, 0),
	F("many_bytes", 11, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_BYTES, NULL, 0),
};
static const unsigned all_by_name[] = {9, 1, 2, 6, 3, 7, 10, 8, 0, 5, 4};
static const ProtobufCIntRange all_ranges[] = {{1, 0}, {0, 11}};
static const ProtobufCMessageDescriptor all_desc = {
	PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "t.All", "All", "All", "t", 8, 11, all_fields,
	all_by_name, 1, all_ranges, NULL, NULL, NULL, NULL};

TEST(every_scalar_type_round_trips)
{
	svc_rpc_json *j = svc_rpc_json_create(&all_desc);
	REQUIRE(j);
	/* URL-safe base64 without padding in, standard with padding out. */
	const char *text = "{\"rawBytes\":\"_-8A\",\"d\":-2.5,\"f\":\"Infinity\",\"s64\":\"-3\","
			   "\"s32\":-2147483648,\"sf32\":-1,\"fx64\":\"18446744073709551615\","
			   "\"i32\":-1,\"packedI32\":[1,-1,\"2\"],\"colors\":[\"BLUE\",0,7],"
			   "\"manyBytes\":[\"YQ\",\"YWI=\",\"\"]}";
	base_buf w;
	svc_error err;
	REQUIRE(decode(j, text, &w, &err) == SVC_OK);
	char *json = encode(j, w.data, w.len);
	CHECK_STREQ(json, "{\"rawBytes\":\"/+8A\",\"d\":-2.5,\"f\":\"Infinity\",\"s64\":\"-3\","
			  "\"s32\":-2147483648,\"sf32\":-1,\"fx64\":\"18446744073709551615\","
			  "\"i32\":-1,\"packedI32\":[1,-1,2],\"colors\":[\"BLUE\",\"RED\",7],"
			  "\"manyBytes\":[\"YQ==\",\"YWI=\",\"\"]}");
	free(json);
	base_buf_deinit(&w);
	svc_errc code;
	CHECK_STREQ(decode_error(j, "{\"rawBytes\":\"a\"}", &code),
		    "invalid JSON request: field rawBytes: not base64");
	CHECK_STREQ(decode_error(j, "{\"rawBytes\":\"a*==\"}", &code),
		    "invalid JSON request: field rawBytes: not base64");
	CHECK_STREQ(decode_error(j, "{\"f\":1e300}", &code),
		    "invalid JSON request: field f: number out of a float's range");
	CHECK_STREQ(decode_error(j, "{\"d\":\"x\"}", &code),
		    "invalid JSON request: field d: not a number");
	CHECK_STREQ(decode_error(j, "{\"s32\":2147483648}", &code),
		    "invalid JSON request: field s32: integer out of the field's range");
	CHECK_STREQ(decode_error(j, "{\"d\":\"NaN\",\"s32\":\"-2147483648\"}", &code), "");
	svc_rpc_json_destroy(j);
}

TEST_MAIN()
