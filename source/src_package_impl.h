/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_package_impl: what the package reader's files share inside source/
 * (container, payload streams, scan, extraction).
 */
#ifndef SRC_PACKAGE_IMPL_H
#define SRC_PACKAGE_IMPL_H

#include <stdint.h>

#include "source/src_package.h"
#include "source/src_pread.h"
#include "symbolizer/sym_file_id.h"

struct archive;

/* The smallest file any format is opened from (an rpm's lead and more). */
#define SRC_PKG_MIN_SIZE 104

/* Finds the payload of the package in fd (file_size bytes): its format by
 * magic from src_package_formats[], then that row's open function; fills
 * payload_off/size, comp and is_cpio of *l. */
sym_errc src_pkg_locate(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			sym_error *err);

/* The open functions of the format table's rows (src_package_format.h). */
sym_errc src_pkg_open_deb(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			  sym_error *err);
sym_errc src_pkg_open_rpm(int fd, uint64_t file_size, src_pkg_layout *l, src_pkg_reason *reason,
			  sym_error *err);

/* Sets *reason = r and err (SYM_E_IO for io, else SYM_E_INVALID) to msg. */
sym_errc src_pkg_fail(src_pkg_reason *reason, src_pkg_reason r, sym_error *err, const char *msg);

/* pread of exactly len bytes; SYM_E_INVALID "truncated" at end of file. */

/*
 * A libarchive reader over the payload: for a random-access layout, the
 * uncompressed tar/cpio fed block by block from our xz decoder (skips jump
 * over whole blocks; the next block is decoded ahead on a second thread);
 * otherwise the compressed bytes, with libarchive's decompression filters.
 * Member data offsets are archive_filter_bytes(a, 0) after each header.
 */
typedef struct src_pkg_stream src_pkg_stream;

sym_errc src_pkg_stream_open(int fd, const src_pkg_layout *l, src_pkg_stream **out,
			     struct archive **a, sym_error *err);
/* The same from uncompressed position start (a random-access layout only):
 * the archive read from there, as if it began there (its member offsets are
 * relative to start). */
sym_errc src_pkg_stream_open_at(int fd, const src_pkg_layout *l, uint64_t start,
				src_pkg_stream **out, struct archive **a, sym_error *err);
/* The block whose decoding failed on corrupt bytes (xz.n_blocks: none). */
size_t src_pkg_stream_bad_block(const src_pkg_stream *s);
/* src_package_resync.c: after corrupt block bad, the position of the first
 * tar header found in a later block that decodes (*skipped: the blocks
 * passed that do not); *pos = xz.usize when none is left. hint: where the
 * next header is known to be (the end of the member cut by the bad block),
 * tried first when past the bad block. */
sym_errc src_pkg_resync(int fd, const src_pkg_layout *l, size_t bad, uint64_t hint,
			uint64_t *pos, uint64_t *skipped, sym_error *err);
/* Whether h (512 bytes) is a tar header: ustar magic, its checksum right. */
bool src_tar_header_ok(const uint8_t *h);
/* Blocks decoded so far (random-access layouts). */
uint64_t src_pkg_stream_blocks(const src_pkg_stream *s);
/* The last error of the stream's own reads (when libarchive reports a failure). */
const sym_error *src_pkg_stream_error(const src_pkg_stream *s);
void src_pkg_stream_close(src_pkg_stream *s, struct archive *a);

/* "usr/lib/x" from "./usr/lib/x" or "/usr/lib/x"; false when a component is
 * ".." or the result is empty or too long. out has PATH_MAX bytes. */
bool src_pkg_normalize(const char *path, char *out, size_t out_size);

/* src_note: the note segment of an ELF from its first len bytes (program
 * headers there); the GNU build ID in notes (be: big-endian file). */
bool src_note_segment(const uint8_t *head, size_t len, uint64_t *off, uint64_t *size);
bool src_note_build_id(const uint8_t *notes, size_t len, bool be, sym_build_id *id);
/* The Go build-ID string in notes (name "Go", type 4) into text
 * (SYM_GO_BUILD_ID_TEXT_MAX + 1 bytes, NUL-terminated). */
bool src_note_go_build_id(const uint8_t *notes, size_t len, bool be, char *text);

#endif
