/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_gopclntab: a reader of Go's pclntab, the table the Go runtime uses for
 * its own tracebacks (function names, file:line per PC, the inline tree), as
 * Go's sources define it (debug/gosym/pclntab.go, runtime/symtab.go,
 * runtime/symtabinl.go, cmd/link/internal/ld/pcln.go):
 *
 *   magic 0xfffffffb  Go 1.2-1.15: one table; offsets from its start, a global file table;
 *                     an inline tree since 1.12 (inlinedCall as 1.16's, its func_ an
 *                     offset into the table), at PCDATA 1 / FUNCDATA 2 in 1.12 and
 *                     PCDATA 2 / FUNCDATA 4 in 1.13-1.15 (told apart by 1.13's
 *                     build-info blob); none read for Go 1.2-1.11
 *   magic 0xfffffffa  Go 1.16-1.17: funcname, cu, file, pc and func tables
 *   magic 0xfffffff0  Go 1.18-1.19: + textStart; entries are offsets from it;
 *                     funcdata offsets from moduledata.gofunc
 *   magic 0xfffffff1  Go 1.20+: _func gains startLine; inlinedCall has no parent/file/line
 *
 * Pure computation over bytes the caller holds: every offset and count is
 * checked against the table (and the memory segments for funcdata), so a
 * hostile table gives an error or "unknown", never a read outside it or a
 * loop that does not end. The ELF side (finding the table and the module data)
 * is sym_gopclntab_find.c; turning it into index records sym_gopclntab_collect.c.
 */
#ifndef SYM_GOPCLNTAB_IMPL_H
#define SYM_GOPCLNTAB_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

enum { SYM_GOPCLN_12 = 12, SYM_GOPCLN_116 = 116, SYM_GOPCLN_118 = 118, SYM_GOPCLN_120 = 120 };

/* Caps whatever the table claims. */
#define SYM_GOPCLN_MAX_FUNCS ((uint64_t)1 << 24)
#define SYM_GOPCLN_MAX_PCDATA 4096
#define SYM_GOPCLN_MAX_INL_INDEX ((int32_t)1 << 20)

/* Runtime constants (runtime/symtab.go, internal/abi): 1.13+ PCDATA, 1.16+ FUNCDATA. */
#define SYM_GOPCLN_PCDATA_INLTREE 2
#define SYM_GOPCLN_FUNCDATA_INLTREE 3
/* ... Go 1.13-1.15's FUNCDATA (RegPointerMaps 2, StackObjects 3 before it) */
#define SYM_GOPCLN_FUNCDATA_INLTREE_113 4
/* ... Go 1.12's (StackMapIndex 0, InlTreeIndex 1, RegMapIndex 2) */
#define SYM_GOPCLN_PCDATA_INLTREE_112 1
#define SYM_GOPCLN_FUNCDATA_INLTREE_112 2

/* A piece of the file's memory image: PT_LOAD contents, for funcdata pointers. */
typedef struct sym_gopcln_seg {
	uint64_t vaddr;
	const uint8_t *data;
	size_t size;
} sym_gopcln_seg;

typedef struct sym_gopcln {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;          /* where the table is in memory (0 unknown) */
	int version;             /* SYM_GOPCLN_* */
	bool big_endian;
	uint8_t quantum, ptrsize;
	uint64_t nfunc;
	uint64_t text_start;     /* 1.18+: base of entry offsets */
	bool text_from_header;   /* ... as the header gives it (else the caller's guess) */
	/* tables as [off, end) within data */
	uint64_t name_off, name_end, cu_off, cu_end, file_off, file_end, pc_off, pc_end;
	uint64_t func_off, func_end;  /* _func records (the pclntable) */
	uint64_t ftab_off;            /* functab: nfunc pairs and an end entry */
	uint64_t nfiles;              /* 1.2: entries of the global file table */
	/* For funcdata (the inline tree): the image's segments, and 1.18+'s gofunc. */
	const sym_gopcln_seg *segs;
	size_t nsegs;
	uint64_t gofunc;              /* 0 unknown: no inline trees for 1.18+ */
	bool buildinfo;               /* the image holds the build-info blob (Go 1.13+) */
} sym_gopcln;

