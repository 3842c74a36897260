// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_walk: visits every unit of one Dwarf handle for the layout
 * builder (sym_layout_impl.h). A first pass records the C++ scope of nested
 * types ("ns::Outer::"), a second interns every named struct, union and class
 * definition and every typedef naming one. Both passes are bounded in depth.
 */
#include "symbolizer/sym_layout_impl.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "base/base_hash.h"

static bool is_aggregate(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_class_type;
}

static void scope_pass(sym_layout_builder *b, Dwarf_Die *parent, const char *prefix, int depth)
{
	Dwarf_Die c;
	if (depth > LAYOUT_MAX_TREE_DEPTH || dwarf_child(parent, &c) != 0)
		return;
	uint32_t off = SYM_STR_NONE;
	do {
		int tag = dwarf_tag(&c);
		bool agg = is_aggregate(tag);
		if (!agg && tag != DW_TAG_namespace && tag != DW_TAG_enumeration_type)
			continue;
		if (*prefix && tag != DW_TAG_namespace) {
			if (off == SYM_STR_NONE)
				off = sym_strtab_add_cstr(&b->strs, prefix);
			uint64_t key = sym_layout_die_key(b, &c);
			uint32_t *slot = sym_layout_u64_map_put(&b->scopes, &key, NULL);
			if (off == SYM_STR_NONE || !slot) {
				sym_layout_fail(b, SYM_E_NOMEM, "out of memory recording scopes");
				return;
			}
			*slot = off;
		}
		if (tag == DW_TAG_enumeration_type)
			continue;
		const char *n = dwarf_diename(&c);
		if (!n && agg)
			continue;
		char sub[LAYOUT_NAME_MAX];
		int len = snprintf(sub, sizeof(sub), "%s%s::", prefix,
				   n ? n : "(anonymous namespace)");
		/* A scope named past LAYOUT_NAME_MAX: its types keep no cut-off prefix. */
		if (len < 0 || (size_t)len >= sizeof(sub))
			continue;
		scope_pass(b, &c, sub, depth + 1);
	} while (dwarf_siblingof(&c, &c) == 0 && !b->rc);
}

void sym_layout_add_alias(sym_layout_builder *b, const char *name, Dwarf_Die *target)
{
	uint32_t idx = sym_layout_intern(b, target, NULL, 0);
	if (b->rc)
		return;
	uint32_t tn;
	if (idx != SYM_LAYOUT_NONE) {
		tn = BASE_VEC_AT(&b->types, sym_layout_type_rec, idx).name;
	} else {
		const char *n = dwarf_diename(target);
		uint64_t key = sym_layout_die_key(b, target);
		const uint32_t *scope = sym_layout_u64_map_get(&b->scopes, &key);
		char full[LAYOUT_NAME_MAX];
		snprintf(full, sizeof(full), "%s%s", scope ? sym_strtab_get(&b->strs, *scope) : "",
			 n ? n : "");
		tn = sym_strtab_add_cstr(&b->strs, full);
	}
	uint32_t an = sym_strtab_add_cstr(&b->strs, name);
	if (tn == SYM_STR_NONE || an == SYM_STR_NONE) {
		sym_layout_fail(b, SYM_E_TOO_LARGE, "string table full or out of memory");
		return;
	}
	if (an == tn && idx != SYM_LAYOUT_NONE)
		return;   /* typedef struct foo foo: the name finds the type already */
	uint32_t k[3] = {an, tn, idx};
	uint64_t h = base_hash_bytes(k, sizeof(k));
	bool inserted;
	uint32_t *slot = sym_layout_u64_map_put(&b->seen_alias, &h, &inserted);
	if (!slot) {
		sym_layout_fail(b, SYM_E_NOMEM, "out of memory");
		return;
	}
	if (!inserted)
		return;
	sym_layout_alias_rec *a = base_vec_push(&b->aliases);
	if (!a) {
		sym_layout_fail(b, SYM_E_TOO_LARGE, "too many typedefs");
		return;
	}
	*a = (sym_layout_alias_rec){.name = an, .target = tn, .type = idx};
}

static void typedef_seen(sym_layout_builder *b, Dwarf_Die *td)
{
	const char *name = dwarf_diename(td);
	Dwarf_Die t, bare;
	if (!name || !sym_layout_attr_type(td, &t) || !sym_layout_strip(&t, &bare, NULL))
		return;
	if (!is_aggregate(dwarf_tag(&bare)))
		return;
	if (!dwarf_diename(&bare)) {
		const char *inner = NULL;
		Dwarf_Die again;
		sym_layout_strip(&t, &again, &inner);
		sym_layout_intern(b, &bare, inner ? inner : name, 0);
		if (inner && strcmp(inner, name) != 0)
			sym_layout_add_alias(b, name, &bare);
		return;
	}
	sym_layout_add_alias(b, name, &bare);
}

static void type_pass(sym_layout_builder *b, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (depth > LAYOUT_MAX_TREE_DEPTH || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		if (is_aggregate(tag)) {
			if (dwarf_diename(&c))
				sym_layout_intern(b, &c, NULL, 0);
			type_pass(b, &c, depth + 1);
		} else if (tag == DW_TAG_typedef) {
			typedef_seen(b, &c);
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_subprogram ||
			   tag == DW_TAG_lexical_block) {
			type_pass(b, &c, depth + 1);
		}
	} while (dwarf_siblingof(&c, &c) == 0 && !b->rc);
}

static bool is_c(Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	Dwarf_Word lang;
	if (!dwarf_attr(cu, DW_AT_language, &a) || dwarf_formudata(&a, &lang) != 0)
		return false;
	return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
	       lang == DW_LANG_C11 || lang == 0x2c /* DW_LANG_C17 */;
}

void sym_layout_walk(sym_layout_builder *b, Dwarf *dw, const char *default_cu, int pass)
{
	{
		Dwarf_CU *cu = NULL;
		Dwarf_Die cudie, sub;
		Dwarf_Half version;
		uint8_t unit_type;
		while (!b->rc && dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie,
						 &sub) == 0) {
			int tag = dwarf_tag(&cudie);
			if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit &&
			    tag != DW_TAG_type_unit)
				continue;
			if (pass == 0) {
				if (!is_c(&cudie))
					scope_pass(b, &cudie, "", 0);
				continue;
			}
			const char *n = dwarf_diename(&cudie);
			b->cu_name = sym_strtab_add_cstr(&b->strs, n ? n : default_cu);
			if (b->cu_name == SYM_STR_NONE) {
				sym_layout_fail(b, SYM_E_TOO_LARGE, "string table full");
				return;
			}
			type_pass(b, &cudie, 0);
		}
	}
}
