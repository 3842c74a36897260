// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the JSON decoder's plain path (svc_rpc_json_decode_plain.c):
 * a flat message's objects and lists of them read straight from the text, held
 * byte for byte (and error for error) to the general path's reading of the
 * same text (SVC_RPC_JSON_NO_PLAIN_DECODE), under wire and container caps that
 * cut them, on SymbolizeRequest's Locations and on a test-only flat message of
 * the other integer types.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"
#include "test.h"

/* Decodes text with a and with b (a wire cap of cap bytes, max_containers):
 * 1 when both give the same code, the same bytes and the same message. */
static int decoders_agree(svc_rpc_json *a, svc_rpc_json *b, const char *text, size_t cap,
			  size_t max_containers)
{
	base_buf wa, wb;
	svc_error ea = {0}, eb = {0};
	base_buf_init(&wa, cap);
	base_buf_init(&wb, cap);
	svc_errc ca = svc_rpc_json_decode(a, text, strlen(text), max_containers, &wa, &ea);
	svc_errc cb = svc_rpc_json_decode(b, text, strlen(text), max_containers, &wb, &eb);
	int same = ca == cb && wa.len == wb.len && (!wa.len || !memcmp(wa.data, wb.data, wa.len)) &&
		   (ca == SVC_OK || !strcmp(ea.msg, eb.msg));
	if (!same)
		fprintf(stderr, "  %s (cap %zu, %zu containers): %d \"%s\" vs %d \"%s\"\n", text, cap,
			max_containers, (int)ca, ea.msg, (int)cb, eb.msg);
	base_buf_deinit(&wa);
	base_buf_deinit(&wb);
	return same;
}

/* SymbolizeRequest's codec with the plain path and without it. */
static void request_codecs(svc_rpc_json **plain, svc_rpc_json **general)
{
	*plain = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
	*general = svc_rpc_json_create_opts(&symbolizer__v1__symbolize_request__descriptor,
					    SVC_RPC_JSON_NO_PLAIN_DECODE);
}

TEST(plain_objects_read_as_the_general_path_reads_them)
{
	/* The plain path for Locations (flat: integers and a bool) against the
	 * general one, on objects in their plainest form and on each way out
	 * of it, under every wire cap and container cap that cuts them. */
	svc_rpc_json *plain, *general;
	request_codecs(&plain, &general);
	REQUIRE(plain && general);
	static const char *const locs[] = {
		"{\"address\":\"140737351\"}",
		"{\"mappingIndex\":1,\"address\":\"42\",\"isReturnAddress\":true}",
		" { \"address\" :\t\"42\" ,\n\"is_return_address\" : false\r} ",
		"{}", "{ }", "{\"address\":42}", "{\"address\":0}", "{\"address\":\"007\"}",
		"{\"address\":\"-0\"}", "{\"address\":\"-1\"}", "{\"address\":\"18446744073709551615\"}",
		"{\"address\":\"18446744073709551616\"}", "{\"address\":9999999999999999999}",
		"{\"address\":12345678901234567890}", "{\"address\":\"\"}", "{\"address\":\"1\"x}",
		"{\"address\":\"1\",\"address\":\"2\"}", "{\"mappingIndex\":1,\"mapping_index\":2}",
		"{\"mappingIndex\":4294967295}", "{\"mappingIndex\":4294967296}",
		"{\"mappingIndex\":\"5\"}", "{\"mappingIndex\":01}", "{\"mappingIndex\":1.0}",
		"{\"mappingIndex\":1e2}", "{\"mappingIndex\":-1}", "{\"mappingIndex\":null}",
		"{\"mappingIndex\":1x}", "{\"isReturnAddress\":\"true\"}", "{\"isReturnAddress\":1}",
		"{\"isReturnAddress\":truex}", "{\"isReturnAddress\":tru}", "{\"isReturnAddress\":null}",
		"{\"addr\\u0065ss\":\"1\"}", "{\"address\\\"\":\"1\"}", "{\"unknown\":5}",
		"{\"address\":\"1\",}", "{\"address\":\"1\"", "{\"address\" \"1\"}",
		"{\"address\":\"1\"]", "{\"address\":{}}", "{\"address\":[]}", "{,}", "{\"\":1}",
		"{\"address\":\"1\" \"mappingIndex\":2}", "{\"mappingIndex\":2,\"address\":\"77\"}",
	};
	char text[256];
	for (size_t i = 0; i < sizeof(locs) / sizeof(locs[0]); i++) {
		snprintf(text, sizeof(text), "{\"locations\":[%s,{\"address\":\"9\"}]}", locs[i]);
		for (size_t cap = 0; cap < 48; cap++)
			CHECK(decoders_agree(plain, general, text, cap, 1000));
		for (size_t containers = 1; containers < 5; containers++)
			CHECK(decoders_agree(plain, general, text, 1 << 20, containers));
		/* Cut anywhere: the text ends early, inside or after the object. */
		for (size_t cut = 1; cut < strlen(text); cut++) {
			char head[256];
			memcpy(head, text, cut);
			head[cut] = '\0';
			CHECK(decoders_agree(plain, general, head, 1 << 20, 1000));
		}
	}
	svc_rpc_json_destroy(plain);
	svc_rpc_json_destroy(general);
}