/* One function (a _func record). */
typedef struct sym_gopcln_func {
	uint64_t entry, end;
	uint32_t nameoff, pcfile, pcln, npcdata, cu_offset;
	uint32_t nfuncdata;
	uint64_t pcdata_at;      /* offset in data of pcdata[0] */
	uint64_t funcdata_at;    /* offset in data of funcdata[0] */
} sym_gopcln_func;

/*
 * Parses the header of the table in data[0, size). text_start is the address
 * of the text for 1.18+ tables whose header holds none (0: the header's).
 */
sym_errc sym_gopcln_open(sym_gopcln *t, const void *data, size_t size, uint64_t vaddr,
			 uint64_t text_start, sym_error *err);

/* Whether data starts like a pclntab header (magic, pads, quantum, pointer size). */
bool sym_gopcln_looks_like(const uint8_t *data, size_t size);

/* Function i (< t->nfunc): its record; an error if any of it lies outside the table. */
sym_errc sym_gopcln_func_at(const sym_gopcln *t, uint64_t i, sym_gopcln_func *f, sym_error *err);

/* The NUL-terminated name at nameoff, NULL when out of range or unterminated. */
const char *sym_gopcln_name(const sym_gopcln *t, uint32_t nameoff);

/* The file name of file number fileno of f (its pcfile value), NULL when unknown. */
const char *sym_gopcln_file(const sym_gopcln *t, const sym_gopcln_func *f, int32_t fileno);

/* Offset of pcdata table k of f (in the pc table), 0 when none. */
uint32_t sym_gopcln_pcdata(const sym_gopcln *t, const sym_gopcln_func *f, uint32_t k);

/*
 * A walk over one pc-value table: runs [lo, hi) of one value, in order,
 * starting at the function's entry and clipped to its end. Bounded by the
 * table's bytes: each step reads at least two.
 */
typedef struct sym_gopcln_pcv {
	const sym_gopcln *t;
	uint64_t p, end;         /* cursor in data, end of the pc table */
	uint64_t pc, fend;
	int32_t val;
	bool first, done;
	uint64_t steps;          /* steps read so far: the caller's work budget */
} sym_gopcln_pcv;

void sym_gopcln_pcv_init(sym_gopcln_pcv *it, const sym_gopcln *t, uint32_t off,
			 const sym_gopcln_func *f);
/* 1 and a run, 0 at the end, -1 when the table is corrupt. */
int sym_gopcln_pcv_next(sym_gopcln_pcv *it, uint64_t *lo, uint64_t *hi, int32_t *val);

/* The value of table off at pc, as the runtime's pcvalue: -1 when none; adds the
 * steps read to *steps (may be NULL). */
int32_t sym_gopcln_pcvalue(const sym_gopcln *t, uint32_t off, const sym_gopcln_func *f, uint64_t pc,
			   uint64_t *steps);

/* One inlined call of f's inline tree. */
typedef struct sym_gopcln_inl {
	uint32_t nameoff;        /* of the inlined (called) function */
	int32_t parent_pc;       /* offset from entry of an instruction at the call site */
} sym_gopcln_inl;

/* Offset of f's inline-index pc-value table (PCDATA_InlTreeIndex), 0 when none. */
uint32_t sym_gopcln_inl_pcdata(const sym_gopcln *t, const sym_gopcln_func *f);
/* Whether f has an inline tree that this reader can reach. */
bool sym_gopcln_has_inltree(const sym_gopcln *t, const sym_gopcln_func *f);
/* Entry ix of f's inline tree; false when absent or outside the image. */
bool sym_gopcln_inl_at(const sym_gopcln *t, const sym_gopcln_func *f, int32_t ix,
		       sym_gopcln_inl *out);

#endif
