/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_prefer: the symbol-table name of an outermost frame where it is a fuller
 * form of the DWARF one. A DWARF subprogram without a linkage name gets a
 * name qualified from its DIE's parents (sym_qualify), without parameters;
 * the .symtab symbol that covers its code demangles to the same name with
 * them (and with the lambda numbering DWARF lacks), as llvm-symbolizer prints
 * it. The index builder calls this after merging DWARF and symbols.
 */
#ifndef SYM_PREFER_IMPL_H
#define SYM_PREFER_IMPL_H

#include <stdbool.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_error.h"

/*
 * Whether demangled (a .symtab name, clone suffixes allowed) names the function
 * qual (a DWARF qualified name without parameters): qual is its name part, or
 * the tail of it after "::" or a return type. Anonymous classes of qual match
 * any {...} component (libiberty's {lambda(int)#1}), ABI tags are skipped, and
 * template argument lists are compared as wildcards where they name a lambda
 * or when any_args (DWARF writes 1, 62, long unsigned int where libiberty
 * writes 1ul, (unsigned short)62, unsigned long): the builder allows it for a
 * symbol that is alone at its address, so not an identical-code-folded one.
 */
bool sym_prefer_matches(const char *qual, const char *demangled, bool any_args, size_t *name_len);

/*
 * For each function of all without a linkage name whose outermost scope's
 * first span is covered by a symbol of symbol_spans (scope ids of all) that
 * sym_prefer_matches: its display name becomes the symbol's demangled name
 * without clone suffixes. A function of an assembler unit (named by its first
 * label, its linkage name equal to its name) takes the name of the symbol
 * that starts where it does, the symbol table's pick among its aliases.
 * Functions of symbols are left alone.
 */
sym_errc sym_prefer_symbol_names(sym_collect *all, const base_vec *symbol_spans, sym_error *err);

#endif
