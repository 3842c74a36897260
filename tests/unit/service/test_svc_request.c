// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the SymbolizeRequest decoder (svc_request_count,
 * svc_request_decode): it agrees with protobuf-c, on its fast path and on
 * the inputs it leaves to protobuf-c, whole, truncated and with bytes
 * changed; a batch is counted from its framing alone; svc_wire's varint
 * reader agrees with a byte-at-a-time one, with or without 8 bytes left.
 */
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_wire.h"
#include "service/symbolize/svc_request.h"
#include "test.h"

static size_t put_tag(uint8_t *p, uint32_t field, uint32_t wt)
{
	return (size_t)(svc_wire_put_varint(p, SVC_WIRE_TAG(field, wt)) - p);
}

static size_t put_v(uint8_t *p, uint64_t v)
{
	return (size_t)(svc_wire_put_varint(p, v) - p);
}

/* Decodes with svc_request_decode and with protobuf-c: 1 when they agree. */
static int decoders_agree(const uint8_t *buf, size_t len, int *decoded)
{
	base_arena a1, a2;
	base_arena_init(&a1, 1u << 20);
	base_arena_init(&a2, 1u << 20);
	svc_request_shape shape;
	svc_request_locations locs;
	svc_request_count(buf, len, &shape);
	Symbolizer__V1__SymbolizeRequest *x = svc_request_decode(buf, len, &shape, &a1, &locs);
	ProtobufCAllocator pb2 = svc_request_allocator(&a2);
	Symbolizer__V1__SymbolizeRequest *y =
		symbolizer__v1__symbolize_request__unpack(&pb2, len, buf);
	int ok = (x == NULL) == (y == NULL);
	*decoded = x != NULL;
	if (ok && x) {
		/* The Locations in the arrays, the message's list left empty. */
		ok = x->n_mappings == y->n_mappings && x->n_locations == 0 && !x->locations &&
		     locs.n == y->n_locations && (x->options == NULL) == (y->options == NULL);
		for (size_t i = 0; ok && i < locs.n; i++)
			ok = locs.mapping_index[i] == y->locations[i]->mapping_index &&
			     locs.address[i] == y->locations[i]->address &&
			     locs.is_return[i] == (y->locations[i]->is_return_address != 0);
		for (size_t i = 0; ok && i < x->n_mappings; i++)
			ok = strcmp(x->mappings[i]->build_id, y->mappings[i]->build_id) == 0 &&
			     x->mappings[i]->memory_start == y->mappings[i]->memory_start;
		if (ok && x->options)
			ok = x->options->no_inline == y->options->no_inline &&
			     x->options->no_demangle == y->options->no_demangle &&
			     x->options->max_wait_ms == y->options->max_wait_ms;
	}
	base_arena_deinit(&a1);
	base_arena_deinit(&a2);
	return ok;
}

