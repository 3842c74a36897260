/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_string_rank: dense ordinals for the strings of one index.
 *
 * An index's string table (sym_index_strings) is its strings one after
 * another, each NUL-terminated. A bit per byte marks where a string starts
 * (offset 0 and each byte after a NUL), and a running count per 64 bytes
 * turns a string's address into its ordinal, 0 to n_strings - 1, with one
 * popcount: what the response tables (svc_response) use as an array slot
 * instead of hashing the string's address. Built once when the index enters
 * the cache (svc_index_cache_put); about 0.19 bytes per string-table byte.
 */
#ifndef SVC_STRING_RANK_H
#define SVC_STRING_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct svc_string_rank {
	const char *base;     /* the string table; NULL when none was built */
	size_t size;
	uint64_t *starts;     /* bit i of word w: a string starts at base + 64 w + i */
	uint32_t *rank;       /* strings starting before base + 64 w */
	uint32_t n_strings;
	size_t bytes;         /* memory held by starts and rank */
} svc_string_rank;

/* Builds the ordinals of the string table [base, base + size); false (r
 * zeroed) when out of memory or when size is 0 or past 32-bit counts. */
bool svc_string_rank_build(svc_string_rank *r, const char *base, size_t size);
void svc_string_rank_free(svc_string_rank *r);
/* The same over an index's string table (sym_index_strings). */
struct sym_index;
bool svc_string_rank_index(svc_string_rank *r, const struct sym_index *index);

/* The bits set in x (without a libgcc call where the CPU baseline has no popcnt). */
static inline uint32_t svc_string_rank_popcount(uint64_t x)
{
#ifdef __POPCNT__
	return (uint32_t)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* The ordinal of s when it is the start of a string of the table; false for
 * any other address (outside the table, or inside a string). */
static inline bool svc_string_rank_of(const svc_string_rank *r, const char *s, uint32_t *ord)
{
	uintptr_t off = (uintptr_t)s - (uintptr_t)r->base;
	if (off >= r->size)
		return false;
	uint64_t bits = r->starts[off >> 6];
	unsigned b = (unsigned)(off & 63);
	if (!((bits >> b) & 1))
		return false;
	*ord = r->rank[off >> 6] + svc_string_rank_popcount(bits & ((1ull << b) - 1));
	return true;
}

/* Starts fetching what svc_string_rank_of(r, s) reads. */
static inline void svc_string_rank_prefetch(const svc_string_rank *r, const char *s)
{
	uintptr_t off = (uintptr_t)s - (uintptr_t)r->base;
	if (off < r->size) {
		__builtin_prefetch(&r->starts[off >> 6]);
		__builtin_prefetch(&r->rank[off >> 6]);
	}
}

#endif
