// SPDX-License-Identifier: Apache-2.0
/*
 * sym_dwarf_lines: a unit's line-table rows as line spans, each clipped to the
 * unit's own code ranges (its DW_AT_ranges or low/high pc, else its
 * .debug_aranges entries), so code a unit does not describe never gets its
 * lines. Part of the DWARF walk (sym_dwarf_walk_impl.h).
 */
#include "symbolizer/sym_dwarf_walk_impl.h"

#include <stdlib.h>
#include <string.h>

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
			return sym_dwarf_fail_nomem(w);
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
			return sym_dwarf_fail_nomem(w);
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
			return sym_dwarf_fail_nomem(w);
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
		return sym_dwarf_fail_nomem(w);
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

sym_errc sym_dwarf_collect_lines(struct sym_dwarf_walk *w)
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
		if (dwarf_lineaddr(l, &lo) || dwarf_lineaddr(next, &hi) || sym_dwarf_is_tombstone(w, lo, hi))
			continue;
		int line = 0, col = 0;
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		Dwarf_Files *files;
		size_t idx;
		uint32_t file = dwarf_line_file(l, &files, &idx) == 0 ? sym_dwarf_unit_file(w, files,
				  idx) : 0;
		if (file == SYM_STR_NONE)
			return sym_dwarf_fail_nomem(w);
		if (push_clipped(w, &cursor, lo, hi, file, line, col))
			return w->rc;
	}
	return SYM_OK;
}

