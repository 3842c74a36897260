// SPDX-License-Identifier: Apache-2.0
/*
 * sym_die_attrs: one pass over a scope DIE's attributes (see
 * sym_die_attrs_impl.h).
 */
#include "symbolizer/sym_die_attrs_impl.h"

#include <dwarf.h>

/* Keeps the first attribute of a kind, as dwarf_attr finds the first. */
static void keep(bool *has, Dwarf_Attribute *slot, const Dwarf_Attribute *a)
{
	if (!*has) {
		*slot = *a;
		*has = true;
	}
}

static int note(Dwarf_Attribute *attr, void *arg)
{
	sym_die_attrs *a = arg;
	switch (dwarf_whatattr(attr)) {
	case DW_AT_name:
		a->names = true;
		keep(&a->has_name, &a->name, attr);
		break;
	case DW_AT_linkage_name:
		a->names = true;
		keep(&a->has_linkage, &a->linkage, attr);
		break;
	case DW_AT_MIPS_linkage_name:
		a->names = true;
		keep(&a->has_mips_linkage, &a->mips_linkage, attr);
		break;
	case DW_AT_decl_line:
		a->names = a->has_decl_line = true;
		break;
	case DW_AT_abstract_origin:
		keep(&a->has_origin, &a->origin, attr);
		break;
	case DW_AT_specification:
		keep(&a->has_spec, &a->spec, attr);
		break;
	case DW_AT_low_pc:
		keep(&a->has_low, &a->low, attr);
		break;
	case DW_AT_high_pc:
		keep(&a->has_high, &a->high, attr);
		break;
	case DW_AT_ranges:
		a->has_ranges = true;
		break;
	case DW_AT_call_file:
		keep(&a->has_call_file, &a->call_file, attr);
		break;
	case DW_AT_call_line:
		keep(&a->has_call_line, &a->call_line, attr);
		break;
	case DW_AT_call_column:
		keep(&a->has_call_column, &a->call_column, attr);
		break;
	default:
		break;
	}
	return DWARF_CB_OK;
}

void sym_die_attrs_read(Dwarf_Die *die, sym_die_attrs *a)
{
	*a = (sym_die_attrs){0};
	dwarf_getattrs(die, note, a, 0);
}

bool sym_die_attrs_pc(sym_die_attrs *a, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	if (!a->has_low || !a->has_high || dwarf_formaddr(&a->low, lo) != 0)
		return false;
	if (dwarf_formaddr(&a->high, hi) == 0)
		return true;
	Dwarf_Word off;
	if (dwarf_formudata(&a->high, &off) != 0)
		return false;
	*hi = *lo + off;
	return true;
}

Dwarf_Attribute *sym_die_attrs_origin(sym_die_attrs *a)
{
	return a->has_origin ? &a->origin : a->has_spec ? &a->spec : NULL;
}

const char *sym_die_attrs_name(sym_die_attrs *a)
{
	return a->has_name ? dwarf_formstring(&a->name) : NULL;
}

const char *sym_die_attrs_linkage(sym_die_attrs *a)
{
	const char *l = a->has_linkage ? dwarf_formstring(&a->linkage) : NULL;
	return l ? l : a->has_mips_linkage ? dwarf_formstring(&a->mips_linkage) : NULL;
}
