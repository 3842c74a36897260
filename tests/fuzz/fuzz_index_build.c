// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: an ELF image (with DWARF, compressed sections, symbols) ->
 * sym_index_build -> sym_index_load -> lookups. A built blob must always load,
 * and every string a lookup returns must be valid UTF-8 (responses carry them
 * as proto3 strings; the seed garbage_str has a .debug_str that is not UTF-8).
 * Also the build memory estimate of the same image (sym_inflate_estimate, read
 * by the daemon before every build).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_utf8.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_inflate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int utf8(const char *s)
{
	return base_utf8_valid(s, strlen(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so reads past the end are caught. */
	uint8_t *img = malloc(size ? size : 1);
	if (!img)
		return 0;
	memcpy(img, data, size);
	uint64_t debug_bytes, inflated_bytes;
	sym_error eerr;
	sym_inflate_estimate(img, size, &debug_bytes, &inflated_bytes, &eerr);
	sym_build_options o = {.max_decompressed_bytes = 64u << 20, .threads = 1};
	void *blob = NULL;
	size_t bs = 0;
	sym_error err;
	if (sym_index_build(img, size, &o, &blob, &bs, &err) == SYM_OK) {
		sym_index *idx = NULL;
		if (sym_index_load(blob, bs, &idx, &err) != SYM_OK)
			abort(); /* the builder wrote a blob its own loader refuses */
		sym_index_info info;
		sym_index_get_info(idx, &info);
		sym_frame f[16];
		for (uint64_t a = 0; a < 0x3000; a += 5) {
			size_t n = sym_index_lookup(idx, a, f, 16);
			for (size_t i = 0; i < n && i < 16; i++)
				if (!utf8(f[i].name) || !utf8(f[i].linkage_name) ||
				    !utf8(f[i].display_name) || !utf8(f[i].file) ||
				    !utf8(f[i].decl_file))
					abort();
		}
		sym_index_destroy(idx);
		free(blob);
	}
	free(img);
	return 0;
}
