/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_index_impl: a loaded index (struct sym_index) and its packed tables'
 * readers, shared by the loader (sym_index.c) and the lookups
 * (sym_index_lookup.c). The loader fills every field after checking the blob,
 * so the readers run without checks.
 */
#ifndef SYM_INDEX_IMPL_H
#define SYM_INDEX_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "symbolizer/sym_index_format_impl.h"

/*
 * A packed table, ready to read: its rows are a whole number of bytes (format
 * 7), so field f of a row is one unaligned 8-byte load at the row's byte
 * byte[f], shifted by sh[f] and masked: no bit arithmetic per row.
 */
struct ptab {
	const uint8_t *p;
	uint32_t count, row;                /* row: bytes */
	uint32_t mask[SYM_IX_MAX_FIELDS];   /* (1 << width) - 1 of each field */
	uint8_t byte[SYM_IX_MAX_FIELDS], sh[SYM_IX_MAX_FIELDS];
};

struct sym_index {
	const struct sym_ix_header *h;
	const uint16_t *starts;          /* followed by SYM_IX_STARTS_PAD bytes */
	const uint32_t *bucket_first;    /* the bucket table: 32-bit rows */
	struct ptab ranges, scopes, funcs, files, buckets;
	const char *strs;
	const struct sym_ix_section *sections;
	uint64_t base;
	uint32_t n_buckets, shift;
};

/* Row i of t. */
static inline const uint8_t *sym_ix_rowp(const struct ptab *t, uint32_t i)
{
	return t->p + (size_t)i * t->row;
}

/* Field f of the row at r: one load. */
static inline uint32_t sym_ix_field(const struct ptab *t, const uint8_t *r, unsigned f)
{
	uint64_t v;
	memcpy(&v, r + t->byte[f], sizeof(v));
	return (uint32_t)(v >> t->sh[f]) & t->mask[f];
}

/* Field f of row i. */
static inline uint32_t sym_ix_get(const struct ptab *t, uint32_t i, unsigned f)
{
	return sym_ix_field(t, sym_ix_rowp(t, i), f);
}

/* How many of the n ascending starts s[0..n) are at or below o: a branch-free
 * binary search (what sym_ix_count_le does without SSE2; tests compare both). */
static inline uint32_t sym_ix_count_le_scalar(const uint16_t *s, uint32_t n, uint16_t o)
{
	if (n == 0)
		return 0;
	const uint16_t *b = s;
	for (; n > 1; n -= n / 2)
		b = b[n / 2] <= o ? b + n / 2 : b;
	return (uint32_t)(b - s) + (*b <= o);
}

/*
 * The same, 16 starts a step with SSE2 (x86-64's baseline), branch-free: a
 * start is <= o when the saturating subtraction of o leaves 0; the lanes at or
 * below o are a prefix of the bucket's (lanes past n, read from the next
 * bucket or the SYM_IX_STARTS_PAD bytes after the starts, are masked), so the
 * first lane above o is the count. A bucket holds 4 to 8 starts on average, so
 * one step almost always ends it. Reads up to 16 starts past s + n - 1.
 */
static inline uint32_t sym_ix_count_le(const uint16_t *s, uint32_t n, uint16_t o)
{
#ifdef __SSE2__
	const __m128i ov = _mm_set1_epi16((short)o), zero = _mm_setzero_si128();
	uint32_t c = 0;
	for (;;) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 8));
		uint32_t le = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_subs_epu16(a, ov), zero)) |
			      (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_subs_epu16(b, ov), zero))
				      << 16;
		uint32_t lanes = n < 16 ? n : 16;
		le &= (uint32_t)((UINT64_C(1) << (2 * lanes)) - 1);
		uint32_t k = (uint32_t)__builtin_ctzll(~(uint64_t)le) / 2;
		c += k;
		if (k < 16 || n <= 16)
			return c;
		s += 16;
		n -= 16;
	}
#else
	return sym_ix_count_le_scalar(s, n, o);
#endif
}

#endif
