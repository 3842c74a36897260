// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: a layout blob from an untrusted store -> sym_layout_load ->
 * queries (names and field paths taken from the input's own strings). Loading
 * either refuses or yields a handle every query can walk without leaving it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Children ranges may overlap in a hostile blob: the walk is budgeted. */
static void walk(const sym_layout *l, uint32_t first, uint32_t n, int depth, unsigned *budget)
{
	for (uint32_t i = 0; i < n && depth < 80 && *budget; i++) {
		(*budget)--;
		sym_layout_member_info m;
		if (!sym_layout_member(l, first + i, &m))
			abort(); /* a validated blob's member ids are all valid */
		for (uint32_t d = 0; d < m.n_dims; d++)
			(void)m.dims[d];
		walk(l, m.first, m.n, depth + 1, budget);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *blob = malloc(size ? size : 1);
	if (!blob)
		return 0;
	memcpy(blob, data, size);
	sym_layout *l = NULL;
	if (sym_layout_load(blob, size, &l, NULL) == SYM_OK) {
		for (uint32_t t = 0; t < sym_layout_type_count(l) && t < 32; t++) {
			sym_layout_type_info ti;
			sym_layout_field f;
			uint32_t found[4];
			if (!sym_layout_type(l, t, &ti))
				abort();
			unsigned budget = 100000;
			walk(l, ti.first, ti.n, 0, &budget);
			sym_layout_find(l, ti.name, found, 4);
			sym_layout_field_in(l, t, "a.b.c", &f, NULL);
		}
		char path[64];
		size_t n = size < sizeof(path) - 1 ? size : sizeof(path) - 1;
		memcpy(path, data, n);
		path[n] = '\0';
		sym_layout_field f;
		sym_layout_field_path(l, path, &f, NULL);
		sym_layout_destroy(l);
	}
	free(blob);
	return 0;
}
