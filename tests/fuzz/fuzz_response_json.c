// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: a Symbolize response over an index blob from an
 * untrusted store (as fuzz_index_load loads it, at addresses taken from the
 * input), written in JSON by svc_response itself (svc_response_json.h) and
 * in protobuf: the JSON is byte for byte what the codec (svc_rpc_json)
 * writes from the protobuf bytes, whatever the index's names hold (quotes,
 * control bytes, UTF-8 or not), with the index's string records (dense
 * slots, names read from the records) and without (hashed keys, names found
 * by address), with and without inline frames.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/resolve/svc_string_rank.h"
#include "service/rpc/svc_rpc_json.h"
#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_index.h"

enum { MAX_LOCATIONS = 64, MAX_FRAMES = 8 };

/* The locations' frames, as svc_lookup reads them. */
struct frames {
	sym_frame_ids ids[MAX_LOCATIONS * MAX_FRAMES];
	uint32_t first[MAX_LOCATIONS], count[MAX_LOCATIONS];
	uint64_t address[MAX_LOCATIONS];
	size_t n;
};

/* The response of fr in protobuf or (json) JSON, its pieces joined into *out. */
static bool response(const sym_index *idx, const svc_string_rank *rank, const struct frames *fr,
		     bool no_inline, const svc_rpc_json *json, base_buf *out)
{
	sym_index_info info;
	sym_index_get_info(idx, &info);
	svc_response r;
	if (!svc_response_begin(&r, NULL, fr->n, false, json, SIZE_MAX))
		abort();
	uint32_t e = svc_response_entry(&r, idx, idx, rank, info.n_functions);
	uint32_t entry[MAX_LOCATIONS];
	for (size_t i = 0; i < fr->n; i++)
		entry[i] = e;
	svc_response_frames_batch(&r, fr->n, entry, fr->ids, fr->first, fr->count, no_inline,
				  fr->address);
	svc_response_mapping map = {.status = 1, .flags = info.flags};
	svc_response_piece pieces[SVC_RESPONSE_PIECES];
	size_t n = svc_response_take(&r, &map, 1, pieces);
	bool ok = n > 0;
	for (size_t i = 0; i < n; i++) {
		ok = ok && base_buf_append(out, pieces[i].data, pieces[i].len);
		free(pieces[i].data);
	}
	svc_response_end(&r);
	return ok;
}

/* Aborts unless the JSON response is the codec's JSON of the protobuf one. */
static void check(const svc_rpc_json *j, const sym_index *idx, const svc_string_rank *rank,
		  const struct frames *fr, bool no_inline)
{
	base_buf wire, text, want;
	base_buf_init(&wire, SIZE_MAX);
	base_buf_init(&text, SIZE_MAX);
	base_buf_init(&want, SIZE_MAX);
	svc_error err = {0};
	if (!response(idx, rank, fr, no_inline, NULL, &wire) ||
	    !response(idx, rank, fr, no_inline, j, &text) ||
	    svc_rpc_json_encode(j, wire.data, wire.len, &want, &err) != SVC_OK ||
	    want.len != text.len || memcmp(want.data, text.data, text.len) != 0)
		abort();
	base_buf_deinit(&wire);
	base_buf_deinit(&text);
	base_buf_deinit(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static svc_rpc_json *j;
	if (!j && !(j = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor)))
		abort();
	void *blob = NULL;
	if (posix_memalign(&blob, 8, size ? size : 8))
		return 0;
	memcpy(blob, data, size);
	sym_index *idx = NULL;
	if (sym_index_load(blob, size, &idx, NULL) == SYM_OK) {
		static struct frames fr;
		uint64_t look[MAX_LOCATIONS];
		uint32_t hits[MAX_LOCATIONS];
		fr.n = 0;
		for (size_t i = 0; i + 8 <= size && fr.n < MAX_LOCATIONS; i += 8, fr.n++) {
			memcpy(&look[fr.n], data + i, 8);
			fr.address[fr.n] = look[fr.n];
		}
		sym_index_find_batch(idx, look, fr.n, hits);
		fr.n = sym_index_frame_ids_batch(idx, hits, fr.n, MAX_FRAMES, fr.ids,
						 MAX_LOCATIONS * MAX_FRAMES, fr.first, fr.count);
		for (size_t i = 0; i < fr.n; i++)
			if (fr.count[i] > MAX_FRAMES)
				fr.count[i] = MAX_FRAMES;
		svc_string_rank rank;
		bool ranked = svc_string_rank_index(&rank, idx);
		for (int no_inline = 0; no_inline < 2; no_inline++) {
			check(j, idx, NULL, &fr, no_inline);
			if (ranked)
				check(j, idx, &rank, &fr, no_inline);
		}
		if (ranked)
			svc_string_rank_free(&rank);
		sym_index_destroy(idx);
	}
	free(blob);
	return 0;
}
