// SPDX-License-Identifier: Apache-2.0
/*
 * sym_dwarf_shard: one thread's share of the DWARF walk (see sym_dwarf_impl.h).
 *
 * Each shard takes the next unit no shard has taken (src->next_unit), so a
 * shard slowed by big units or a busy core walks fewer of them. A shard's
 * units come in increasing order, and after each unit its end marks go to
 * out->units, so sym_collect_merge_units can put the shards' records back in
 * unit order.
 * Every SYM_DWARF_REOPEN_SPANS spans the Dwarf handle is ended and a new one
 * opened over the same Elf: libdw frees a unit's line table, files and
 * abbreviations only with its handle, which held ~230 MB at once on a
 * kernel's DWARF.
 */
#include "symbolizer/sym_dwarf_impl.h"

#include <dwarf.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static sym_errc open_handle(const sym_dwarf_source *src, Dwarf **dw, sym_error *err)
{
	*dw = dwarf_begin_elf(src->elf, DWARF_C_READ, NULL);
	if (!*dw)
		return sym_error_set(err, SYM_E_BAD_DWARF, "libdw: %s", dwarf_errmsg(-1));
	if (src->alt)
		dwarf_setalt(*dw, src->alt);
	return SYM_OK;
}

/*
 * Drops the whole pages inside a walked unit's .debug_info bytes from a file
 * mapping: a kernel's 160 MB of them otherwise stay resident to the end. A
 * later reference into the unit reads the page again from the page cache.
 */
static void release_unit(const sym_dwarf_source *src, Dwarf *dw, Dwarf_Die *cudie)
{
	Dwarf_Off die = dwarf_dieoffset(cudie), head = dwarf_cuoffset(cudie), next;
	if (!src->mapping || !cudie->addr || head > die ||
	    dwarf_next_unit(dw, die - head, &next, NULL, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    next <= die - head)
		return;
	uintptr_t base = (uintptr_t)src->mapping, start = (uintptr_t)cudie->addr - head;
	if (start < base || start - base > src->mapping_size ||
	    next - (die - head) > src->mapping_size - (start - base))
		return;
	uintptr_t end = start + (next - (die - head)), page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (start + page - 1) & ~(page - 1), hi = end & ~(page - 1);
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The next unit number no shard has taken. */
static uint32_t take_unit(const sym_dwarf_source *src)
{
	return atomic_fetch_add_explicit(src->next_unit, 1, memory_order_relaxed);
}

static sym_errc mark_unit(sym_collect *out, uint32_t unit, sym_error *err)
{
	struct sym_collect_unit *m = base_vec_push(&out->units);
	if (!m)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory walking DWARF units");
	*m = (struct sym_collect_unit){.unit = unit, .strs = out->strs.size,
				       .funcs = out->funcs.len, .scopes = out->scopes.len,
				       .scope_spans = out->scope_spans.len,
				       .line_spans = out->line_spans.len,
				       .unit_files = out->unit_files.len};
	return SYM_OK;
}

sym_errc sym_dwarf_collect(const sym_dwarf_source *src, sym_collect *out, sym_error *err)
{
	Dwarf *dw;
	sym_errc rc = open_handle(src, &dw, err);
	if (rc)
		return rc;
	sym_dwarf_walk *w = sym_dwarf_walk_new(dw, out, err);
	if (!w) {
		dwarf_end(dw);
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	}
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	Dwarf_Half version;
	uint32_t next = 0, skip = 0;   /* units seen; units to pass over after a reopen */
	uint32_t want = take_unit(src);
	size_t since_open = 0;         /* spans added since the handle was opened */
	size_t reopen = src->reopen_spans ? src->reopen_spans : SYM_DWARF_REOPEN_SPANS;
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		if (skip) {
			skip--;
			continue;
		}
		uint32_t u = next++;
		if (u != want)
			continue;
		want = take_unit(src);
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue; /* type units and split skeletons hold no code scopes here */
		size_t before = out->line_spans.len + out->scope_spans.len;
		if ((rc = sym_dwarf_walk_unit(w, &cudie, u)) || (rc = mark_unit(out, u, err)))
			break;
		release_unit(src, dw, &cudie);
		since_open += out->line_spans.len + out->scope_spans.len - before;
		if (since_open < reopen)
			continue;
		/* A fresh handle, resuming after unit u (cu belongs to the old one). */
		dwarf_end(dw);
		if ((rc = open_handle(src, &dw, err))) {
			dw = NULL;
			break;
		}
		sym_dwarf_walk_set_dwarf(w, dw);
		cu = NULL;
		skip = next;
		since_open = 0;
	}
	sym_dwarf_walk_free(w);
	if (dw)
		dwarf_end(dw);
	return rc;
}

bool sym_dwarf_has_partial_units(Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	uint8_t unit_type;
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, NULL, NULL) == 0)
		if (unit_type == DW_UT_partial)
			return true;
	return false;
}
