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

#endif
