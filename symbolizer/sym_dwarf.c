// SPDX-License-Identifier: Apache-2.0
/*
 * sym_dwarf: the DWARF walk (see sym_dwarf_impl.h).
 *
 * Per unit: every line-table row becomes a line span [addr, next addr); every
 * subprogram and inlined subroutine with code becomes a scope with spans at its
 * nesting depth. Names follow DW_AT_abstract_origin and DW_AT_specification
 * (into the dwz file too) for a bounded number of hops. The walk descends only
 * into DIEs that can hold code scopes, never deeper than SYM_MAX_DIE_DEPTH, and
 * stops a sibling chain that does not move forward, so hostile DWARF ends.
 */
#include "symbolizer/sym_dwarf_impl.h"
#include "symbolizer/sym_dwarf_walk_impl.h"
#include "symbolizer/sym_demangle_impl.h"
#include "symbolizer/sym_die_attrs_impl.h"
#include "symbolizer/sym_map64_impl.h"
#include "symbolizer/sym_qualify_impl.h"
#include "symbolizer/sym_goname_impl.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORIGIN_HOPS 8

sym_errc sym_dwarf_fail_nomem(sym_dwarf_walk *w)
{
	if (!w->rc)
		w->rc = sym_error_set(w->err, SYM_E_NOMEM,
			"out of memory or past a size cap building the index");
	return w->rc;
}

/*
 * Interns a path as llvm-symbolizer prints it: a relative path gets the unit's
 * comp_dir in front, and separators doubled at a join ("dir/" + "/" + "f")
 * collapse into one. A Go unit's paths are printed as the Go runtime prints
 * them instead: without comp_dir (".") or a leading "./".
 */
static uint32_t intern_path(struct sym_dwarf_walk *w, const char *name)
{
	if (!name || !*name)
		return 0;
	/* Go: the runtime's own spelling (comp_dir is "."; libdw joins "./" to relative names). */
	while (w->is_go && name[0] == '.' && name[1] == '/' && name[2])
		name += 2;
	const char *dir = name[0] != '/' && !w->is_go && w->comp_dir && *w->comp_dir ? w->comp_dir
										       : NULL;
	size_t n = 0;
	for (int part = dir ? 0 : 1; part < 2; part++) {
		const char *p = part == 0 ? dir : name;
		if (part == 1 && dir) {
			if (n + 1 >= sizeof(w->path))
				return sym_strtab_add_cstr(&w->out->strs, name);
			w->path[n++] = '/';
		}
		for (; *p; p++) {
			if (*p == '/' && n > 0 && w->path[n - 1] == '/')
				continue;
			if (n + 1 >= sizeof(w->path))
				return sym_strtab_add_cstr(&w->out->strs, name);
			w->path[n++] = *p;
		}
	}
	return sym_strtab_add(&w->out->strs, w->path, n);
}

/* The interned path of file index idx of the current unit, 0 when unknown. */
uint32_t sym_dwarf_unit_file(struct sym_dwarf_walk *w, Dwarf_Files *files, size_t idx)
{
	if (files != w->files || idx >= w->nfiles) {
		const char *name = files ? dwarf_filesrc(files, idx, NULL, NULL) : NULL;
		return name ? intern_path(w, name) : 0;
	}
	if (w->file_strs[idx] == SYM_STR_NONE)
		w->file_strs[idx] = intern_path(w, dwarf_filesrc(files, idx, NULL, NULL));
	return w->file_strs[idx];
}

static uint64_t die_key(struct sym_dwarf_walk *w, Dwarf_Die *die)
{
	/* DIEs of the dwz file have their own offsets: tell them apart. */
	bool alt = dwarf_cu_getdwarf(die->cu) != w->dw;
	return dwarf_dieoffset(die) << 1 | alt;
}

/*
 * The interned display name: the demangled linkage name, else the name. A
 * linkage name that is not a mangled one (_Z, _R) is an assembler label
 * (glibc's __GI_getaddrinfo for getaddrinfo): the source name is shown, the
 * label stays the linkage (system) name.
 */
static uint32_t display_name(struct sym_dwarf_walk *w, const char *name, const char *linkage)
{
	if (linkage) {
		char *d = sym_demangle(linkage);
		if (d) {
			uint32_t off = sym_strtab_add_cstr(&w->out->strs, d);
			free(d);
			return off;
		}
		if (!sym_is_mangled(linkage) && name && *name)
			return sym_strtab_add_cstr(&w->out->strs, name);
		return sym_strtab_add_cstr(&w->out->strs, linkage);
	}
	return sym_strtab_add_cstr(&w->out->strs, name);
}

