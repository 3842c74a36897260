/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_gopclntab_collect: a Go binary's pclntab as index records. Finding the
 * table in an ELF image (sym_gopclntab_find.c: the .gopclntab section, else
 * the runtime.pclntab symbol, else a scan of the loaded segments for its
 * header; the module data, found by its pointer to the table, gives the text
 * start and go:func.* where the inline trees are), then filling a sym_collect
 * as the DWARF walk does (sym_gopclntab_collect.c): one function per distinct
 * name, one depth-0 scope per function with its code range, one scope per
 * inline-tree node reached (depth, parent scope, call file:line read where
 * the runtime reads them: the file and line tables at the node's parentPc),
 * and line spans from the file and line tables. The index builder uses it
 * for a file without DWARF (ranking DWARF, then pclntab, then symbols).
 */
#ifndef SYM_GOPCLNTAB_COLLECT_IMPL_H
#define SYM_GOPCLNTAB_COLLECT_IMPL_H

#include <gelf.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"
#include "symbolizer/sym_gopclntab_impl.h"

typedef struct sym_gopcln_image {
	sym_gopcln tab;
	sym_gopcln_seg segs[SYM_ELF_MAX_LOADS];
	uint64_t moduledata;     /* address of the module data, 0 when not found */
	const char *found_by;    /* "section", "symbol" or "scan" */
} sym_gopcln_image;

/*
 * Finds and opens the pclntab of the ELF image data[0, size) (elf over the
 * same bytes, info its probe). SYM_E_NO_SYMBOLS when the file has none;
 * another error when one was found but is malformed.
 */
sym_errc sym_gopcln_find(Elf *elf, const void *data, size_t size, const sym_elf_info *info,
			 sym_gopcln_image *out, sym_error *err);

/*
 * Adds the functions, scopes, scope spans and line spans of tab to out.
 * Functions whose records are malformed are skipped; an error only when
 * memory runs out or nothing at all could be read.
 */
sym_errc sym_gopcln_collect(const sym_gopcln *tab, sym_collect *out, sym_error *err);

#endif
