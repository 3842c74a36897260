/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_flatten: turns possibly nested or overlapping address spans into
 * disjoint segments, each naming the span that wins there: the deepest, and of
 * equally deep ones the one that started last. Nesting is what DWARF scopes
 * do; overlap is what hostile or discarded-code DWARF does, and it must still
 * give an answer rather than a crash or a loop.
 */
#ifndef SYM_FLATTEN_IMPL_H
#define SYM_FLATTEN_IMPL_H

#include <stdbool.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_error.h"

typedef struct sym_seg {
	uint64_t lo, hi;
	uint32_t span;   /* index into the sorted span array */
	uint32_t pad;
} sym_seg;

/* Sorts spans in place (by lo, then depth in .b when by_depth, then hi descending,
 * then order) and fills out (a base_vec of sym_seg). */
sym_errc sym_flatten(sym_span *spans, size_t n, bool by_depth, base_vec *out, sym_error *err);

#endif
