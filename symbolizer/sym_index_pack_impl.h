/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_index_pack: the last step of a build: lays out the blob
 * (sym_index_format_impl.h) from the disjoint ranges the sweep produced and the
 * collected scopes, functions and strings: the file table, each packed table's
 * field widths and rows, the 16-bit starts and their buckets.
 */
#ifndef SYM_INDEX_PACK_IMPL_H
#define SYM_INDEX_PACK_IMPL_H

#include <stddef.h>

#include "symbolizer/sym_index_format_impl.h"
#include "symbolizer/sym_index_write_impl.h"

/* One range: from start up to the next range's start, rec covers the addresses. */
typedef struct sym_ix_range {
	uint64_t start;
	struct sym_ix_rec rec;
} sym_ix_range;

/* ranges ascending by start; the last one ends the covered addresses. */
sym_errc sym_index_pack(const sym_index_input *in, const sym_ix_range *ranges, size_t n,
			void **blob, size_t *size, sym_error *err);

#endif
