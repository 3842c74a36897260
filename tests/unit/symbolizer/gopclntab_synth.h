/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gopclntab_synth: a small synthetic Go pclntab (and the go:func.* bytes its
 * inline tree lives in), in the 1.2, 1.16, 1.18 or 1.20 layout, for the reader's
 * unit tests and the fuzzer's seed corpus. Two functions at text 0x401000:
 *   main.outer [0x401000, 0x401040) a.go: line 10 / 20 / 30 per 0x10 bytes;
 *     [0x10, 0x20) inside inlined main.inl[go.shape.int_0] (called at a.go:10),
 *     [0x20, 0x30) inside main.f2 inlined into it (called at a.go:20)
 *   main.leaf  [0x401040, 0x401060) b.go:5
 */
#ifndef GOPCLNTAB_SYNTH_H
#define GOPCLNTAB_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#define SYNTH_TEXT 0x401000u
#define SYNTH_GOFUNC 0x10000u

typedef struct synth {
	uint8_t tab[1024];
	size_t tab_len;
	uint8_t gofunc[64];
	size_t gofunc_len;
	/* offsets in tab of fields a test may corrupt */
	size_t off_header_nfunc, off_func0, off_func1, off_ftab;
} synth;

/* version: 116, 118 or 120; cycle: node 0's parentPc points into itself. */
void synth_build(synth *s, int version, int cycle);

/*
 * The same two functions in the 1.2 layout (magic 0xfffffffb: one table, a
 * global file table, funcdata as pointers), with the inline tree where Go
 * puts it: go: 115 (Go 1.13-1.15: PCDATA 2, FUNCDATA 4), 112 (Go 1.12:
 * PCDATA 1, FUNCDATA 2), 111 (Go 1.9-1.11's slots and 16-byte inlinedCall
 * {parent int32, file, line, func_}, no parentPc: not read).
 */
void synth_build_12(synth *s, int go);

#endif