static uint32_t function_of_chain(struct sym_dwarf_walk *w, Dwarf_Die *die, sym_die_attrs *a);

/*
 * The function record of a scope DIE, shared by every instance of its origin.
 * A DIE with no name, linkage name or declaration line of its own (an inlined
 * call, a concrete out-of-line instance) takes everything from the DIE it
 * refers to, so its function is that of every other such DIE referring there:
 * kept by the referred DIE's key, the chain is followed once per origin.
 */
static uint32_t function_of(struct sym_dwarf_walk *w, Dwarf_Die *die, sym_die_attrs *a)
{
	Dwarf_Attribute *ref = a->names ? NULL : sym_die_attrs_origin(a);
	Dwarf_Die target;
	if (!ref || !dwarf_formref_die(ref, &target))
		return function_of_chain(w, die, a);
	uint64_t key = die_key(w, &target);
	uint32_t id = sym_map64_lookup(&w->by_origin, key);
	if (id != UINT32_MAX)
		return id;
	id = function_of_chain(w, die, a);
	if (id != UINT32_MAX && !sym_map64_set(&w->by_origin, key, id))
		return sym_dwarf_fail_nomem(w), UINT32_MAX;
	return id;
}

/*
 * function_of the long way: names, linkage name and declaration up the origin
 * chain, each DIE's attributes read in one pass (a: die's, already read).
 */
static uint32_t function_of_chain(struct sym_dwarf_walk *w, Dwarf_Die *die, sym_die_attrs *a)
{
	Dwarf_Die chain[MAX_ORIGIN_HOPS + 1], *cur = die;
	int n = 0;
	chain[n++] = *die;
	const char *name = NULL, *linkage = NULL;
	Dwarf_Die *decl = NULL, *name_die = NULL, *linkage_die = NULL;
	sym_die_attrs hop;
	for (;;) {
		if (!name && (name = sym_die_attrs_name(a)))
			name_die = cur;
		if (!linkage && (linkage = sym_die_attrs_linkage(a)))
			linkage_die = cur;
		if (!decl && a->has_decl_line)
			decl = cur;
		if (n > MAX_ORIGIN_HOPS)
			break;
		Dwarf_Attribute *ref = sym_die_attrs_origin(a);
		if (!ref || !dwarf_formref_die(ref, &chain[n]))
			break;
		cur = &chain[n++];
		sym_die_attrs_read(cur, &hop);
		a = &hop;
	}
	/*
	 * Key by the DIE the names come from: instances of one abstract function
	 * share it, while variants that only share a declaration (a C++ class's
	 * D0/D1/D2 destructors) carry linkage names of their own.
	 */
	uint64_t key = die_key(w, linkage_die ? linkage_die : name_die ? name_die : cur);
	uint32_t id = sym_map64_lookup(&w->funcs, key);
	if (id != UINT32_MAX)
		return id;
	struct sym_ix_func f = {0};
	f.name = sym_strtab_add_cstr(&w->out->strs, name);
	f.linkage = sym_strtab_add_cstr(&w->out->strs, linkage);
	if (w->is_asm && !linkage && name) {
		/*
		 * GNU as names a function by its first label (glibc's
		 * __GI_process_mrelease): a label, kept as the linkage name, the
		 * linkage name equal to the name telling sym_prefer to show the
		 * .symtab's pick (a global name) for the outermost frame.
		 */
		f.linkage = f.name;
		f.display = f.name;
	} else if (w->is_go && !linkage && name) {
		/* Go's DW_AT_name is the full name; generic arguments print as [...]. */
		f.display = sym_goname_print(name, w->path, sizeof(w->path))
				    ? sym_strtab_add_cstr(&w->out->strs, w->path)
				    : f.name;
	} else if (!linkage && name && name_die && !w->is_c) {
		/* No linkage name: the namespaces and classes around the name's DIE. */
		const char *qual = sym_qualify_name(&w->qualify, name_die, name);
		if (!qual)
			return sym_dwarf_fail_nomem(w), UINT32_MAX;
		f.display = sym_strtab_add_cstr(&w->out->strs, qual);
	} else {
		f.display = display_name(w, name, linkage);
	}
	if (decl) {
		int line = 0;
		dwarf_decl_line(decl, &line);
		f.decl_line = (uint32_t)line;
		const char *file = dwarf_decl_file(decl);
		f.decl_file = file ? intern_path(w, file) : 0;
	}
	if (f.name == SYM_STR_NONE || f.linkage == SYM_STR_NONE || f.display == SYM_STR_NONE ||
	    f.decl_file == SYM_STR_NONE)
		return sym_dwarf_fail_nomem(w), UINT32_MAX;
	id = (uint32_t)w->out->funcs.len;
	struct sym_ix_func *slot = base_vec_push(&w->out->funcs);
	uint64_t *key_slot = base_vec_push(&w->out->func_keys);
	if (!slot || !key_slot || !sym_map64_set(&w->funcs, key, id))
		return sym_dwarf_fail_nomem(w), UINT32_MAX;
	*slot = f;
	*key_slot = key;
	return id;
}

