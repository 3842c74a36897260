/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_layout_impl: the layout builder's shared state, private to
 * sym_layout_build.c, sym_layout_walk.c, sym_layout_type.c and
 * sym_layout_name.c (not part of the symbolizer's API).
 */
#ifndef SYM_LAYOUT_IMPL_H
#define SYM_LAYOUT_IMPL_H

#include <elfutils/libdw.h>
#include <stdbool.h>

#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "symbolizer/sym_layout.h"
#include "symbolizer/sym_layout_format_impl.h"
#include "symbolizer/sym_strtab_impl.h"

/* Caps against hostile DWARF. */
#define LAYOUT_MAX_TYPES ((size_t)1 << 22)
#define LAYOUT_MAX_MEMBERS ((size_t)1 << 26)
#define LAYOUT_MAX_TYPE_MEMBERS ((size_t)1 << 16)  /* per type, nested included */
#define LAYOUT_MAX_DIMS ((size_t)1 << 24)
#define LAYOUT_MAX_ALIASES ((size_t)1 << 22)
#define LAYOUT_MAX_DEPTH 32                        /* type chains, nesting */
#define LAYOUT_MAX_TREE_DEPTH 64                   /* DIE tree */
#define LAYOUT_MAX_SIZE ((uint64_t)1 << 40)        /* bytes: past this, "unknown" */
#define LAYOUT_MAX_CACHE ((size_t)1 << 22)
#define LAYOUT_NAME_MAX 1024
#define LAYOUT_IN_PROGRESS (UINT32_MAX - 1)

BASE_HASH_MAP(sym_layout_u64_map, uint64_t, uint32_t, base_hash_u64, base_eq_u64)

typedef struct sym_layout_builder {
	sym_strtab strs;
	base_vec types;     /* sym_layout_type_rec */
	base_vec members;   /* sym_layout_member_rec */
	base_vec dims;      /* uint64_t */
	base_vec aliases;   /* sym_layout_alias_rec */
	sym_layout_u64_map dedup;   /* layout hash -> type index */
	sym_layout_u64_map seen_alias; /* hash of (name, target) -> 1 */
	sym_layout_u64_map cache;   /* DIE key -> type index or LAYOUT_IN_PROGRESS */
	sym_layout_u64_map scopes;  /* DIE key -> strtab offset of "ns::Outer::" */
	Dwarf *alt;             /* the dwz file's handle: its DIEs get other keys */
	uint32_t cu_name;       /* strtab: the unit being walked */
	bool little_endian;
	sym_errc rc;            /* first fatal error (NOMEM, TOO_LARGE) */
	sym_error *err;
} sym_layout_builder;

/* A DIE's identity across the main and the dwz file. */
uint64_t sym_layout_die_key(const sym_layout_builder *b, Dwarf_Die *die);

/* Type name as pahole prints it into buf (NUL-terminated, truncated at cap). */
void sym_layout_type_name(Dwarf_Die *type, char *buf, size_t cap);

/* Strips typedefs and qualifiers (bounded); false on a loop or a dangling ref. */
bool sym_layout_strip(Dwarf_Die *type, Dwarf_Die *out, const char **typedef_name);

/* Elements in one array subrange; UINT64_MAX: no bound (flexible). */
uint64_t sym_layout_subrange_count(Dwarf_Die *sr);

/* Byte size of a type; false when unknown (absent, looping, absurd). */
bool sym_layout_type_size(Dwarf_Die *type, uint64_t *out, int depth);

/* The DIE's DW_AT_type, false when none (void). */
bool sym_layout_attr_type(Dwarf_Die *die, Dwarf_Die *out);

/*
 * The type index of the struct/union/class at die (interned on first sight),
 * SYM_LAYOUT_NONE when it cannot be had; name overrides an anonymous one's.
 */
uint32_t sym_layout_intern(sym_layout_builder *b, Dwarf_Die *die, const char *name, int depth);

/* Records typedef name -> the struct it names (deduplicated). */
void sym_layout_add_alias(sym_layout_builder *b, const char *name, Dwarf_Die *target);

/* Walks every unit of dw: pass 0 records scopes, pass 1 interns types (run
 * pass 0 over the main and the dwz file before pass 1 over either). */
void sym_layout_walk(sym_layout_builder *b, Dwarf *dw, const char *default_cu, int pass);

/* Sets b->rc/err once (the first fatal error wins). */
void sym_layout_fail(sym_layout_builder *b, sym_errc code, const char *what);

#endif
