/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_elf_util: libelf helpers shared inside symbolizer/ (not a public API).
 */
#ifndef SYM_ELF_UTIL_IMPL_H
#define SYM_ELF_UTIL_IMPL_H

#include <gelf.h>
#include <libelf.h>

#include "symbolizer/sym_error.h"

/* elf_memory() with checks: SYM_E_BAD_ELF unless the image is an ELF object. */
sym_errc sym_elf_begin(const void *data, size_t size, Elf **out, sym_error *err);

/* The section's name (NULL when unreadable); fills *shdr. */
const char *sym_elf_section_name(Elf *elf, Elf_Scn *scn, GElf_Shdr *shdr);

#endif
