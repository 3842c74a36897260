/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_qualify: qualified names of DWARF subprograms that have no linkage name
 * (members of classes in anonymous namespaces, of local classes, lambdas,
 * LTO-private copies), for the DWARF walk (sym_dwarf.c).
 *
 * libdw gives no DIE parents, so the first question about a DIE of a unit
 * indexes that unit's scopes once: namespaces, classes, structures, unions
 * and defined subprograms, each with its nearest such parent (lexical blocks
 * are transparent) and the span of DIE offsets it encloses (a last child's
 * ends with its parent's), in DIE order: a DIE's parent is then found by
 * binary search. A subprogram's body (most of a unit's DIEs) is indexed the
 * same way only when a DIE inside it is asked about, and the subprogram is a
 * parent only when it holds a scope (a local class). A name is then its parents' names joined by "::", a
 * namespace without a name being "(anonymous namespace)", a class its
 * DW_AT_name (template arguments included, as GCC writes them), and a
 * subprogram enclosing a local class its demangled linkage name, else its own
 * qualified name. One sym_qualify per Dwarf handle (so per thread).
 */
#ifndef SYM_QUALIFY_IMPL_H
#define SYM_QUALIFY_IMPL_H

#include <elfutils/libdw.h>
#include <stddef.h>

#include "base/base_buf.h"
#include "base/base_hash_map.h"
#include "base/base_vec.h"

BASE_HASH_MAP(sym_qualify_map, uint64_t, uint32_t, base_hash_u64, base_eq_u64)

typedef struct sym_qualify {
	Dwarf *dw;                 /* the main file's handle: DIEs of others are the dwz file's */
	sym_qualify_map units;     /* unit DIE key -> its nodes' record index + 1 */
	base_vec unit_vec;         /* struct sym_qualify_unit: first node, count */
	base_vec node_vec;         /* struct sym_qualify_node, each unit's in DIE order */
	base_buf buf;              /* the last qualified name (sym_qualify_name's result) */
} sym_qualify;

void sym_qualify_init(sym_qualify *q, Dwarf *dw);
void sym_qualify_deinit(sym_qualify *q);

/*
 * The qualified name of die, a subprogram whose DW_AT_name is name: valid
 * until the next call; name itself when die has no enclosing namespace or
 * class; NULL when out of memory.
 */
const char *sym_qualify_name(sym_qualify *q, Dwarf_Die *die, const char *name);

/* A DIE's key: its offset, and whether it is the dwz file's. */
static inline uint64_t sym_qualify_key(Dwarf *dw, Dwarf_Die *die)
{
	return dwarf_dieoffset(die) << 1 | (dwarf_cu_getdwarf(die->cu) != dw);
}

#endif
