/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_dwarf: collects scopes, function names and line rows from DWARF through
 * libdw, for the index builder, one unit at a time (sym_dwarf_shard.c deals
 * the units out to threads and drives the walk).
 *
 * A walk keeps what spans units (functions by DIE key, imported units seen,
 * .debug_aranges, qualified-name indexes, all keyed by DIE offsets), so the
 * Dwarf handle under it can be swapped between units for a fresh one over the
 * same file (sym_dwarf_walk_set_dwarf): libdw keeps every unit's line table
 * until dwarf_end, and a new handle lets that memory go. A walk and its
 * Dwarf handle stay on one thread.
 */
#ifndef SYM_DWARF_IMPL_H
#define SYM_DWARF_IMPL_H

#include <stdint.h>

#include <elfutils/libdw.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_error.h"

typedef struct sym_dwarf_walk sym_dwarf_walk;

/* A walk adding to out; NULL when out of memory. err must outlive it. */
sym_dwarf_walk *sym_dwarf_walk_new(Dwarf *dw, sym_collect *out, sym_error *err);
/* The handle for the next units: a new one over the same file (and the same dwz file). */
void sym_dwarf_walk_set_dwarf(sym_dwarf_walk *w, Dwarf *dw);
/* Walks one compile or partial unit; unit is its number in the file (line rows' order). */
sym_errc sym_dwarf_walk_unit(sym_dwarf_walk *w, Dwarf_Die *cudie, uint32_t unit);
void sym_dwarf_walk_free(sym_dwarf_walk *w);

/* Where a shard's Dwarf handles come from: the file's Elf, and the dwz file's handle (or NULL). */
typedef struct sym_dwarf_source {
	Elf *elf;
	Dwarf *alt;
	size_t reopen_spans;   /* spans walked per handle; 0 = SYM_DWARF_REOPEN_SPANS */
	/* Non-NULL: the Elf's bytes, a read-only private file mapping whose walked units'
	 * .debug_info pages may be dropped (sym_build_options.input_is_file_mapping). */
	const void *mapping;
	size_t mapping_size;
	/* The next unit number no shard has taken, shared by the shards, which
	 * take units from it as they go (a faster shard walks more). */
	_Atomic uint32_t *next_unit;
} sym_dwarf_source;

/*
 * Walks the units it takes from src->next_unit, in increasing order, into
 * out, recording where each
 * unit's records end (out->units) and each function's DIE key
 * (out->func_keys) for sym_collect_merge_units. The Dwarf handle is replaced
 * by a fresh one after every src->reopen_spans spans, so libdw's
 * memory stays bounded on a large file (a kernel).
 */
#define SYM_DWARF_REOPEN_SPANS ((size_t)1 << 18)
sym_errc sym_dwarf_collect(const sym_dwarf_source *src, sym_collect *out, sym_error *err);

/* Whether the file has partial units (dwz): those are walked where first imported. */
bool sym_dwarf_has_partial_units(Dwarf *dw);

#endif
