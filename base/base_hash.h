/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_hash: FNV-1a over bytes, with a final fold of the high bits into the
 * low ones (tables take the low bits). One definition for the string interner,
 * build-ID hashing, and the service's tables (storage/ has its own: it does
 * not include symbolizer/).
 */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t base_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

#endif
