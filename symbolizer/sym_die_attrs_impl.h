/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_die_attrs: what the DWARF walk reads of a scope DIE (a subprogram or an
 * inlined subroutine) and of each DIE up its origin chain (names, declaration,
 * the next reference), found in one pass over its attributes
 * (dwarf_getattrs) instead of a scan per attribute: dwarf_attr walks the
 * abbreviation and skips every attribute before the one asked for, so the
 * dozen questions the walk asks of each DIE (its names, its origin, its call
 * site, its low and high pc) were a dozen scans. Internal to symbolizer/.
 */
#ifndef SYM_DIE_ATTRS_IMPL_H
#define SYM_DIE_ATTRS_IMPL_H

#include <stdbool.h>

#include <elfutils/libdw.h>

typedef struct sym_die_attrs {
	bool names;                /* DW_AT_name, a linkage name or DW_AT_decl_line is here */
	bool has_name, has_linkage, has_mips_linkage, has_decl_line;
	bool has_origin, has_spec, has_low, has_high, has_ranges;
	bool has_call_file, has_call_line, has_call_column;
	Dwarf_Attribute name;      /* DW_AT_name */
	Dwarf_Attribute linkage;   /* DW_AT_linkage_name */
	Dwarf_Attribute mips_linkage; /* DW_AT_MIPS_linkage_name */
	Dwarf_Attribute origin;    /* DW_AT_abstract_origin */
	Dwarf_Attribute spec;      /* DW_AT_specification */
	Dwarf_Attribute low, high; /* DW_AT_low_pc, DW_AT_high_pc */
	Dwarf_Attribute call_file, call_line, call_column;
} sym_die_attrs;

/* One pass over die's attributes (the first of each kind counts, as dwarf_attr's). */
void sym_die_attrs_read(Dwarf_Die *die, sym_die_attrs *a);

/*
 * The DIE's one contiguous range from its own low and high pc, as
 * dwarf_ranges gives it for such a DIE (a high pc of constant class is an
 * offset from the low pc); false when the DIE has no such pair here (ranges,
 * or forms that do not read), so the caller asks dwarf_ranges.
 */
bool sym_die_attrs_pc(sym_die_attrs *a, Dwarf_Addr *lo, Dwarf_Addr *hi);

/* The reference the walk follows for names: the abstract origin, else the specification. */
Dwarf_Attribute *sym_die_attrs_origin(sym_die_attrs *a);

/* DW_AT_name's string, NULL when none (dwarf_formstring of dwarf_attr's). */
const char *sym_die_attrs_name(sym_die_attrs *a);

/* DW_AT_linkage_name's string, else DW_AT_MIPS_linkage_name's; NULL when none. */
const char *sym_die_attrs_linkage(sym_die_attrs *a);

#endif
