/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_request: decodes the body of a Symbolize call into a
 * Symbolizer__V1__SymbolizeRequest in the call's arena.
 *
 * The Locations, which are nearly all of a big request, are decoded by hand
 * into arrays of their fields (protobuf-c would make one allocation and one
 * reflective field walk per Location); Mappings and Options go through
 * protobuf-c. Any input the fast path is not sure to read exactly as
 * protobuf-c would (groups, an over-long varint, a field of the wrong wire
 * type, Options given twice, ...) is decoded by protobuf-c instead, so the
 * result is always what
 * symbolizer__v1__symbolize_request__unpack gives, its Locations moved to
 * the arrays (fuzz_request_decode checks this).
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
 * A request's locations as arrays, what the lookups read of each: the
 * decoder writes them so (13 bytes a location, where a Location struct and
 * its pointer are 56, written on the thread that decodes and read on a
 * worker).
 */
typedef struct svc_request_locations {
	size_t n;
	uint64_t *address;
	uint32_t *mapping_index;
	uint8_t *is_return;         /* is_return_address, 0 or 1 */
} svc_request_locations;

/*
 * shape: svc_request_count() of the same bytes. NULL when the bytes are not a
 * SymbolizeRequest or the arena's cap is hit. The request's Locations are in
 * *locs, not in the message (its n_locations is 0).
 */
Symbolizer__V1__SymbolizeRequest *svc_request_decode(const uint8_t *buf, size_t len,
						     const svc_request_shape *shape,
						     base_arena *arena,
						     svc_request_locations *locs);

/* req's Locations into *out, in arena (for a request built as a message);
 * false when out of memory. */
bool svc_request_locations_of(const Symbolizer__V1__SymbolizeRequest *req, base_arena *arena,
			      svc_request_locations *out);

/* protobuf-c's allocator view of an arena (frees nothing: the arena does). */
ProtobufCAllocator svc_request_allocator(base_arena *a);

#endif
