// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of a Symbolize response written as JSON (svc_response_json.h):
 * the text svc_lookup_run writes with the SymbolizeResponse's codec is, byte
 * for byte, what the codec writes from the same call's protobuf bytes (as
 * the RPC layer did for every JSON call before): over two index fixtures and
 * a mapping without an index, with tables reused or private, with the
 * indexes' records or hashed keys, no_inline and no_demangle; for names that
 * need escapes or are not UTF-8; for locations of no frame and of the most,
 * of zero lines, columns and addresses, and for a call of no location.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "index_fixture.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "response_fixture.h"
#include "service/rpc/svc_rpc_json.h"
#include "test.h"

/* Whether text (n bytes) is the codec's JSON of the protobuf bytes (size);
 * where they part, told. */
static bool same_as_codec(const svc_rpc_json *j, const uint8_t *bytes, size_t size,
			  const uint8_t *text, size_t n)
{
	base_buf want;
	base_buf_init(&want, SIZE_MAX);
	svc_error err = {0};
	bool same = false;
	if (svc_rpc_json_encode(j, bytes, size, &want, &err) != SVC_OK) {
		fprintf(stderr, "  the codec: %s\n", err.msg);
	} else {
		size_t i = 0;
		while (i < n && i < want.len && text[i] == want.data[i])
			i++;
		same = i == n && i == want.len;
		if (!same)
			fprintf(stderr, "  JSON of %zu bytes, the codec's %zu: from byte %zu\n"
				"  ours:  %.60s\n  codec: %.60s\n", n, want.len, i,
				(const char *)text + (i > 20 ? i - 20 : 0),
				(const char *)want.data + (i > 20 ? i - 20 : 0));
	}
	base_buf_deinit(&want);
	return same;
}

/* Whether the call's JSON (pool: tables reused; NULL: private) is the codec's. */
static bool call_as_codec(struct call *c, svc_response_pool *pool, const svc_rpc_json *j)
{
	svc_lookup_result res;
	size_t size = 0, n = 0;
	uint8_t *bytes = run(c, pool, NULL, 256u << 20, &size, &res);
	uint8_t *text = run(c, pool, j, 256u << 20, &n, &res);
	bool same = bytes && text && same_as_codec(j, bytes, size, text, n);
	free(bytes);
	free(text);
	return same;
}

static svc_rpc_json *response_codec(void)
{
	return svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
}

/* c, c++, a mapping without an index, and c again, their locations interleaved. */
static void two_index_call(struct call *c, svc_index_entry *c_e, svc_index_entry *cxx_e)
{
	enum { N = 4000 };
	svc_index_entry *entries[4] = {c_e, cxx_e, NULL, c_e};
	uint64_t a[N / 2], b[N / 2];
	size_t na = code_addresses(c_e, a, N / 2), nb = code_addresses(cxx_e, b, N / 2);
	call_init(c, entries, 4, na + nb + 10);
	size_t k = 0;
	for (size_t i = 0; i < na || i < nb; i++) {
		if (i < na) {
			c->locs[k].mapping_index = i % 5 == 0 ? 3 : 0;
			c->locs[k++].address = a[i];
		}
		if (i < nb) {
			c->locs[k].mapping_index = 1;
			c->locs[k++].address = b[i];
		}
	}
	for (size_t i = 0; i < 10; i++) {
		c->locs[k].mapping_index = 2;
		c->locs[k++].address = 0x1000 + i;
	}
}

TEST(response_json_over_two_indexes)
{
	svc_rpc_json *j = response_codec();
	svc_index_cache *cache = svc_index_cache_create(64u << 20);
	svc_index_entry *c_e = index_fixture_entry(cache, "c_O2_dw5", 1);
	svc_index_entry *cxx_e = index_fixture_entry(cache, "cxx_O2", 2);
	REQUIRE(j && c_e && cxx_e);
	struct call c;
	two_index_call(&c, c_e, cxx_e);
	svc_response_pool *pool = svc_response_pool_create();
	for (int mode = 0; mode < 4; mode++) {
		c.opts.no_inline = mode & 1;
		c.opts.no_demangle = mode & 2;
		CHECK(call_as_codec(&c, pool, j));
		CHECK(call_as_codec(&c, pool, j));   /* tables reused after a JSON call */
		CHECK(call_as_codec(&c, NULL, j));
		/* Keys hashed, names found by address (their length by strlen). */
		svc_string_rank c_rank = c_e->strings;
		memset(&c_e->strings, 0, sizeof(c_e->strings));
		CHECK(call_as_codec(&c, pool, j));
		c_e->strings = c_rank;
	}
	svc_response_pool_destroy(pool);
	call_deinit(&c);
	svc_index_entry_release(cache, c_e);
	svc_index_entry_release(cache, cxx_e);
	svc_index_cache_destroy(cache);
	svc_rpc_json_destroy(j);
}

