// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_answer: a run of addr2line's input lines answered as one batch (see
 * ctl_answer.h). Lines are parsed first, in order (bad ones named on stderr
 * then); the addresses are searched in batches of BATCH and each answer
 * formatted straight into a buffer, handed to the writer each FLUSH bytes (a
 * megabyte reused, not the whole output grown and copied). A run of at least
 * SPLIT lines is answered in two halves, the second on its own thread into
 * its own buffer, written after the first: the same bytes either way.
 */
#include "cmd/symbolctl/ctl_answer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/symbolctl/llvm_format.h"

enum { BATCH = 256, SPLIT = 4096, MAX_FRAMES = 256, FLUSH = 1 << 20 };

/* What a line asks: a parsed address (ok) or a bad line (answered ??). */
struct half {
	const ctl_answer_opts *o;
	const uint64_t *addrs;
	const bool *ok;
	size_t n;
	base_buf out;
	ctl_answer_write write;  /* NULL: out keeps the whole half */
	void *arg;
	bool failed;
};

/* The frames of one hit, as llvm_format prints them. */
static size_t to_llvm(const ctl_answer_opts *o, const sym_frame *frames, size_t n, llvm_frame *out)
{
	for (size_t i = 0; i < n; i++) {
		const sym_frame *f = &frames[i];
		const char *name = o->no_demangle ? (*f->linkage_name ? f->linkage_name : f->name)
						  : f->display_name;
		out[i] = (llvm_frame){name, f->file, f->line, f->column};
	}
	if (o->no_inlines && n > 1) {
		/* One frame: the location, named by the function the code belongs to. */
		out[0].function = out[n - 1].function;
		n = 1;
	}
	return n;
}

/* An address of the index: the section's base added, or none (UINT64_MAX). */
static uint64_t index_address(const ctl_answer_opts *o, uint64_t addr)
{
	if (!o->section)
		return addr;
	return addr < o->sec_size ? o->sec_base + addr : UINT64_MAX;
}

static void *answer_half(void *arg)
{
	struct half *h = arg;
	const ctl_answer_opts *o = h->o;
	uint64_t addrs[BATCH];
	uint32_t hits[BATCH];
	sym_frame frames[MAX_FRAMES];
	llvm_frame out[MAX_FRAMES];
	for (size_t base = 0; base < h->n && !h->failed; base += BATCH) {
		size_t m = h->n - base < BATCH ? h->n - base : BATCH;
		for (size_t i = 0; i < m; i++)
			addrs[i] = h->ok[base + i] ? index_address(o, h->addrs[base + i]) : UINT64_MAX;
		sym_index_find_batch(o->idx, addrs, m, hits);
		for (size_t i = 0; i < m; i++) {
			if (i + 8 < m)
				sym_index_prefetch_hit(o->idx, hits[i + 8], 0);
			if (i + 4 < m)
				sym_index_prefetch_hit(o->idx, hits[i + 4], 1);
			size_t n = 0;
			if (hits[i] && addrs[i] != UINT64_MAX) {
				n = sym_index_frames(o->idx, hits[i], frames, MAX_FRAMES);
				n = to_llvm(o, frames, n < MAX_FRAMES ? n : MAX_FRAMES, out);
			}
			if (!llvm_format_append(&h->out, out, n)) {
				h->failed = true;
				break;
			}
		}
		if (h->write && h->out.len >= FLUSH && !h->failed) {
			h->failed = !h->write(h->arg, h->out.data, h->out.len);
			h->out.len = 0;
		}
	}
	return NULL;
}

bool ctl_answer_lines(const ctl_answer_opts *o, char *const *lines, size_t n, base_buf *scratch,
		      ctl_answer_write write, void *arg, size_t *n_bad)
{
	if (n == 0)
		return true;
	uint64_t *addrs = malloc(n * sizeof(*addrs));
	bool *ok = malloc(n * sizeof(*ok));
	bool done = false;
	if (!addrs || !ok)
		goto out;
	for (size_t i = 0; i < n; i++) {
		ok[i] = llvm_format_parse_address(lines[i], &addrs[i]) == 0;
		if (!ok[i]) {
			/* symbolctl's one rule for a bad line (symbolize too): echoed on
			 * stderr, answered ?? so the output lines up, exit status 1. */
			fprintf(stderr, "symbolctl addr2line: not a hex address: %s\n", lines[i]);
			(*n_bad)++;
		}
	}
	size_t first = n >= SPLIT ? n / 2 : n;
	scratch->len = 0;
	struct half a = {o, addrs, ok, first, *scratch, write, arg, false};
	struct half b = {o, addrs + first, ok + first, n - first, {0}, NULL, NULL, false};
	base_buf_init(&b.out, SIZE_MAX);
	pthread_t t;
	bool threaded = b.n && pthread_create(&t, NULL, answer_half, &b) == 0;
	if (b.n && !threaded)
		answer_half(&b);
	answer_half(&a);
	if (threaded)
		pthread_join(t, NULL);
	*scratch = a.out;
	done = !a.failed && !b.failed && (!a.out.len || write(arg, a.out.data, a.out.len)) &&
	       (!b.out.len || write(arg, b.out.data, b.out.len));
	scratch->len = 0;
	base_buf_deinit(&b.out);
out:
	free(addrs);
	free(ok);
	return done;
}
