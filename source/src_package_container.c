// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_container: the outer layer of a package: its format sniffed
 * by magic from the table (src_package_format.h), whose open function finds
 * the payload (src_package_deb.c, src_package_rpm.c); then the payload's
 * compression, from its first bytes. Also the layout's serialized form for the
 * catalogue and the reason names.
 */
#include "source/src_package_impl.h"
#include "source/src_package_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

sym_errc src_pkg_fail(src_pkg_reason *reason, src_pkg_reason r, sym_error *err, const char *msg)
{
	*reason = r;
	return sym_error_set(err, r == SRC_PKG_E_IO ? SYM_E_IO : SYM_E_INVALID, "%s", msg);
}

static const char *const reason_names[SRC_PKG_E_COUNT] = {
	"ok", "io", "truncated", "bad_container", "bad_xz_index", "too_large", "bad_path",
	"too_many_members", "timeout", "nomem",
};

const char *src_pkg_reason_name(src_pkg_reason r)
{
	return (unsigned)r < SRC_PKG_E_COUNT ? reason_names[r] : "unknown";
}

void src_pkg_limits_init(src_pkg_limits *l)
{
	l->max_members = 1000000;
	l->max_member_size = 16ull << 30;
	l->max_ratio = 1000;
	l->max_probe = 128ull << 20;
	l->max_ms = 30 * 60 * 1000;
}

/* The compression of a payload, from its first bytes. */
static src_pkg_comp sniff(const uint8_t *m, size_t n)
{
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return SRC_PKG_COMP_XZ;
	if (n >= 4 && !memcmp(m, "\x28\xb5\x2f\xfd", 4))
		return SRC_PKG_COMP_ZSTD;
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		return SRC_PKG_COMP_GZIP;
	if (n >= 3 && !memcmp(m, "BZh", 3))
		return SRC_PKG_COMP_BZIP2;
	return SRC_PKG_COMP_NONE;
}

sym_errc src_pkg_locate(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			sym_error *err)
{
	uint8_t m[SRC_PKG_MAGIC_MAX] = {0};
	if (file_size < SRC_PKG_MIN_SIZE || src_pread(fd, m, sizeof(m), 0, err))
		return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err, "package: too short");
	const src_pkg_format *f = src_pkg_format_sniff(m, sizeof(m));
	if (!f)
		return src_pkg_fail(reason, SRC_PKG_E_BAD_CONTAINER, err,
				    "not a package (no known magic; see src_package_formats)");
	sym_errc rc = f->open(fd, file_size, l, reason, err);
	if (rc)
		return rc;
	uint8_t p[6] = {0};
	size_t n = l->payload_size < 6 ? (size_t)l->payload_size : 6;
	if (n < 6 || src_pread(fd, p, n, l->payload_off, err))
		return src_pkg_fail(reason, SRC_PKG_E_TRUNCATED, err, "payload: truncated");
	l->comp = (uint8_t)sniff(p, n);
	return SYM_OK;
}

void src_pkg_layout_free(src_pkg_layout *l)
{
	if (l)
		src_xz_index_free(&l->xz);
}

bool src_pkg_layout_random(const src_pkg_layout *l)
{
	return l->comp == SRC_PKG_COMP_NONE || (l->comp == SRC_PKG_COMP_XZ && l->xz.n_blocks >= 2);
}

#define LAYOUT_MAGIC 0x314c5053u /* "SPL1" */

static void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8); /* little-endian hosts only (x86-64, aarch64) */
	*p += 8;
}

static uint64_t get64(const uint8_t **p)
{
	uint64_t v;
	memcpy(&v, *p, 8);
	*p += 8;
	return v;
}

void *src_pkg_layout_encode(const src_pkg_layout *l, size_t *len)
{
	*len = 6 * 8 + l->xz.n_blocks * 32;
	uint8_t *buf = malloc(*len), *p = buf;
	if (!buf)
		return NULL;
	put64(&p, LAYOUT_MAGIC | (uint64_t)l->comp << 32 | (uint64_t)l->is_cpio << 40);
	put64(&p, l->payload_off);
	put64(&p, l->payload_size);
	put64(&p, l->xz.check);
	put64(&p, l->xz.usize);
	put64(&p, l->xz.n_blocks);
	for (size_t i = 0; i < l->xz.n_blocks; i++) {
		put64(&p, l->xz.blocks[i].coff);
		put64(&p, l->xz.blocks[i].csize);
		put64(&p, l->xz.blocks[i].uoff);
		put64(&p, l->xz.blocks[i].usize);
	}
	return buf;
}

sym_errc src_pkg_layout_decode(const void *data, size_t len, src_pkg_layout *out,
			       sym_error *err)
{
	memset(out, 0, sizeof(*out));
	const uint8_t *p = data;
	if (len < 48)
		return sym_error_set(err, SYM_E_INVALID, "package layout: truncated");
	uint64_t head = get64(&p);
	if ((uint32_t)head != LAYOUT_MAGIC)
		return sym_error_set(err, SYM_E_INVALID, "package layout: bad magic");
	out->comp = (uint8_t)(head >> 32);
	out->is_cpio = (uint8_t)(head >> 40);
	out->payload_off = get64(&p);
	out->payload_size = get64(&p);
	out->xz.check = (uint32_t)get64(&p);
	out->xz.usize = get64(&p);
	uint64_t n = get64(&p);
	if (n > SRC_XZ_MAX_BLOCKS || (len - 48) / 32 != n || (len - 48) % 32)
		return sym_error_set(err, SYM_E_INVALID, "package layout: bad block count");
	if (n && !(out->xz.blocks = calloc(n, sizeof(src_xz_block))))
		return sym_error_set(err, SYM_E_NOMEM, "package layout: out of memory");
	uint64_t upos = 0;
	for (uint64_t i = 0; i < n; i++) {
		src_xz_block *b = &out->xz.blocks[i];
		b->coff = get64(&p);
		b->csize = get64(&p);
		b->uoff = get64(&p);
		b->usize = get64(&p);
		if (b->uoff != upos || b->csize > out->payload_size ||
		    b->coff > out->payload_size - b->csize) {
			src_pkg_layout_free(out);
			return sym_error_set(err, SYM_E_INVALID, "package layout: bad block");
		}
		upos += b->usize;
	}
	out->xz.n_blocks = (size_t)n;
	return SYM_OK;
}

bool src_pkg_normalize(const char *path, char *out, size_t out_size)
{
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	while (*path == '/')
		path++;
	size_t n = strlen(path);
	if (n == 0 || n >= out_size)
		return false;
	for (const char *c = path; *c;) {
		size_t seg = strcspn(c, "/");
		if (seg == 2 && c[0] == '.' && c[1] == '.')
			return false;
		c += seg;
		if (*c == '/')
			c++;
	}
	memcpy(out, path, n + 1);
	while (n > 0 && out[n - 1] == '/')
		out[--n] = '\0';
	return n > 0;
}
