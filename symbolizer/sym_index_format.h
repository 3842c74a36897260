/*
 * sym_index_format: the on-disk layout of an index blob (version 1).
 *
 *   header                    struct sym_ix_header
 *   uint32 starts[n_ranges]   range start, as an offset from header.base, ascending
 *   rec    recs[n_ranges]     parallel: what covers [starts[i], starts[i+1]);
 *                             the last entry is a terminator
 *   scope  scopes[n_scopes]   a function instance: the subprogram, or one inlined
 *                             call (with its call site and the scope it was inlined
 *                             into: parent < own index, so chains always end)
 *   func   funcs[n_funcs]     names of a function, shared by all its instances
 *   uint32 buckets[n_buckets + 1]  range index at each (1 << bucket_shift) step,
 *                             to narrow the binary search
 *   char   strtab[strtab_size] NUL-terminated strings; offset 0 is ""
 *
 * All integers little-endian, every array 8-byte aligned, SYM_IX_NONE marks an
 * absent index. A range whose record has scope NONE and file 0 is a gap.
 */
#ifndef SYM_INDEX_FORMAT_H
#define SYM_INDEX_FORMAT_H

#include <stdint.h>

#define SYM_IX_MAGIC "SYMIDX\x1a\n"
#define SYM_IX_VERSION 1
#define SYM_IX_NONE UINT32_MAX
#define SYM_IX_MAX_LOADS 16

struct sym_ix_load {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags, reserved;
};

struct sym_ix_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t blob_size;
	uint64_t base;
	uint32_t flags;
	uint32_t n_ranges;
	uint32_t n_scopes;
	uint32_t n_funcs;
	uint32_t n_buckets;
	uint32_t bucket_shift;
	uint32_t strtab_size;
	uint32_t n_loads;
	uint8_t build_id_len;
	uint8_t reserved[7];
	uint8_t build_id[64];
	struct sym_ix_load loads[SYM_IX_MAX_LOADS];
	uint64_t off_starts, off_recs, off_scopes, off_funcs, off_buckets, off_strtab;
};

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
