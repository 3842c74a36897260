// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_extract: one member of a package, from its position in the
 * payload (src_package.h): the xz blocks that overlap it, a pread for an
 * uncompressed payload, else a stream from the start up to that member.
 */
#include "source/src_package_impl.h"

#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Streams the payload to the entry named member_path at offset; reads it. */
static sym_errc extract_stream(int fd, const src_pkg_layout *l, const char *member_path,
			       uint64_t offset, uint64_t size, uint8_t *out, sym_error *err)
{
	src_pkg_stream *st = NULL;
	struct archive *a = NULL;
	sym_errc rc = src_pkg_stream_open(fd, l, &st, &a, err);
	if (rc)
		return rc;
	rc = sym_error_set(err, SYM_E_INVALID, "member %.200s: not in the package", member_path);
	struct archive_entry *e;
	char path[PATH_MAX];
	while (archive_read_next_header(a, &e) >= ARCHIVE_WARN) {
		uint64_t at = (uint64_t)archive_filter_bytes(a, 0);
		if (at > offset)
			break;
		const char *raw = archive_entry_pathname(e);
		if (at != offset || !raw || !src_pkg_normalize(raw, path, sizeof(path)) ||
		    strcmp(path, member_path))
			continue;
		size_t got = 0;
		while (got < size) {
			la_ssize_t r = archive_read_data(a, out + got, (size_t)(size - got));
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		rc = got == size ? SYM_OK
				 : sym_error_set(err, SYM_E_INVALID, "member %.200s: truncated",
						 member_path);
		break;
	}
	src_pkg_stream_close(st, a);
	return rc;
}

sym_errc src_package_extract(int fd, const src_pkg_layout *layout, const char *member_path,
			     uint64_t offset, uint64_t size, void **data, sym_error *err)
{
	*data = NULL;
	if (size > SIZE_MAX - 1)
		return sym_error_set(err, SYM_E_TOO_LARGE, "member too large");
	uint8_t *out = malloc(size ? (size_t)size : 1);
	if (!out)
		return sym_error_set(err, SYM_E_NOMEM, "member %.200s: out of memory", member_path);
	sym_errc rc;
	if (layout->comp == SRC_PKG_COMP_NONE) {
		if (offset > layout->payload_size || size > layout->payload_size - offset)
			rc = sym_error_set(err, SYM_E_INVALID, "member outside the payload");
		else
			rc = src_pread(fd, out, (size_t)size, layout->payload_off + offset, err);
	} else if (src_pkg_layout_random(layout)) {
		rc = src_xz_decode_range(fd, layout->payload_off, &layout->xz, offset, out,
					 (size_t)size, err);
	} else {
		rc = extract_stream(fd, layout, member_path, offset, size, out, err);
	}
	if (rc) {
		free(out);
		return rc;
	}
	*data = out;
	return SYM_OK;
}
