/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_bits: the bit-field rows of the index's packed tables (layout in
 * sym_index_format_impl.h): reading a field with one unaligned little-endian 8-byte
 * load, writing one into a zeroed buffer, and the width a value needs.
 * Fields are at most 32 bits wide, so a field plus its bit offset inside the
 * first byte (at most 7) always fits in the 64 bits loaded.
 */
#ifndef SYM_BITS_IMPL_H
#define SYM_BITS_IMPL_H

#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the index format is read with native little-endian loads"
#endif

/* Bits [bit, bit + width) of p; needs 8 readable bytes at p + bit / 8. */
static inline uint32_t sym_bits_get(const uint8_t *p, uint64_t bit, unsigned width)
{
	uint64_t v;
	memcpy(&v, p + (bit >> 3), sizeof(v));
	return (uint32_t)((v >> (bit & 7)) & ((UINT64_C(1) << width) - 1));
}

/* ORs val (which fits in width bits) into bits [bit, bit + width) of zeroed p;
 * needs 8 writable bytes at p + bit / 8. */
static inline void sym_bits_put(uint8_t *p, uint64_t bit, unsigned width, uint32_t val)
{
	uint64_t v;
	memcpy(&v, p + (bit >> 3), sizeof(v));
	v |= ((uint64_t)val & ((UINT64_C(1) << width) - 1)) << (bit & 7);
	memcpy(p + (bit >> 3), &v, sizeof(v));
}

/* The fewest bits that hold v (0 for 0). */
static inline unsigned sym_bits_width(uint32_t v)
{
	unsigned w = 0;
	while (v) {
		w++;
		v >>= 1;
	}
	return w;
}

#endif