/* Adds a scope for a subprogram or inlined subroutine with code; UINT32_MAX if none. */
static uint32_t add_scope(struct sym_dwarf_walk *w, Dwarf_Die *die, uint32_t parent, uint32_t depth,
			  bool inlined)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t first = w->out->scope_spans.len;
	uint32_t id = (uint32_t)w->out->scopes.len;
	sym_die_attrs a;
	sym_die_attrs_read(die, &a);
	/* One contiguous range read from the pass above, else dwarf_ranges; none
	 * without a pc or DW_AT_ranges (a declaration, an abstract instance: most
	 * subprogram DIEs of C++), where dwarf_ranges would scan the attributes
	 * three more times to say so. */
	bool one = sym_die_attrs_pc(&a, &lo, &hi);
	if (!one && !a.has_ranges && !(a.has_low && a.has_high))
		return UINT32_MAX;
	while (one || (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		bool done = one;
		if (!sym_dwarf_is_tombstone(w, lo, hi)) {
			sym_span *s = base_vec_push(&w->out->scope_spans);
			if (!s)
				return sym_dwarf_fail_nomem(w), UINT32_MAX;
			*s = (sym_span){.lo = lo, .hi = hi, .a = id, .b = depth, .order = w->order++};
		}
		if (done)
			break;
	}
	if (w->out->scope_spans.len == first)
		return UINT32_MAX;
	struct sym_ix_scope sc = {.func = function_of(w, die, &a), .parent = parent};
	if (sc.func == UINT32_MAX)
		return UINT32_MAX;
	if (inlined) {
		Dwarf_Word v;
		if (a.has_call_file && dwarf_formudata(&a.call_file, &v) == 0)
			sc.call_file = sym_dwarf_unit_file(w, w->files, (size_t)v);
		if (a.has_call_line && dwarf_formudata(&a.call_line, &v) == 0)
			sc.call_line = (uint32_t)v;
		if (a.has_call_column && dwarf_formudata(&a.call_column, &v) == 0)
			sc.call_column = (uint32_t)v;
		if (sc.call_file == SYM_STR_NONE)
			return sym_dwarf_fail_nomem(w), UINT32_MAX;
	}
	struct sym_ix_scope *slot = base_vec_push(&w->out->scopes);
	if (!slot)
		return sym_dwarf_fail_nomem(w), UINT32_MAX;
	*slot = sc;
	return id;
}

static void walk_children(struct sym_dwarf_walk *w, Dwarf_Die *parent, uint32_t scope,
			  uint32_t depth,
			  unsigned level);

static void walk_imported_unit(struct sym_dwarf_walk *w, Dwarf_Die *die, uint32_t scope,
			       uint32_t depth,
			       unsigned level)
{
	Dwarf_Attribute attr;
	Dwarf_Die unit;
	if (!dwarf_formref_die(dwarf_attr(die, DW_AT_import, &attr), &unit))
		return;
	uint64_t key = die_key(w, &unit);
	bool first;
	if (!sym_map64_put(&w->imported, &key, &first)) {
		sym_dwarf_fail_nomem(w);
		return;
	}
	if (!first)
		return;
	walk_children(w, &unit, scope, depth, level + 1);
}

static void walk_children(struct sym_dwarf_walk *w, Dwarf_Die *parent, uint32_t scope,
			  uint32_t depth,
			  unsigned level)
{
	Dwarf_Die child;
	if (level >= SYM_MAX_DIE_DEPTH || dwarf_child(parent, &child) != 0)
		return;
	for (;;) {
		if (w->rc)
			return;
		int tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine: {
			bool inl = tag == DW_TAG_inlined_subroutine;
			uint32_t id = add_scope(w, &child, inl ? scope : SYM_IX_NONE,
						scope == SYM_IX_NONE ? 0 : depth + 1, inl);
			if (id != UINT32_MAX)
				walk_children(w, &child, id, scope == SYM_IX_NONE ? 0 : depth + 1,
					      level + 1);
			else if (!inl)
				/* A declaration or abstract instance: may hold nested definitions. */
				walk_children(w, &child, scope, depth, level + 1);
			break;
		}
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
			walk_children(w, &child, scope, depth, level + 1);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			if (!w->is_c)
				walk_children(w, &child, scope, depth, level + 1);
			break;
		case DW_TAG_imported_unit:
			walk_imported_unit(w, &child, scope, depth, level);
			break;
		default:
			break;
		}
		Dwarf_Off here = dwarf_dieoffset(&child);
		if (dwarf_siblingof(&child, &child) != 0 || dwarf_dieoffset(&child) <= here)
			break;
	}
}

