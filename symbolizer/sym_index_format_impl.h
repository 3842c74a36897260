/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_index_format: the on-disk layout of an index blob (version 8).
 *
 * Version 8 has version 7's layout; functions equal in every field (an inline
 * function of a header, collected once for each unit that inlines it) are
 * now one row of the function table, so that a response names such a
 * function once, and a version 7 blob is rebuilt.
 * Version 7 lays version 6's content out for the search: the bucket table's
 * one field is 32 bits wide (a plain uint32 array, one 8-byte load gives a
 * bucket's bounds), buckets hold about 4 to 8 ranges (was 8 to 16), and the
 * range starts are followed by SYM_IX_STARTS_PAD zero bytes, so a lookup
 * compares 16 starts at once (two SSE2 loads) without reading past them, and
 * every packed row is a whole number of bytes (a field is one load at a byte
 * offset fixed per table), so a version 6 blob is rebuilt.
 * Version 6 has version 5's layout; a Go binary without DWARF is now indexed
 * from its pclntab (functions, lines, inline frames) and the header's flags
 * say which source an index came from, so a version 5 blob is rebuilt.
 * Version 5 has version 4's layout; its file table also names every file of
 * the line tables (headers without code), the sources a debuginfod server may
 * hand out for the build ID, so a version 4 blob is rebuilt.
 * Version 4 adds the section table (every allocated section's name, address
 * and size: an ET_REL file's sections as sym_reloc laid them out, so an offset
 * within a named section becomes an address), the ELF type, and the kernel's
 * _stext and _text addresses (KASLR); a relocatable file's ranges are now
 * those of the relocated DWARF. Older blobs are rejected by version and rebuilt.
 * Version 3 has version 2's layout; its content differs (C++ names qualified
 * from DWARF parents or the .symtab, C's assembler labels as linkage names
 * only, line rows only inside their unit's ranges), so a stored version 2
 * blob is rebuilt from the stored debug info like any other version.
 *
 *   header                    struct sym_ix_header
 *   uint16 starts[n_ranges]   low 16 bits of each range start (an offset from
 *                             header.base); the bucket a range sits in gives
 *                             the high bits (see buckets); then
 *                             SYM_IX_STARTS_PAD zero bytes
 *   packed ranges[n_ranges]   what covers [start i, start i+1): innermost scope,
 *                             file, line, column; the last range is a terminator
 *   packed scopes[n_scopes]   a function instance: the subprogram, or one inlined
 *                             call (with its call site and the scope it was inlined
 *                             into: parent < own index, so chains always end)
 *   packed funcs[n_funcs]     names of a function, shared by all its instances
 *   packed files[n_files]     string offset of each file name; file 0 is ""
 *   packed buckets[n_buckets + 1]  one 32-bit field (so a uint32 array):
 *                             bucket k holds the ranges whose start is in
 *                             [k << shift, (k + 1) << shift), shift <= 16, so
 *                             one 64 KiB page: entry k is the first of them, and
 *                             a range's full start is the high bits of its
 *                             bucket's base with its own low 16 bits
 *   struct sym_ix_section sections[n_sections]  allocated sections, in
 *                             section-header order (names in strtab)
 *   char   strtab[strtab_size] NUL-terminated strings; offset 0 is ""
 *
 * A packed table is an array of fixed-width rows of bit fields: a row is the
 * concatenation of its fields (first field in the lowest bits), each
 * table.bits[f] wide (0..32), padded with zero bits to whole bytes, rows laid
 * end to end from byte 0 of the table, bit b of the table being bit (b % 8) of
 * byte b / 8. Each table is followed by at least 8 bytes of zero padding, so a
 * field is read with one unaligned 8-byte load. The widths are chosen per blob
 * as the fewest bits that hold the largest value of each field.
 *
 * Optional references are stored plus one, 0 meaning none (a range's scope, a
 * scope's parent). A range whose scope and file are both 0 is a gap. All
 * integers little-endian, every array 8-byte aligned.
 */
#ifndef SYM_INDEX_FORMAT_IMPL_H
#define SYM_INDEX_FORMAT_IMPL_H

#include <stdint.h>

#define SYM_IX_MAGIC "SYMIDX\x1a\n"
#define SYM_IX_VERSION 8
#define SYM_IX_NONE UINT32_MAX
#define SYM_IX_MAX_LOADS 16
#define SYM_IX_MAX_FIELDS 5
#define SYM_IX_MAX_SHIFT 16
#define SYM_IX_PAD 8      /* zero bytes after each packed table */
#define SYM_IX_STARTS_PAD 32  /* zero bytes after the starts: a 16-start read */
#define SYM_IX_BUCKET_BITS 32 /* the bucket table's field width */
#define SYM_IX_MAX_SECTIONS 65536

struct sym_ix_load {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags, reserved;
};

struct sym_ix_section {
	uint64_t addr, size;
	uint32_t name;     /* string offset */
	uint32_t reserved;
};

/* One packed table: where it starts, its row count, its field widths. */
struct sym_ix_table {
	uint64_t off;
	uint32_t count;
	uint8_t bits[SYM_IX_MAX_FIELDS];   /* fields past the table's own are 0 */
	uint8_t reserved[7];
};

/* Fields of each packed table, in row order. */
enum { SYM_IX_R_SCOPE, SYM_IX_R_FILE, SYM_IX_R_LINE, SYM_IX_R_COLUMN, SYM_IX_R_FIELDS };
enum { SYM_IX_S_FUNC, SYM_IX_S_PARENT, SYM_IX_S_CALL_FILE, SYM_IX_S_CALL_LINE,
       SYM_IX_S_CALL_COLUMN, SYM_IX_S_FIELDS };
enum { SYM_IX_F_NAME, SYM_IX_F_LINKAGE, SYM_IX_F_DISPLAY, SYM_IX_F_DECL_FILE,
       SYM_IX_F_DECL_LINE, SYM_IX_F_FIELDS };
enum { SYM_IX_FILE_NAME, SYM_IX_FILE_FIELDS };
enum { SYM_IX_B_FIRST, SYM_IX_B_FIELDS };

struct sym_ix_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t blob_size;
	uint64_t base;
	uint32_t flags;
	uint32_t n_loads;
	uint32_t bucket_shift;
	uint32_t strtab_size;
	uint8_t build_id_len;
	uint8_t reserved[7];
	uint8_t build_id[64];
	struct sym_ix_load loads[SYM_IX_MAX_LOADS];
	uint64_t off_starts, off_strtab;
	struct sym_ix_table ranges;    /* SYM_IX_R_*; count is n_ranges */
	struct sym_ix_table scopes;    /* SYM_IX_S_* */
	struct sym_ix_table funcs;     /* SYM_IX_F_* */
	struct sym_ix_table files;     /* SYM_IX_FILE_* */
	struct sym_ix_table buckets;   /* SYM_IX_B_*; count is n_buckets + 1 */
	uint16_t elf_type;             /* e_type: ET_REL, ET_EXEC, ET_DYN */
	uint16_t reserved2;
	uint32_t n_sections;
	uint64_t off_sections;
	uint64_t kernel_stext, kernel_text;  /* the symbols' values; 0 when absent */
};

/*
 * The builder's unpacked records (what the packed rows hold, before files
 * become file-table indexes and optional references gain their +1): file
 * fields are string offsets, absent references SYM_IX_NONE.
 */
struct sym_ix_rec {
	uint32_t scope;    /* innermost scope, or NONE */
	uint32_t file;     /* string offset of the line table's file; 0 unknown */
	uint32_t line;
	uint32_t column;
};

struct sym_ix_scope {
	uint32_t func;     /* index into funcs */
	uint32_t parent;   /* enclosing scope (< own index) or NONE */
	uint32_t call_file, call_line, call_column;  /* where the parent calls this one */
};

struct sym_ix_func {
	uint32_t name, linkage, display, decl_file;  /* string offsets */
	uint32_t decl_line;
};

#endif
