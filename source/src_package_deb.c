// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_deb: the open function of the "deb" row of the format table
 * (.deb, and Ubuntu's .ddeb): the ar archive read by hand with every size
 * checked, up to its data.tar.* member, which is the payload.
 */
#include "source/src_package_impl.h"

#include <string.h>

/* A decimal ar field (spaces after the digits). */
static bool ar_number(const char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < n && f[i] >= '0' && f[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(f[i] - '0');
	}
	if (i == 0)
		return false;
	for (; i < n; i++)
		if (f[i] != ' ')
			return false;
	*out = v;
	return true;
}

sym_errc src_pkg_open_deb(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			  sym_error *err)
{
	uint64_t pos = 8;  /* past "!<arch>\n" */
	for (int n = 0; n < 64 && pos < file_size; n++) {
		char h[60];
		if (file_size - pos < 60 || src_pread(fd, h, 60, pos, err))
			return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err,
					    "ar: truncated member header");
		uint64_t size;
		if (h[58] != '`' || h[59] != '\n' || !ar_number(h + 48, 10, &size))
			return src_pkg_fail(reason, SRC_PKG_E_BAD_CONTAINER, err,
					    "ar: bad member header");
		pos += 60;
		if (size > file_size - pos)
			return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err,
					    "ar: member larger than the file (lying size)");
		if (!memcmp(h, "data.tar", 8)) {
			l->payload_off = pos;
			l->payload_size = size;
			return SYM_OK;
		}
		pos += size + (size & 1);
	}
	return src_pkg_fail(reason, SRC_PKG_E_BAD_CONTAINER, err, "deb: no data.tar member");
}
