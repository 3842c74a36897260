/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llvm_format: prints frames in llvm-symbolizer's default (LLVM) output style,
 * so symbolctl's answers diff cleanly against `llvm-symbolizer --obj=FILE`:
 * per address, a function line and a `file:line:column` line per frame,
 * innermost first, then an empty line; `??` and `??:0:0` where unknown.
 */
#ifndef SYMBOLCTL_LLVM_FORMAT_H
#define SYMBOLCTL_LLVM_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base_buf.h"

typedef struct llvm_frame {
	const char *function;  /* NULL or "" prints ?? */
	const char *file;      /* NULL or "" prints ?? */
	uint32_t line, column;
} llvm_frame;

void llvm_format_frames(FILE *out, const llvm_frame *frames, size_t n);
/* The same answer appended to out; false when out is full or memory is. */
bool llvm_format_append(base_buf *out, const llvm_frame *frames, size_t n);

/* Parses a hex address, with or without 0x, surrounded by blanks. 0 on success. */
int llvm_format_parse_address(const char *s, uint64_t *out);

#endif