TEST(response_json_names_that_need_care)
{
	/* Names of the fixture's string table overwritten in place with a
	 * quote, a backslash, a control byte, a two-byte UTF-8 letter and a
	 * byte that is not UTF-8, at their start, middle or end. */
	static const char care[] = "\"\\\n\xc3\xa9\xff";
	svc_rpc_json *j = response_codec();
	svc_index_cache *cache = svc_index_cache_create(64u << 20);
	svc_index_entry *e = index_fixture_entry(cache, "c_O2_dw5", 1);
	REQUIRE(j && e && e->strings.base && e->strings.n_functions > 8);
	unsigned changed = 0;
	for (uint32_t i = 0; i < e->strings.n_functions; i++) {
		const svc_string_rank_function *rf = &e->strings.functions[i];
		size_t len = rf->display_len;
		if (len < sizeof(care) || len == SVC_STRING_RANK_LONG)
			continue;
		size_t at = i % 3 == 0 ? 0 : i % 3 == 1 ? (len - sizeof(care) + 1) / 2
							 : len - sizeof(care) + 1;
		memcpy((char *)e->strings.base + rf->display_off + at, care, sizeof(care) - 1);
		changed++;
	}
	REQUIRE(changed > 4);
	svc_index_entry *entries[1] = {e};
	uint64_t a[3000];
	size_t na = code_addresses(e, a, 3000);
	struct call c;
	call_init(&c, entries, 1, na);
	for (size_t i = 0; i < na; i++)
		c.locs[i].address = a[i];
	CHECK(call_as_codec(&c, NULL, j));
	call_deinit(&c);
	svc_index_entry_release(cache, e);
	svc_index_cache_destroy(cache);
	svc_rpc_json_destroy(j);
}

/* The response of locations of counts[i] frames (0: none) of an entry
 * without an index, with zero lines, columns and addresses among them, in
 * protobuf or (j) JSON; its bytes joined (malloc'd) and size. */
static uint8_t *frames_response(const svc_rpc_json *j, const unsigned *counts, size_t nloc,
				size_t *size)
{
	svc_response r;
	if (!svc_response_begin(&r, NULL, nloc, false, j, SIZE_MAX))
		return NULL;
	static int key;
	uint32_t e = svc_response_entry(&r, &key, NULL, NULL, 0);
	sym_frame_ids f[SVC_RESPONSE_MAX_LINES];
	for (unsigned k = 0; k < SVC_RESPONSE_MAX_LINES; k++)
		f[k] = (sym_frame_ids){.function_id = k % 7, .line = k % 4 ? 100000u * k : 0,
				       .column = k % 3};
	for (size_t i = 0; i + 1 < nloc; i++)   /* the last left for take to end */
		svc_response_frames(&r, e, f, counts[i], i % 2, i % 3 ? 0x123456789ull * i : 0);
	svc_response_mapping maps[2] = {
		{.status = STATUS(OK), .flags = SYM_INDEX_HAS_FUNCTIONS},
		{.status = STATUS(ERROR), .error = "a \"quoted\" reason", .retry_after_ms = 9},
	};
	uint8_t *bytes = take_joined(&r, maps, 2, size);
	svc_response_end(&r);
	return bytes;
}

TEST(response_json_frames_and_zeros)
{
	static const unsigned counts[] = {1, 0, 7, SVC_RESPONSE_MAX_LINES, 2, 0, 1, 0};
	svc_rpc_json *j = response_codec();
	REQUIRE(j);
	for (size_t nloc = 0; nloc <= sizeof(counts) / sizeof(counts[0]); nloc++) {
		size_t size = 0, n = 0;
		uint8_t *bytes = frames_response(NULL, counts, nloc, &size);
		uint8_t *text = frames_response(j, counts, nloc, &n);
		REQUIRE(bytes && text);
		CHECK(same_as_codec(j, bytes, size, text, n));
		free(bytes);
		free(text);
	}
	svc_rpc_json_destroy(j);
}

TEST_MAIN()
