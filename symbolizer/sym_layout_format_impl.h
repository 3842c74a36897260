/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_layout_format: the on-disk layout of a type-layout blob (API in
 * sym_layout.h; written by sym_layout_write.c, validated by sym_layout_load.c).
 *
 * All integers little-endian at natural alignment; the blob is:
 *   header | types[n_types] | members[n_members] | dims[n_dims] (u64) |
 *   by_name[n_types] (u32 type indices sorted by name) |
 *   aliases[n_aliases] (sorted by alias name) | strtab[strtab_size]
 * String fields are offsets into strtab, which ends with a NUL. A member's
 * children (the members of an anonymous struct or union it embeds) are
 * indices relative to its type's first member and always come after it, so
 * the tree cannot loop. Bump SYM_LAYOUT_VERSION on any change: stores
 * rebuild blobs of another version.
 */
#ifndef SYM_LAYOUT_FORMAT_IMPL_H
#define SYM_LAYOUT_FORMAT_IMPL_H

#include <stdint.h>

#define SYM_LAYOUT_MAGIC "SYMLAYT\0"
#define SYM_LAYOUT_VERSION 1u
#define SYM_LAYOUT_NONE UINT32_MAX

typedef struct sym_layout_header {
	char magic[8];
	uint32_t version;
	uint32_t n_types;
	uint32_t n_members;
	uint32_t n_dims;
	uint32_t n_aliases;
	uint32_t strtab_size;
} sym_layout_header;

typedef struct sym_layout_type_rec {
	uint32_t name;          /* strtab: "task_struct", "ns::Box<long int>" */
	uint32_t cu;            /* strtab: one compile unit defining it */
	uint8_t kind;           /* sym_layout_kind */
	uint8_t flags;          /* SYM_LAYOUT_F_* */
	uint16_t pad;
	uint32_t align;         /* DW_AT_alignment, 0 when not given */
	uint64_t size;
	uint32_t first_member;  /* into members[] */
	uint32_t n_members;     /* all members of the type, nested ones included */
	uint32_t n_top;         /* the first n_top are the type's own members */
	uint32_t pad2;
} sym_layout_type_rec;

typedef struct sym_layout_member_rec {
	uint32_t name;          /* strtab; "" for an anonymous member */
	uint32_t type_name;     /* strtab: as pahole prints it (arrays: the element) */
	uint64_t offset;        /* bytes from the start of the enclosing struct/union */
	uint64_t size;          /* bytes (a bitfield: its storage unit) */
	uint32_t bit_offset;    /* bitfields: bit within the storage unit at offset */
	uint32_t bit_size;      /* 0 unless a bitfield */
	uint8_t kind;           /* sym_layout_member_kind */
	uint8_t flags;          /* SYM_LAYOUT_F_* */
	uint16_t n_dims;        /* array dimensions at dims[first_dim] (0: flexible) */
	uint32_t first_dim;
	uint32_t first_child;   /* relative to the type's first member */
	uint32_t n_children;    /* members of the anonymous struct/union embedded here */
	uint32_t type_ref;      /* the struct/union type embedded by value, or NONE */
} sym_layout_member_rec;

typedef struct sym_layout_alias_rec {
	uint32_t name;          /* strtab: the typedef's name */
	uint32_t target;        /* strtab: the name of the struct/union it names */
	uint32_t type;          /* the type it names when known here, else NONE */
} sym_layout_alias_rec;

#endif
