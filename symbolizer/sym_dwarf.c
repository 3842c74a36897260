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
#include "symbolizer/sym_demangle_impl.h"
#include "symbolizer/sym_map64_impl.h"
#include "symbolizer/sym_qualify_impl.h"
#include "symbolizer/sym_goname_impl.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORIGIN_HOPS 8
#define MAX_PATH_BYTES 4096


struct sym_dwarf_walk {
	Dwarf *dw;
	sym_collect *out;
	sym_map64 funcs;          /* origin DIE key -> function index */
	sym_map64 imported;       /* partial units already walked */
	sym_qualify qualify;      /* names of subprograms without a linkage name */
	sym_error *err;
	sym_errc rc;
	/* per unit */
	Dwarf_Die cudie;
	const char *comp_dir;
	bool is_c;
	bool is_asm;               /* assembler: a subprogram's name is its first label */
	bool is_go;                /* Go: names print as the Go runtime prints them (sym_goname) */
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t *file_strs;      /* interned path per file index, SYM_STR_NONE = not yet */
	base_vec file_strs_vec;   /* its storage (room for nfiles) */
	uint32_t order;
	uint32_t unit;             /* the unit's number in the file: its line rows' order */
	base_vec cu_ranges;        /* the unit's code ranges, sorted: line rows are clipped to them */
	base_vec aranges;          /* .debug_aranges by unit offset (struct unit_arange),
							      read once */
	bool aranges_read;
	char path[MAX_PATH_BYTES];
};

struct addr_range {
	uint64_t lo, hi;
};

struct unit_arange {
	uint64_t unit, lo, hi;
};

static sym_errc fail_nomem(struct sym_dwarf_walk *w)
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
static uint32_t unit_file(struct sym_dwarf_walk *w, Dwarf_Files *files, size_t idx)
{
	if (files != w->files || idx >= w->nfiles) {
		const char *name = files ? dwarf_filesrc(files, idx, NULL, NULL) : NULL;
		return name ? intern_path(w, name) : 0;
	}
	if (w->file_strs[idx] == SYM_STR_NONE)
		w->file_strs[idx] = intern_path(w, dwarf_filesrc(files, idx, NULL, NULL));
	return w->file_strs[idx];
}

static bool is_tombstone(const struct sym_dwarf_walk *w, Dwarf_Addr lo, Dwarf_Addr hi)
{
	return lo >= hi || lo < w->out->min_code_addr || lo == (Dwarf_Addr)-1 ||
	       lo == (Dwarf_Addr)-2 || lo == 0xffffffffu || lo == 0xfffffffeu;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct addr_range *a = pa, *b = pb;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int cmp_unit_arange(const void *pa, const void *pb)
{
	const struct unit_arange *a = pa, *b = pb;
	if (a->unit != b->unit)
		return a->unit < b->unit ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Reads .debug_aranges once, sorted by unit offset. */
static sym_errc read_aranges(struct sym_dwarf_walk *w)
{
	w->aranges_read = true;
	Dwarf_Aranges *ar;
	size_t n;
	if (dwarf_getaranges(w->dw, &ar, &n) != 0)
		return SYM_OK; /* none, or refused: units without ranges then answer no lines */
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr lo;
		Dwarf_Word len;
		Dwarf_Off unit;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &lo, &len, &unit) != 0 || !len)
			continue;
		struct unit_arange *r = base_vec_push(&w->aranges);
		if (!r)
			return fail_nomem(w);
		*r = (struct unit_arange){unit, lo, lo + len};
	}
	if (w->aranges.len > 1)
		qsort(w->aranges.data, w->aranges.len, sizeof(struct unit_arange), cmp_unit_arange);
	return SYM_OK;
}

