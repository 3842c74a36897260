// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_rpm: the open function of the "rpm" row of the format table:
 * the 96-byte lead, the signature header (padded to 8 bytes) and the main
 * header, each size checked; the cpio payload follows them to the end.
 */
#include "source/src_package_impl.h"

#include <string.h>

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The rpm header at *pos; moves *pos past it (and its padding when pad). */
static sym_errc rpm_header(int fd, uint64_t file_size, uint64_t *pos, bool pad,
			   src_pkg_reason *reason, sym_error *err)
{
	uint8_t h[16];
	if (file_size - *pos < 16 || src_pread(fd, h, 16, *pos, err))
		return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err, "rpm: truncated header");
	if (memcmp(h, "\x8e\xad\xe8\x01", 4))
		return src_pkg_fail(reason, SRC_PKG_E_BAD_CONTAINER, err, "rpm: bad header magic");
	uint64_t nindex = be32(h + 8), hsize = be32(h + 12);
	if (nindex > 100000 || hsize > (256u << 20))
		return src_pkg_fail(reason, SRC_PKG_E_TOO_LARGE, err, "rpm: header over the caps");
	uint64_t len = 16 + nindex * 16 + hsize;
	if (pad)
		len = (len + 7) & ~(uint64_t)7;
	if (len > file_size - *pos)
		return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err,
				    "rpm: header larger than the file");
	*pos += len;
	return SYM_OK;
}

sym_errc src_pkg_open_rpm(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			  sym_error *err)
{
	uint64_t pos = 96;  /* the lead */
	sym_errc rc = rpm_header(fd, file_size, &pos, true, reason, err);
	if (!rc)
		rc = rpm_header(fd, file_size, &pos, false, reason, err);
	l->payload_off = pos;
	l->payload_size = file_size - pos;
	l->is_cpio = 1;
	return rc;
}
