// SPDX-License-Identifier: Apache-2.0
/*
 * svc_request: the SymbolizeRequest decoder (svc_request.h).
 */
#include "service/symbolize/svc_request.h"

#include <stdbool.h>
#include <string.h>

#include "service/rpc/svc_wire.h"

typedef enum { DECODED, NOT_SURE, FAILED } outcome;

/*
 * Reads the length of a length-delimited field, which must fit in what is
 * left. As protobuf-c: its varint has at most 5 bytes, its value is below 2^31.
 */
/* protobuf-c's allocator over the call's arena (freed with the arena). */
static void *pb_alloc(void *data, size_t size)
{
	return base_arena_alloc(data, size);
}

static void pb_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;
}

ProtobufCAllocator svc_request_allocator(base_arena *a)
{
	return (ProtobufCAllocator){.alloc = pb_alloc, .free = pb_free, .allocator_data = a};
}

static bool get_length(const uint8_t **p, const uint8_t *end, uint64_t *n)
{
	const uint8_t *start = *p;
	return svc_wire_get_varint(p, end, n) && *p - start <= 5 && *n <= INT32_MAX &&
	       *n <= (uint64_t)(end - *p);
}

/* Skips the value of a field of wire type wt; false for groups and bad types. */
static bool skip_value(const uint8_t **p, const uint8_t *end, uint32_t wt)
{
	uint64_t v;
	switch (wt) {
	case SVC_WIRE_VARINT:
		return svc_wire_get_varint(p, end, &v);
	case SVC_WIRE_I64:
		if (end - *p < 8)
			return false;
		*p += 8;
		return true;
	case SVC_WIRE_I32:
		if (end - *p < 4)
			return false;
		*p += 4;
		return true;
	case SVC_WIRE_LEN:
		if (!get_length(p, end, &v))
			return false;
		*p += v;
		return true;
	default:
		return false;
	}
}

/* Reads a tag: a field number of 1 to 2^29-1 and a wire type, in at most 5 bytes. */
static bool get_tag(const uint8_t **p, const uint8_t *end, uint32_t *field, uint32_t *wt)
{
	uint64_t tag;
	const uint8_t *start = *p;
	if (!svc_wire_get_varint(p, end, &tag) || *p - start > 5 || tag > UINT32_MAX ||
	    (tag >> 3) == 0)
		return false;
	*field = (uint32_t)(tag >> 3);
	*wt = (uint32_t)(tag & 7);
	return true;
}

/* A Location's fields, where the decoder writes them (svc_request_locations). */
struct loc_out {
	uint64_t address;
	uint32_t mapping_index;
	uint8_t is_return;
};

/*
 * The fields of a Location in number order, each at most once, as encoders
 * write them (proto3 leaves a zero out): one compare a field. False when the
 * bytes are anything else, for the general decoder.
 */
static inline __attribute__((always_inline)) bool
decode_location_in_order(const uint8_t *p, const uint8_t *end, struct loc_out *loc)
{
	uint64_t v;
	*loc = (struct loc_out){0};
	if (p < end && *p == SVC_WIRE_TAG(1, SVC_WIRE_VARINT)) {
		p++;
		if (!svc_wire_get_varint(&p, end, &v) || v > UINT32_MAX)
			return false;
		loc->mapping_index = (uint32_t)v;
	}
	if (p < end && *p == SVC_WIRE_TAG(2, SVC_WIRE_VARINT)) {
		p++;
		if (!svc_wire_get_varint(&p, end, &v))
			return false;
		loc->address = v;
	}
	if (p < end && *p == SVC_WIRE_TAG(3, SVC_WIRE_VARINT)) {
		p++;
		if (!svc_wire_get_varint(&p, end, &v))
			return false;
		loc->is_return = v != 0;
	}
	return p == end;
}

static outcome decode_location(const uint8_t *p, const uint8_t *end, struct loc_out *loc)
{
	struct loc_out l = {0};
	while (p < end) {
		uint32_t field, wt;
		uint64_t v;
		if (!get_tag(&p, end, &field, &wt))
			return NOT_SURE;
		if (field >= 1 && field <= 3) {
			if (wt != SVC_WIRE_VARINT || !svc_wire_get_varint(&p, end, &v))
				return NOT_SURE;
			if (field == 1) {
				if (v > UINT32_MAX)
					return NOT_SURE;
				l.mapping_index = (uint32_t)v;
			} else if (field == 2) {
				l.address = v;
			} else {
				l.is_return = v != 0;
			}
		} else if (!skip_value(&p, end, wt)) {
			return NOT_SURE;
		}
	}
	*loc = l;
	return DECODED;
}

/* Arrays for n locations in a (at least one element each); false when out of memory. */
static bool locations_alloc(base_arena *a, size_t n, svc_request_locations *out)
{
	size_t n1 = n ? n : 1;
	out->n = n;
	out->address = base_arena_alloc(a, n1 * sizeof(*out->address));
	out->mapping_index = base_arena_alloc(a, n1 * sizeof(*out->mapping_index));
	out->is_return = base_arena_alloc(a, n1 * sizeof(*out->is_return));
	return out->address && out->mapping_index && out->is_return;
}

