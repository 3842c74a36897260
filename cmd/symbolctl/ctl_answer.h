/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_answer: symbolctl addr2line's answers to a run of input lines, in
 * llvm-symbolizer's format (llvm_format.h), written in input order. The
 * lines' addresses are searched as one batch (sym_index_find_batch, its
 * misses overlapped) and a long run is split in two halves answered on two
 * threads, so a file of addresses costs the searches and the formatting, not
 * a printf and a write per address.
 */
#ifndef SYMBOLCTL_CTL_ANSWER_H
#define SYMBOLCTL_CTL_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "symbolizer/sym_index.h"

typedef struct ctl_answer_opts {
	const sym_index *idx;
	bool section;                 /* addresses are offsets within [sec_base, +sec_size) */
	uint64_t sec_base, sec_size;
	bool no_inlines, no_demangle;
} ctl_answer_opts;

/* Where the answers go, in order: false when they could not be written. */
typedef bool (*ctl_answer_write)(void *arg, const void *data, size_t len);

/*
 * Answers lines[0..n) (NUL-terminated, no newline) through write, in order,
 * in pieces of about a megabyte formatted in scratch (the caller's, kept
 * between calls) and, for a long run's second half, one piece at the end. A
 * line that is not a hex address is named on stderr and answered `??` so the
 * output lines up; *n_bad counts them. false when out of memory or a write
 * failed.
 */
bool ctl_answer_lines(const ctl_answer_opts *o, char *const *lines, size_t n, base_buf *scratch,
		      ctl_answer_write write, void *arg, size_t *n_bad);

#endif
