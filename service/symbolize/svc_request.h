/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_request: decodes the body of a Symbolize call into a
 * Symbolizer__V1__SymbolizeRequest in the call's arena.
 *
 * The Locations, which are nearly all of a big request, are decoded by hand
 * into one array (protobuf-c would make one allocation and one reflective
 * field walk per Location); Mappings and Options go through protobuf-c. Any
 * input the fast path is not sure to read exactly as protobuf-c would
 * (groups, an over-long varint, a field of the wrong wire type, Options given
 * twice, ...) is decoded by protobuf-c instead, so the result is always what
 * symbolizer__v1__symbolize_request__unpack gives (fuzz_request_decode checks
 * this).
 */
#ifndef SVC_REQUEST_H
#define SVC_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"

/* What the top-level framing of a request says, read without decoding it. */
typedef struct svc_request_shape {
	bool framed;           /* the framing is plainly valid; else the counts are 0 */
	size_t n_mappings, n_locations, n_options;
} svc_request_shape;

/*
 * Reads the framing (no allocation), so that an oversized batch is refused
 * before it is decoded; svc_request_decode() then reuses it.
 */
void svc_request_count(const uint8_t *buf, size_t len, svc_request_shape *shape);

/*
 * shape: svc_request_count() of the same bytes. NULL when the bytes are not a
 * SymbolizeRequest or the arena's cap is hit.
 */
Symbolizer__V1__SymbolizeRequest *svc_request_decode(const uint8_t *buf, size_t len,
						     const svc_request_shape *shape,
						     base_arena *arena);

/* protobuf-c's allocator view of an arena (frees nothing: the arena does). */
ProtobufCAllocator svc_request_allocator(base_arena *a);

#endif
