/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_text: JSON text as the codec writes it (svc_rpc_json_text.c),
 * for the codec's encoder and for a method that writes its JSON answer
 * itself (svc_rpc_call_json_out; Symbolize's svc_response_json.h): the
 * bytes of a string that need care, numbers in decimal, a string with its
 * escapes and invalid UTF-8 replaced.
 */
#ifndef SVC_RPC_JSON_TEXT_H
#define SVC_RPC_JSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && !defined(SVC_RPC_JSON_NO_SSE2)  /* the latter: to test the other way */
#define JSON_TEXT_SSE2 1
#include <emmintrin.h>
#endif

#include "base/base_buf.h"

/* The bytes of 8 that need care in a JSON string (not printable ASCII, or
 * '"' or '\\'), each as its high bit; the lowest one set is exact (the
 * "has a zero byte" and "has a byte less than" word tricks: a borrow only
 * ever marks a byte above a true one). */
static inline uint64_t json_care_mask(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t quote = w ^ (ones * '"'), bslash = w ^ (ones * '\\');
	uint64_t care = ((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) |
			((bslash - ones) & ~bslash) | w;
	return care & high;
}

/*
 * Whether none of the n bytes at s needs care (json_care_mask's bytes), the
 * bytes up to n rounded up to 16 being readable: 16 at a time (SSE2; 8 by a
 * word's arithmetic elsewhere).
 */
static inline __attribute__((always_inline)) bool json_plain_padded(const char *s, size_t n)
{
	size_t i = 0;
#ifdef JSON_TEXT_SSE2
	unsigned care = 0;
	for (; i < n; i += 16) {
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i bad = _mm_or_si128(_mm_cmplt_epi8(c, _mm_set1_epi8(0x20)),
					   _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('"')),
							_mm_cmpeq_epi8(c, _mm_set1_epi8('\\'))));
		unsigned m = (unsigned)_mm_movemask_epi8(bad);   /* byte k: bit k */
		care |= n - i >= 16 ? m : m & ((1u << (n - i)) - 1);
	}
#else
	uint64_t care = 0, w;
	for (; i < n; i += 8) {
		memcpy(&w, s + i, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		uint64_t m = json_care_mask(w);   /* byte k: bit 8k + 7 */
		care |= n - i >= 8 ? m : m & ((1ull << 8 * (n - i)) - 1);
	}
#endif
	return care == 0;
}

/* Room that a number takes at most: '"', '-', 20 digits, '"'. */
#define JSON_NUMBER_MAX 24

/*
 * Every number below 1,000 in decimal, 8 bytes each: its digits (1 to 3,
 * zeros after) and their count, then its 3 digits with zeros before and a
 * zero (svc_rpc_json_text.c). A group of digits is one 4-byte copy.
 */
extern const char svc_rpc_json_dec3[1000][8];

/* v (below 10^9) in decimal at p, which has room for 4 bytes past its end
 * (they may be written); returns the byte after it. Groups of 3 digits,
 * one copy each: below 1,000 (most indexes, lines and columns) no
 * division. */
static inline __attribute__((always_inline)) uint8_t *json_write_small(uint8_t *p, uint32_t v)
{
	const char(*t)[8] = svc_rpc_json_dec3;
	if (v < 1000) {
		memcpy(p, t[v], 4);
		return p + t[v][3];
	}
	uint32_t lo;
	if (v < 1000000) {
		uint32_t hi = v / 1000;
		lo = v - hi * 1000;
		memcpy(p, t[hi], 4);
		p += t[hi][3];
	} else {
		uint32_t hi = v / 1000000, r = v - hi * 1000000, mid = r / 1000;
		lo = r - mid * 1000;
		memcpy(p, t[hi], 4);
		p += t[hi][3];
		memcpy(p, t[mid] + 4, 4);
		p += 3;
	}
	memcpy(p, t[lo] + 4, 4);
	return p + 3;
}

/* v (below 10^9) as 9 digits, zeros before, at p (room for 10 bytes). */
static inline __attribute__((always_inline)) uint8_t *json_write_9(uint8_t *p, uint32_t v)
{
	const char(*t)[8] = svc_rpc_json_dec3;
	uint32_t hi = v / 1000000, r = v - hi * 1000000, mid = r / 1000;
	memcpy(p, t[hi] + 4, 4);
	memcpy(p + 3, t[mid] + 4, 4);
	memcpy(p + 6, t[r - mid * 1000] + 4, 4);
	return p + 9;
}

/* v in decimal, with a '-' when neg, between quotes when quoted, written at
 * p (JSON_NUMBER_MAX bytes of room, which bytes past the number's end may
 * take); returns the byte after it. Below 10^9 (line numbers, indexes,
 * addresses of most files): json_write_small, no division past two;
 * above, groups of 9 digits. */
static inline __attribute__((always_inline)) uint8_t *json_write_number(uint8_t *p, uint64_t v,
									 bool neg, bool quoted)
{
	if (quoted)
		*p++ = '"';
	if (neg)
		*p++ = '-';
	if (v < 1000000000) {
		p = json_write_small(p, (uint32_t)v);
	} else if (v < 1000000000000000000ull) {
		p = json_write_small(p, (uint32_t)(v / 1000000000));
		p = json_write_9(p, (uint32_t)(v % 1000000000));
	} else {  /* 19 or 20 digits */
		p = json_write_small(p, (uint32_t)(v / 1000000000000000000ull));
		p = json_write_9(p, (uint32_t)(v / 1000000000 % 1000000000));
		p = json_write_9(p, (uint32_t)(v % 1000000000));
	}
	if (quoted)
		*p++ = '"';
	return p;
}

/* Appends a string as JSON ("..." with escapes; invalid UTF-8 as U+FFFD). */
bool svc_rpc_json_put_string(base_buf *b, const uint8_t *s, size_t n);

#endif
