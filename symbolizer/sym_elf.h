/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_elf: facts about an ELF file held in memory, read with libelf.
 *
 * sym_elf_probe() is the cheap look a fetcher or a store takes at a file before
 * trusting it: its GNU build ID, its dwz link (.gnu_debugaltlink), its debug
 * file link (.gnu_debuglink), whether it
 * carries DWARF or only symbols, and its PT_LOAD segments (to turn runtime
 * addresses into ELF virtual addresses). It never decompresses anything and
 * reads nothing outside [data, data + size).
 */
#ifndef SYM_ELF_H
#define SYM_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_error.h"

#define SYM_ELF_MAX_LOADS 16
#define SYM_ELF_ALT_PATH_MAX 256

typedef struct sym_elf_load {
	uint64_t vaddr;   /* p_vaddr */
	uint64_t offset;  /* p_offset */
	uint64_t filesz;  /* p_filesz */
	uint64_t memsz;   /* p_memsz */
	uint32_t flags;   /* p_flags (PF_X = 1) */
} sym_elf_load;

typedef struct sym_elf_info {
	sym_build_id build_id;     /* len 0 when the file has no NT_GNU_BUILD_ID note */
	uint16_t machine;          /* e_machine */
	uint16_t type;             /* e_type */
	bool is_64;
	bool has_debug_info;       /* a .debug_info or .zdebug_info section with contents */
	bool has_debug_line;       /* a .debug_line or .zdebug_line section with contents */
	bool has_symtab;           /* .symtab with entries */
	bool has_dynsym;           /* .dynsym with entries */
	bool has_text;             /* code bytes present (a PROGBITS executable section) */
	bool has_alt;              /* .gnu_debugaltlink present and well formed */
	sym_build_id alt_build_id; /* the dwz supplementary file's build ID */
	char alt_path[SYM_ELF_ALT_PATH_MAX]; /* its path as written in the link, NUL-terminated */
	bool has_debuglink;        /* .gnu_debuglink present and well formed */
	uint32_t debuglink_crc;    /* CRC-32 (zlib's) of the whole debug file it names */
	char debuglink[SYM_ELF_ALT_PATH_MAX]; /* the debug file's name, NUL-terminated */
	uint32_t n_loads;
	sym_elf_load loads[SYM_ELF_MAX_LOADS]; /* the first PT_LOAD segments, in file order */
} sym_elf_info;

/* Reads the facts above. SYM_E_BAD_ELF when the data is not a well-formed ELF. */
sym_errc sym_elf_probe(const void *data, size_t size, sym_elf_info *out, sym_error *err);

#endif
