// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: an ELF image -> sym_layout_build -> sym_layout_load ->
 * every type, its members and a field path. A built blob must always load.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so reads past the end are caught. */
	uint8_t *img = malloc(size ? size : 1);
	if (!img)
		return 0;
	memcpy(img, data, size);
	sym_layout_options o = {.max_decompressed_bytes = 64u << 20};
	void *blob = NULL;
	size_t bs = 0;
	sym_error err;
	if (sym_layout_build(img, size, &o, &blob, &bs, &err) == SYM_OK) {
		sym_layout *l = NULL;
		if (sym_layout_load(blob, bs, &l, &err) != SYM_OK)
			abort(); /* the builder wrote a blob its own loader refuses */
		for (uint32_t t = 0; t < sym_layout_type_count(l); t++) {
			sym_layout_type_info ti;
			sym_layout_member_info m;
			sym_layout_field f;
			uint32_t found[4];
			if (!sym_layout_type(l, t, &ti))
				abort();
			sym_layout_find(l, ti.name, found, 4);
			for (uint32_t i = 0; i < ti.n; i++)
				if (!sym_layout_member(l, ti.first + i, &m))
					abort();
			sym_layout_field_in(l, t, "a.b", &f, NULL);
		}
		sym_layout_destroy(l);
		free(blob);
	}
	free(img);
	return 0;
}