/* Location i's fields into the arrays. */
static inline void location_put(svc_request_locations *out, size_t i, const struct loc_out *l)
{
	out->address[i] = l->address;
	out->mapping_index[i] = l->mapping_index;
	out->is_return[i] = l->is_return;
}

bool svc_request_locations_of(const Symbolizer__V1__SymbolizeRequest *req, base_arena *arena,
			      svc_request_locations *out)
{
	if (!locations_alloc(arena, req->n_locations, out))
		return false;
	for (size_t i = 0; i < req->n_locations; i++) {
		const Symbolizer__V1__Location *loc = req->locations[i];
		struct loc_out l = {loc->address, loc->mapping_index, loc->is_return_address != 0};
		location_put(out, i, &l);
	}
	return true;
}

void svc_request_count(const uint8_t *buf, size_t len, svc_request_shape *shape)
{
	const uint8_t *end = buf + len;
	memset(shape, 0, sizeof(*shape));
	for (const uint8_t *p = buf; p < end;) {
		/* A Location of under 128 bytes (all but odd ones): its tag and
		 * one-byte length, stepped over without the general reads. */
		if (p[0] == SVC_WIRE_TAG(2, SVC_WIRE_LEN) && end - p >= 2 && p[1] < 0x80 &&
		    p[1] <= end - p - 2) {
			shape->n_locations++;
			p += 2 + p[1];
			continue;
		}
		uint32_t field, wt;
		if (!get_tag(&p, end, &field, &wt) || (field <= 3 && wt != SVC_WIRE_LEN) ||
		    !skip_value(&p, end, wt)) {
			memset(shape, 0, sizeof(*shape));
			return;
		}
		shape->n_mappings += field == 1;
		shape->n_locations += field == 2;
		shape->n_options += field == 3;
	}
	shape->framed = true;
}

static outcome decode_fast(const uint8_t *buf, size_t len, const svc_request_shape *shape,
			   base_arena *a, Symbolizer__V1__SymbolizeRequest **out,
			   svc_request_locations *locs)
{
	const uint8_t *end = buf + len;
	ProtobufCAllocator pb = svc_request_allocator(a);
	size_t n_maps = shape->n_mappings, n_locs = shape->n_locations;
	/* Options given twice are merged by protobuf-c. */
	if (!shape->framed || shape->n_options > 1)
		return NOT_SURE;

	Symbolizer__V1__SymbolizeRequest *r = base_arena_alloc(a, sizeof(*r));
	if (!r)
		return FAILED;
	symbolizer__v1__symbolize_request__init(r);
	if (n_maps) {
		r->mappings = base_arena_alloc(a, n_maps * sizeof(*r->mappings));
		if (!r->mappings)
			return FAILED;
	}
	if (!locations_alloc(a, n_locs, locs))
		return FAILED;
	/* Second pass: the values. The Locations counted in a register (through
	 * a struct's field, each one's store waited for the last one's). */
	size_t nl = 0;
	for (const uint8_t *p = buf; p < end;) {
		uint32_t field = 0, wt = 0;
		uint64_t n = 0;
		if (p[0] == SVC_WIRE_TAG(2, SVC_WIRE_LEN) && end - p >= 2 && p[1] < 0x80) {
			/* A Location of under 128 bytes (svc_request_count checked
			 * that it fits). */
			struct loc_out l;
			const uint8_t *sub = p + 2;
			p = sub + p[1];
			if (!decode_location_in_order(sub, p, &l)) {
				outcome o = decode_location(sub, p, &l);
				if (o != DECODED)
					return o;
			}
			location_put(locs, nl++, &l);
			continue;
		}
		/* svc_request_count checked the framing: these cannot fail. */
		get_tag(&p, end, &field, &wt);
		if (field > 3) {
			skip_value(&p, end, wt);
			continue;
		}
		svc_wire_get_varint(&p, end, &n);
		const uint8_t *sub = p;
		p += n;
		if (field == 2) {
			struct loc_out l;
			outcome o = decode_location(sub, p, &l);
			if (o != DECODED)
				return o;
			location_put(locs, nl++, &l);
		} else if (field == 1) {
			Symbolizer__V1__Mapping *m =
				symbolizer__v1__mapping__unpack(&pb, (size_t)n, sub);
			if (!m)
				return FAILED;
			r->mappings[r->n_mappings++] = m;
		} else {
			r->options = symbolizer__v1__options__unpack(&pb, (size_t)n, sub);
			if (!r->options)
				return FAILED;
		}
	}
	locs->n = nl;
	*out = r;
	return DECODED;
}

Symbolizer__V1__SymbolizeRequest *svc_request_decode(const uint8_t *buf, size_t len,
						     const svc_request_shape *shape,
						     base_arena *arena,
						     svc_request_locations *locs)
{
	Symbolizer__V1__SymbolizeRequest *r = NULL;
	switch (decode_fast(buf, len, shape, arena, &r, locs)) {
	case DECODED:
		return r;
	case FAILED:
		return NULL;
	default: {
		ProtobufCAllocator pb = svc_request_allocator(arena);
		r = symbolizer__v1__symbolize_request__unpack(&pb, len, buf);
		if (!r || !svc_request_locations_of(r, arena, locs))
			return NULL;
		r->n_locations = 0;   /* in *locs */
		r->locations = NULL;
		return r;
	}
	}
}
