/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_index_write: lays out the index blob from merged collections: flattens
 * DWARF scopes, symbol scopes and line rows into disjoint ranges, and writes
 * header, starts, records, scopes, functions, buckets and strings (the last
 * step in sym_index_pack_impl.h).
 */
#ifndef SYM_INDEX_WRITE_IMPL_H
#define SYM_INDEX_WRITE_IMPL_H

#include <stdbool.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"
#include "symbolizer/sym_index_format_impl.h"

typedef struct sym_index_input {
	sym_collect *c;             /* strings, functions, scopes, DWARF scope spans, line spans */
	base_vec *symbol_spans;      /* spans of symbol-table scopes (ids into c->scopes) */
	const sym_elf_info *elf;    /* build ID and PT_LOAD segments */
	bool from_dwarf;
	bool from_pclntab;          /* a Go pclntab, the file having no DWARF */
	const struct sym_ix_section *sections;  /* names are offsets into c->strs */
	uint32_t n_sections;
	uint16_t elf_type;
	uint64_t kernel_stext, kernel_text;
} sym_index_input;

sym_errc sym_index_write(sym_index_input *in, void **blob, size_t *size, sym_error *err);

#endif