/* The .debug_aranges entries of the current unit, for a unit without ranges of its own. */
static sym_errc unit_aranges(struct sym_dwarf_walk *w)
{
	if (!w->aranges_read && read_aranges(w))
		return w->rc;
	uint64_t unit = dwarf_dieoffset(&w->cudie) - dwarf_cuoffset(&w->cudie);
	const struct unit_arange *a = w->aranges.data;
	size_t lo = 0, hi = w->aranges.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].unit < unit)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < w->aranges.len && a[lo].unit == unit; lo++) {
		struct addr_range *r = base_vec_push(&w->cu_ranges);
		if (!r)
			return fail_nomem(w);
		*r = (struct addr_range){a[lo].lo, a[lo].hi};
	}
	return SYM_OK;
}

/*
 * The unit's ranges (DW_AT_low_pc/high_pc or DW_AT_ranges, else its
 * .debug_aranges entries), sorted; none if absent.
 */
static sym_errc load_cu_ranges(struct sym_dwarf_walk *w)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	w->cu_ranges.len = 0;
	while ((off = dwarf_ranges(&w->cudie, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		struct addr_range *r = base_vec_push(&w->cu_ranges);
		if (!r)
			return fail_nomem(w);
		*r = (struct addr_range){lo, hi};
	}
	if (w->cu_ranges.len == 0 && unit_aranges(w))
		return w->rc;
	if (w->cu_ranges.len > 1)
		qsort(w->cu_ranges.data, w->cu_ranges.len, sizeof(struct addr_range), cmp_range);
	return SYM_OK;
}

static sym_errc push_line(struct sym_dwarf_walk *w, uint64_t lo, uint64_t hi, uint32_t file,
			  int line,
			  int col)
{
	sym_span *s = base_vec_push(&w->out->line_spans);
	if (!s)
		return fail_nomem(w);
	*s = (sym_span){.lo = lo, .hi = hi, .a = file, .b = (uint32_t)line, .c = (uint32_t)col,
			.order = w->unit};
	return SYM_OK;
}

/*
 * Adds the row's span [lo, hi) clipped to the unit's ranges, as llvm-symbolizer
 * only consults a unit's line table inside the unit. libdw sorts rows by address
 * across sequences, so a row left after its sequence's end can otherwise reach
 * over other units' code. *cursor walks the sorted ranges as rows ascend.
 */
static sym_errc push_clipped(struct sym_dwarf_walk *w, size_t *cursor, uint64_t lo, uint64_t hi,
			     uint32_t file, int line, int col)
{
	size_t n = w->cu_ranges.len;
	const struct addr_range *r = w->cu_ranges.data;
	while (*cursor < n && r[*cursor].hi <= lo)
		(*cursor)++;
	for (size_t i = *cursor; i < n && r[i].lo < hi; i++) {
		uint64_t a = lo > r[i].lo ? lo : r[i].lo, b = hi < r[i].hi ? hi : r[i].hi;
		if (a < b && push_line(w, a, b, file, line, col))
			return w->rc;
	}
	return SYM_OK;
}

static sym_errc collect_lines(struct sym_dwarf_walk *w)
{
	size_t cursor = 0;
	Dwarf_Lines *lines;
	size_t n;
	if (dwarf_getsrclines(&w->cudie, &lines, &n) != 0 || n < 2)
		return SYM_OK; /* a unit without a line table, or one libdw refuses */
	if (load_cu_ranges(w))
		return w->rc;
	/*
	 * A unit that covers no address answers no line (an LTO unit's early
	 * debug info: its rows describe code that other units or none cover).
	 */
	if (w->cu_ranges.len == 0)
		return SYM_OK;
	for (size_t i = 0; i + 1 < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i), *next = dwarf_onesrcline(lines, i + 1);
		bool end;
		Dwarf_Addr lo, hi;
		if (!l || !next || dwarf_lineendsequence(l, &end) || end)
			continue;
		if (dwarf_lineaddr(l, &lo) || dwarf_lineaddr(next, &hi) || is_tombstone(w, lo, hi))
			continue;
		int line = 0, col = 0;
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		Dwarf_Files *files;
		size_t idx;
		uint32_t file = dwarf_line_file(l, &files, &idx) == 0 ? unit_file(w, files,
				  idx) : 0;
		if (file == SYM_STR_NONE)
			return fail_nomem(w);
		if (push_clipped(w, &cursor, lo, hi, file, line, col))
			return w->rc;
	}
	return SYM_OK;
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

/* The function record of a scope DIE, shared by every instance of its origin. */
static uint32_t function_of(struct sym_dwarf_walk *w, Dwarf_Die *die)
{
	Dwarf_Die chain[MAX_ORIGIN_HOPS + 1], *cur = die;
	int n = 0;
	chain[n++] = *die;
	const char *name = NULL, *linkage = NULL;
	Dwarf_Die *decl = NULL, *name_die = NULL, *linkage_die = NULL;
	for (;;) {
		Dwarf_Attribute attr;
		if (!name && (name = dwarf_formstring(dwarf_attr(cur, DW_AT_name, &attr))))
			name_die = cur;
		if (!linkage) {
			linkage = dwarf_formstring(dwarf_attr(cur, DW_AT_linkage_name, &attr));
			if (!linkage)
				linkage = dwarf_formstring(dwarf_attr(cur, DW_AT_MIPS_linkage_name,
			       &attr));
			if (linkage)
				linkage_die = cur;
		}
		if (!decl && dwarf_hasattr(cur, DW_AT_decl_line))
			decl = cur;
		if (n > MAX_ORIGIN_HOPS)
			break;
		Dwarf_Attribute *ref = dwarf_attr(cur, DW_AT_abstract_origin, &attr);
		if (!ref)
			ref = dwarf_attr(cur, DW_AT_specification, &attr);
		if (!ref || !dwarf_formref_die(ref, &chain[n]))
			break;
		cur = &chain[n++];
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
			return fail_nomem(w), UINT32_MAX;
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
		return fail_nomem(w), UINT32_MAX;
	id = (uint32_t)w->out->funcs.len;
	struct sym_ix_func *slot = base_vec_push(&w->out->funcs);
	uint64_t *key_slot = base_vec_push(&w->out->func_keys);
	if (!slot || !key_slot || !sym_map64_set(&w->funcs, key, id))
		return fail_nomem(w), UINT32_MAX;
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
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (is_tombstone(w, lo, hi))
			continue;
		sym_span *s = base_vec_push(&w->out->scope_spans);
		if (!s)
			return fail_nomem(w), UINT32_MAX;
		*s = (sym_span){.lo = lo, .hi = hi, .a = id, .b = depth, .order = w->order++};
	}
	if (w->out->scope_spans.len == first)
		return UINT32_MAX;
	struct sym_ix_scope sc = {.func = function_of(w, die), .parent = parent};
	if (sc.func == UINT32_MAX)
		return UINT32_MAX;
	if (inlined) {
		Dwarf_Attribute attr;
		Dwarf_Word v;
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0)
			sc.call_file = unit_file(w, w->files, (size_t)v);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0)
			sc.call_line = (uint32_t)v;
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_column, &attr), &v) == 0)
			sc.call_column = (uint32_t)v;
		if (sc.call_file == SYM_STR_NONE)
			return fail_nomem(w), UINT32_MAX;
	}
	struct sym_ix_scope *slot = base_vec_push(&w->out->scopes);
	if (!slot)
		return fail_nomem(w), UINT32_MAX;
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
		fail_nomem(w);
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
		return fail_nomem(w);
	w->file_strs = w->file_strs_vec.data;
	for (size_t i = 0; i < w->nfiles; i++)
		w->file_strs[i] = SYM_STR_NONE;
	sym_errc rc = collect_lines(w);
	if (rc)
		return rc;
	walk_children(w, cudie, SYM_IX_NONE, 0, 0);
	/* every file the unit's line table names: the sources a debuginfod
	 * server may hand out for this file (headers without code too) */
	for (size_t i = 0; i < w->nfiles && !w->rc; i++) {
		uint32_t s = unit_file(w, w->files, i);
		uint32_t *slot = s && s != SYM_STR_NONE ? base_vec_push(&w->out->unit_files) : NULL;
		if (slot)
			*slot = s;
		else if (s && s != SYM_STR_NONE)
			return fail_nomem(w);
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
	sym_map64_deinit(&w->imported);
	sym_qualify_deinit(&w->qualify);
	free(w);
}