static bool language_is_c(Dwarf_Die *cudie)
{
	Dwarf_Attribute attr;
	Dwarf_Word lang;
	if (dwarf_formudata(dwarf_attr(cudie, DW_AT_language, &attr), &lang) != 0)
		return false;
	return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 ||
	       lang == DW_LANG_C11 || lang == 0x1d /* DW_LANG_C17 */;
}

static sym_errc walk_unit(struct sym_dwarf_walk *w, Dwarf_Die *cudie)
{
	w->cudie = *cudie;
	Dwarf_Attribute attr;
	w->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	w->is_c = language_is_c(cudie);
	Dwarf_Word lang;
	w->is_asm = dwarf_formudata(dwarf_attr(cudie, DW_AT_language, &attr), &lang) == 0 &&
		    lang == DW_LANG_Mips_Assembler;
	w->is_go = dwarf_formudata(dwarf_attr(cudie, DW_AT_language, &attr), &lang) == 0 &&
		   lang == DW_LANG_Go;
	w->files = NULL;
	w->nfiles = 0;
	if (dwarf_getsrcfiles(cudie, &w->files, &w->nfiles) != 0) {
		w->files = NULL;
		w->nfiles = 0;
	}
	if (base_vec_reserve(&w->file_strs_vec, w->nfiles))
		return sym_dwarf_fail_nomem(w);
	w->file_strs = w->file_strs_vec.data;
	for (size_t i = 0; i < w->nfiles; i++)
		w->file_strs[i] = SYM_STR_NONE;
	sym_errc rc = sym_dwarf_collect_lines(w);
	if (rc)
		return rc;
	walk_children(w, cudie, SYM_IX_NONE, 0, 0);
	/* every file the unit's line table names: the sources a debuginfod
	 * server may hand out for this file (headers without code too) */
	for (size_t i = 0; i < w->nfiles && !w->rc; i++) {
		uint32_t s = sym_dwarf_unit_file(w, w->files, i);
		uint32_t *slot = s && s != SYM_STR_NONE ? base_vec_push(&w->out->unit_files) : NULL;
		if (slot)
			*slot = s;
		else if (s && s != SYM_STR_NONE)
			return sym_dwarf_fail_nomem(w);
	}
	return w->rc;
}

sym_dwarf_walk *sym_dwarf_walk_new(Dwarf *dw, sym_collect *out, sym_error *err)
{
	struct sym_dwarf_walk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	*w = (struct sym_dwarf_walk){.dw = dw, .out = out, .err = err};
	sym_map64_init(&w->funcs);
	sym_map64_init(&w->by_origin);
	sym_map64_init(&w->imported);
	sym_qualify_init(&w->qualify, dw);
	base_vec_init(&w->cu_ranges, sizeof(struct addr_range), SYM_MAX_SPANS);
	base_vec_init(&w->aranges, sizeof(struct unit_arange), SYM_MAX_SPANS);
	base_vec_init(&w->file_strs_vec, sizeof(uint32_t), SIZE_MAX / sizeof(uint32_t));
	return w;
}

void sym_dwarf_walk_set_dwarf(sym_dwarf_walk *w, Dwarf *dw)
{
	w->dw = dw;
	/* Its index holds DIEs of the old handle: start over (it is rebuilt per unit on demand). */
	sym_qualify_deinit(&w->qualify);
	sym_qualify_init(&w->qualify, dw);
}

sym_errc sym_dwarf_walk_unit(sym_dwarf_walk *w, Dwarf_Die *cudie, uint32_t unit)
{
	w->unit = unit;
	return walk_unit(w, cudie);
}

void sym_dwarf_walk_free(sym_dwarf_walk *w)
{
	if (!w)
		return;
	base_vec_deinit(&w->file_strs_vec);
	base_vec_deinit(&w->cu_ranges);
	base_vec_deinit(&w->aranges);
	sym_map64_deinit(&w->funcs);
	sym_map64_deinit(&w->by_origin);
	sym_map64_deinit(&w->imported);
	sym_qualify_deinit(&w->qualify);
	free(w);
}
