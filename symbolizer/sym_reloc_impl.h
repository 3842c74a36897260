/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_reloc: readies an ELF image for libdw, for both builders (symbol index
 * and type layouts): inflates compressed sections (sym_inflate), and for a
 * relocatable file (ET_REL: a kernel module, a .o) lays out its sections and
 * applies the relocations of its DWARF, which libdw alone does not.
 *
 * Layout: every SHF_ALLOC section, in section-header order, at the next
 * address aligned to its sh_addralign, from SYM_RELOC_BASE (0) up: the layout
 * libdwfl gives the file of `eu-addr2line -e FILE`, so plain (ELF) addresses
 * of a module mean what they mean to eu-addr2line; the address is written into
 * the copy's section header (sh_addr), where the symbol table, the section
 * table of the index and the lookups read it. An address in section S at
 * offset o is then sh_addr(S) + o.
 *
 * Relocations: every SHT_RELA/SHT_REL section whose target is a section that
 * is not allocated (.debug_info, .debug_line, .debug_ranges, .debug_str_offsets,
 * ...), for the absolute data relocations of x86-64, i386, AArch64, ARM,
 * PowerPC, s390x, RISC-V and LoongArch (others are left as they are): the
 * value S + A, S being the symbol's value plus its section's laid-out address.
 * Every offset, symbol index and section index is checked against the image
 * before it is used.
 */
#ifndef SYM_RELOC_IMPL_H
#define SYM_RELOC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

#define SYM_RELOC_BASE 0

/*
 * On success *out is NULL (the input is usable as it is) or a malloc'ed image
 * of *out_size bytes: inflated, and for ET_REL laid out and relocated.
 * max_bytes caps the inflated sections (SYM_E_TOO_LARGE past it).
 */
sym_errc sym_reloc_prepare(const void *data, size_t size, uint64_t max_bytes, void **out,
			   size_t *out_size, sym_error *err);

/* Lays out and relocates a writable ET_REL image in place (no-op for other types). */
sym_errc sym_reloc_apply(void *image, size_t size, sym_error *err);

#endif
