/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_hash: the hash of a run of bytes, for in-memory tables only (a value
 * is never stored or sent, and nothing is ordered by it): the index
 * builder's string interner (sym_strtab), build-ID maps, the service's tables
 * (a response's strings matched by content across indexes, a profile's
 * names). Eight bytes a step (names run to hundreds of bytes in C++; a
 * byte-at-a-time hash was a tenth of an index build): each word mixed in with
 * a multiply and a shift, the tail as one zero-padded word, then finalized
 * (splitmix64's constants).
 */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t base_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
	}
	w = 0;
	if (n)   /* p may be NULL when n is 0 */
		memcpy(&w, s, n);
	h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

#endif
