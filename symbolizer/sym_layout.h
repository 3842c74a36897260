/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_layout: type layouts (struct and union sizes, member offsets) from DWARF,
 * for profiling agents that read a process's or the kernel's structures.
 *
 * sym_layout_build() walks every unit of an ELF image held in memory (and of
 * its dwz supplementary file) on the calling thread and writes a compact,
 * versioned blob (sym_layout_format_impl.h): every named struct, union and class,
 * and typedefs naming them, counted once per distinct layout. Memory stays
 * bounded: caps on types, members and strings; the DWARF itself is inflated
 * under a cap as for the symbol index. sym_layout_load() validates a blob as
 * untrusted input and answers queries: types by name, members, field paths.
 */
#ifndef SYM_LAYOUT_H
#define SYM_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"
#include "symbolizer/sym_index.h"

typedef enum sym_layout_kind {
	SYM_LAYOUT_STRUCT = 1,
	SYM_LAYOUT_UNION = 2,
	SYM_LAYOUT_CLASS = 3,
} sym_layout_kind;

typedef enum sym_layout_member_kind {
	SYM_LAYOUT_FIELD = 0,      /* a data member */
	SYM_LAYOUT_BASE = 1,       /* a C++ base class */
} sym_layout_member_kind;

enum {
	SYM_LAYOUT_F_UNKNOWN_OFFSET = 1u << 0, /* location not a constant we evaluate */
	SYM_LAYOUT_F_UNKNOWN_SIZE = 1u << 1,   /* size absent, looping or absurd */
	SYM_LAYOUT_F_VIRTUAL = 1u << 2,        /* virtual base class */
	SYM_LAYOUT_F_ANON_STRUCT = 1u << 3,    /* member is an anonymous struct (children) */
	SYM_LAYOUT_F_ANON_UNION = 1u << 4,     /* member is an anonymous union (children) */
	SYM_LAYOUT_F_TYPEDEF_NAME = 1u << 5,   /* type: anonymous, named by a typedef */
	SYM_LAYOUT_F_TRUNCATED = 1u << 6,      /* type: more members than we keep */
};

/* The build's options: the symbol index's (inflate cap, dwz resolver; threads unused). */
typedef sym_build_options sym_layout_options;

/* Builds the layout blob of an ELF image. On success *blob is malloc'ed (free()). */
sym_errc sym_layout_build(const void *elf_data, size_t elf_size, const sym_layout_options *opts,
			  void **blob, size_t *blob_size, sym_error *err);

typedef struct sym_layout sym_layout;

/* Validates a blob and wraps it; the blob must outlive the handle (not copied). */
sym_errc sym_layout_load(const void *blob, size_t size, sym_layout **out, sym_error *err);
void sym_layout_destroy(sym_layout *l);

uint32_t sym_layout_type_count(const sym_layout *l);

/*
 * Types called name ("struct task_struct", "task_struct", a typedef's name,
 * "ns::Box<int>"): fills up to max indices, returns how many there are.
 */
size_t sym_layout_find(const sym_layout *l, const char *name, uint32_t *out, size_t max);

typedef struct sym_layout_type_info {
	const char *name;
	const char *cu;
	sym_layout_kind kind;
	unsigned flags;
	uint64_t size;
	uint32_t align;
	uint32_t first;     /* member ids of the type's own members: [first, first + n) */
	uint32_t n;
} sym_layout_type_info;

typedef struct sym_layout_member_info {
	const char *name;
	const char *type_name;
	sym_layout_member_kind kind;
	unsigned flags;
	uint64_t offset;    /* from the start of the enclosing struct or union */
	uint64_t size;
	uint32_t bit_offset, bit_size;
	uint32_t n_dims;
	const uint64_t *dims;
	uint32_t first;     /* member ids of its anonymous children: [first, first + n) */
	uint32_t n;
	uint32_t type_ref;  /* embedded struct/union type index, or SYM_LAYOUT_NONE_REF */
} sym_layout_member_info;

#define SYM_LAYOUT_NONE_REF UINT32_MAX

bool sym_layout_type(const sym_layout *l, uint32_t t, sym_layout_type_info *out);
bool sym_layout_member(const sym_layout *l, uint32_t member_id, sym_layout_member_info *out);

typedef struct sym_layout_field {
	uint64_t offset;        /* bytes from the start of the outermost type */
	uint32_t bit_offset;    /* bitfields: bits past offset */
	uint32_t bit_size;      /* 0 unless a bitfield */
	uint64_t size;
	const char *type_name;
	uint32_t member;        /* its member id */
} sym_layout_field;

/*
 * Resolves "Type.a.b.c" (the type as sym_layout_find takes it; the first of
 * several layouts) or, with t given, "a.b.c" inside type t. Members of
 * embedded structs and unions (and C++ bases) are followed, pointers are not.
 * SYM_E_INVALID with a message naming the component that failed.
 */
sym_errc sym_layout_field_path(const sym_layout *l, const char *path, sym_layout_field *out,
			       sym_error *err);
sym_errc sym_layout_field_in(const sym_layout *l, uint32_t t, const char *path,
			     sym_layout_field *out, sym_error *err);

#endif
