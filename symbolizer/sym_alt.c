// SPDX-License-Identifier: Apache-2.0
/*
 * sym_alt: finding and checking a dwz supplementary file (sym_alt_impl.h).
 */
#include "symbolizer/sym_alt_impl.h"

sym_errc sym_alt_find(const sym_elf_info *info, sym_alt_resolver resolver, void *ctx,
		      const void **data, size_t *size, sym_error *err)
{
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&info->alt_build_id, hex);
	*data = NULL;
	*size = 0;
	if (!resolver || !resolver(ctx, &info->alt_build_id, info->alt_path, data, size))
		return sym_error_set(err, SYM_E_MISSING_ALT,
				     "dwz supplementary file %s (build ID %s) not available",
				     info->alt_path, hex);
	sym_elf_info ai;
	sym_errc rc = sym_elf_probe(*data, *size, &ai, err);
	if (rc) {
		sym_error_prefix(err, "dwz supplementary file %s", hex);
		return rc;
	}
	if (!sym_build_id_equal(&ai.build_id, &info->alt_build_id))
		return sym_error_set(err, SYM_E_MISSING_ALT,
				     "dwz supplementary file: build ID differs from %s", hex);
	return SYM_OK;
}

void sym_alt_error_prefix(const sym_elf_info *info, sym_error *err)
{
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&info->alt_build_id, hex);
	sym_error_prefix(err, "dwz supplementary file %s", hex);
}
