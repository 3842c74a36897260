/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_index: the compact, versioned lookup index of one ELF file.
 *
 * Built once per build ID from an ELF image in memory (DWARF via libdw, or a
 * Go binary's pclntab when it has no DWARF, then .symtab/.dynsym for what they
 * do not cover), it is one contiguous blob:
 * header, sorted range starts, parallel fixed-width (bit-packed) records,
 * tables, strings (layout in sym_index_format_impl.h). sym_index_load() checks
 * every count and offset against the blob's size, so a blob from disk or a
 * store is untrusted input like any file. A lookup is one search of an
 * address's bucket (16 starts a step) plus parent links for the inline chain;
 * it allocates nothing and returns pointers into the blob.
 */
#ifndef SYM_INDEX_H
#define SYM_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"

/*
 * Hands the builder the dwz supplementary file with the given build ID. Return
 * true and set *data and *size (memory that stays valid until sym_index_build
 * returns), or false when it is not available.
 */
typedef bool (*sym_alt_resolver)(void *ctx, const sym_build_id *id, const char *path,
				 const void **data, size_t *size);

typedef struct sym_build_options {
	/* Cap on the bytes all compressed sections may inflate to; 0 = default (2 GiB). */
	uint64_t max_decompressed_bytes;
	/* dwz supplementary file lookup; NULL = none (the build then fails with
	 * SYM_E_MISSING_ALT for a file that needs one). */
	sym_alt_resolver alt_resolver;
	void *alt_ctx;
	/* Worker threads for the DWARF walk; 0 = one per online CPU (at most 8), 1 = the
	 * caller's thread only. The blob is the same byte for byte whatever the count. */
	unsigned threads;
	/* Line and scope spans a thread walks before it ends its libdw handle and opens
	 * a fresh one (libdw frees units' line tables only then); 0 = default (256 Ki). */
	size_t reopen_spans;
	/* elf_data is a read-only private mapping of a file (mmap PROT_READ, MAP_PRIVATE):
	 * each DWARF unit's .debug_info pages are dropped from the process once walked
	 * (madvise MADV_DONTNEED; read again from the page cache if needed), which keeps a
	 * kernel's build under its peak. Never set it for memory the caller allocated. */
	bool input_is_file_mapping;
} sym_build_options;

/* Builds the index blob of an ELF image. On success *blob is malloc'ed (free()). */
sym_errc sym_index_build(const void *elf_data, size_t elf_size, const sym_build_options *opts,
			 void **blob, size_t *blob_size, sym_error *err);

typedef struct sym_index sym_index;

/* Validates a blob and wraps it; the blob must outlive the index (not copied). */
sym_errc sym_index_load(const void *blob, size_t size, sym_index **out, sym_error *err);
void sym_index_destroy(sym_index *idx);

/* What the index knows, for a service's per-mapping answer. */
enum {
	SYM_INDEX_HAS_FUNCTIONS = 1u << 0,
	SYM_INDEX_HAS_FILENAMES = 1u << 1,
	SYM_INDEX_HAS_LINE_NUMBERS = 1u << 2,
	SYM_INDEX_HAS_INLINE_FRAMES = 1u << 3,
	SYM_INDEX_FROM_DWARF = 1u << 4,   /* built from DWARF (not only symbols) */
	SYM_INDEX_FROM_PCLNTAB = 1u << 5, /* built from a Go pclntab (no DWARF) */
};

/* Where an index's functions and lines came from: DWARF, then a Go pclntab, then symbols. */
typedef enum sym_index_source {
	SYM_INDEX_SOURCE_NONE = 0,
	SYM_INDEX_SOURCE_DWARF,
	SYM_INDEX_SOURCE_PCLNTAB,
	SYM_INDEX_SOURCE_SYMTAB,
} sym_index_source;

/* "dwarf", "pclntab", "symtab" or "none". */
const char *sym_index_source_name(sym_index_source s);

typedef struct sym_index_info {
	sym_build_id build_id;
	uint32_t flags;          /* SYM_INDEX_HAS_* */
	uint32_t n_ranges;
	uint32_t n_functions;
	uint32_t n_loads;
	sym_elf_load loads[SYM_ELF_MAX_LOADS];  /* PT_LOAD segments of the file */
	uint16_t elf_type;       /* ET_REL (a kernel module, a .o), ET_EXEC, ET_DYN */
	uint32_t n_sections;     /* allocated sections known by name */
	uint64_t kernel_stext;   /* value of _stext in .symtab, 0 when none (a kernel image) */
	uint64_t kernel_text;    /* value of _text, 0 when none */
	sym_index_source source; /* what it was built from (from flags) */
} sym_index_info;

void sym_index_get_info(const sym_index *idx, sym_index_info *out);

/*
 * The index's string table: every string a sym_frame points to starts in
 * [*base, *base + *size), each distinct string once, NUL-terminated, one
 * after another (what a service numbers the strings by, svc_string_rank).
 */
