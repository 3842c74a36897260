/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_alt: the dwz supplementary file of an ELF file, as both builders (the
 * symbol index, sym_index_build.c; the type layouts, sym_layout_build.c) get
 * it: asked of the caller's resolver by the build ID and path in
 * .gnu_debugaltlink, and accepted only when it is an ELF file with that build ID.
 */
#ifndef SYM_ALT_IMPL_H
#define SYM_ALT_IMPL_H

#include <stddef.h>

#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"
#include "symbolizer/sym_index.h"

/* The dwz file info names (info->has_alt), in *data and *size. SYM_E_MISSING_ALT
 * when the resolver (NULL: none) has no such file or one with another build ID;
 * the probe's error when it is no ELF. Each message names the file and its ID. */
sym_errc sym_alt_find(const sym_elf_info *info, sym_alt_resolver resolver, void *ctx,
		      const void **data, size_t *size, sym_error *err);

/* Prefixes err with "dwz supplementary file ID" (a failure opening that file). */
void sym_alt_error_prefix(const sym_elf_info *info, sym_error *err);

#endif
