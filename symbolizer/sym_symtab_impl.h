/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_symtab: function symbols from .symtab and .dynsym as scopes, for code that
 * DWARF does not describe and for files with no DWARF at all.
 */
#ifndef SYM_SYMTAB_IMPL_H
#define SYM_SYMTAB_IMPL_H

#include <libelf.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_error.h"

/* Adds one scope (and function) per chosen symbol, spans at depth 0. */
sym_errc sym_symtab_collect(Elf *elf, sym_collect *out, sym_error *err);

/*
 * The values of the .symtab symbols named names[0..n) (defined, non-zero):
 * values[k] is set when still 0 and a symbol of that name is found (the
 * kernel's _stext and _text, for KASLR).
 */
void sym_symtab_find(Elf *elf, const char *const *names, uint64_t *values, size_t n);

#endif
