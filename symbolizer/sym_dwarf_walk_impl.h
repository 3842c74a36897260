/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_dwarf_walk: the state of one thread's DWARF walk, shared by the files
 * that do its parts: sym_dwarf.c (units, scopes and their functions) and
 * sym_dwarf_lines.c (a unit's line rows, clipped to its code ranges).
 * Internal to symbolizer/.
 */
#ifndef SYM_DWARF_WALK_IMPL_H
#define SYM_DWARF_WALK_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "base/base_vec.h"
#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_dwarf_impl.h"
#include "symbolizer/sym_map64_impl.h"
#include "symbolizer/sym_qualify_impl.h"

#define MAX_PATH_BYTES 4096

struct sym_dwarf_walk {
	Dwarf *dw;
	sym_collect *out;
	sym_map64 funcs;          /* origin DIE key -> function index */
	sym_map64 by_origin;      /* key of the DIE a nameless scope DIE refers to -> function */
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

/* Sets the walk's error to out of memory (once) and returns it. */
sym_errc sym_dwarf_fail_nomem(sym_dwarf_walk *w);
/* The interned path of file index idx of files (the current unit's, usually); 0 unknown. */
uint32_t sym_dwarf_unit_file(sym_dwarf_walk *w, Dwarf_Files *files, size_t idx);
/* The current unit's line rows, clipped to its code ranges, as line spans. */
sym_errc sym_dwarf_collect_lines(sym_dwarf_walk *w);

/* A range no code can have: empty, below the code, or a linker's tombstone. */
static inline bool sym_dwarf_is_tombstone(const struct sym_dwarf_walk *w, Dwarf_Addr lo,
					  Dwarf_Addr hi)
{
	return lo >= hi || lo < w->out->min_code_addr || lo == (Dwarf_Addr)-1 ||
	       lo == (Dwarf_Addr)-2 || lo == 0xffffffffu || lo == 0xfffffffeu;
}

#endif
