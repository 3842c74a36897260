// SPDX-License-Identifier: Apache-2.0
/*
 * src_check: the check every file goes through before it is trusted
 * (src_source.h): local finds, upstream downloads and uploads use this one.
 */
#include "source/src_source.h"
#include "symbolizer/sym_file_id.h"

/* A file asked for by its Go build ID or file hash: it must have that one. */
static sym_errc check_other_kind(const void *data, size_t size, const sym_build_id *want,
				 const sym_elf_info *info, src_kind *kind, sym_error *err)
{
	sym_build_id ids[SYM_ID_KINDS];
	size_t n = sym_file_ids(data, size, ids);
	for (size_t i = 0; i < n; i++)
		if (sym_build_id_equal(&ids[i], want)) {
			*kind = info->has_debug_info ? SRC_KIND_DEBUGINFO : SRC_KIND_EXECUTABLE;
			return SYM_OK;
		}
	return sym_error_set(err, SYM_E_BAD_ELF, "build ID mismatch (the file has no such %s identity)",
			     sym_id_kind_name(want->kind));
}

sym_errc src_check_file(const void *data, size_t size, const sym_build_id *want, src_kind *kind,
			sym_elf_info *info, sym_error *err)
{
	*kind = SRC_KIND_EXECUTABLE;
	sym_errc rc = sym_elf_probe(data, size, info, err);
	if (rc != SYM_OK)
		return rc;
	if (want->kind != SYM_ID_GNU)
		return check_other_kind(data, size, want, info, kind, err);
	if (info->build_id.len == 0)
		return sym_error_set(err, SYM_E_BAD_ELF, "no GNU build-ID note");
	if (!sym_build_id_equal(&info->build_id, want)) {
		char got[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&info->build_id, got);
		return sym_error_set(err, SYM_E_BAD_ELF, "build ID mismatch (file has %.64s)", got);
	}
	*kind = info->has_debug_info ? SRC_KIND_DEBUGINFO : SRC_KIND_EXECUTABLE;
	return SYM_OK;
}
