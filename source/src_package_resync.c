// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_resync: where a package's tar walk resumes after a corrupt xz
 * block (src_package_impl.h). The walk (src_package_scan.c) loses the members
 * that overlap the bad block, and goes on from the next tar header after it:
 * the end of the member the bad block cut, when its header was read before
 * it (exact), else the first 512-byte-aligned position of a later block that
 * decodes and holds a well-formed tar header (ustar magic and a right
 * checksum). A header found that way inside another member's data (a tar
 * file packaged whole) lists that inner archive's members: their bytes are
 * what they say, so no answer is wrong, and their build IDs are checked
 * when served as any member's are.
 */
#include "source/src_package_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"

#define TAR_BLOCK 512u
#define TAR_CHKSUM_OFF 148u
#define TAR_CHKSUM_LEN 8u
#define TAR_MAGIC_OFF 257u

bool src_tar_header_ok(const uint8_t *h)
{
	if (h[0] == 0 || memcmp(h + TAR_MAGIC_OFF, "ustar", 5) != 0)
		return false;
	uint64_t want = 0;
	int digits = 0;
	for (unsigned i = TAR_CHKSUM_OFF; i < TAR_CHKSUM_OFF + TAR_CHKSUM_LEN; i++) {
		uint8_t c = h[i];
		if (c >= '0' && c <= '7') {
			want = want * 8 + (uint64_t)(c - '0');
			digits++;
		} else if (c == ' ' || c == 0) {
			if (digits)
				break;
		} else {
			return false;
		}
	}
	if (!digits)
		return false;
	uint64_t sum = 0;
	int64_t ssum = 0; /* some old tars summed signed bytes */
	for (unsigned i = 0; i < TAR_BLOCK; i++) {
		uint8_t c = i >= TAR_CHKSUM_OFF && i < TAR_CHKSUM_OFF + TAR_CHKSUM_LEN ? ' ' : h[i];
		sum += c;
		ssum += (int8_t)c;
	}
	return sum == want || (ssum >= 0 && (uint64_t)ssum == want);
}

/* The exact next header, when known and past the bad block. */
static bool hint_ok(int fd, const src_pkg_layout *l, uint64_t bad_end, uint64_t hint)
{
	uint8_t h[TAR_BLOCK];
	sym_error e = {0};
	return hint >= bad_end && hint % TAR_BLOCK == 0 && hint <= l->xz.usize - TAR_BLOCK &&
	       src_xz_decode_range(fd, l->payload_off, &l->xz, hint, h, sizeof(h), &e) == SYM_OK &&
	       src_tar_header_ok(h);
}

sym_errc src_pkg_resync(int fd, const src_pkg_layout *l, size_t bad, uint64_t hint,
			uint64_t *pos, uint64_t *skipped, sym_error *err)
{
	const src_xz_index *ix = &l->xz;
	*skipped = 0;
	*pos = ix->usize;
	if (bad >= ix->n_blocks || ix->usize < TAR_BLOCK)
		return SYM_OK;
	if (hint_ok(fd, l, ix->blocks[bad].uoff + ix->blocks[bad].usize, hint)) {
		*pos = hint;
		return SYM_OK;
	}
	base_buf buf;
	base_buf_init(&buf, (size_t)128 << 20); /* as the stream's blocks (blocks_fit) */
	sym_errc rc = SYM_OK;
	for (size_t k = bad + 1; k < ix->n_blocks && *pos == ix->usize; k++) {
		const src_xz_block *b = &ix->blocks[k];
		if (!base_buf_ensure(&buf, b->usize ? (size_t)b->usize : 1)) {
			rc = sym_error_set(err, SYM_E_NOMEM, "xz: out of memory for a block");
			break;
		}
		sym_error e = {0};
		rc = src_xz_decode_block(fd, l->payload_off, ix->check, b, 0, buf.data, (size_t)b->usize,
					 &e);
		if (rc == SYM_E_INVALID) { /* corrupt too: passed */
			(*skipped)++;
			rc = SYM_OK;
			continue;
		}
		if (rc) {
			sym_error_set(err, rc, "%s", e.msg);
			break;
		}
		uint64_t end = b->uoff + b->usize;
		for (uint64_t p = (b->uoff + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
		     p + TAR_BLOCK <= end; p += TAR_BLOCK) {
			if (src_tar_header_ok(buf.data + (p - b->uoff))) {
				*pos = p;
				break;
			}
		}
	}
	base_buf_deinit(&buf);
	return rc;
}
