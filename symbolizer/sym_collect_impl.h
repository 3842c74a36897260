/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_collect: what the index builder gathers from one source (a share of the
 * DWARF units, or the symbol tables) before everything is merged, flattened
 * and written: functions, scopes (function instances), and address spans.
 * String fields are offsets into the collector's own sym_strtab; scope and
 * function fields are indexes into its own vectors.
 */
#ifndef SYM_COLLECT_IMPL_H
#define SYM_COLLECT_IMPL_H

#include <stdint.h>

#include "symbolizer/sym_index_format_impl.h"
#include "symbolizer/sym_strtab_impl.h"
#include "base/base_vec.h"

/* An address span: a scope's code range, or one line-table row's range. */
typedef struct sym_span {
	uint64_t lo, hi;
	uint32_t a;      /* scope: scope id;   line: file string */
	uint32_t b;      /* scope: depth;      line: line */
	uint32_t c;      /* symbol: has aliases; line: column */
	uint32_t order;  /* tie-break: scope: position in the source; line: unit number */
} sym_span;

/* Caps on what one index may hold, whatever the input claims. */
#define SYM_MAX_SPANS ((size_t)1 << 28)
#define SYM_MAX_SCOPES ((size_t)SYM_IX_NONE - 1)
#define SYM_MAX_DIE_DEPTH 256

/* Where one DWARF unit's records end in a collection (counts after the unit). */
struct sym_collect_unit {
	uint32_t unit;           /* its number in the file */
	uint32_t funcs, scopes;
	size_t strs;             /* string table bytes */
	size_t scope_spans, line_spans, unit_files;
};

typedef struct sym_collect {
	sym_strtab strs;
	base_vec funcs;        /* struct sym_ix_func */
	base_vec scopes;       /* struct sym_ix_scope */
	base_vec scope_spans;  /* sym_span */
	base_vec line_spans;   /* sym_span */
	base_vec unit_files;   /* uint32_t string offsets: every file of every line table */
	base_vec func_keys;    /* uint64_t per function: its DIE key (DWARF walks only) */
	base_vec units;        /* struct sym_collect_unit per walked unit, in walk order */
	uint64_t min_code_addr;  /* spans starting below it are tombstones (discarded code) */
} sym_collect;

int sym_collect_init(sym_collect *c);
void sym_collect_deinit(sym_collect *c);



/*
 * Moves src's content into dst: strings re-interned, function and scope
 * indexes shifted. src's scope spans go to dst_scope_spans (dst->scope_spans or
 * another vector), its line spans to dst->line_spans. src is left empty.
 */
int sym_collect_merge(sym_collect *dst, sym_collect *src, base_vec *dst_scope_spans);

/*
 * Moves the DWARF shards' records into dst (empty) unit by unit in unit
 * order, so the result is what one walk over every unit gives, byte for
 * byte: strings interned in that order, a function found by several shards
 * (same DIE key) kept once where first met, scope ids and scope span order
 * renumbered. Needs no partial units (a dwz file's imported units belong to
 * their first importer: such files are walked on one thread). The caller
 * frees the shards. 0, or -1 out of memory.
 */
int sym_collect_merge_units(sym_collect *dst, sym_collect *shards, unsigned n);
#endif