TEST(request_decoder_agrees_with_protobuf_c)
{
	uint8_t buf[256];
	size_t n;
	int decoded;
	/* A mapping, options, three locations (fields in any order, one unknown). */
	n = 0;
	n += put_tag(buf + n, 1, SVC_WIRE_LEN);
	n += put_v(buf + n, 6);
	n += put_tag(buf + n, 1, SVC_WIRE_LEN);
	n += put_v(buf + n, 2);
	memcpy(buf + n, "ab", 2), n += 2;
	n += put_tag(buf + n, 2, SVC_WIRE_VARINT);
	n += put_v(buf + n, 0x10);
	size_t loc = n;
	n += put_tag(buf + n, 2, SVC_WIRE_LEN);
	n += put_v(buf + n, 15);
	n += put_tag(buf + n, 2, SVC_WIRE_VARINT);
	n += put_v(buf + n, 0xffffffffffffffffull);         /* 10 bytes */
	n += put_tag(buf + n, 3, SVC_WIRE_VARINT);
	n += put_v(buf + n, 1);
	n += put_tag(buf + n, 1, SVC_WIRE_VARINT);
	n += put_v(buf + n, 0);
	size_t loc_end = n;
	n += put_tag(buf + n, 9, SVC_WIRE_I64);             /* unknown field */
	memset(buf + n, 7, 8), n += 8;
	n += put_tag(buf + n, 2, SVC_WIRE_LEN);
	n += put_v(buf + n, 0);                             /* an empty Location */
	n += put_tag(buf + n, 3, SVC_WIRE_LEN);
	n += put_v(buf + n, 2);
	n += put_tag(buf + n, 3, SVC_WIRE_VARINT);
	n += put_v(buf + n, 5);
	CHECK(decoders_agree(buf, n, &decoded) && decoded);
	/* The batch is counted from the framing alone. */
	svc_request_shape sh;
	svc_request_count(buf, n, &sh);
	CHECK(sh.framed && sh.n_mappings == 1 && sh.n_locations == 2 && sh.n_options == 1);
	svc_request_count(buf, n - 1, &sh);
	CHECK(!sh.framed);
	/* Every prefix: truncated fields fail in both, whole fields agree. */
	for (size_t i = 0; i < n; i++)
		CHECK(decoders_agree(buf, i, &decoded));
	/* A byte changed anywhere, one at a time. */
	for (size_t i = 0; i < n; i++)
		for (unsigned v = 0; v < 256; v += 51) {
			uint8_t save = buf[i];
			buf[i] = (uint8_t)v;
			CHECK(decoders_agree(buf, n, &decoded));
			buf[i] = save;
		}
	/* Options twice (merged by protobuf-c) and a location's field of the wrong type. */
	memcpy(buf + n, buf + n - 4, 4);
	CHECK(decoders_agree(buf, n + 4, &decoded) && decoded);
	buf[loc + 2] = (uint8_t)SVC_WIRE_TAG(2, SVC_WIRE_I64);
	CHECK(decoders_agree(buf, n, &decoded));
	(void)loc_end;
	/* mapping_index past 32 bits. */
	n = 0;
	n += put_tag(buf + n, 2, SVC_WIRE_LEN);
	n += put_v(buf + n, 6);
	n += put_tag(buf + n, 1, SVC_WIRE_VARINT);
	n += put_v(buf + n, 0x100000001ull);
	CHECK(decoders_agree(buf, n, &decoded));
	/* A tag in 6 bytes (protobuf-c reads tags of at most 5), here an unknown field's. */
	static const uint8_t long_tag[] = {0xf8, 0x81, 0xff, 0xff, 0x87, 0x00, 0x01};
	CHECK(decoders_agree(long_tag, sizeof(long_tag), &decoded) && !decoded);
	/* A length in 6 bytes (protobuf-c reads lengths of at most 5), and its 5-byte twin. */
	static const uint8_t long_len[] = {0x0a, 0x82, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0a, 0x00};
	CHECK(decoders_agree(long_len, sizeof(long_len), &decoded) && !decoded);
	static const uint8_t five_len[] = {0x0a, 0x82, 0x80, 0x80, 0x80, 0x00, 0x0a, 0x00};
	CHECK(decoders_agree(five_len, sizeof(five_len), &decoded) && decoded);
	/* The same in a Location's unknown field. */
	static const uint8_t loc_long_len[] = {0x12, 0x08, 0x22, 0x81, 0x80, 0x80,
					       0x80, 0x80, 0x00, 0x10};
	CHECK(decoders_agree(loc_long_len, sizeof(loc_long_len), &decoded) && !decoded);
	static const uint8_t loc_five_len[] = {0x12, 0x07, 0x22, 0x81, 0x80, 0x80, 0x80, 0x00, 0x10};
	CHECK(decoders_agree(loc_five_len, sizeof(loc_five_len), &decoded) && decoded);
	/* The empty request. */
	CHECK(decoders_agree(buf, 0, &decoded) && decoded);
}

TEST(request_locations_of_every_length_counted)
{
	/* Locations of 0 to 203 bytes (an unknown field pads them): under 128
	 * counted from their tag and length byte, from 128 through the general
	 * reads; a length past the end is no framing. */
	static uint8_t buf[4 + 256], inner[256];
	for (int pad = -1; pad <= 200; pad++) {
		size_t m = 0;
		if (pad >= 0) {
			m += put_tag(inner + m, 9, SVC_WIRE_LEN);
			m += put_v(inner + m, (uint64_t)pad);
			memset(inner + m, 'x', (size_t)pad), m += (size_t)pad;
		}
		size_t n = 0;
		n += put_tag(buf + n, 2, SVC_WIRE_LEN);
		n += put_v(buf + n, m);
		memcpy(buf + n, inner, m), n += m;
		svc_request_shape sh;
		int decoded;
		svc_request_count(buf, n, &sh);
		CHECK(sh.framed && sh.n_locations == 1);
		CHECK(decoders_agree(buf, n, &decoded) && decoded);
		svc_request_count(buf, n - 1, &sh);
		CHECK(!sh.framed && sh.n_locations == 0);
	}
}