TEST(plain_lists_read_as_the_general_path_reads_them)
{
	/* A list read element by element, each key's field guessed from the
	 * object before (dec_plain_element, dec.hint): objects whose keys come
	 * in other orders, under other names, fewer or more of them, plain or
	 * not, with whitespace around the commas, against the general path. */
	svc_rpc_json *plain, *general;
	request_codecs(&plain, &general);
	REQUIRE(plain && general);
	static const char *const locs[] = {
		"{\"address\":\"42\",\"mappingIndex\":1}",
		"{\"address\":\"140737351\"}",
		"{\"address\":\"42\",\"mapping_index\":1}",
		"{\"mappingIndex\":1,\"address\":\"42\",\"isReturnAddress\":true}",
		"{\"mapping_index\":3,\"address\":7,\"is_return_address\":false}",
		"{\"address\":\"1\",\"isReturnAddress\":true}",
		"{\"isReturnAddress\":true,\"isReturnAddress\":false}",
		"{\"address\":\"1\",\"address\":\"2\"}", "{}", "{\"mappingIndex\":-1}",
		"{\"address\":\"1\",}", "null", "5",
	};
	const size_t n = sizeof(locs) / sizeof(locs[0]);
	char text[512];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			snprintf(text, sizeof(text), "{\"locations\":[ %s ,%s\n,\t%s ]}", locs[i],
				 locs[j], locs[i]);
			for (size_t cap = 0; cap < 64; cap += 5)
				CHECK(decoders_agree(plain, general, text, cap, 1000));
			CHECK(decoders_agree(plain, general, text, 1 << 20, 1000));
			CHECK(decoders_agree(plain, general, text, 1 << 20, 3));
		}
	svc_rpc_json_destroy(plain);
	svc_rpc_json_destroy(general);
}

/* ---- a test-only flat message ---- */

#define F(name, id, label, type, desc, flags) \
	{name, id, label, type, 0, 0, desc, NULL, flags, 0, NULL, NULL}

/* A flat test-only message of the other integer types, one with a two-byte tag. */
static const ProtobufCFieldDescriptor flat_fields[] = {
	F("i32", 1, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT32, NULL, 0),
	F("i64", 2, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT64, NULL, 0),
	F("u32", 3, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_UINT32, NULL, 0),
	F("b", 4, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BOOL, NULL, 0),
	F("far_away", 20, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_UINT64, NULL, 0),
};
static const unsigned flat_by_name[] = {3, 4, 0, 1, 2};
static const ProtobufCIntRange flat_ranges[] = {{1, 0}, {20, 4}, {0, 5}};
static const ProtobufCMessageDescriptor flat_desc = {
	PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC, "t.Flat", "Flat", "Flat", "t", 8, 5, flat_fields,
	flat_by_name, 2, flat_ranges, NULL, NULL, NULL, NULL};

TEST(plain_objects_of_every_flat_type)
{
	svc_rpc_json *plain = svc_rpc_json_create(&flat_desc);
	svc_rpc_json *general = svc_rpc_json_create_opts(&flat_desc, SVC_RPC_JSON_NO_PLAIN_DECODE);
	REQUIRE(plain && general);
	static const char *const texts[] = {
		("{\"i32\":2147483647,\"i64\":9223372036854775807,\"u32\":7,\"b\":true,"
		 "\"farAway\":\"1234567890123\"}"),
		"{\"far_away\":5}", "{\"i32\":2147483648}", "{\"i32\":-5}", "{\"i32\":\"5\"}",
		"{\"i64\":9223372036854775808}", "{\"i64\":\"5\"}", "{\"i64\":-9}",
		"{\"u32\":-0}", "{\"b\":false,\"b\":true}", "{\"b\":0}", "{\"farAway\":\"x\"}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		for (size_t cap = 0; cap < 40; cap += 3)
			CHECK(decoders_agree(plain, general, texts[i], cap, 1000));
	svc_rpc_json_destroy(plain);
	svc_rpc_json_destroy(general);
}

TEST_MAIN()
