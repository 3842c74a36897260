// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: a Go pclntab -> sym_gopcln_open -> every function's
 * record, names, files, pc-value tables and inline tree -> sym_gopcln_collect.
 * The input is the table followed by the go:func.* bytes its inline trees
 * point into (the gofunc address), the last byte giving their length; the
 * seeds are tests/unit/symbolizer/gopclntab_synth.c's tables (1.16, 1.18,
 * 1.20 layouts, with and without a cycle in the inline tree). Each part is an
 * exact-size heap copy, so a read past either is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_gopclntab_collect_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GOFUNC_ADDR 0x10000u
#define TAB_ADDR 0x500000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t glen = data[size - 1];
	if (glen > size - 1)
		glen = size - 1;
	size_t tlen = size - 1 - glen;
	uint8_t *tab = malloc(tlen ? tlen : 1), *gofunc = malloc(glen ? glen : 1);
	if (!tab || !gofunc)
		goto out;
	memcpy(tab, data, tlen);
	memcpy(gofunc, data + tlen, glen);
	sym_gopcln t;
	if (sym_gopcln_open(&t, tab, tlen, TAB_ADDR, 0x401000, NULL) != SYM_OK)
		goto out;
	sym_gopcln_seg seg = {GOFUNC_ADDR, gofunc, glen};
	t.segs = &seg;
	t.nsegs = 1;
	t.gofunc = GOFUNC_ADDR;
	t.buildinfo = size & 1;   /* 1.2 tables: Go 1.13-1.15's inline slots, or 1.12's */
	for (uint64_t i = 0; i < t.nfunc && i < 64; i++) {
		sym_gopcln_func f;
		if (sym_gopcln_func_at(&t, i, &f, NULL) != SYM_OK)
			continue;
		const char *n = sym_gopcln_name(&t, f.nameoff);
		const char *file = sym_gopcln_file(&t, &f, sym_gopcln_pcvalue(&t, f.pcfile, &f, f.entry, NULL));
		if (n && file && strlen(n) + strlen(file) == SIZE_MAX)
			abort();   /* unreachable: the strings are read whole */
		sym_gopcln_inl inl;
		for (int32_t ix = 0; ix < 4; ix++)
			sym_gopcln_inl_at(&t, &f, ix, &inl);
	}
	sym_collect c;
	if (sym_collect_init(&c) == 0) {
		sym_error err;
		sym_gopcln_collect(&t, &c, &err);
		sym_collect_deinit(&c);
	}
out:
	free(tab);
	free(gofunc);
	return 0;
}
