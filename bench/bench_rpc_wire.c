// SPDX-License-Identifier: Apache-2.0
/*
 * bench_rpc_wire: bench_rpc's messages: a SymbolizeRequest encoded with
 * protobuf-c, and a SymbolizeResponse read by a walk over its wire format or
 * by protobuf-c's decoder (--decode protobuf-c), for its frames and the
 * mapping's status.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench/bench_rpc_impl.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_wire.h"

struct body encode(const char *build_id, const uint64_t *pool, size_t n_pool, size_t start,
		   size_t batch, uint32_t max_wait_ms)
{
	Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
	m.build_id = (char *)build_id;
	Symbolizer__V1__Mapping *mp = &m;
	Symbolizer__V1__Location *locs = calloc(batch, sizeof(*locs));
	Symbolizer__V1__Location **lp = calloc(batch, sizeof(*lp));
	if (!locs || !lp)
		die("out of memory");
	for (size_t i = 0; i < batch; i++) {
		Symbolizer__V1__Location l = SYMBOLIZER__V1__LOCATION__INIT;
		l.mapping_index = 0;
		l.address = pool[(start + i) % n_pool];
		locs[i] = l;
		lp[i] = &locs[i];
	}
	Symbolizer__V1__Options o = SYMBOLIZER__V1__OPTIONS__INIT;
	o.max_wait_ms = max_wait_ms;
	Symbolizer__V1__SymbolizeRequest r = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	r.n_mappings = 1;
	r.mappings = &mp;
	r.n_locations = batch;
	r.locations = lp;
	r.options = &o;
	struct body b;
	b.len = symbolizer__v1__symbolize_request__get_packed_size(&r);
	b.data = malloc(b.len ? b.len : 1);
	if (!b.data)
		die("out of memory");
	symbolizer__v1__symbolize_request__pack(&r, b.data);
	free(locs);
	free(lp);
	return b;
}

/* Every response decoded by protobuf-c (--decode protobuf-c). */
static struct outcome decode_pbc(const uint8_t *data, size_t len, size_t batch)
{
	struct outcome o = {0};
	Symbolizer__V1__SymbolizeResponse *r =
		symbolizer__v1__symbolize_response__unpack(NULL, len, data);
	if (!r)
		die("response is not a SymbolizeResponse (%zu bytes)", len);
	if (r->n_mappings != 1 || r->n_locations != batch)
		die("response has %zu mappings and %zu locations for 1 and %zu", r->n_mappings,
		    r->n_locations, batch);
	o.status = r->mappings[0]->status;
	for (size_t i = 0; i < r->n_locations; i++) {
		o.frames += r->locations[i]->n_lines;
		o.located += r->locations[i]->n_lines > 0;
	}
	symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
	return o;
}

/* A varint at *p: one-byte values (most tags, indexes and lengths of a
 * response) without the general loop. */
static inline __attribute__((always_inline)) bool get_varint(const uint8_t **p,
							     const uint8_t *end, uint64_t *v)
{
	if (*p < end && **p < 0x80) {
		*v = *(*p)++;
		return true;
	}
	return svc_wire_get_varint(p, end, v);
}

/* One field of a message at *p: its number, wire type and value (or bytes). */
static inline __attribute__((always_inline)) bool next_field(const uint8_t **p,
							     const uint8_t *end, uint32_t *field,
							     uint64_t *v, const uint8_t **sub)
{
	uint64_t tag;
	if (!get_varint(p, end, &tag))
		return false;
	*field = (uint32_t)(tag >> 3);
	switch (tag & 7) {
	case SVC_WIRE_VARINT:
		*sub = NULL;
		return get_varint(p, end, v);
	case SVC_WIRE_LEN:
		if (!get_varint(p, end, v) || *v > (uint64_t)(end - *p))
			return false;
		*sub = *p;
		*p += *v;
		return true;
	default:
		return false;
	}
}

/*
 * A message without submessages (Function, Line, MappingResult): the sum of
 * its varints, and field 1's value in *first (0 when absent); strings (a
 * MappingResult's error) are stepped over.
 */
static uint64_t walk_scalars(const uint8_t *p, const uint8_t *end, const char *what,
			     uint64_t *first)
{
	uint64_t sum = 0;
	*first = 0;
	while (p < end) {
		uint32_t f;
		uint64_t x;
		const uint8_t *s;
		if (!next_field(&p, end, &f, &x, &s))
			die("bad %s in the response", what);
		if (s)
			continue;
		if (f == 1)
			*first = x;
		sum += x;
	}
	return sum;
}

/* A LocationResult: its number of Lines, each function_index checked. */
static uint64_t walk_location(const uint8_t *p, const uint8_t *end, size_t n_functions,
			      uint64_t *sink)
{
	uint64_t lines = 0;
	while (p < end) {
		uint32_t f;
		uint64_t x, function;
		const uint8_t *s;
		if (!next_field(&p, end, &f, &x, &s))
			die("bad LocationResult in the response");
		if (f != 1 || !s) {
			*sink += x;
			continue;
		}
		*sink += walk_scalars(s, s + x, "Line", &function);
		if (function >= n_functions)
			die("Line.function_index %" PRIu64 " of %zu functions", function, n_functions);
		lines++;
	}
	return lines;
}

/*
 * The default: a walk over the wire format that reads every field of the
 * response (each Line's function, line and column included) without building
 * objects, as a client with a fast generated decoder would; protobuf-c's
 * generic decoder costs the client more CPU than the daemon spends on the
 * call, and the client shares the daemon's 2 cores. The first response of
 * each client is also decoded by protobuf-c, and the two must agree.
 */
static struct outcome decode_walk(const uint8_t *data, size_t len, size_t batch)
{
	struct outcome o = {0};
	const uint8_t *p = data, *end = data + len, *sub;
	size_t n_strings = 0, n_functions = 0, n_locations = 0, n_mappings = 0;
	uint64_t sink = 0, first;
	while (p < end) {
		uint32_t field;
		uint64_t v;
		if (!next_field(&p, end, &field, &v, &sub))
			die("response is not a SymbolizeResponse (%zu bytes)", len);
		if (!sub)
			continue;
		if (field == 1) {
			n_strings++;
		} else if (field == 2) {
			sink += walk_scalars(sub, sub + v, "Function", &first);
			n_functions++;
		} else if (field == 3) {
			uint64_t lines = walk_location(sub, sub + v, n_functions, &sink);
			o.frames += lines;
			o.located += lines > 0;
			n_locations++;
		} else if (field == 4) {
			sink += walk_scalars(sub, sub + v, "MappingResult", &first);
			if (n_mappings++ == 0)
				o.status = (int)first;
		}
	}
	if (n_mappings != 1 || n_locations != batch || n_strings == 0)
		die("response has %zu mappings and %zu locations for 1 and %zu", n_mappings,
		    n_locations, batch);
	__asm__ volatile("" : : "r"(sink));
	return o;
}

struct outcome decode(const uint8_t *data, size_t len, size_t batch, bool first, bool with_pbc)
{
	if (with_pbc)
		return decode_pbc(data, len, batch);
	struct outcome o = decode_walk(data, len, batch);
	if (first) {
		struct outcome q = decode_pbc(data, len, batch);
		if (q.frames != o.frames || q.located != o.located || q.status != o.status)
			die("protobuf-c and the wire walk disagree on a response");
	}
	return o;
}