void sym_index_strings(const sym_index *idx, const char **base, size_t *size);

/*
 * The address and size of the allocated section called name (the first of
 * that name): its sh_addr, or for an ET_REL file the address the index laid it
 * out at. An offset o within it is the address *addr + o. False when none.
 */
bool sym_index_section(const sym_index *idx, const char *name, uint64_t *addr, uint64_t *size);

/*
 * Whether the index's file table (the files its line tables and functions
 * name, as comp_dir joined with each name) holds path, compared in
 * base_path_canon's form; path is already canonical. What a debuginfod
 * server checks before it serves /buildid/ID/source/PATH: only the sources
 * the file's own debug info refers to.
 */
bool sym_index_names_file(const sym_index *idx, const char *path);

/* One frame of a symbolized address. Strings live in the blob; never NULL. */
typedef struct sym_frame {
	const char *name;          /* source-level name (DWARF DW_AT_name, or the symbol); "" unknown */
	const char *linkage_name;  /* mangled/linkage name; "" when none */
	const char *display_name;  /* demangled linkage name, else name: what llvm-symbolizer prints */
	const char *file;          /* "" when unknown */
	uint32_t line;             /* 0 when unknown */
	uint32_t column;           /* 0 when unknown */
	const char *decl_file;     /* the function's declaration file; "" when unknown */
	uint32_t decl_line;        /* the function's first line; 0 when unknown */
	uint32_t function_id;      /* stable index of the function in this index */
} sym_frame;

/*
 * Symbolizes an ELF virtual address: fills up to max frames, innermost first,
 * and returns the number of frames of the whole chain (which may exceed max).
 * 0 when nothing covers the address.
 */
size_t sym_index_lookup(const sym_index *idx, uint64_t addr, sym_frame *frames, size_t max);

/*
 * What a response names function id by, without the rest: its display name,
 * its system name (the linkage name, else the name) and its declaration
 * line. False (nothing set) for an id out of range.
 */
bool sym_index_function_names(const sym_index *idx, uint32_t id, const char **display,
			      const char **system, uint32_t *decl_line);

/*
 * Batch lookups, in two passes so that each overlaps its cache misses:
 * sym_index_find_batch searches the n addresses (every bucket row fetched
 * first, range starts 8 addresses ahead) and sets hits[i] to a handle of the
 * range covering addrs[i] (0 when none); sym_index_frames turns a handle into
 * frames exactly as sym_index_lookup does for its address. Between the two, a
 * caller walking the hits calls sym_index_prefetch_hit(idx, hits[i + 8], 0)
 * (starts fetching the scope and file rows) and sym_index_prefetch_hit(idx,
 * hits[i + 4], 1) (reads the scope row, fetches the function row and the
 * parent scope) before sym_index_frames(idx, hits[i], ...). Any handle from
 * the same index is fine for either.
 */
void sym_index_find_batch(const sym_index *idx, const uint64_t *addrs, size_t n, uint32_t *hits);
void sym_index_prefetch_hit(const sym_index *idx, uint32_t hit, unsigned stage);
size_t sym_index_frames(const sym_index *idx, uint32_t hit, sym_frame *frames, size_t max);

/*
 * A frame as numbers, for a caller that names each function and file once
 * (a response's tables) rather than at every frame: the frame's function_id
 * (SYM_INDEX_NO_FUNCTION when unknown; sym_index_function_names names it),
 * its file as an id of the index's file table (0 is ""; sym_index_file gives
 * the name, the string a sym_frame's file points to), line and column.
 * sym_index_frame_ids_batch walks handles' chains (sym_index_find_batch)
 * exactly as sym_index_frames does, without reading the names.
 */
#define SYM_INDEX_NO_FUNCTION UINT32_MAX

typedef struct sym_frame_ids {
	uint32_t function_id, file_id, line, column;
} sym_frame_ids;

/*
 * The chains of several handles in one call (the walk inlined in its loop):
 * the chain of hits[i], at most max_each frames of it, goes to frames +
 * first[i], and the chain's whole length to counts[i]. Handles are taken in
 * order while the cap frames leave room for max_each more; returns how many
 * were (all n when cap >= n * max_each).
 */
size_t sym_index_frame_ids_batch(const sym_index *idx, const uint32_t *hits, size_t n,
				 size_t max_each, sym_frame_ids *frames, size_t cap,
				 uint32_t *first, uint32_t *counts);
/* The name of file id (a sym_frame_ids' file_id); "" for an id out of range. */
const char *sym_index_file(const sym_index *idx, uint32_t file_id);
/* The number of files (ids 0 to n - 1). */
uint32_t sym_index_file_count(const sym_index *idx);

/* The format version this build writes and loads (a shared cache keys indexes by it). */
unsigned sym_index_format_version(void);

#endif