/* A varint read a byte at a time, as protobuf-c reads it: its length, 0 when invalid. */
static size_t varint_by_bytes(const uint8_t *p, size_t left, uint64_t *v)
{
	uint64_t r = 0;
	for (size_t i = 0; i < 10 && i < left; i++) {
		if (i == 9 && p[i] > 1)
			return 0;
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/* svc_wire_get_varint on the `left` bytes at p agrees with varint_by_bytes. */
static int varint_agrees(const uint8_t *p, size_t left)
{
	uint64_t want = 0, got = 0;
	size_t n = varint_by_bytes(p, left, &want);
	const uint8_t *q = p;
	bool ok = svc_wire_get_varint(&q, p + left, &got);
	return ok ? n == (size_t)(q - p) && got == want : n == 0 && q == p;
}

TEST(wire_varint_agrees_with_bytes)
{
	/* Every length, from values of every bit count and their neighbours,
	 * with 0 to 11 bytes after it (8 or more: the one-load path). */
	uint8_t buf[32];
	for (unsigned bits = 0; bits <= 64; bits++) {
		uint64_t top = bits == 64 ? ~0ull : (1ull << bits) - 1;
		uint64_t vals[] = {top, top + 1, top - 1, top & 0x5555555555555555ull,
				   top & 0xaaaaaaaaaaaaaaaaull};
		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			size_t len = put_v(buf, vals[k]);
			for (size_t after = 0; after < 12; after++) {
				memset(buf + len, after & 1 ? 0xff : 0x00, after);
				CHECK(varint_agrees(buf, len + after));
				CHECK(varint_agrees(buf, len - 1));     /* cut short */
			}
		}
	}
	/* Padded (a value in more bytes than it needs), too long, and past 64 bits. */
	for (size_t len = 1; len <= 12; len++) {
		memset(buf, 0x80, sizeof(buf));
		buf[len - 1] = 0x00;
		for (size_t left = len - 1; left <= len + 9; left++)
			CHECK(varint_agrees(buf, left));
		buf[len - 1] = 0x02;
		CHECK(varint_agrees(buf, len + 8));
	}
	memset(buf, 0xff, sizeof(buf));
	for (size_t left = 0; left <= 20; left++)
		CHECK(varint_agrees(buf, left));
}

TEST(request_locations_in_order_and_not)
{
	/* Locations with their fields in number order (the one-compare path):
	 * each subset, each address length, repeated and reordered fields
	 * after them. */
	uint8_t buf[64], inner[48];
	int decoded;
	for (unsigned mask = 0; mask < 8; mask++)
		for (unsigned bits = 0; bits <= 64; bits += 8)
			for (unsigned tail = 0; tail < 3; tail++) {
				size_t m = 0;
				if (mask & 1) {
					m += put_tag(inner + m, 1, SVC_WIRE_VARINT);
					m += put_v(inner + m, bits < 32 ? bits : 0x1ffffffffull);
				}
				if (mask & 2) {
					m += put_tag(inner + m, 2, SVC_WIRE_VARINT);
					m += put_v(inner + m, bits == 64 ? ~0ull : (1ull << bits) - 3);
				}
				if (mask & 4) {
					m += put_tag(inner + m, 3, SVC_WIRE_VARINT);
					m += put_v(inner + m, bits);
				}
				if (tail == 1) {   /* mapping_index again: the last one wins */
					m += put_tag(inner + m, 1, SVC_WIRE_VARINT);
					m += put_v(inner + m, 7);
				} else if (tail == 2) {   /* an address after is_return_address */
					m += put_tag(inner + m, 2, SVC_WIRE_VARINT);
					m += put_v(inner + m, 0x1234);
				}
				size_t n = put_tag(buf, 1, SVC_WIRE_LEN);
				n += put_v(buf + n, 0);
				for (int twice = 0; twice < 2; twice++) {
					n += put_tag(buf + n, 2, SVC_WIRE_LEN);
					n += put_v(buf + n, m);
					memcpy(buf + n, inner, m), n += m;
				}
				/* (A mapping_index past 32 bits is protobuf-c's to judge.) */
				CHECK(decoders_agree(buf, n, &decoded));
				CHECK(decoded || ((mask & 1) && bits >= 32));
			}
}

TEST_MAIN()
