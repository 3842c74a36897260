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

#include "symbolizer/sym_bits_impl.h"
#include "symbolizer/sym_index_format_impl.h"

/*
 * A packed table, ready to read: row width, each field's mask and offset in a
 * row. A row is read as two words, each one 8-byte load shifted to a bit
 * boundary (57 bits at least): fields [0, split) from the word at the row's bit
 * 0, the others from the word at bit split_at, field f sh[f] bits into its
 * word. two_words is false when the fields do not fall in two such groups
 * (then one load a field).
 */
struct ptab {
	const uint8_t *p;
	uint32_t count, row;
	uint32_t mask[SYM_IX_MAX_FIELDS];   /* (1 << width) - 1 of each field */
	uint8_t width[SYM_IX_MAX_FIELDS], at[SYM_IX_MAX_FIELDS];
	uint8_t sh[SYM_IX_MAX_FIELDS];
	uint8_t split, split_at;
	bool two_words;
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

/* Field f of row i: one load. */
static inline uint32_t sym_ix_get(const struct ptab *t, uint32_t i, unsigned f)
{
	uint64_t bit = (uint64_t)i * t->row + t->at[f], v;
	memcpy(&v, t->p + (bit >> 3), sizeof(v));
	return (uint32_t)(v >> (bit & 7)) & t->mask[f];
}

/* The 64 bits at bit `bit` of p, shifted down: 57 of them at least are the table's. */
static inline uint64_t sym_ix_word(const uint8_t *p, uint64_t bit)
{
	uint64_t v;
	memcpy(&v, p + (bit >> 3), sizeof(v));
	return v >> (bit & 7);
}

/*
 * The nf fields of row i of t into v: with one 8-byte load when the row fits
 * in the 57 bits such a load always holds (whatever the row's bit offset),
 * else one load per field.
 */
static inline void sym_ix_row(const struct ptab *t, uint32_t i, uint32_t *v, unsigned nf)
{
	uint64_t bit = (uint64_t)i * t->row;
	if (t->row <= 57) {
		uint64_t w = sym_ix_word(t->p, bit);
		for (unsigned f = 0; f < nf; f++) {
			v[f] = (uint32_t)w & t->mask[f];
			w >>= t->width[f];
		}
		return;
	}
	for (unsigned f = 0; f < nf; f++)
		v[f] = sym_ix_get(t, i, f);
}

#endif
