/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_wire: the protobuf wire format's primitives (varints, tags), shared by
 * the request decoder (svc_request.c) and the response writer
 * (svc_response.c), the two hot paths of a Symbolize call that do not go
 * through protobuf-c's generic, reflection-driven code.
 */
#ifndef SVC_WIRE_H
#define SVC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	SVC_WIRE_VARINT = 0,
	SVC_WIRE_I64 = 1,
	SVC_WIRE_LEN = 2,
	SVC_WIRE_I32 = 5,
};

#define SVC_WIRE_TAG(field, type) ((uint32_t)(field) << 3 | (uint32_t)(type))

/* Bytes of v as a varint: 1 to 10. */
static inline size_t svc_wire_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes v as a varint at p; returns the byte after it. */
static inline uint8_t *svc_wire_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Reads a varint from *p (not past end) into *v and advances *p. False when
 * it runs past end, is longer than 10 bytes, or overflows 64 bits.
 */
static inline bool svc_wire_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	if (q < end && *q < 0x80) {   /* one byte: every tag and short length */
		*v = *q;
		*p = q + 1;
		return true;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (end - q >= 8) {
		/* Up to 8 bytes from one load: the first byte below 0x80 ends the
		 * varint; its 7-bit groups are then joined in three steps. */
		uint64_t x;
		memcpy(&x, q, sizeof(x));
		uint64_t stops = ~x & 0x8080808080808080ull;
		if (stops) {
			x &= (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;
			x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
			x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
			x = (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
			*v = x;
			*p = q + (__builtin_ctzll(stops) >> 3) + 1;
			return true;
		}
	}
#endif
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (q == end)
			return false;
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return false;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*v = r;
			*p = q;
			return true;
		}
	}
	return false;
}

#endif
